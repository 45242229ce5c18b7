package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Argument validation against a tool's input schema, before anything is sent
// upstream. santhosh-tekuri/jsonschema passes the whole draft 2020-12 suite,
// reports every error with its instance path, and is the fastest of the Go
// validators on valid input. Schemas come from upstream servers, so they are
// treated as hostile: no $ref may leave the document (file:// and network
// loads are refused), patterns run on Go's linear-time regexp engine, and a
// schema that cannot be compiled disables validation for that one tool (the
// upstream still validates) rather than making the tool uncallable.

// maxSchemaBytes bounds a tool's input schema; bigger tools are left out of
// the catalog with a logged reason.
const maxSchemaBytes = 1 << 20

var printer = message.NewPrinter(language.English)

// refusingLoader refuses every schema URL that is not a built-in metaschema.
type refusingLoader struct{}

func (refusingLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("schema reference %q refused: tool schemas must be self-contained (no file:// or network $ref)", url)
}

// lenientRegexp compiles patterns with Go's RE2 engine. A pattern RE2 cannot
// express (lookaround, backreferences) matches everything instead of failing
// the whole schema: one exotic pattern must not make a tool uncallable.
func lenientRegexp(s string) (jsonschema.Regexp, error) {
	re, err := regexp.Compile(s)
	if err != nil {
		return matchAll(s), nil
	}
	return re, nil
}

type matchAll string

func (m matchAll) String() string        { return string(m) }
func (matchAll) MatchString(string) bool { return true }

// inputValidator is the compiled input schema of one tool, built on first use.
type inputValidator struct {
	once   sync.Once
	raw    json.RawMessage
	schema *jsonschema.Schema
	err    error // compile error: validation is skipped for this tool
}

func newInputValidator(raw json.RawMessage) *inputValidator { return &inputValidator{raw: raw} }

func (v *inputValidator) compiled() (*jsonschema.Schema, error) {
	v.once.Do(func() { v.schema, v.err = compileSchema(v.raw) })
	return v.schema, v.err
}

// CompileSchema compiles a JSON Schema as the gateway does for tool inputs
// (draft 2020-12 unless "$schema" says otherwise, no remote $ref, lenient
// regexps), for code that validates arguments of its own (saved scripts).
func CompileSchema(raw json.RawMessage) (*jsonschema.Schema, error) { return compileSchema(raw) }

// compileSchema compiles a raw JSON Schema. A schema without "$schema" is
// draft 2020-12 (the MCP default); "$schema" selects draft-07 and others.
func compileSchema(raw json.RawMessage) (*jsonschema.Schema, error) {
	if len(raw) == 0 {
		raw = json.RawMessage(`{"type":"object"}`)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("input schema is not JSON: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(refusingLoader{})
	c.UseRegexpEngine(lenientRegexp)
	const loc = "urn:sandbox:tool-input-schema"
	if err := c.AddResource(loc, doc); err != nil {
		return nil, err
	}
	return c.Compile(loc)
}

// fieldError is one validation problem at a path in the arguments.
type fieldError struct {
	Path    string `json:"path"` // JSON pointer into the arguments, "" for the top level
	Message string `json:"message"`
}

// requiredField describes one required top-level argument.
type requiredField struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// validationDetail is the Data of a VALIDATION_FAILED error.
type validationDetail struct {
	Description string          `json:"description,omitempty"`
	Errors      []fieldError    `json:"errors"`
	Required    []requiredField `json:"required,omitempty"`
	Example     json.RawMessage `json:"example,omitempty"`
}

// validationResult turns the validator's error (nil: valid) into
// VALIDATION_FAILED.
func validationResult(tool *Tool, err error) *Error {
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return validationError(tool, []fieldError{{Message: err.Error()}})
	}
	return validationError(tool, leafErrors(ve))
}

// leafErrors flattens a validation error tree into its most specific
// problems, one per field, in a stable order.
func leafErrors(ve *jsonschema.ValidationError) []fieldError {
	var out []fieldError
	seen := map[string]bool{}
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		path := pointer(e.InstanceLocation)
		var msgs []fieldError
		switch k := e.ErrorKind.(type) {
		case *kind.Required:
			for _, m := range k.Missing {
				msgs = append(msgs, fieldError{Path: path + "/" + escapePointer(m), Message: "required field is missing"})
			}
		case *kind.AdditionalProperties:
			for _, p := range k.Properties {
				msgs = append(msgs, fieldError{Path: path + "/" + escapePointer(p), Message: "unknown field (not in the schema)"})
			}
		case *kind.FalseSchema:
			msgs = append(msgs, fieldError{Path: path, Message: "no value is allowed here"})
		default:
			msgs = append(msgs, fieldError{Path: path, Message: e.ErrorKind.LocalizedString(printer)})
		}
		for _, m := range msgs {
			key := m.Path + "\x00" + m.Message
			if !seen[key] {
				seen[key] = true
				out = append(out, m)
			}
		}
	}
	walk(ve)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

func pointer(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(escapePointer(t))
	}
	return b.String()
}

func escapePointer(s string) string {
	s = strings.ReplaceAll(s, "~", "~0")
	return strings.ReplaceAll(s, "/", "~1")
}

func jsonTypeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number, float64:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// Help-text budget: the whole message stays under 500 tokens (~4 bytes per
// token for this kind of text), whatever the schema and the arguments.
const (
	helpMaxBytes        = 1900
	helpMaxDescription  = 240
	helpMaxErrors       = 8
	helpMaxErrorBytes   = 160
	helpMaxRequired     = 12
	helpMaxExampleBytes = 500
)

// validationError builds the VALIDATION_FAILED error with its help text.
func validationError(tool *Tool, errs []fieldError) *Error {
	detail := validationDetail{Errors: errs, Description: truncate(oneLine(tool.Description), helpMaxDescription)}
	doc := schemaDoc(tool.InputSchema)
	detail.Required = requiredFields(doc)
	if ex, ok := exampleArguments(doc); ok {
		if b, err := json.Marshal(ex); err == nil && len(b) <= helpMaxExampleBytes {
			detail.Example = b
		}
	}

	var b strings.Builder
	fmt.Fprintf(&b, "The arguments for %s do not match its input schema; the call was not sent. Fix the fields below and call it again.\n", tool.ID)
	if detail.Description != "" {
		fmt.Fprintf(&b, "Tool: %s\n", detail.Description)
	}
	b.WriteString("Errors:\n")
	for i, e := range errs {
		if i == helpMaxErrors {
			fmt.Fprintf(&b, "  ... and %d more\n", len(errs)-i)
			break
		}
		path := e.Path
		if path == "" {
			path = "(arguments)"
		}
		fmt.Fprintf(&b, "  - %s: %s\n", truncate(path, 60), truncate(oneLine(e.Message), helpMaxErrorBytes))
	}
	if len(detail.Required) > 0 {
		parts := make([]string, 0, len(detail.Required))
		for i, r := range detail.Required {
			if i == helpMaxRequired {
				parts = append(parts, fmt.Sprintf("... %d more", len(detail.Required)-i))
				break
			}
			parts = append(parts, fmt.Sprintf("%s (%s)", truncate(r.Name, 40), r.Type))
		}
		fmt.Fprintf(&b, "Required: %s\n", strings.Join(parts, ", "))
	}
	if detail.Example != nil {
		fmt.Fprintf(&b, "Valid example: %s %s\n", tool.ID, detail.Example)
	}
	msg := strings.TrimRight(b.String(), "\n")
	if len(msg) > helpMaxBytes {
		msg = msg[:helpMaxBytes-3] + "..."
	}
	return newError(CodeValidationFailed, tool.ID, nil, detail, "%s", msg)
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// truncate cuts s to at most n bytes on a rune boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - 3
	for cut > 0 && !utf8RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

// schemaDoc decodes a schema for the help-text helpers (nil on failure).
func schemaDoc(raw json.RawMessage) map[string]any {
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil
	}
	return doc
}

// requiredFields lists the top-level required properties and their types.
func requiredFields(doc map[string]any) []requiredField {
	if doc == nil {
		return nil
	}
	s := resolveRef(doc, doc, 0)
	req, _ := s["required"].([]any)
	props, _ := s["properties"].(map[string]any)
	var out []requiredField
	for _, r := range req {
		name, ok := r.(string)
		if !ok {
			continue
		}
		typ := "any"
		if p, ok := props[name].(map[string]any); ok {
			typ = schemaTypeName(doc, p, 0)
		}
		out = append(out, requiredField{Name: name, Type: typ})
	}
	return out
}

// schemaTypeName is a short, TypeScript-like name for a schema's type.
func schemaTypeName(root, s map[string]any, depth int) string {
	if depth > 4 {
		return "any"
	}
	s = resolveRef(root, s, 0)
	if e, ok := s["enum"].([]any); ok && len(e) > 0 && len(e) <= 6 {
		parts := make([]string, 0, len(e))
		for _, v := range e {
			b, _ := json.Marshal(v)
			parts = append(parts, string(b))
		}
		return truncate(strings.Join(parts, " | "), 80)
	}
	if c, ok := s["const"]; ok {
		b, _ := json.Marshal(c)
		return truncate(string(b), 40)
	}
	switch t := s["type"].(type) {
	case string:
		if t == "array" {
			if items, ok := s["items"].(map[string]any); ok {
				return schemaTypeName(root, items, depth+1) + "[]"
			}
			return "array"
		}
		return t
	case []any:
		parts := make([]string, 0, len(t))
		for _, v := range t {
			if str, ok := v.(string); ok {
				parts = append(parts, str)
			}
		}
		return strings.Join(parts, " | ")
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if alts, ok := s[k].([]any); ok {
			parts := []string{}
			for _, a := range alts {
				if am, ok := a.(map[string]any); ok {
					parts = append(parts, schemaTypeName(root, am, depth+1))
				}
			}
			return truncate(strings.Join(parts, " | "), 80)
		}
	}
	if _, ok := s["properties"]; ok {
		return "object"
	}
	return "any"
}

// resolveRef follows local "#/..." references (a bounded number of hops).
func resolveRef(root, s map[string]any, hops int) map[string]any {
	for hops < 8 {
		ref, ok := s["$ref"].(string)
		if !ok || !strings.HasPrefix(ref, "#") {
			return s
		}
		var cur any = root
		for _, tok := range strings.Split(strings.TrimPrefix(ref, "#"), "/") {
			if tok == "" {
				continue
			}
			tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
			m, ok := cur.(map[string]any)
			if !ok {
				return s
			}
			cur = m[tok]
		}
		next, ok := cur.(map[string]any)
		if !ok {
			return s
		}
		s = next
		hops++
	}
	return s
}

// exampleArguments synthesizes arguments that satisfy the schema's required
// fields, from defaults, examples, consts, enums and types.
func exampleArguments(doc map[string]any) (any, bool) {
	if doc == nil {
		return nil, false
	}
	budget := 64 // nodes; keeps hostile schemas from exploding the example
	v := exampleValue(doc, doc, "", 0, &budget)
	if _, ok := v.(map[string]any); !ok {
		return nil, false
	}
	return v, true
}

func exampleValue(root, s map[string]any, name string, depth int, budget *int) any {
	*budget--
	if depth > 6 || *budget < 0 {
		return nil
	}
	s = resolveRef(root, s, 0)
	if v, ok := s["default"]; ok {
		return v
	}
	if ex, ok := s["examples"].([]any); ok && len(ex) > 0 {
		return ex[0]
	}
	if v, ok := s["const"]; ok {
		return v
	}
	if e, ok := s["enum"].([]any); ok && len(e) > 0 {
		return e[0]
	}
	if all, ok := s["allOf"].([]any); ok && len(all) > 0 {
		merged := map[string]any{}
		for _, a := range all {
			if am, ok := a.(map[string]any); ok {
				if obj, ok := exampleValue(root, am, name, depth+1, budget).(map[string]any); ok {
					for k, v := range obj {
						merged[k] = v
					}
				}
			}
		}
		if len(merged) > 0 {
			return merged
		}
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if alts, ok := s[k].([]any); ok {
			for _, a := range alts {
				if am, ok := a.(map[string]any); ok && am["type"] != "null" {
					return exampleValue(root, am, name, depth+1, budget)
				}
			}
		}
	}
	typ, _ := s["type"].(string)
	if ts, ok := s["type"].([]any); ok {
		for _, t := range ts {
			if str, _ := t.(string); str != "null" && str != "" {
				typ = str
				break
			}
		}
	}
	if typ == "" {
		if _, ok := s["properties"]; ok {
			typ = "object"
		}
	}
	switch typ {
	case "object":
		obj := map[string]any{}
		props, _ := s["properties"].(map[string]any)
		req, _ := s["required"].([]any)
		for _, r := range req {
			key, ok := r.(string)
			if !ok {
				continue
			}
			ps, _ := props[key].(map[string]any)
			if ps == nil {
				ps = map[string]any{}
			}
			obj[key] = exampleValue(root, ps, key, depth+1, budget)
		}
		return obj
	case "array":
		minItems := 0
		if f, ok := numberOf(s["minItems"]); ok {
			minItems = int(f)
		}
		if minItems == 0 {
			return []any{}
		}
		items, _ := s["items"].(map[string]any)
		if items == nil {
			items = map[string]any{}
		}
		out := make([]any, 0, min(minItems, 3))
		for i := 0; i < minItems && i < 3; i++ {
			out = append(out, exampleValue(root, items, name, depth+1, budget))
		}
		return out
	case "integer", "number":
		f := 0.0
		if m, ok := numberOf(s["minimum"]); ok {
			f = m
		} else if m, ok := numberOf(s["exclusiveMinimum"]); ok {
			f = m + 1
		} else if m, ok := numberOf(s["maximum"]); ok && m < 0 {
			f = m
		}
		if typ == "integer" {
			return int64(f)
		}
		return f
	case "boolean":
		return false
	case "null":
		return nil
	case "string":
		return exampleString(s, name)
	}
	return exampleString(s, name)
}

func exampleString(s map[string]any, name string) string {
	switch s["format"] {
	case "date-time":
		return "2025-01-01T00:00:00Z"
	case "date":
		return "2025-01-01"
	case "time":
		return "12:00:00Z"
	case "email":
		return "user@example.com"
	case "uri", "url", "iri":
		return "https://example.com"
	case "uuid":
		return "00000000-0000-4000-8000-000000000000"
	case "ipv4":
		return "192.0.2.1"
	case "ipv6":
		return "2001:db8::1"
	}
	v := name
	if v == "" {
		v = "text"
	}
	if m, ok := numberOf(s["minLength"]); ok && int(m) > len(v) {
		v += strings.Repeat("x", int(m)-len(v))
	}
	if m, ok := numberOf(s["maxLength"]); ok && int(m) < len(v) && m >= 0 {
		v = v[:int(m)]
	}
	return v
}

func numberOf(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case float32:
		return float64(n), true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case int32:
		return float64(n), true
	case uint64:
		return float64(n), true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}
