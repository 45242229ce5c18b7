package typegen

import (
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Binding is the place of one tool in TypeScript: the agent calls it as
// Namespace.Function(input), and the bindings route that call to ID.
type Binding struct {
	ID        string // "server:tool", the internal id
	Server    string // the server's name as configured
	Tool      string // the tool's name as the server lists it
	Namespace string // TypeScript namespace of the server
	Function  string // TypeScript function of the tool inside Namespace
}

// Names is the one naming of tools in TypeScript (ARCHITECTURE.md contract 1):
// the .d.ts and the bindings both take their names from it, so they cannot
// disagree. Build it once over the whole catalog with AssignNames and pass it
// to Generate for every subset: a subset keeps the catalog's names.
//
// A Names is immutable and safe for concurrent use.
type Names struct {
	byID      map[string]int    // id -> index in list; ambiguous ids are absent
	byTS      map[[2]string]int // {namespace, function} -> index in list
	ambiguous map[string]bool   // ids shared by two (server, tool) pairs
	list      []Binding         // sorted by Namespace, then Function
}

// AssignNames names every distinct (server, tool) pair in tools.
//
// Rules, all deterministic:
//   - A namespace is the camelCase of the server name and depends only on the
//     set of server names; a function is the camelCase of the tool name and
//     depends only on the set of tool names of its own server. Adding a tool to
//     one server never renames anything elsewhere.
//   - Non-ASCII letters are folded to ASCII where Unicode decomposition allows
//     (é -> e) and are otherwise word separators. A name left empty becomes
//     "server" or "tool"; a name starting with a digit gets a leading "_";
//     names are cut to 64 bytes.
//   - Words JavaScript reserves, global names of the agent's environment (for
//     namespaces: console, fetch, JSON's siblings, the DOM globals tsc knows),
//     and members that would break a namespace object (then makes it a
//     thenable; constructor, prototype, __proto__ and the Object.prototype
//     methods) get a trailing "_".
//   - Names that still coincide are ordered with the one already spelled
//     exactly like the result first, then by the original name's bytes; the
//     first keeps the name and the others get "_2", "_3", ..., skipping any
//     name another tool has by itself. No tool is ever dropped.
func AssignNames(tools []Tool) *Names {
	servers := map[string]map[string]bool{}
	for _, t := range tools {
		if servers[t.Server] == nil {
			servers[t.Server] = map[string]bool{}
		}
		servers[t.Server][t.Name] = true
	}
	serverNames := make([]string, 0, len(servers))
	for s := range servers {
		serverNames = append(serverNames, s)
	}
	namespaces := assignUnique(serverNames, namespaceBase)

	n := &Names{
		byID:      map[string]int{},
		byTS:      map[[2]string]int{},
		ambiguous: map[string]bool{},
	}
	for server, toolSet := range servers {
		toolNames := make([]string, 0, len(toolSet))
		for name := range toolSet {
			toolNames = append(toolNames, name)
		}
		functions := assignUnique(toolNames, functionBase)
		for _, name := range toolNames {
			n.list = append(n.list, Binding{
				ID:        server + ":" + name,
				Server:    server,
				Tool:      name,
				Namespace: namespaces[server],
				Function:  functions[name],
			})
		}
	}
	sort.Slice(n.list, func(i, j int) bool {
		a, b := n.list[i], n.list[j]
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Function < b.Function
	})
	for i, b := range n.list {
		n.byTS[[2]string{b.Namespace, b.Function}] = i
		if _, dup := n.byID[b.ID]; dup || n.ambiguous[b.ID] {
			// "a:b" + "c" and "a" + "b:c" have the same id: routing by id
			// cannot tell them apart, so neither is resolvable by id.
			delete(n.byID, b.ID)
			n.ambiguous[b.ID] = true
			continue
		}
		n.byID[b.ID] = i
	}
	return n
}

// Lookup returns the TypeScript place of the tool with the given "server:tool"
// id. It reports false for unknown ids and for ids that two different
// (server, tool) pairs share (a server name containing ':').
func (n *Names) Lookup(id string) (Binding, bool) {
	if n == nil {
		return Binding{}, false
	}
	i, ok := n.byID[id]
	if !ok {
		return Binding{}, false
	}
	return n.list[i], true
}

// Resolve returns the tool the agent means by namespace.function.
func (n *Names) Resolve(namespace, function string) (Binding, bool) {
	if n == nil {
		return Binding{}, false
	}
	i, ok := n.byTS[[2]string{namespace, function}]
	if !ok {
		return Binding{}, false
	}
	return n.list[i], true
}

// Bindings lists every named tool, sorted by Namespace then Function (the
// order of the .d.ts). The slice is a copy.
func (n *Names) Bindings() []Binding {
	if n == nil {
		return nil
	}
	return append([]Binding(nil), n.list...)
}

// lookupPair finds a binding by its (server, tool) pair, which is exact even
// when the id is ambiguous.
func (n *Names) lookupPair(server, tool string) (Binding, bool) {
	if n == nil {
		return Binding{}, false
	}
	if i, ok := n.byID[Tool{Server: server, Name: tool}.ID()]; ok {
		b := n.list[i]
		if b.Server == server && b.Tool == tool {
			return b, true
		}
	}
	for _, b := range n.list {
		if b.Server == server && b.Tool == tool {
			return b, true
		}
	}
	return Binding{}, false
}

// NamespaceOf is the namespace a server would have on its own (a server
// whose name collides with another's gets a suffix in AssignNames; use
// Names where the catalog is known).
func NamespaceOf(server string) string {
	return assignUnique([]string{server}, namespaceBase)[server]
}

// ValidNamespace reports whether name could be a namespace: an identifier
// that is not a reserved word, a global of the agent's environment (console,
// fetch, process, ...) or a member that would break a namespace object.
func ValidNamespace(name string) bool {
	if name == "" || len(name) > maxIdentLen || reservedWords[name] || reservedGlobals[name] || reservedMembers[name] {
		return false
	}
	for i, c := range []byte(name) {
		if !(c == '_' || c == '$' || isLower(c) || isUpper(c) || (i > 0 && isDigit(c))) {
			return false
		}
	}
	return true
}

// maxIdentLen bounds generated identifiers; MCP names are at most 128 bytes,
// but hostile servers are not bound by the spec.
const maxIdentLen = 64

func namespaceBase(server string) string {
	id := camelCase(server)
	if id == "" {
		id = "server"
	}
	id = fixLeadingDigit(id)
	if reservedWords[id] || reservedGlobals[id] || reservedMembers[id] {
		id += "_"
	}
	return id
}

func functionBase(tool string) string {
	id := camelCase(tool)
	if id == "" {
		id = "tool"
	}
	id = fixLeadingDigit(id)
	if reservedWords[id] || reservedMembers[id] {
		id += "_"
	}
	return id
}

// typeNameBase names a type from a schema location ($defs key and the like).
func typeNameBase(s string) string {
	id := pascalCase(s)
	if id == "" {
		id = "Type"
	}
	id = fixLeadingDigit(id)
	if reservedTypeNames[id] {
		id += "_"
	}
	return id
}

func fixLeadingDigit(id string) string {
	if id[0] >= '0' && id[0] <= '9' {
		return "_" + id
	}
	return id
}

// assignUnique maps each distinct raw name to a unique identifier, following
// the collision rules documented on AssignNames.
func assignUnique(raws []string, base func(string) string) map[string]string {
	out := make(map[string]string, len(raws))
	groups := map[string][]string{}
	for _, r := range raws {
		b := base(r)
		groups[b] = append(groups[b], r)
	}
	taken := make(map[string]bool, len(groups))
	bases := make([]string, 0, len(groups))
	for b := range groups {
		taken[b] = true
		bases = append(bases, b)
	}
	sort.Strings(bases)
	for _, b := range bases {
		members := groups[b]
		if len(members) == 1 {
			out[members[0]] = b
			continue
		}
		sort.Slice(members, func(i, j int) bool {
			ei, ej := members[i] == b, members[j] == b
			if ei != ej {
				return ei
			}
			return members[i] < members[j]
		})
		out[members[0]] = b
		next := 2
		for _, m := range members[1:] {
			for {
				candidate := b + "_" + strconv.Itoa(next)
				next++
				if !taken[candidate] {
					taken[candidate] = true
					out[m] = candidate
					break
				}
			}
		}
	}
	return out
}

// words splits a name into its words: at every character that is not an
// ASCII letter or digit, between a lower-case letter or digit and an
// upper-case letter (listCommits), and before the last capital of an acronym
// that starts a word (HTTPServer -> HTTP Server).
func words(s string) []string {
	s = asciiFold(s)
	var out []string
	start := -1
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !isAlnum(c) {
			if start >= 0 {
				out = append(out, s[start:i])
				start = -1
			}
			continue
		}
		if start < 0 {
			start = i
			continue
		}
		prev := s[i-1]
		if isUpper(c) && (isLower(prev) || isDigit(prev)) {
			out = append(out, s[start:i])
			start = i
		} else if isUpper(c) && isUpper(prev) && i+1 < len(s) && isLower(s[i+1]) {
			out = append(out, s[start:i])
			start = i
		}
	}
	if start >= 0 {
		out = append(out, s[start:])
	}
	return out
}

// camelCase: list_commits -> listCommits, API-get-user -> apiGetUser,
// getHTTPStatus -> getHTTPStatus (words after the first keep their case).
func camelCase(s string) string {
	ws := words(s)
	var b strings.Builder
	for i, w := range ws {
		if i == 0 {
			if isAllUpper(w) {
				b.WriteString(strings.ToLower(w))
			} else {
				b.WriteString(strings.ToLower(w[:1]) + w[1:])
			}
			continue
		}
		b.WriteString(strings.ToUpper(w[:1]) + w[1:])
	}
	return cut(b.String())
}

// pascalCase: rich_text_request -> RichTextRequest.
func pascalCase(s string) string {
	ws := words(s)
	var b strings.Builder
	for _, w := range ws {
		b.WriteString(strings.ToUpper(w[:1]) + w[1:])
	}
	return cut(b.String())
}

func cut(s string) string {
	if len(s) > maxIdentLen {
		return s[:maxIdentLen]
	}
	return s
}

// asciiFold keeps ASCII as is, folds accented letters to their base letter
// (NFKD, then drop the marks) and turns every other character into a space.
func asciiFold(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if r < utf8.RuneSelf {
			b.WriteRune(r)
			continue
		}
		folded := false
		for _, d := range norm.NFKD.String(string(r)) {
			if d < utf8.RuneSelf && isAlnum(byte(d)) {
				b.WriteRune(d)
				folded = true
			}
		}
		if !folded {
			b.WriteByte(' ')
		}
	}
	return b.String()
}

func isAlnum(c byte) bool { return isLower(c) || isUpper(c) || isDigit(c) }
func isLower(c byte) bool { return c >= 'a' && c <= 'z' }
func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isAllUpper(w string) bool {
	for i := 0; i < len(w); i++ {
		if isLower(w[i]) {
			return false
		}
	}
	return true
}

// isIdentifier reports whether s can be written unquoted as a property name.
// Only ASCII identifiers qualify; reserved words are allowed as property names.
func isIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '_' || c == '$' || isLower(c) || isUpper(c) || (i > 0 && isDigit(c)) {
			continue
		}
		return false
	}
	return true
}
