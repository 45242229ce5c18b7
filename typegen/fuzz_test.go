package typegen

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/evanw/esbuild/pkg/api"
)

// parsesAsTypeScript is the cheap syntax check used inside the fuzz target:
// esbuild's TypeScript parser reads .d.ts syntax (and rejects broken types),
// in-process and in well under a millisecond for one tool. Full type checking
// with tsc runs in TestRandomSchemasCompile over a sample of the same kind of
// schemas.
func parsesAsTypeScript(src string) error {
	r := api.Transform(src, api.TransformOptions{Loader: api.LoaderTS})
	if len(r.Errors) == 0 {
		return nil
	}
	var msgs []string
	for _, e := range r.Errors {
		line := ""
		if e.Location != nil {
			line = e.Location.LineText
		}
		msgs = append(msgs, e.Text+" in: "+line)
	}
	return errors.New(strings.Join(msgs, "; "))
}

func addGenerateSeeds(f *testing.F) {
	for _, tools := range goldenSeedTools(f) {
		for _, t := range tools {
			f.Add([]byte(t.InputSchema), []byte(t.OutputSchema))
		}
	}
	for _, t := range randomTools(7, 40) {
		f.Add([]byte(t.InputSchema), []byte(t.OutputSchema))
	}
	f.Add([]byte(`{"type":"object","properties":{"a":{"$ref":"#/$defs/a"}},"$defs":{"a":{"allOf":[{"$ref":"#/$defs/a"}]}}}`), []byte(nil))
	f.Add([]byte(`{"properties":{"x":{"type":"array","prefixItems":[true,false],"items":false,"minItems":99}}}`), []byte(`true`))
	f.Add([]byte(strings.Repeat(`{"anyOf":[`, 200)+"true"+strings.Repeat(`]}`, 200)), []byte(nil))
	f.Add([]byte(`{"type":"object","description":"*/ } declare var x: 1; /*","properties":{"*/":{"const":"*/"}}}`), []byte(`{"$ref":"#"}`))
	f.Add([]byte("{\"type\":\"object\",\"properties\":{\"a\":{\"description\":\"\xff\xfe\\ud800\"}}}"), []byte(nil))
}

func goldenSeedTools(f *testing.F) [][]Tool {
	var out [][]Tool
	for _, name := range []string{"arrays", "combinators", "objects", "refs", "enums", "docs", "problems", "output", "booleans"} {
		out = append(out, goldenToolsTB(f, name))
	}
	return out
}

// FuzzGenerate: for any input and output schema bytes, Generate never panics,
// never drops the tool, is deterministic, and its output parses as TypeScript.
func FuzzGenerate(f *testing.F) {
	addGenerateSeeds(f)
	f.Fuzz(func(t *testing.T, input, output []byte) {
		tool := Tool{Server: "fuzz", Name: "tool", Description: "fuzzed", InputSchema: input, OutputSchema: output}
		out, err := Generate([]Tool{tool}, Options{})
		if err != nil {
			t.Fatalf("Generate: %v", err)
		}
		if len(out.Tools) != 1 {
			t.Fatalf("the tool was not declared: %+v", out.Problems)
		}
		again, _ := Generate([]Tool{tool}, Options{Cache: NewCache(0)})
		if again.DTS != out.DTS {
			t.Fatalf("not deterministic:\n%s\n----\n%s", out.DTS, again.DTS)
		}
		if err := parsesAsTypeScript(out.DTS); err != nil {
			t.Fatalf("output does not parse: %v\n%s", err, out.DTS)
		}
	})
}

// FuzzParseJSON checks the order-keeping parser against encoding/json: same
// verdict on validity, same values (duplicate names: last wins).
func FuzzParseJSON(f *testing.F) {
	for _, s := range []string{
		`{}`, `[]`, `null`, `true`, `-0.5e+10`, `"a\u00e9\ud83d\ude00\n"`, `{"a":1,"a":2,"b":[1,{"c":null}]}`,
		`{"a":1,}`, `[1 2]`, `01`, `"\ud800"`, "\"\xff\"", `{"a" 1}`, ` [ "x" , { } ] `, `1.`, `-`, `"\u00"`,
		`"tab	inside"`, `{"\u0061":1,"a":2}`, strings.Repeat("[", 130) + strings.Repeat("]", 130),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := parseJSON(data)
		valid := json.Valid(data)
		if err != nil && strings.Contains(err.Error(), "nested deeper") {
			return // our depth bound is stricter than encoding/json's, on purpose
		}
		if (err == nil) != valid {
			t.Fatalf("validity differs for %q: ours %v, encoding/json valid=%v", data, err, valid)
		}
		if err != nil {
			return
		}
		var std any
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		if err := dec.Decode(&std); err != nil {
			t.Fatal(err)
		}
		if got := toAny(v); !reflect.DeepEqual(got, std) {
			t.Fatalf("values differ for %q:\nours %#v\nstd  %#v", data, got, std)
		}
	})
}

func toAny(v *jsonValue) any {
	switch v.kind {
	case jsonNull:
		return nil
	case jsonBool:
		return v.boolean
	case jsonNumber:
		return json.Number(v.str)
	case jsonString:
		return v.str
	case jsonArray:
		out := make([]any, len(v.items))
		for i, it := range v.items {
			out[i] = toAny(it)
		}
		return out
	default:
		out := make(map[string]any, len(v.members))
		for _, m := range v.members {
			out[m.key] = toAny(m.value)
		}
		return out
	}
}
