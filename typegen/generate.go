package typegen

import (
	"bytes"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode"
)

// Options control Generate. The zero value generates every tool with names
// assigned over exactly those tools.
type Options struct {
	// Names to use. Pass the catalog's Names (AssignNames over every tool)
	// when generating for a subset, such as the top-k of a search, so the
	// subset keeps the names the bindings use. Nil means AssignNames(tools).
	Names *Names

	// Servers and Tools select what to declare: a tool is kept when its
	// server is in Servers or its "server:tool" id is in Tools. Both empty
	// keep everything. Naming a server or tool that is not among the tools is
	// an error, so a typo does not silently produce an empty file.
	Servers []string
	Tools   []string

	// Cache, when set, remembers each tool's declarations by a hash of
	// everything they depend on, so generating for the same tools again
	// (every search, every run) costs a hash and a lookup per tool.
	Cache *Cache

	// Ranked declares the tools in the order given (a search's ranking,
	// best first) instead of sorted by namespace and function. A namespace
	// block is opened whenever the next tool's namespace is not the
	// previous one's: TypeScript merges the blocks of one namespace, so
	// the names, and what they declare, are the same in either order.
	Ranked bool

	// MaxDescription bounds each description and doc text, in characters;
	// longer text is cut with "…". 0 means 8192, which keeps every
	// description of the real-tool corpus whole.
	MaxDescription int
}

// Output is one generated declaration file.
type Output struct {
	// DTS is the .d.ts text: the shared preamble, then one namespace per
	// server and one function per tool, sorted by namespace and function
	// (or in the order given: Options.Ranked). It is global (no
	// import/export) and compiles under tsc --strict.
	DTS string
	// Tools lists the declared tools in file order; the bindings install
	// exactly these.
	Tools []Binding
	// Problems found in the input. A tool with problems is still declared,
	// with the affected parts widened (unknown, or an open object for an
	// unreadable input schema), unless the problem says it was skipped.
	Problems []Problem
}

// Problem is something wrong with one tool's definition.
type Problem struct {
	Tool    string // "server:tool"
	Pointer string // JSON pointer into the tool definition, e.g. "/inputSchema/properties/q/$ref"; "" for the whole tool
	Message string // what is wrong and what to do
}

// String is one line: "server:tool: /pointer: message". A tool id or
// pointer with unprintable characters is quoted, so hostile names cannot
// forge extra lines in a log.
func (p Problem) String() string {
	tool, ptr := printable(p.Tool), printable(p.Pointer)
	if ptr == "" {
		return tool + ": " + p.Message
	}
	return tool + ": " + ptr + ": " + p.Message
}

func printable(s string) string {
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	return s
}

// Generate declares tools in TypeScript. Problems with individual tools never
// stop the others from getting their types; the error is only for unusable
// options.
func Generate(tools []Tool, opts Options) (*Output, error) {
	keep, err := selection(tools, opts)
	if err != nil {
		return nil, err
	}
	names := opts.Names
	if names == nil {
		names = AssignNames(tools)
	}
	maxDoc := opts.MaxDescription
	if maxDoc <= 0 {
		maxDoc = defaultMaxDoc
	}

	out := &Output{}
	type item struct {
		b    *Binding
		tool *Tool
	}
	var items []item
	seen := map[[2]string]bool{}
	for i := range tools {
		t := &tools[i]
		if !keep(t) {
			continue
		}
		pair := [2]string{t.Server, t.Name}
		if seen[pair] {
			out.Problems = append(out.Problems, Problem{Tool: t.ID(), Message: "listed more than once; only the first definition is declared"})
			continue
		}
		seen[pair] = true
		b, ok := names.lookupPair(t.Server, t.Name)
		if !ok {
			out.Problems = append(out.Problems, Problem{Tool: t.ID(), Message: "not declared: Options.Names has no name for it; build Names with AssignNames over the whole catalog, including this tool"})
			continue
		}
		if names.ambiguous[b.ID] {
			out.Problems = append(out.Problems, Problem{Tool: t.ID(), Message: "not declared: another server/tool pair has the same id (a server name contains ':'), so calls could not be routed; rename the server"})
			continue
		}
		items = append(items, item{b: &b, tool: t})
	}
	if !opts.Ranked {
		sort.Slice(items, func(i, j int) bool {
			a, b := items[i].b, items[j].b
			if a.Namespace != b.Namespace {
				return a.Namespace < b.Namespace
			}
			return a.Function < b.Function
		})
	}

	// Render (or fetch) every fragment first, then write the file in one
	// allocation: with a warm cache, copying the text is most of the work.
	frags := make([]fragment, len(items))
	size := len(Preamble)
	for i, it := range items {
		frags[i] = toolFragment(it.tool, *it.b, maxDoc, opts.Cache)
		size += len(frags[i].text) + len(it.b.Namespace) + 24
	}
	out.Tools = make([]Binding, 0, len(items))
	var buf strings.Builder
	buf.Grow(size)
	buf.WriteString(Preamble)
	for i, it := range items {
		if i == 0 || items[i-1].b.Namespace != it.b.Namespace {
			if i > 0 {
				buf.WriteString("}\n")
			}
			buf.WriteString("declare namespace ")
			buf.WriteString(it.b.Namespace)
			buf.WriteString(" {\n")
		}
		buf.WriteString(frags[i].text)
		out.Problems = append(out.Problems, frags[i].problems...)
		out.Tools = append(out.Tools, *it.b)
	}
	if len(items) > 0 {
		buf.WriteString("}\n")
	}
	out.DTS = buf.String()
	return out, nil
}

// selection validates the filters and returns the predicate they define.
func selection(tools []Tool, opts Options) (func(*Tool) bool, error) {
	if len(opts.Servers) == 0 && len(opts.Tools) == 0 {
		return func(*Tool) bool { return true }, nil
	}
	servers, ids := map[string]bool{}, map[string]bool{}
	for _, t := range tools {
		servers[t.Server] = true
		ids[t.ID()] = true
	}
	wantServers, wantIDs := map[string]bool{}, map[string]bool{}
	for _, s := range opts.Servers {
		if !servers[s] {
			return nil, fmt.Errorf("no tools from server %q; the servers are: %s", s, listSome(servers, 20))
		}
		wantServers[s] = true
	}
	for _, id := range opts.Tools {
		if !ids[id] {
			hint := ""
			if !strings.Contains(id, ":") {
				hint = ` (tool ids are "server:tool")`
			}
			return nil, fmt.Errorf("no tool with id %q%s; for example: %s", id, hint, listSome(ids, 5))
		}
		wantIDs[id] = true
	}
	return func(t *Tool) bool { return wantServers[t.Server] || wantIDs[t.ID()] }, nil
}

func listSome(set map[string]bool, n int) string {
	all := make([]string, 0, len(set))
	for s := range set {
		all = append(all, fmt.Sprintf("%q", s))
	}
	sort.Strings(all)
	if len(all) > n {
		return strings.Join(all[:n], ", ") + fmt.Sprintf(", ... (%d in all)", len(all))
	}
	return strings.Join(all, ", ")
}

type fragment struct {
	text     string
	problems []Problem
}

func toolFragment(t *Tool, b Binding, maxDoc int, cache *Cache) fragment {
	if cache == nil {
		return renderTool(t, b, maxDoc)
	}
	key := cache.key(t, b, maxDoc)
	if f, ok := cache.get(key); ok {
		return f
	}
	f := renderTool(t, b, maxDoc)
	cache.put(key, f)
	return f
}

// renderTool declares one tool inside its server's namespace:
//
//	/** description @readOnly */
//	function listCommits(input: listCommits.Input): Promise<ToolResult>;
//	namespace listCommits {
//	  interface Input { ... }
//	}
//
// The tool's own namespace (merged with the function) keeps its type names
// (Input, Output, its $defs) apart from every other tool's, so a tool's
// declarations depend on nothing but the tool and can be cached alone.
func renderTool(t *Tool, b Binding, maxDoc int) fragment {
	id := b.ID
	c := newConverter(id, maxDoc)
	root := (*path)(nil).child("")
	var remarks []string
	inputDoc := "" // the input schema's own description, when inline

	// Input: declared inline in the parameter, which is what the agent reads
	// first and saves a named type per tool; named Input only when a $ref
	// inside the schema points back at its root.
	param := ""
	inAt := root.child("inputSchema")
	in, inOK := parseSchema(c, t.InputSchema, inAt, "inputSchema", true)
	var inRoot *namedType
	switch {
	case !inOK:
		param = "input?: Record<string, unknown>"
		remarks = append(remarks, "@remarks the input schema could not be read, so the input is not checked here")
	case in.kind == jsonBool:
		if in.boolean {
			param = "input?: Record<string, unknown>"
		} else {
			c.problem(inAt, "inputSchema is false, which accepts no input at all; the tool cannot be called")
			param = "input: never"
		}
	case isNoArgs(in):
		param = "input?: Record<string, never>"
	default:
		if tp := in.get("type"); tp != nil && !hasTypeName(tp, "object") {
			c.problem(inAt.child("type"), "inputSchema must describe an object (MCP sends arguments as a JSON object); the declared type is kept as the server wrote it")
		}
		inRoot = c.addRoot(in, inAt, "Input", false)
		if rd := schemaDoc(in, maxDoc); rd.text != "" && in.get("description") != nil {
			inputDoc = "@param input " + strings.Join(strings.Fields(rd.text), " ")
		}
		c.qual = b.Function + "."
		inline := c.typeOf(in, inRoot.doc, inAt, 1, heads{head: inRoot})
		c.qual = ""
		param = "input: " + inline.text
		if isPlainObject(in) && !hasRequired(in) {
			param = "input?: " + inline.text
		}
	}

	// Output: always named, the function's result type. A declared output
	// schema wins over one learned from calls.
	result := "ToolResult"
	if len(bytes.TrimSpace(t.OutputSchema)) > 0 && string(bytes.TrimSpace(t.OutputSchema)) != "null" {
		outAt := root.child("outputSchema")
		if o, ok := parseSchema(c, t.OutputSchema, outAt, "outputSchema", false); ok {
			c.addRoot(o, outAt, "Output", true)
			result = b.Function + ".Output"
		}
	} else if len(t.InferredOutput) > 0 && t.InferredFrom > 0 {
		outAt := root.child("inferredOutput")
		if o, ok := parseSchema(c, t.InferredOutput, outAt, "inferredOutput", false); ok {
			c.addRoot(o, outAt, "Output", true)
			result = b.Function + ".Output"
			calls := "calls"
			if t.InferredFrom == 1 {
				calls = "call"
			}
			remarks = append(remarks, fmt.Sprintf("@inferred from %d %s", t.InferredFrom, calls))
		}
	}
	c.emitAll(2)
	if inRoot != nil && c.rootRefs[in] {
		inputDoc = "" // now on the Input declaration
		c.declareRoot(inRoot)
		c.emitAll(2)
		param = "input: " + b.Function + ".Input"
		if isPlainObject(in) && !hasRequired(in) {
			param = "input?: " + b.Function + ".Input"
		}
	}

	var w strings.Builder
	if inputDoc != "" {
		remarks = append([]string{inputDoc}, remarks...)
	}
	toolDoc(t, b, maxDoc, remarks).writeBlock(&w, "\t")
	w.WriteString("\tfunction ")
	w.WriteString(b.Function)
	w.WriteByte('(')
	w.WriteString(param)
	w.WriteString("): Promise<")
	w.WriteString(result)
	w.WriteString(">;\n")
	if len(c.order) > 0 {
		w.WriteString("\tnamespace ")
		w.WriteString(b.Function)
		w.WriteString(" {\n")
		for _, nt := range c.order {
			w.WriteString(nt.decl)
		}
		w.WriteString("\t}\n")
	}
	return fragment{text: w.String(), problems: dedupProblems(c.problems)}
}

// parseSchema reads a raw schema, reporting why it cannot be used.
func parseSchema(c *converter, raw []byte, at *path, field string, required bool) (*jsonValue, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		if required {
			c.problem(at, "the tool has no %s; MCP requires one (use {\"type\":\"object\"} for a tool without arguments)", field)
		}
		return nil, false
	}
	v, err := parseJSON(raw)
	if err != nil {
		c.problem(at, "%s is not valid JSON (%v); fix the tool definition", field, err)
		return nil, false
	}
	if v.kind != jsonObject && v.kind != jsonBool {
		c.problem(at, "%s must be a JSON Schema object, not %s", field, kindName(v.kind))
		return nil, false
	}
	return v, true
}

// isNoArgs: an object schema that declares no members, the usual shape of a
// tool without arguments ({"type":"object","properties":{}}).
func isNoArgs(s *jsonValue) bool {
	if !isPlainObject(s) && !(s.isObject() && len(s.members) == 0) {
		return false
	}
	if p := s.get("properties"); p != nil && (p.kind != jsonObject || len(p.members) > 0) {
		return false
	}
	if ap := s.get("additionalProperties"); ap != nil && !(ap.kind == jsonBool && !ap.boolean) {
		return false
	}
	return !hasAny(s, "patternProperties", "required", "$defs", "definitions")
}

func hasRequired(s *jsonValue) bool {
	r := s.get("required")
	return r != nil && r.kind == jsonArray && len(r.items) > 0
}

// toolDoc is the JSDoc of a tool function: the description (or title), the
// annotations the server stated, and the original id when the name had to be
// changed.
func toolDoc(t *Tool, b Binding, maxDoc int, remarks []string) docInfo {
	d := docInfo{text: cleanDoc(t.Description, maxDoc)}
	if d.text == "" {
		d.text = cleanDoc(t.Title, maxDoc)
	}
	if a := t.Annotations; a != nil {
		if d.text == "" {
			d.text = cleanDoc(a.Title, maxDoc)
		}
		readOnly := a.ReadOnlyHint != nil && *a.ReadOnlyHint
		if readOnly {
			d.tags = append(d.tags, "@readOnly")
		}
		if a.DestructiveHint != nil && !readOnly {
			if *a.DestructiveHint {
				d.tags = append(d.tags, "@destructive")
			} else {
				d.tags = append(d.tags, "@nonDestructive")
			}
		}
		if a.IdempotentHint != nil && *a.IdempotentHint {
			d.tags = append(d.tags, "@idempotent")
		}
	}
	if b.Function != camelCase(t.Name) || b.Namespace != camelCase(t.Server) {
		d.tags = append(d.tags, "@tool "+cleanTag(quoteString(b.ID), maxDoc))
	}
	for _, n := range t.Notes {
		if n = cleanTag(n, maxDoc); n != "" {
			d.tags = append(d.tags, n)
		}
	}
	d.tags = append(d.tags, remarks...)
	return d
}

func dedupProblems(ps []Problem) []Problem {
	if len(ps) < 2 {
		return ps
	}
	seen := map[Problem]bool{}
	out := ps[:0]
	for _, p := range ps {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}
