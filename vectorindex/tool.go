package vectorindex

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"unicode/utf8"
)

// Tool is one tool of the catalog, as the index sees it. The gateway's
// catalog converts to it; tests and the CLI read it from JSON (the corpus
// format: server, name, title, description, inputSchema, outputSchema,
// annotations).
type Tool struct {
	// ID is the tool's id everywhere in sandbox, "server:tool". When empty
	// it is made from Server and Name.
	ID          string          `json:"id,omitempty"`
	Server      string          `json:"server,omitempty"`
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"inputSchema,omitempty"`
	// OutputSchema is the schema of the tool's structured result. Its
	// field names and descriptions are indexed: what a tool returns says
	// what it is for (a tool returning temperature, humidity and "weather
	// conditions" answers "weather in Chicago" though its description
	// never says weather).
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	// Annotations are the tool's MCP annotations as listed. readOnlyHint
	// and destructiveHint rank read-only tools first for a question;
	// annotations.title stands in for a missing Title.
	Annotations json.RawMessage `json:"annotations,omitempty"`
	// ServerInstructions is what the tool's server says about itself (its
	// initialize instructions). It is indexed with each of the server's
	// tools at a low weight, apart from the tool's own text: it tells
	// servers apart ("a knowledge-graph memory"), never one tool of a
	// server from another.
	ServerInstructions string `json:"serverInstructions,omitempty"`
}

// Limits on what one tool contributes to the index. Upstream servers are
// untrusted: a multi-megabyte description or a schema with ten thousand
// properties must not blow up memory or search time, so the excess is
// ignored (not an error: the tool is still found by what is left).
const (
	maxIDLen           = 256
	maxDescriptionLen  = 8 << 10
	maxTitleLen        = 512
	maxSchemaLen       = 1 << 20
	maxParams          = 100
	maxParamDescLen    = 512
	maxDocTextLen      = 8000 // what remote embedders receive, ~2k tokens
	maxAnnotationsLen  = 4 << 10
	maxInstructionsLen = 1 << 10
	maxEnumValues      = 50 // enum values indexed per schema
	maxEnumValueLen    = 64
	maxSchemaDepth     = 3 // nested properties indexed down to here
)

// normalized fills ID from Server and Name and checks what cannot be
// repaired.
func (t Tool) normalized() (Tool, error) {
	if t.ID == "" && t.Server != "" && t.Name != "" {
		t.ID = t.Server + ":" + t.Name
	}
	if strings.TrimSpace(t.ID) == "" {
		return t, fmt.Errorf("tool %q has no id: set ID (\"server:tool\") or both Server and Name", t.Name)
	}
	if len(t.ID) > maxIDLen {
		return t, fmt.Errorf("tool id %.40q... is %d bytes; ids are limited to %d", t.ID, len(t.ID), maxIDLen)
	}
	if !utf8.ValidString(t.ID) {
		return t, fmt.Errorf("tool id %q is not valid UTF-8", t.ID)
	}
	// Text that is not UTF-8 would not survive a round trip through the
	// store unchanged (and then look changed at every restart).
	t.Server = strings.ToValidUTF8(t.Server, "\uFFFD")
	t.Name = strings.ToValidUTF8(t.Name, "\uFFFD")
	t.Title = strings.ToValidUTF8(t.Title, "\uFFFD")
	t.Description = strings.ToValidUTF8(t.Description, "\uFFFD")
	// Only this much of each is ever read (see fields), so only this much
	// is hashed and stored.
	t.ServerInstructions = strings.ToValidUTF8(t.ServerInstructions, "\uFFFD")
	t.Description = truncate(t.Description, maxDescriptionLen)
	t.Title = truncate(t.Title, maxTitleLen)
	t.ServerInstructions = truncate(t.ServerInstructions, maxInstructionsLen)
	if len(t.InputSchema) > maxSchemaLen {
		t.InputSchema = nil
	}
	if len(t.OutputSchema) > maxSchemaLen {
		t.OutputSchema = nil
	}
	if len(t.Annotations) > maxAnnotationsLen {
		t.Annotations = nil
	}
	if t.Server == "" || t.Name == "" {
		if i := strings.IndexByte(t.ID, ':'); i > 0 {
			if t.Server == "" {
				t.Server = t.ID[:i]
			}
			if t.Name == "" {
				t.Name = t.ID[i+1:]
			}
		} else if t.Name == "" {
			t.Name = t.ID
		}
	}
	return t, nil
}

// same reports whether two normalized tools are the same definition, byte
// for byte (then their hashes are equal).
func (t Tool) same(u Tool) bool {
	return t.ID == u.ID && t.Server == u.Server && t.Name == u.Name && t.Title == u.Title &&
		t.Description == u.Description && bytes.Equal(t.InputSchema, u.InputSchema) &&
		bytes.Equal(t.OutputSchema, u.OutputSchema) && bytes.Equal(t.Annotations, u.Annotations) &&
		t.ServerInstructions == u.ServerInstructions
}

// hash identifies a tool definition: the persisted embedding of a tool is
// reused after a restart only while its hash is unchanged. Schemas are
// compacted first so that whitespace does not count as a change. The
// output schema, annotations and server instructions count only when
// present, so a tool without them keeps the hash it had before they were
// indexed (and its vector, which may have cost a call to an embedding
// service).
func (t Tool) hash() string {
	h := sha256.New()
	for _, s := range []string{t.ID, t.Server, t.Name, t.Title, t.Description} {
		fmt.Fprintf(h, "%d:%s\n", len(s), s)
	}
	writeCompact(h, t.InputSchema)
	for _, x := range []struct {
		tag string
		raw []byte
	}{{"output", t.OutputSchema}, {"annotations", t.Annotations}, {"instructions", []byte(t.ServerInstructions)}} {
		if len(x.raw) > 0 {
			fmt.Fprintf(h, "\n%s:", x.tag)
			writeCompact(h, x.raw)
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// writeCompact writes raw JSON compacted, or as it is when it is not JSON.
func writeCompact(w io.Writer, raw []byte) {
	var buf bytes.Buffer
	if len(raw) > 0 && json.Compact(&buf, raw) == nil {
		w.Write(buf.Bytes())
	} else {
		w.Write(raw)
	}
}

// field is a piece of a tool's text with how much its words count: a word
// in the tool's name says more about what the tool does than one in a
// parameter's description.
type field struct {
	text   string
	weight float32
	// secondary: what the tool accepts beyond its top-level parameters,
	// what it returns, what its server says. Its words are indexed apart
	// (see secondaryTerm), so that they add evidence without changing how
	// the tool's own text is matched.
	secondary bool
}

const (
	wName      = 3
	wServer    = 1.5
	wTitle     = 2
	wDesc      = 1
	wParamName = 0.5
	wParamDesc = 0.3
)

// What the tool accepts beyond its top-level parameters, and what it
// returns: nested field names and descriptions, enum values, output fields;
// and what its server says about itself, the same for each of its tools.
// Only the lexical side reads them (see embedFields).
var (
	wNestedName   float32 = 0.2
	wNestedDesc   float32 = 0.1
	wEnumValue    float32 = 0.4
	wOutputName   float32 = 0.5
	wOutputDesc   float32 = 0.3
	wInstructions float32 = 0.2

	// A tool that enumerates dozens of values (currencies, intervals,
	// event types) is not about each of them: beyond enumValuesFull values
	// their weight is shared.
	enumValuesFull = 10
)

// embedFields is the text the built-in embedder makes a tool's vector of:
// its id (server, name), title, description and top-level parameters. The
// rest of what fields reads (nested fields, enum values, output fields,
// the server's instructions) is left to the lexical side: in the vector, a
// schema of dozens of nested fields drowned what the description says
// (measured: "serch notion for the onboarding paeg" lost
// notion:api-post-search from the top 5).
func (t Tool) embedFields() []field {
	fs := []field{
		{text: t.Server, weight: wServer},
		{text: t.Name, weight: wName},
		{text: truncate(t.Title, maxTitleLen), weight: wTitle},
		{text: truncate(t.Description, maxDescriptionLen), weight: wDesc},
	}
	for _, p := range schemaParams(t.InputSchema) {
		fs = append(fs, field{text: p.name, weight: wParamName})
		if p.desc != "" {
			fs = append(fs, field{text: truncate(p.desc, maxParamDescLen), weight: wParamDesc})
		}
	}
	return fs
}

// fields splits a tool into weighted text for BM25: id (server, name),
// title, description, what it accepts (its parameters' names and
// descriptions, nested fields, enum values; in is its input schema, read)
// and what it returns (its output schema's field names and descriptions),
// and its server's instructions.
func (t Tool) fields(in schemaText) []field {
	fs := []field{
		{text: t.Server, weight: wServer},
		{text: t.Name, weight: wName},
		{text: truncate(t.title(), maxTitleLen), weight: wTitle},
		{text: truncate(t.Description, maxDescriptionLen), weight: wDesc},
	}
	for _, p := range in.params {
		nw, dw := float32(wParamName), float32(wParamDesc)
		nested := p.depth > 0
		if nested {
			nw, dw = wNestedName, wNestedDesc
		}
		fs = append(fs, field{p.name, nw, nested})
		if p.desc != "" {
			fs = append(fs, field{truncate(p.desc, maxParamDescLen), dw, nested})
		}
	}
	if n := len(in.values); n > 0 {
		w := wEnumValue * min(1, float32(enumValuesFull)/float32(n))
		fs = append(fs, field{strings.Join(in.values, " "), w, true})
	}
	for _, p := range readSchema(t.OutputSchema).params {
		fs = append(fs, field{p.name, wOutputName, true})
		if p.desc != "" {
			fs = append(fs, field{truncate(p.desc, maxParamDescLen), wOutputDesc, true})
		}
	}
	if t.ServerInstructions != "" {
		fs = append(fs, field{t.ServerInstructions, wInstructions, true})
	}
	return fs
}

// title is the tool's title, or its annotations' title (MCP's older place
// for it) when it has none.
func (t Tool) title() string {
	if t.Title != "" || len(t.Annotations) == 0 {
		return t.Title
	}
	var a struct {
		Title string `json:"title"`
	}
	_ = json.Unmarshal(t.Annotations, &a)
	return strings.ToValidUTF8(a.Title, "\uFFFD")
}

// docText is the tool as one text, for embedding services: only what the
// hash covers (see hash), so that a changed text always means a changed
// hash, and a tool the hash says is unchanged is not embedded again.
func (t Tool) docText() string {
	var b strings.Builder
	b.WriteString(t.ID)
	b.WriteString("\n")
	b.WriteString(strings.Join(splitAll(t.Name), " "))
	if t.Title != "" {
		b.WriteString("\n" + truncate(t.Title, maxTitleLen))
	}
	if t.Description != "" {
		b.WriteString("\n" + truncate(t.Description, maxDescriptionLen))
	}
	for _, part := range []struct {
		head   string
		params []param
	}{{"Parameters:", schemaParams(t.InputSchema)}, {"Returns:", readSchema(t.OutputSchema).params}} {
		if len(part.params) == 0 {
			continue
		}
		b.WriteString("\n" + part.head)
		for _, p := range part.params {
			b.WriteString("\n- " + p.name)
			if p.desc != "" {
				b.WriteString(": " + truncate(p.desc, maxParamDescLen))
			}
		}
	}
	return truncate(b.String(), maxDocTextLen)
}

func splitAll(s string) []string {
	var ws []string
	splitWords(s, func(w string) { ws = append(ws, w) })
	return ws
}

type param struct {
	name, desc string
	depth      int // 0 for a top-level property
}

// schemaParams reads the top-level properties of a JSON Schema, in name
// order. A schema that is not an object with properties (or not JSON at
// all) has none: the tool is still indexed by its name and description.
func schemaParams(raw json.RawMessage) []param {
	if len(raw) == 0 || len(raw) > maxSchemaLen {
		return nil
	}
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(raw, &s) != nil {
		return nil
	}
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) > maxParams {
		names = names[:maxParams]
	}
	out := make([]param, 0, len(names))
	for _, n := range names {
		var p struct {
			Description string `json:"description"`
			Title       string `json:"title"`
		}
		_ = json.Unmarshal(s.Properties[n], &p) // a non-object property still has a name
		d := p.Description
		if d == "" {
			d = p.Title
		}
		out = append(out, param{name: truncate(n, 128), desc: d})
	}
	return out
}

// schemaText is what a schema says that is worth indexing: its properties
// (the top-level ones first, in name order, then nested ones, level by
// level) and the string values of its enums and consts.
type schemaText struct {
	params []param
	values []string
	// choices are the values of the enums of at most maxChoices values:
	// the states, kinds and orders a tool filters by (status: todo,
	// in_progress, blocked, done), not lists of field names to return
	choices []string
}

const maxChoices = 12

// schemaNode is the part of a JSON Schema that readSchema looks at.
type schemaNode struct {
	Description string                     `json:"description"`
	Title       string                     `json:"title"`
	Properties  map[string]json.RawMessage `json:"properties"`
	Items       json.RawMessage            `json:"items"`
	AnyOf       []json.RawMessage          `json:"anyOf"`
	OneOf       []json.RawMessage          `json:"oneOf"`
	AllOf       []json.RawMessage          `json:"allOf"`
	Enum        []any                      `json:"enum"`
	Const       any                        `json:"const"`
}

// readSchema walks a JSON Schema breadth first down to maxSchemaDepth
// levels of properties (through array items and anyOf/oneOf/allOf), at most
// maxParams properties and maxEnumValues values, each part decoded once.
// Invalid JSON, or any part that is not an object, reads as nothing;
// "$ref"s are not followed.
func readSchema(raw json.RawMessage) schemaText {
	var out schemaText
	if len(raw) == 0 || len(raw) > maxSchemaLen {
		return out
	}
	type node struct {
		raw   json.RawMessage
		depth int    // of the object the node is a property of, or of the root
		name  string // the property's name; "" for the root and sub-schemas
	}
	queue := []node{{raw: raw}}
	seenValue := map[string]bool{}
	for visited := 0; len(queue) > 0 && len(out.params) < maxParams && visited < 4*maxParams; visited++ {
		n := queue[0]
		queue = queue[1:]
		var s schemaNode
		ok := json.Unmarshal(n.raw, &s) == nil
		if n.name != "" {
			d := s.Description
			if d == "" {
				d = s.Title
			}
			out.params = append(out.params, param{name: truncate(n.name, 128), desc: d, depth: n.depth})
		}
		if !ok {
			continue // a non-object property still has a name
		}
		depth := n.depth
		if n.name != "" {
			depth++ // the property's own properties are one level down
		}
		for _, v := range append(s.Enum, s.Const) {
			str, ok := v.(string)
			if !ok || str == "" || len(str) > maxEnumValueLen || len(out.values) >= maxEnumValues {
				continue
			}
			if len(s.Enum) <= maxChoices && len(out.choices) < maxEnumValues {
				out.choices = append(out.choices, str)
			}
			if !seenValue[str] {
				seenValue[str] = true
				out.values = append(out.values, str)
			}
		}
		for _, sub := range [][]json.RawMessage{{s.Items}, s.AnyOf, s.OneOf, s.AllOf} {
			for _, r := range sub {
				if len(r) > 0 {
					queue = append(queue, node{raw: r, depth: depth})
				}
			}
		}
		if depth >= maxSchemaDepth {
			continue
		}
		names := make([]string, 0, len(s.Properties))
		for name := range s.Properties {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			queue = append(queue, node{raw: s.Properties[name], depth: depth, name: name})
		}
	}
	return out
}

// truncate cuts s to at most n bytes on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
