package typegen

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

func tl(server, name string) Tool { return Tool{Server: server, Name: name} }

func TestCamelCase(t *testing.T) {
	for in, want := range map[string]string{
		"list_commits":     "listCommits",
		"list-commits":     "listCommits",
		"listCommits":      "listCommits",
		"ListCommits":      "listCommits",
		"API-get-user":     "apiGetUser",
		"getHTTPStatus":    "getHTTPStatus",
		"HTTPServer":       "httpServer",
		"browser_navigate": "browserNavigate",
		"v2_list":          "v2List",
		"kubectl.get":      "kubectlGet",
		"café_order":       "cafeOrder",
		"  spaced  out ":   "spacedOut",
		"__proto__":        "proto",
		"検索":               "",
		"":                 "",
	} {
		if got := camelCase(in); got != want {
			t.Errorf("camelCase(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestAssignNamesRules(t *testing.T) {
	tools := []Tool{
		tl("github", "list_commits"),
		tl("github", "delete"),
		tl("github", "then"),
		tl("github", "constructor"),
		tl("github", "prototype"),
		tl("github", "__proto__"),
		tl("github", "toString"),
		tl("github", "2fa"),
		tl("github", ""),
		tl("github", "検索"),
		tl("github", "ツール"),
		tl("github", strings.Repeat("x", 500)),
		tl("fetch", "fetch"),
		tl("console", "log"),
		tl("", "x"),
		tl("9lives", "x"),
		tl("class", "x"),
		tl("undefined", "x"),
	}
	n := AssignNames(tools)
	want := map[string][2]string{
		"github:list_commits": {"github", "listCommits"},
		"github:delete":       {"github", "delete_"},
		"github:then":         {"github", "then_"},
		"github:constructor":  {"github", "constructor_"},
		"github:prototype":    {"github", "prototype_"},
		"github:__proto__":    {"github", "proto"},
		"github:toString":     {"github", "toString_"},
		"github:2fa":          {"github", "_2fa"},
		"github:":             {"github", "tool"},
		"fetch:fetch":         {"fetch_", "fetch"},
		"console:log":         {"console_", "log"},
		":x":                  {"server", "x"},
		"9lives:x":            {"_9lives", "x"},
		"class:x":             {"class_", "x"},
		"undefined:x":         {"undefined_", "x"},
	}
	// The three tools whose names fold to nothing share the base "tool" and
	// are ordered by their original bytes: "" first, then by UTF-8 bytes.
	first, second := "ツール", "検索"
	if first > second {
		first, second = second, first
	}
	want["github:"+first] = [2]string{"github", "tool_2"}
	want["github:"+second] = [2]string{"github", "tool_3"}
	for id, w := range want {
		b, ok := n.Lookup(id)
		if !ok {
			t.Errorf("Lookup(%q) found nothing", id)
			continue
		}
		if b.Namespace != w[0] || b.Function != w[1] {
			t.Errorf("%s -> %s.%s, want %s.%s", id, b.Namespace, b.Function, w[0], w[1])
		}
		back, ok := n.Resolve(b.Namespace, b.Function)
		if !ok || back.ID != id {
			t.Errorf("Resolve(%s, %s) = %q, %v; want %q", b.Namespace, b.Function, back.ID, ok, id)
		}
	}
	long, _ := n.Lookup("github:" + strings.Repeat("x", 500))
	if len(long.Function) != maxIdentLen {
		t.Errorf("long name not cut to %d bytes: %d", maxIdentLen, len(long.Function))
	}
	if got := len(n.Bindings()); got != len(tools) {
		t.Errorf("%d bindings for %d distinct tools: a tool was dropped", got, len(tools))
	}
	for _, b := range n.Bindings() {
		if !isIdentifier(b.Namespace) || !isIdentifier(b.Function) {
			t.Errorf("%s: %q.%q is not an identifier", b.ID, b.Namespace, b.Function)
		}
	}
}

func TestAssignNamesCollisions(t *testing.T) {
	n := AssignNames([]Tool{
		tl("s", "list_items"), tl("s", "list-items"), tl("s", "listItems"), tl("s", "list.items"),
		tl("s", "ListItems"), tl("s", "then"), tl("s", "Then"),
	})
	got := map[string]string{}
	for _, b := range n.Bindings() {
		got[b.Tool] = b.Function
	}
	want := map[string]string{
		"listItems":  "listItems", // spelled exactly like the result: keeps it
		"ListItems":  "listItems_2",
		"list-items": "listItems_3",
		"list.items": "listItems_4",
		"list_items": "listItems_5",
		"Then":       "then_",
		"then":       "then__2",
	}
	for tool, fn := range want {
		if got[tool] != fn {
			t.Errorf("%s -> %s, want %s (all: %v)", tool, got[tool], fn, got)
		}
	}
}

// The names of a tool depend only on its own server's tool set (function)
// and the set of server names (namespace): never on the order of the input,
// on duplicates, or on other servers' tools.
func TestAssignNamesStable(t *testing.T) {
	base := []Tool{
		tl("github", "list_commits"), tl("github", "list-commits"), tl("github", "get_me"),
		tl("google-maps", "geocode"), tl("google_maps", "geocode"), tl("fetch", "fetch"),
	}
	ref := AssignNames(base).Bindings()
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 50; i++ {
		shuffled := append([]Tool(nil), base...)
		r.Shuffle(len(shuffled), func(a, b int) { shuffled[a], shuffled[b] = shuffled[b], shuffled[a] })
		shuffled = append(shuffled, shuffled[0]) // a duplicate
		if got := AssignNames(shuffled).Bindings(); fmt.Sprint(got) != fmt.Sprint(ref) {
			t.Fatalf("order changed the names:\n%v\nwant\n%v", got, ref)
		}
	}
	// More tools on another server, and more servers that do not collide,
	// leave github's names alone.
	more := append(append([]Tool(nil), base...), tl("slack", "post_message"), tl("slack", "list_commits"), tl("gitlab", "list_commits"))
	n := AssignNames(more)
	for _, b := range ref {
		got, ok := n.Lookup(b.ID)
		if !ok || got != b {
			t.Errorf("%s changed from %+v to %+v when other servers grew", b.ID, b, got)
		}
	}
}

func TestAssignNamesAmbiguousID(t *testing.T) {
	n := AssignNames([]Tool{tl("a:b", "c"), tl("a", "b:c"), tl("ok", "tool")})
	if _, ok := n.Lookup("a:b:c"); ok {
		t.Error("an id shared by two (server, tool) pairs must not resolve")
	}
	if _, ok := n.Lookup("ok:tool"); !ok {
		t.Error("ok:tool should resolve")
	}
	if len(n.Bindings()) != 3 {
		t.Errorf("want 3 bindings, got %d", len(n.Bindings()))
	}
	out, err := Generate([]Tool{
		{Server: "a:b", Name: "c", InputSchema: []byte(`{}`)},
		{Server: "a", Name: "b:c", InputSchema: []byte(`{}`)},
	}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Tools) != 0 || len(out.Problems) != 2 || !strings.Contains(out.Problems[0].Message, "same id") {
		t.Errorf("ambiguous ids should be reported and not declared: %+v", out)
	}
}

func TestNamesNil(t *testing.T) {
	var n *Names
	if _, ok := n.Lookup("a:b"); ok {
		t.Error("nil Names resolved something")
	}
	if _, ok := n.Resolve("a", "b"); ok {
		t.Error("nil Names resolved something")
	}
	if n.Bindings() != nil {
		t.Error("nil Names has bindings")
	}
}

// FuzzAssignNames: any names give valid, unique identifiers for every tool.
func FuzzAssignNames(f *testing.F) {
	f.Add("github", "list_commits", "list-commits", "then")
	f.Add("", "", "\x00", "検索")
	f.Add("class", "__proto__", "constructor", "listCommits_2")
	f.Fuzz(func(t *testing.T, server, a, b, c string) {
		tools := []Tool{tl(server, a), tl(server, b), tl(server, c), tl(server+"x", a)}
		n := AssignNames(tools)
		seen := map[[2]string]bool{}
		for _, bd := range n.Bindings() {
			if !isIdentifier(bd.Namespace) || !isIdentifier(bd.Function) {
				t.Fatalf("not identifiers: %q.%q", bd.Namespace, bd.Function)
			}
			if reservedWords[bd.Namespace] || reservedWords[bd.Function] || reservedMembers[bd.Function] || reservedGlobals[bd.Namespace] {
				t.Fatalf("reserved name: %q.%q", bd.Namespace, bd.Function)
			}
			k := [2]string{bd.Namespace, bd.Function}
			if seen[k] {
				t.Fatalf("two tools named %s.%s", bd.Namespace, bd.Function)
			}
			seen[k] = true
		}
		distinct := map[[2]string]bool{}
		for _, tool := range tools {
			distinct[[2]string{tool.Server, tool.Name}] = true
		}
		if len(seen) != len(distinct) {
			t.Fatalf("%d names for %d distinct tools", len(seen), len(distinct))
		}
	})
}
