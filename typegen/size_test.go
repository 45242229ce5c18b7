package typegen

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandboxrt/sandbox/internal/testpeers"
)

// Size targets, checked by TestCorpusSize. See docs/typegen.md ("Size") for
// why the 60% is measured against the tool definitions and why it is
// not reached: the corpus's descriptions alone are 41% of the definitions'
// JSON (55% of the bare input schemas) and every one of them is kept.
const (
	// maxRatioToDefinitions guards the measured 0.63 against regressions.
	maxRatioToDefinitions = 0.65
	// maxStructureRatio: everything but description text, against the same
	// in the JSON. This is the part typegen controls.
	maxStructureRatio = 0.40
)

// TestCorpusSize reports the size of the corpus declarations against the raw
// JSON an agent would otherwise read, checks that every description survives,
// and guards the ratios.
func TestCorpusSize(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(testpeers.RepoRoot(t), "testdata", "toolcorpus", "tools.json"))
	if err != nil {
		t.Fatal(err)
	}
	var entries []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &entries); err != nil {
		t.Fatal(err)
	}
	var definitions, schemas int
	var descriptions []string
	for _, e := range entries {
		// The tool definition as tools/list sends it: the MCP fields only,
		// compact JSON (what servers put on the wire).
		var b bytes.Buffer
		b.WriteByte('{')
		first := true
		for _, k := range []string{"name", "title", "description", "inputSchema", "outputSchema", "annotations"} {
			v, ok := e[k]
			if !ok {
				continue
			}
			if !first {
				b.WriteByte(',')
			}
			first = false
			b.WriteString(`"` + k + `":`)
			if err := json.Compact(&b, v); err != nil {
				t.Fatal(err)
			}
		}
		b.WriteByte('}')
		definitions += b.Len()
		var c bytes.Buffer
		if err := json.Compact(&c, e["inputSchema"]); err != nil {
			t.Fatal(err)
		}
		schemas += c.Len()
		var d string
		json.Unmarshal(e["description"], &d)
		descriptions = append(descriptions, d)
		var schema any
		json.Unmarshal(e["inputSchema"], &schema)
		collectDescriptions(schema, &descriptions)
	}

	out, err := Generate(corpusTools(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	dts := len(out.DTS)
	// Multi-line text is indented with tabs in the output, and one-line
	// inline comments join lines with spaces: accept either form.
	untabbed := strings.ReplaceAll(out.DTS, "\n\t", "\n")
	for strings.Contains(untabbed, "\n\t") {
		untabbed = strings.ReplaceAll(untabbed, "\n\t", "\n")
	}
	descChars, missing := 0, 0
	for _, d := range descriptions {
		clean := cleanDoc(d, defaultMaxDoc)
		descChars += len(clean)
		if clean != "" && !strings.Contains(untabbed, clean) && !strings.Contains(untabbed, strings.Join(strings.Fields(clean), " ")) {
			missing++
			if missing <= 5 {
				t.Errorf("description not kept: %q", truncate(clean, 120))
			}
		}
	}
	if missing > 0 {
		t.Errorf("%d of %d descriptions are missing from the declarations", missing, len(descriptions))
	}
	ratioDefs := float64(dts) / float64(definitions)
	ratioSchemas := float64(dts) / float64(schemas)
	structure := float64(dts-descChars) / float64(definitions-descChars)
	t.Logf("corpus: %d tools, %d descriptions (%d chars of text)", len(entries), len(descriptions), descChars)
	t.Logf("tool definitions JSON (compact): %7d chars ~%6d tokens", definitions, definitions/4)
	t.Logf("input schemas JSON (compact):    %7d chars ~%6d tokens", schemas, schemas/4)
	t.Logf("declarations (.d.ts):            %7d chars ~%6d tokens", dts, dts/4)
	t.Logf("declarations / definitions = %.3f (issue target 0.60, guard %.2f)", ratioDefs, maxRatioToDefinitions)
	t.Logf("declarations / input schemas = %.3f", ratioSchemas)
	t.Logf("structure without description text: %.3f of the JSON's (guard %.2f)", structure, maxStructureRatio)
	if ratioDefs > maxRatioToDefinitions {
		t.Errorf("declarations are %.3f of the tool definitions, over the %.2f guard", ratioDefs, maxRatioToDefinitions)
	}
	if structure > maxStructureRatio {
		t.Errorf("structure is %.3f of the JSON's, over the %.2f guard", structure, maxStructureRatio)
	}
}

// collectDescriptions appends every "description" string of a schema (not a
// property that happens to be called "description").
func collectDescriptions(v any, into *[]string) {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			switch k {
			case "properties", "$defs", "definitions", "patternProperties":
				if m, ok := val.(map[string]any); ok {
					for _, sub := range m {
						collectDescriptions(sub, into)
					}
				}
				continue
			case "description":
				if s, ok := val.(string); ok {
					*into = append(*into, s)
				}
				continue
			case "default", "const", "enum", "examples":
				continue
			}
			collectDescriptions(val, into)
		}
	case []any:
		for _, it := range x {
			collectDescriptions(it, into)
		}
	}
}
