package gateway

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestUnsafePath(t *testing.T) {
	t.Parallel()
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
		"~root/.ssh/id_rsa",
		// The review's bypasses.
		"/etc/" + strings.Repeat("./", 2100) + "passwd", // over 4096 bytes
		"/etc/passwd\n", // servers trim
		"/etc/passwd\r",
		"\n /etc/passwd\t",
		"/etc/passwd\x00", // NUL: cannot be judged
		"/srv/data/x\x00",
		"/srv/data/x\x00/../../etc",
		"/srv/data/x\n/etc/passwd", // one path per line
		"/srv/data/x\r\n../../etc/passwd",
		"/srv/data/x\u2028/etc/passwd",
		"/home/me/.config/autostart/a b\nc.desktop", // one path, with a line break in its name
		"//home/me/.config/autostart/a\nb.desktop",
		"/tmp/a b\r\nc",
		"~/a b\nc",
		`C:\Users\me\a b` + "\nc",
		"FILE:///etc/passwd", // scheme case
		"File://localhost/etc/passwd",
		" file:///etc/passwd",
		"fi\nle:///etc/passwd", // URL parsers drop line breaks and tabs
		"file:///srv/data/.\t./.\t./etc",
		"file:etc/passwd",
		"file:////etc/passwd",
		"file:///srv/data/..?x",
		"file://evil.example/share/x",
		"\u2025/\u2025/etc", // ‥ two dot leader
		"\u2026/x",          // … ellipsis (Windows trims trailing dots)
		"\u2026",            // alone: "..." (Windows reads it as "..")
		"\ufe19/x",          // ︙ presentation form
		"\ufe30/x",          // ︰
		"\u205a/x",          // ⁚
		"\u3002\u3002/x",    // 。。
		"\uff61\uff61/x",    // ｡｡
		"&#046;&#046;/etc",
		"&#46&#46/etc",
		"&#x2E&#X2e;/etc",
		"&#0000046;&#x00002e;&sol;etc",
		"&period;&period;/etc",
		"&period&period/etc",
		"&nldr;/etc",
		"&hellip;/etc",
		"&#133;/x",                   // Windows-1252 0x85 is "…", as HTML reads it
		"%2Fsrv%2Fdat&#97;%2Fx",      // percent-decoded only: /srv/dat&#97;/x
		"&amp;#46;&amp;#46;/etc",     // entity, then entity again
		"%26%2346%3B%26%2346%3B/etc", // percent, then entity
		"%2525252525252e%2525252525252e/etc",
		".\u200b./etc",                 // zero-width space
		".\u00ad./etc",                 // soft hyphen
		"%f0%80%80%ae%f0%80%80%ae/etc", // 4-byte overlong
		"%e0%80%ae%e0%80%ae%e0%80%af",
		"..;/etc",               // path parameter
		"\u2215etc\u2215passwd", // division slash
		"\\\\?\\C:\\Windows",
		"c:/windows",
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
		// Prose and file contents: no false positives.
		"line 1\nline 2",
		"line 1\r\nline 2\ttabbed",
		"wait\u2026 really?",
		"v1.2 and v1.10",
		"foo\n...\nbar",
		"...\n...",
		"see ../bar in the docs",
		"// Copyright 2026\npackage main\n",
		"/**\n * Docs.\n */\nfunction f() {}\n",
		"/* comment */\nint x;",
		"//go:build linux\n\npackage x\n",
		"// fix\nfoo()",
		"/\u20290", // a file in / itself: only root could make it
		"/srv/data/a b\nc.txt",
		"#!/usr/bin/env node\nconsole.log(1)\n",
		"~5 minutes",
		"~~~\ncode\n~~~",
		"Note: 3:30 pm",
		"a\x1b[0m red", // ANSI escape, nothing path-like
		"/srv/data/a\n/srv/data/b",
		"FILE:///srv/data/x",
		"file:/srv/data/x",
		"/srv/data/" + strings.Repeat("./", 2100) + "x",
		"100%25 sure",
		"&amp; &lt;tag&gt; &copy;",
		"50% off & free",
		"\uff11\uff12", // fullwidth digits
		"/srv/data/\uff41.txt",
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

func TestUnsafePathReasons(t *testing.T) {
	t.Parallel()
	roots := []string{"/srv/data"}
	for _, c := range []struct{ in, want string }{
		{"%" + strings.Repeat("25", 12) + "41", "still encoded after 8 rounds of decoding"},
		{"/etc/passwd\x00", "control character U+0000"},
		{"/srv/data/x\n/etc/passwd", `a line "/etc/passwd"`},
		{"FILE:///etc/passwd", `"/etc/passwd" is an absolute path outside`},
		{"&#46&#46/x", `decodes to "../x"`},
		{".\u200b./x", `without line breaks and invisible characters it reads "../x"`},
	} {
		if got := unsafePath(c.in, roots); !strings.Contains(got, c.want) {
			t.Errorf("%q: reason %q, want %q", c.in, got, c.want)
		}
	}
	// Nested encodings that settle within the bound are judged, not refused.
	if r := unsafePath("%"+strings.Repeat("25", 6)+"41", roots); r != "" {
		t.Errorf("6 rounds of %%25 refused: %s", r)
	}
	// Without roots, only ".." and unjudgeable strings are refused.
	for _, s := range []string{"/etc/passwd\n", "FILE:///etc/passwd", "/a\n/b", "~/.ssh"} {
		if r := unsafePath(s, nil); r != "" {
			t.Errorf("without roots %q was refused: %s", s, r)
		}
	}
	for _, s := range []string{"‥/x", "a\n../b", "/a\x00b"} {
		if unsafePath(s, nil) == "" {
			t.Errorf("without roots %q was allowed", s)
		}
	}
}

func TestDecodeEntities(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"&#46;&#046;&#0000046&#x2e&#X2E;&#x0002e;": "......",
		"&period;&period&sol&bsol;&nldr;":          "../\\\u2025",
		"&amp;&amp &lt;b&gt; &copy; &zzz; &notit;": "&& <b> © &zzz; ¬it;", // the legacy &not, as browsers read it
		"&#; &#x; &# &":            "&#; &#x; &# &",
		"&#1114112; &#0; &#xd800;": "\ufffd \ufffd \ufffd",
		"AT&T":                     "AT&T",
	} {
		if got := decodeEntities(in); got != want {
			t.Errorf("decodeEntities(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCheckPathsWalksEverything(t *testing.T) {
	t.Parallel()
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

func TestDecodedFormsLongText(t *testing.T) {
	t.Parallel()
	// Past maxAnyOrderBytes the decodings are applied together, and still
	// found; nested too deep, still refused.
	pad := strings.Repeat("Some prose, 50% & more. ", maxAnyOrderBytes/20)
	if unsafePath(pad+"/%252e%252e/etc", nil) == "" || unsafePath(pad+"\n&amp;#46;&amp;#46;/etc", nil) == "" {
		t.Fatal("encoded traversal in long text was allowed")
	}
	if r := unsafePath(pad+"%"+strings.Repeat("25", 12)+"41", nil); !strings.Contains(r, "still encoded") {
		t.Fatalf("deeply nested encoding in long text: %q", r)
	}
	if r := unsafePath(pad+"%"+strings.Repeat("25", 6)+"41", nil); r != "" {
		t.Fatalf("long prose refused: %s", r)
	}
}

func TestUnsafePathWindowsForms(t *testing.T) {
	t.Parallel()
	posix, win := []string{"/srv/data"}, []string{`C:\work`}
	for _, c := range []struct {
		s          string
		posix, win bool // accepted with each root
	}{
		{"file:///C:/work/x", false, true}, // "/C:/work/x" on POSIX
		{"file:///c|/work/x", false, true},
		{`C:\work\x`, false, true},
		{"c:/work/sub/x", false, true},
		{`C:\work\..\x`, false, false},
		{`C:\workshop\x`, false, false},
		{"D:secret", false, false}, // drive-relative
		{"C:work", false, false},
		{"Q: what is this?", true, true}, // prose, not a drive path
		{"/srv/data/x", true, false},
		{`\\srv\data\x`, false, false}, // a share on host srv, not /srv/data
		{"//srv/data/x", false, false},
		{"file://srv/data/x", false, false},
	} {
		if got := unsafePath(c.s, posix) == ""; got != c.posix {
			t.Errorf("%q with %v: accepted = %v", c.s, posix, got)
		}
		if got := unsafePath(c.s, win) == ""; got != c.win {
			t.Errorf("%q with %v: accepted = %v", c.s, win, got)
		}
	}
	share := []string{`\\srv\share`}
	if unsafePath(`\\srv\share\x`, share) != "" || unsafePath("file://srv/share/x", share) != "" || unsafePath(`\\srv\other`, share) == "" {
		t.Error("a share root does not work")
	}
}
