package gateway

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestUnsafePath(t *testing.T) {
	roots := []string{"/srv/data", "/home/me/work"}
	refused := []string{
		"../etc/passwd",
		"a/../../b",
		`..\windows\system32`,
		`C:..\x`,
		"..",
		"foo/..",
		"%2e%2e%2fetc",
		"%2E%2E/etc",
		"%252e%252e%252fetc",       // double-encoded
		"%25252e%25252e%25252fetc", // triple-encoded
		"%c0%ae%c0%ae/etc",         // overlong UTF-8
		"%u002e%u002e/etc",         // IIS %u
		"\uff0e\uff0e/etc",         // fullwidth dots
		"..\uff0fetc",              // fullwidth slash
		"&#46;&#46;/etc",           // HTML entities
		"... /x",                   // Windows trims trailing dots/spaces
		"/etc/passwd",              // absolute, outside roots
		"/srv/database/x",          // prefix of a root is not inside it
		"/srv/data/../secret",
		`C:\Windows\system.ini`,
		`\\server\share\x`,
		"file:///etc/passwd",
		"file://localhost/etc/passwd",
		"~/.ssh/id_rsa",
	}
	for _, s := range refused {
		if unsafePath(s, roots) == "" {
			t.Errorf("%q was allowed", s)
		}
	}
	allowed := []string{
		"hello world",
		"wait...",
		"v1.2.3",
		"see the docs.",
		"..hidden is a name",
		"a..b",
		"/srv/data",
		"/srv/data/reports/q3.csv",
		"/home/me/work/./x",
		"file:///srv/data/x.txt",
		"100% sure",
		"café",
		"https://example.com/a/b",
		"relative/path/ok.txt",
		"",
	}
	for _, s := range allowed {
		if r := unsafePath(s, roots); r != "" {
			t.Errorf("%q was refused: %s", s, r)
		}
	}
	// Without roots, absolute paths are not judged; ".." still is.
	if unsafePath("/etc/passwd", nil) != "" || unsafePath("/a/../b", nil) == "" {
		t.Error("no-roots behaviour wrong")
	}
}

func TestCheckPathsWalksEverything(t *testing.T) {
	args, err := decodeArgs(json.RawMessage(`{"a": [1, {"b": "ok", "c": ["x", "../y"]}], "d": true}`))
	if err != nil {
		t.Fatal(err)
	}
	tr := checkPaths(args, nil)
	if tr == nil || tr.Path != "/a/1/c/1" || tr.Value != "../y" {
		t.Fatalf("got %+v", tr)
	}
	args, _ = decodeArgs(json.RawMessage(`{"../k": 1}`))
	if tr := checkPaths(args, nil); tr == nil || !strings.Contains(tr.Reason, "object key") {
		t.Fatalf("keys are not checked: %+v", tr)
	}
	deep := strings.Repeat("[", 200) + strings.Repeat("]", 200)
	if _, err := decodeArgs(json.RawMessage(deep)); err == nil {
		t.Fatal("absurd nesting must be refused by the decoder")
	}
	var nested any = []any{}
	for i := 0; i < 200; i++ {
		nested = []any{nested}
	}
	if tr := checkPaths(nested, nil); tr == nil {
		t.Fatal("absurd nesting must be refused, not recursed into")
	}
	e := pathTraversalError("fs:read", &traversal{Path: "/path", Reason: "x", Roots: []string{"/r"}})
	if e.Code != CodePathTraversal || !strings.Contains(e.Message, "/r") || !json.Valid(e.Data) {
		t.Fatalf("error = %+v", e)
	}
}

// FuzzUnsafePath: a string that reads as a ".." segment after percent
// decoding is never allowed, and nothing panics.
func FuzzUnsafePath(f *testing.F) {
	for _, s := range []string{"../x", "%2e%2e/", "a/b", "/srv/data/x", "file:///x", "\uff0e\uff0e/", "%u002e", "&#46;"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		reason := unsafePath(s, []string{"/srv/data"})
		plain := strings.ReplaceAll(percentDecode(s), `\`, "/")
		if hasDotDotSegment(plain) && reason == "" {
			t.Fatalf("%q decodes to %q with a .. segment but was allowed", s, plain)
		}
	})
}
