package gateway

import (
	"strings"
	"testing"
)

func TestValidateName(t *testing.T) {
	t.Parallel()
	good := map[string]string{
		"read_file":    "read_file",
		"API-get-user": "api-get-user",
		"files.read":   "files_read",
		"Get Weather":  "get_weather",
		"x":            "x",
	}
	for in, want := range good {
		got, err := ValidateName(in)
		if err != nil || got != want {
			t.Errorf("ValidateName(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	bad := map[string]string{
		"":                       "empty",
		"__proto__":              "reserved",
		"Constructor":            "reserved",
		"prototype":              "reserved",
		"then":                   "reserved",
		"hasOwnProperty":         "reserved",
		"a:b":                    "':'",
		"a/b":                    "'/'",
		"ünïcode":                "character",
		"tab\there":              "character",
		"nul\x00":                "character",
		strings.Repeat("a", 129): "more than 128",
	}
	for in, want := range bad {
		_, err := ValidateName(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ValidateName(%q) error = %v; want it to mention %q", in, err, want)
		}
	}
}

func TestSplitToolID(t *testing.T) {
	t.Parallel()
	s, tool, ok := SplitToolID("github:list_commits")
	if !ok || s != "github" || tool != "list_commits" {
		t.Fatal(s, tool, ok)
	}
	if _, _, ok := SplitToolID("nocolon"); ok {
		t.Fatal("want !ok")
	}
}

func TestWireNamesPrefixedShortAndUnique(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("very_long_tool_name_", 5)
	ids := map[string]string{
		"github:list_commits": "list_commits",
		"fs:files_read":       "files.read",
		"a:" + long + "1":     long + "1",
		"a:" + long + "2":     long + "2",
		"x__y:z":              "z",    // "x__y__z"
		"x:y__z":              "y__z", // also "x__y__z"
	}
	got := assignWireNames(ids, WirePrefixed, nil)
	if got["github:list_commits"] != "github__list_commits" || got["fs:files_read"] != "fs__files_read" {
		t.Fatalf("got %v", got)
	}
	seen := map[string]string{}
	for id, w := range got {
		if !validWireName(w) {
			t.Errorf("%s -> %q is not a valid wire name", id, w)
		}
		if other, dup := seen[w]; dup {
			t.Errorf("%s and %s share wire name %q", id, other, w)
		}
		seen[w] = id
	}
	// The collision goes to the id that sorts first, whatever the map order.
	if got["x:y__z"] != "x__y__z" || got["x__y:z"] == "x__y__z" {
		t.Fatalf("collision not resolved by sorted id: %v", got)
	}
	for i := 0; i < 20; i++ {
		again := assignWireNames(ids, WirePrefixed, nil)
		for id := range ids {
			if again[id] != got[id] {
				t.Fatalf("not deterministic for %s: %q vs %q", id, again[id], got[id])
			}
		}
	}
}

func TestWireNamesPassthrough(t *testing.T) {
	t.Parallel()
	ids := map[string]string{
		"a:test_simple_text": "test_simple_text",
		"b:test_simple_text": "test_simple_text",
		"a:weird.name":       "weird.name",
	}
	got := assignWireNames(ids, WirePassthrough, map[string]bool{"gateway__list_servers": true})
	if got["a:test_simple_text"] != "test_simple_text" {
		t.Fatalf("first server must keep the upstream name: %v", got)
	}
	if got["b:test_simple_text"] != "b__test_simple_text" {
		t.Fatalf("collision must fall back to the prefixed name: %v", got)
	}
	if got["a:weird_name"] != "" || got["a:weird.name"] != "a__weird_name" {
		t.Fatalf("a name invalid on the wire must be prefixed+sanitized: %v", got)
	}
}

func TestWireNamesAvoidReserved(t *testing.T) {
	t.Parallel()
	got := assignWireNames(map[string]string{"gateway:list_servers": "list_servers"}, WirePrefixed, map[string]bool{"gateway__list_servers": true})
	if got["gateway:list_servers"] == "gateway__list_servers" {
		t.Fatal("reserved name handed out")
	}
}

// FuzzWireNames: any set of valid ids gets distinct, valid wire names.
func FuzzWireNames(f *testing.F) {
	f.Add("a:b c:d a__b:c a:b__c")
	f.Add(strings.Repeat("x", 70) + ":y " + strings.Repeat("x", 70) + ":z")
	f.Fuzz(func(t *testing.T, list string) {
		ids := map[string]string{}
		for _, f := range strings.Fields(list) {
			s, tool, ok := SplitToolID(f)
			if !ok {
				continue
			}
			ns, e1 := ValidateName(s)
			nt, e2 := ValidateName(tool)
			if e1 != nil || e2 != nil {
				continue
			}
			ids[ToolID(ns, nt)] = tool
		}
		for _, naming := range []WireNaming{WirePrefixed, WirePassthrough} {
			got := assignWireNames(ids, naming, nil)
			if len(got) != len(ids) {
				t.Fatalf("%d names for %d ids", len(got), len(ids))
			}
			seen := map[string]bool{}
			for id, w := range got {
				if !validWireName(w) {
					t.Fatalf("%s -> invalid %q", id, w)
				}
				if seen[w] {
					t.Fatalf("duplicate %q", w)
				}
				seen[w] = true
			}
			// Reserving names no tool holds changes no tool's name (what
			// catalog.reserveWireNames relies on to skip a publish); the
			// candidates are names tools would want: their plain and
			// prefixed forms.
			extra := map[string]bool{}
			for id, tool := range ids {
				server, _, _ := SplitToolID(id)
				for _, n := range []string{tool, sanitizeWireName(server + "__" + tool), sanitizeWireName(tool + "__" + server)} {
					if !seen[n] {
						extra[n] = true
					}
				}
			}
			again := assignWireNames(ids, naming, extra)
			for id, w := range got {
				if again[id] != w {
					t.Fatalf("reserving unheld names %v renamed %s: %q -> %q", extra, id, w, again[id])
				}
			}
		}
	})
}

// TestReservingAHeldNameRenamesItsTool: the catalog is published again
// when a reserved name is an upstream tool's, and that tool is renamed.
func TestReservingAHeldNameRenamesItsTool(t *testing.T) {
	t.Parallel()
	c := newCatalog(WirePrefixed)
	c.setServer("a", &serverListing{tools: []*Tool{{ID: "a:x", Server: "a", Name: "x", UpstreamName: "x"}}})
	if w := c.load().byID["a:x"].WireName; w != "a__x" {
		t.Fatalf("wire name %q", w)
	}
	c.reserveWireNames("search_tools")
	if w := c.load().byID["a:x"].WireName; w != "a__x" {
		t.Fatalf("an unrelated reservation renamed the tool: %q", w)
	}
	c.reserveWireNames("a__x")
	if w := c.load().byID["a:x"].WireName; w == "a__x" || w == "" {
		t.Fatalf("the reserved name is still the tool's: %q", w)
	}
}
