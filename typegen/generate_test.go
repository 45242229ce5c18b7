package typegen

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

func TestReadToolsShapes(t *testing.T) {
	tool := `{"name":"t","description":"d","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}`
	for name, input := range map[string]string{
		"array":         "[" + tool + "]",
		"tools/list":    `{"tools":[` + tool + `]}`,
		"json-rpc":      `{"jsonrpc":"2.0","id":3,"result":{"tools":[` + tool + `]}}`,
		"leading space": "\n  [" + tool + "]  \n",
	} {
		tools, err := ReadTools([]byte(input), "srv")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(tools) != 1 || tools[0].ID() != "srv:t" || tools[0].Annotations == nil || !*tools[0].Annotations.ReadOnlyHint {
			t.Errorf("%s: decoded %+v", name, tools)
		}
	}
	// An entry's own server wins over the default.
	tools, err := ReadTools([]byte(`[{"server":"own","name":"t"}]`), "srv")
	if err != nil || tools[0].Server != "own" {
		t.Errorf("own server not kept: %+v %v", tools, err)
	}
}

func TestReadToolsErrors(t *testing.T) {
	for input, want := range map[string]string{
		``:                                      "empty",
		`[{"name":"t"}]`:                        "pass the server's name",
		`[{"server":"s"}]`:                      `has no "name"`,
		`[{"server":"s","name":5}]`:             "tool #1",
		`{"error":{"code":-32601}}`:             "JSON-RPC error response",
		`{"foo":1}`:                             `without "tools"`,
		`42`:                                    "JSON scalar",
		`nul`:                                   "invalid JSON",
		"[\n{\"server\":\"s\",\"name\":\"t\"},": "invalid JSON at line 2",
		`{"tools": 5}`:                          "unexpected JSON number",
	} {
		_, err := ReadTools([]byte(input), "")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ReadTools(%q) = %v, want an error saying %q", input, err, want)
		}
	}
}

func TestGenerateInvalidJSONSchema(t *testing.T) {
	tools := []Tool{
		{Server: "s", Name: "bad", InputSchema: json.RawMessage(`{"type": "object", "properties": {`)},
		{Server: "s", Name: "bad_out", InputSchema: json.RawMessage(`{}`), OutputSchema: json.RawMessage(`{"type": [}`)},
		{Server: "s", Name: "good", InputSchema: json.RawMessage(`{"type":"object","properties":{"x":{"type":"string"}},"required":["x"]}`)},
	}
	out, err := Generate(tools, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"s:bad: /inputSchema: inputSchema is not valid JSON (invalid JSON at byte 34: unexpected end of input in object",
		"s:bad_out: /outputSchema: outputSchema is not valid JSON (invalid JSON at byte 10: unexpected character '}'",
	}
	if len(out.Problems) != len(want) {
		t.Fatalf("problems: %v", out.Problems)
	}
	for i, w := range want {
		if !strings.HasPrefix(out.Problems[i].String(), w) {
			t.Errorf("problem %d = %q, want prefix %q", i, out.Problems[i], w)
		}
	}
	for _, decl := range []string{
		"function bad(input?: Record<string, unknown>): Promise<ToolResult>;",
		"function badOut(input?: Record<string, never>): Promise<ToolResult>;",
		"function good(input: { x: string }): Promise<ToolResult>;",
	} {
		if !strings.Contains(out.DTS, decl) {
			t.Errorf("missing %q in\n%s", decl, out.DTS)
		}
	}
}

func TestGenerateFilters(t *testing.T) {
	tools := corpusTools(t)
	out, err := Generate(tools, Options{Servers: []string{"time"}, Tools: []string{"git:git_status"}})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, b := range out.Tools {
		ids = append(ids, b.ID)
	}
	if got := strings.Join(ids, ","); got != "git:git_status,time:convert_time,time:get_current_time" {
		t.Errorf("selected %s", got)
	}
	if _, err := Generate(tools, Options{Servers: []string{"nope"}}); err == nil || !strings.Contains(err.Error(), `no tools from server "nope"`) {
		t.Errorf("unknown server: %v", err)
	}
	if _, err := Generate(tools, Options{Tools: []string{"git:nope"}}); err == nil || !strings.Contains(err.Error(), `no tool with id "git:nope"`) {
		t.Errorf("unknown tool: %v", err)
	}
}

// A subset generated with the catalog's Names keeps the catalog's names, and
// its declarations are exactly the catalog's declarations of those tools.
func TestGenerateSubsetKeepsNames(t *testing.T) {
	catalog := []Tool{
		{Server: "s", Name: "list_items", InputSchema: json.RawMessage(`{}`)},
		{Server: "s", Name: "list-items", InputSchema: json.RawMessage(`{}`)},
		{Server: "google-maps", Name: "geocode", InputSchema: json.RawMessage(`{}`)},
		{Server: "google_maps", Name: "geocode", InputSchema: json.RawMessage(`{}`)},
	}
	names := AssignNames(catalog)
	full, _ := Generate(catalog, Options{Names: names})
	subset := []Tool{catalog[0], catalog[3]} // list_items sorts after list-items: it is the _2
	out, err := Generate(subset, Options{Names: names})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range out.Tools {
		want, _ := names.Lookup(b.ID)
		if b != want {
			t.Errorf("%s: %+v, want %+v", b.ID, b, want)
		}
	}
	if !strings.Contains(out.DTS, "declare namespace googleMaps_2 {") || !strings.Contains(out.DTS, "function listItems_2(") {
		t.Errorf("subset lost the catalog's names:\n%s", out.DTS)
	}
	for _, decl := range []string{"function listItems_2(", "declare namespace googleMaps_2 {"} {
		if !strings.Contains(full.DTS, decl) {
			t.Errorf("full output lacks %q", decl)
		}
	}
	// Without the catalog's names the subset would be named on its own.
	alone, _ := Generate(subset, Options{})
	if !strings.Contains(alone.DTS, "function listItems(") {
		t.Errorf("own naming of the subset:\n%s", alone.DTS)
	}
	// A tool the Names do not know is reported, not silently declared or dropped.
	extra := append(subset, Tool{Server: "s", Name: "new_tool", InputSchema: json.RawMessage(`{}`)})
	out, _ = Generate(extra, Options{Names: names})
	if len(out.Tools) != 2 || len(out.Problems) != 1 || !strings.Contains(out.Problems[0].Message, "AssignNames") {
		t.Errorf("unknown tool handling: %+v", out.Problems)
	}
}

func TestGenerateDuplicates(t *testing.T) {
	tools := []Tool{
		{Server: "s", Name: "t", Description: "first", InputSchema: json.RawMessage(`{}`)},
		{Server: "s", Name: "t", Description: "second", InputSchema: json.RawMessage(`{}`)},
	}
	out, _ := Generate(tools, Options{})
	if len(out.Tools) != 1 || !strings.Contains(out.DTS, "first") || strings.Contains(out.DTS, "second") ||
		len(out.Problems) != 1 || !strings.Contains(out.Problems[0].Message, "more than once") {
		t.Errorf("duplicate handling: %+v\n%s", out.Problems, out.DTS)
	}
}

// Same input, same bytes: also when the tools come in another order, and
// with or without a cache.
func TestGenerateDeterministic(t *testing.T) {
	tools := corpusTools(t)
	ref, _ := Generate(tools, Options{})
	cache := NewCache(0)
	r := rand.New(rand.NewSource(3))
	for i := 0; i < 3; i++ {
		shuffled := append([]Tool(nil), tools...)
		r.Shuffle(len(shuffled), func(a, b int) { shuffled[a], shuffled[b] = shuffled[b], shuffled[a] })
		out, _ := Generate(shuffled, Options{Cache: cache})
		if out.DTS != ref.DTS {
			t.Fatalf("run %d: output differs", i)
		}
		if fmt.Sprint(out.Tools) != fmt.Sprint(ref.Tools) {
			t.Fatalf("run %d: tool order differs", i)
		}
	}
}

func TestCache(t *testing.T) {
	tools := corpusTools(t)[:20]
	cache := NewCache(0)
	first, _ := Generate(tools, Options{Cache: cache})
	if hits, misses := cache.Stats(); hits != 0 || misses != 20 {
		t.Errorf("first run: %d hits, %d misses", hits, misses)
	}
	second, _ := Generate(tools, Options{Cache: cache})
	if hits, _ := cache.Stats(); hits != 20 {
		t.Errorf("second run: %d hits, want 20", hits)
	}
	if first.DTS != second.DTS {
		t.Error("cached output differs")
	}
	// A changed schema, description or assigned name is a new entry.
	changed := append([]Tool(nil), tools...)
	changed[0].InputSchema = json.RawMessage(`{"type":"object","properties":{"new":{"type":"string"}}}`)
	changed[1].Description = "changed"
	out, _ := Generate(changed, Options{Cache: cache})
	if hits, misses := cache.Stats(); hits != 38 || misses != 22 {
		t.Errorf("after changes: %d hits, %d misses; want 38, 22", hits, misses)
	}
	if !strings.Contains(out.DTS, "new?: string") || !strings.Contains(out.DTS, "/** changed") {
		t.Error("stale entries served after a change")
	}
	// Bounded: a small cache keeps working past its size.
	small := NewCache(4)
	for i := 0; i < 3; i++ {
		o, _ := Generate(tools, Options{Cache: small})
		if o.DTS != first.DTS {
			t.Fatal("small cache changed the output")
		}
	}
	if n := len(small.current) + len(small.previous); n > 4 {
		t.Errorf("cache of 4 holds %d entries", n)
	}
}

// Hostile inputs: big, deep, wide or self-referring schemas give bounded
// output and problems, never a crash or a hang.
func TestHostileSchemas(t *testing.T) {
	deep := strings.Repeat(`{"type":"object","properties":{"a":`, 200) + `{"type":"string"}` + strings.Repeat(`}}`, 200)
	var wide strings.Builder
	wide.WriteString(`{"type":"object","properties":{`)
	for i := 0; i < 20000; i++ {
		if i > 0 {
			wide.WriteByte(',')
		}
		fmt.Fprintf(&wide, `"p%d":{"type":"string","description":"property %d"}`, i, i)
	}
	wide.WriteString(`}}`)
	// 300 $defs that all refer to each other at the top level: one big cycle.
	var mutual strings.Builder
	mutual.WriteString(`{"type":"object","properties":{"x":{"$ref":"#/$defs/d0"}},"$defs":{`)
	for i := 0; i < 300; i++ {
		if i > 0 {
			mutual.WriteByte(',')
		}
		fmt.Fprintf(&mutual, `"d%d":{"anyOf":[{"type":"string"}`, i)
		for j := 0; j < 300; j += 7 {
			fmt.Fprintf(&mutual, `,{"$ref":"#/$defs/d%d"}`, j)
		}
		mutual.WriteString(`]}`)
	}
	mutual.WriteString(`}}`)
	// Required-variant expansion over a big object must stay bounded.
	var variants strings.Builder
	variants.WriteString(`{"type":"object","properties":{`)
	for i := 0; i < 1000; i++ {
		if i > 0 {
			variants.WriteByte(',')
		}
		fmt.Fprintf(&variants, `"p%d":{"type":"string"}`, i)
	}
	variants.WriteString(`},"anyOf":[`)
	for i := 0; i < 16; i++ {
		if i > 0 {
			variants.WriteByte(',')
		}
		fmt.Fprintf(&variants, `{"required":["p%d"]}`, i)
	}
	variants.WriteString(`]}`)

	cases := map[string]struct {
		schema  string
		problem string // a problem that must be reported, or ""
	}{
		"deep nesting":        {deep, "nested deeper than 128 levels"},
		"wide object":         {wide.String(), ""},
		"mutual refs":         {mutual.String(), "closes a cycle"},
		"variant expansion":   {variants.String(), ""},
		"huge description":    {`{"type":"object","description":"` + strings.Repeat("x", 1<<20) + `"}`, ""},
		"huge enum":           {`{"type":"object","properties":{"e":{"enum":[` + strings.TrimSuffix(strings.Repeat(`"v",`, 50000), ",") + `]}}}`, ""},
		"comment breakout":    {`{"type":"object","properties":{"a":{"type":"string","description":"*/ } declare var pwned: 1; /**"}}}`, ""},
		"nested $ref to root": {`{"anyOf":[{"$ref":"#"},{"allOf":[{"$ref":"#"}]}]}`, "closes a cycle"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			tool := Tool{Server: "s", Name: "t", Description: strings.Repeat("d", 100000), InputSchema: json.RawMessage(c.schema)}
			out, err := Generate([]Tool{tool}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(out.Tools) != 1 {
				t.Fatal("the tool was dropped")
			}
			if limit := 3*len(c.schema) + 200000; len(out.DTS) > limit {
				t.Errorf("output %d bytes for %d bytes of schema", len(out.DTS), len(c.schema))
			}
			if c.problem != "" && !strings.Contains(fmt.Sprint(out.Problems), c.problem) {
				t.Errorf("want a problem saying %q, got %v", c.problem, out.Problems)
			}
			if err := parsesAsTypeScript(out.DTS); err != nil {
				t.Errorf("output does not parse: %v", err)
			}
			if strings.Contains(out.DTS, "declare var pwned") && !strings.Contains(out.DTS, `*\/ } declare var pwned`) {
				t.Error("a description closed the comment")
			}
		})
	}
}

func TestMaxDescription(t *testing.T) {
	tool := Tool{Server: "s", Name: "t", Description: strings.Repeat("é", 100), InputSchema: json.RawMessage(`{}`)}
	out, _ := Generate([]Tool{tool}, Options{MaxDescription: 10})
	if !strings.Contains(out.DTS, "/** "+strings.Repeat("é", 10)+"… */") {
		t.Errorf("description not cut at 10 characters:\n%s", out.DTS)
	}
}

// One Names and one Cache serve concurrent generations (go test -race).
func TestGenerateConcurrent(t *testing.T) {
	tools := corpusTools(t)
	names := AssignNames(tools)
	cache := NewCache(64) // small: entries are evicted while others read
	done := make(chan string)
	for g := 0; g < 4; g++ {
		go func(g int) {
			for i := 0; i < 3; i++ {
				sub := tools[(g*40+i*7)%len(tools):]
				sub = sub[:min(len(sub), 60)]
				out, err := Generate(sub, Options{Names: names, Cache: cache})
				if err != nil {
					done <- err.Error()
					return
				}
				want, _ := Generate(sub, Options{Names: names})
				if out.DTS != want.DTS {
					done <- "cached output differs from uncached"
					return
				}
			}
			done <- ""
		}(g)
	}
	for g := 0; g < 4; g++ {
		if msg := <-done; msg != "" {
			t.Error(msg)
		}
	}
}

// Ranked declares the tools in the order given, opening a namespace block
// again when the namespace comes back, with the catalog's names; the
// unranked output of the same tools is sorted.
func TestGenerateRanked(t *testing.T) {
	catalog := []Tool{
		{Server: "b", Name: "zeta", InputSchema: json.RawMessage(`{}`)},
		{Server: "a", Name: "alpha", InputSchema: json.RawMessage(`{}`)},
		{Server: "b", Name: "beta", InputSchema: json.RawMessage(`{}`)},
		{Server: "b", Name: "gamma", InputSchema: json.RawMessage(`{}`)},
	}
	names := AssignNames(catalog)
	out, err := Generate(catalog, Options{Names: names, Ranked: true})
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, b := range out.Tools {
		order = append(order, b.Namespace+"."+b.Function)
	}
	if got := strings.Join(order, " "); got != "b.zeta a.alpha b.beta b.gamma" {
		t.Errorf("ranked order: %s", got)
	}
	body := strings.TrimPrefix(out.DTS, Preamble)
	want := "declare namespace b {\n\tfunction zeta(input?: Record<string, never>): Promise<ToolResult>;\n}\n" +
		"declare namespace a {\n\tfunction alpha(input?: Record<string, never>): Promise<ToolResult>;\n}\n" +
		"declare namespace b {\n\tfunction beta(input?: Record<string, never>): Promise<ToolResult>;\n\tfunction gamma(input?: Record<string, never>): Promise<ToolResult>;\n}\n"
	if body != want {
		t.Errorf("ranked declarations:\n%s\nwant:\n%s", body, want)
	}
	sorted, _ := Generate(catalog, Options{Names: names})
	if !strings.HasPrefix(strings.TrimPrefix(sorted.DTS, Preamble), "declare namespace a {") || strings.Count(sorted.DTS, "declare namespace b") != 1 {
		t.Errorf("unranked output is not sorted:\n%s", sorted.DTS)
	}
}

// Notes are tags of the tool's doc, cleaned like any server text, and part
// of what the cache keys on.
func TestGenerateNotes(t *testing.T) {
	tool := Tool{Server: "s", Name: "drop", Description: "Drop a table.", InputSchema: json.RawMessage(`{}`),
		Notes: []string{"@approval a person approves each call", "@evil */ declare const x: 1; /*"}}
	cache := NewCache(0)
	out, _ := Generate([]Tool{tool}, Options{Cache: cache})
	if !strings.Contains(out.DTS, "/** Drop a table. @approval a person approves each call @evil *\\/ declare const x: 1; /* */") {
		t.Errorf("notes:\n%s", out.DTS)
	}
	tool.Notes = nil
	plain, _ := Generate([]Tool{tool}, Options{Cache: cache})
	if strings.Contains(plain.DTS, "@approval") {
		t.Errorf("the cache served the declaration with notes for one without:\n%s", plain.DTS)
	}
}
