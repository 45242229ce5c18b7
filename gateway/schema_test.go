package gateway

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandboxrt/sandbox/internal/testpeers"
)

func testTool(t testing.TB, id, desc, schema string) *Tool {
	t.Helper()
	server, name, _ := SplitToolID(id)
	return &Tool{ID: id, Server: server, Name: name, UpstreamName: name, Description: desc, InputSchema: json.RawMessage(schema), validator: newInputValidator(json.RawMessage(schema))}
}

func validate(t testing.TB, tool *Tool, args string) *Error {
	t.Helper()
	v, err := decodeArgs(json.RawMessage(args))
	if err != nil {
		t.Fatal(err)
	}
	return validateDecoded(tool, v)
}

func TestValidationDrafts(t *testing.T) {
	t.Parallel()
	// Draft-07 "dependencies" and 2020-12 "dependentRequired"/"prefixItems".
	d7 := testTool(t, "s:a", "", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","dependencies":{"a":["b"]}}`)
	if e := validate(t, d7, `{"a":1}`); e == nil {
		t.Fatal("draft-07 dependencies ignored")
	}
	d2020 := testTool(t, "s:b", "", `{"type":"object","properties":{"p":{"type":"array","prefixItems":[{"type":"string"}]}}}`)
	if e := validate(t, d2020, `{"p":[1]}`); e == nil {
		t.Fatal("2020-12 prefixItems ignored (the default draft must be 2020-12)")
	}
	if e := validate(t, d2020, `{"p":["x", 1]}`); e != nil {
		t.Fatalf("valid args refused: %v", e)
	}
}

func TestSchemaRefsCannotReachOut(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret.json")
	if err := os.WriteFile(secret, []byte(`{"type":"string"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{"file://" + secret, "http://127.0.0.1:1/schema.json"} {
		tool := testTool(t, "s:x", "", `{"type":"object","properties":{"a":{"$ref":"`+ref+`"}}}`)
		if _, err := tool.validator.compiled(); err == nil || !strings.Contains(err.Error(), "refused") {
			t.Fatalf("$ref %s: compile error = %v, want a refusal", ref, err)
		}
		// The tool stays callable; the upstream validates.
		if e := validate(t, tool, `{"a": 1}`); e != nil {
			t.Fatalf("uncompilable schema must not block calls: %v", e)
		}
	}
}

func TestSchemaHostilePatterns(t *testing.T) {
	t.Parallel()
	// A backtracking-prone pattern runs on RE2 (linear); lookahead (not RE2)
	// matches everything instead of failing the schema.
	tool := testTool(t, "s:x", "", `{"type":"object","properties":{"a":{"type":"string","pattern":"^(a+)+$"},"b":{"type":"string","pattern":"^(?=x)"}}}`)
	if e := validate(t, tool, `{"a":"`+strings.Repeat("a", 50000)+`!","b":"y"}`); e == nil || !strings.Contains(e.Message, "/a") {
		t.Fatalf("got %v", e)
	}
	recursive := testTool(t, "s:r", "", `{"$defs":{"n":{"type":"object","properties":{"next":{"$ref":"#/$defs/n"}}}},"$ref":"#/$defs/n"}`)
	if e := validate(t, recursive, `{"next":{"next":{"next":{}}}}`); e != nil {
		t.Fatalf("recursive schema: %v", e)
	}
	if _, ok := exampleArguments(schemaDoc(recursive.InputSchema)); !ok {
		t.Fatal("no example for a recursive schema")
	}
}

// TestHelpTextOnTheToolCorpus checks, on 341 real tool schemas, that a call
// with no arguments that fails validation gets a help text under the
// 500-token budget, naming the tool and every missing field, with an example
// that itself passes validation.
func TestHelpTextOnTheToolCorpus(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join(testpeers.RepoRoot(t), "testdata", "toolcorpus", "tools.json"))
	if err != nil {
		t.Fatal(err)
	}
	var corpus []struct {
		Server, Name, Description string
		InputSchema               json.RawMessage
	}
	if err := json.Unmarshal(data, &corpus); err != nil {
		t.Fatal(err)
	}
	failed, withExample, exampleValid, longest := 0, 0, 0, 0
	for _, c := range corpus {
		tool := testTool(t, c.Server+":"+c.Name, c.Description, string(c.InputSchema))
		if _, err := tool.validator.compiled(); err != nil {
			t.Errorf("%s: schema does not compile: %v", tool.ID, err)
			continue
		}
		e := validate(t, tool, `{"__unexpected": {"deep": [1, 2, 3]}}`)
		if e == nil {
			continue
		}
		failed++
		if tokens := len(e.Message) / 4; tokens >= 500 {
			t.Errorf("%s: help text is ~%d tokens:\n%s", tool.ID, tokens, e.Message)
		}
		longest = max(longest, len(e.Message))
		if !strings.Contains(e.Message, tool.ID) {
			t.Errorf("%s: help text does not name the tool", tool.ID)
		}
		var detail validationDetail
		if err := json.Unmarshal(e.Data, &detail); err != nil {
			t.Fatal(err)
		}
		for _, r := range detail.Required {
			if !strings.Contains(e.Message, r.Name) && len(detail.Required) <= helpMaxRequired {
				t.Errorf("%s: required field %q missing from the help text", tool.ID, r.Name)
			}
		}
		if detail.Example != nil {
			withExample++
			if validate(t, tool, string(detail.Example)) == nil {
				exampleValid++
			}
		}
	}
	t.Logf("corpus: %d tools, %d refused the bad call, %d with an example, %d examples valid, longest help %d bytes", len(corpus), failed, withExample, exampleValid, longest)
	if failed < len(corpus)/2 {
		t.Fatalf("only %d of %d tools refused the bogus arguments", failed, len(corpus))
	}
	if exampleValid*100 < withExample*90 {
		t.Fatalf("only %d of %d synthesized examples pass validation", exampleValid, withExample)
	}
}

func FuzzValidationHelp(f *testing.F) {
	f.Add(`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`, `{"a":1}`)
	f.Add(`{"anyOf":[{"required":["x"]},{"required":["y"]}]}`, `{}`)
	f.Add(`{"$ref":"#/$defs/a","$defs":{"a":{"$ref":"#/$defs/a"}}}`, `{}`)
	f.Fuzz(func(t *testing.T, schema, args string) {
		if !json.Valid([]byte(schema)) || len(schema) > 4096 {
			return
		}
		tool := testTool(t, "s:t", strings.Repeat("d", 1000), schema)
		v, err := decodeArgs(json.RawMessage(args))
		if err != nil {
			return
		}
		if e := validateDecoded(tool, v); e != nil && len(e.Message) > helpMaxBytes {
			t.Fatalf("help text %d bytes", len(e.Message))
		}
	})
}
