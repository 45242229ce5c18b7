package gateway

import (
	"html"
	"net/url"
	"path"
	"strings"
	"testing"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// fuzzRoots are the roots FuzzCheckPaths judges against.
var fuzzRoots = []string{"/srv/data", `C:\work`}

// FuzzCheckPaths checks the path check against independent readings of each
// string it accepts: the standard library's decoders (url.PathUnescape,
// html.UnescapeString, NFKC, trimming) applied in every order up to three
// deep, and url.Parse for file URLs. For every accepted string and every
// such reading:
//
//   - no '/', '\' or line-separated segment is "..";
//   - a one-line reading that is an absolute path cleans (path.Clean) to a
//     place inside the roots; a file: URL's path too, and its host is empty
//     or localhost;
//   - in a multi-line reading, every line that reads as a path (no spaces,
//     not a // or /* comment) is inside the roots, and so is the folder the
//     whole reading lies in when that folder has no line break and is not
//     one only root could make (directly under /, or a top-level folder
//     with spaces or '*' in its name);
//
// and acceptance is monotonic: accepted with the roots means accepted with
// more roots and without any.
//
// Seeds: testdata/fuzz/FuzzCheckPaths. Run: go test -fuzz FuzzCheckPaths ./gateway/
func FuzzCheckPaths(f *testing.F) {
	for _, s := range []string{
		"../x", "%2e%2e/", "a/b", "/srv/data/x", "file:///x", "FILE:///etc/passwd", "\uff0e\uff0e/",
		"%u002e", "&#46;", "&#46&#46/", "&#046;&#046;/", "\u2025/", "\u2026", "\ufe19/",
		"/etc/passwd\n", "/srv/data/x\n/etc/passwd", "/srv/data/x\x00", "line 1\nline 2",
		"wait...", "v1.2", "~/x", `C:\work\x`, `C:\work\..\x`, "file:etc", "%c0%ae%c0%ae/",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		reason := unsafePath(s, fuzzRoots)
		if reason != "" {
			return
		}
		if r := unsafePath(s, nil); r != "" {
			t.Fatalf("%q: accepted with roots, refused without: %s", s, r)
		}
		if r := unsafePath(s, append([]string{"/other"}, fuzzRoots...)); r != "" {
			t.Fatalf("%q: accepted with roots, refused with one more: %s", s, r)
		}
		for _, form := range stdReadings(s) {
			if seg, ok := dotDotIn(form); ok {
				t.Fatalf("%q was accepted, but it reads as %q, which has the segment %q", s, form, seg)
			}
			if p, ok := outsideFuzzRoots(form); ok {
				t.Fatalf("%q was accepted, but it reads as %q, which is %q, outside the roots", s, form, p)
			}
		}
	})
}

// stdReadings returns s as the standard library's decoders read it, alone
// and composed up to three deep (bounded).
func stdReadings(s string) []string {
	decoders := []func(string) (string, bool){
		func(s string) (string, bool) { u, err := url.PathUnescape(s); return u, err == nil },
		func(s string) (string, bool) { return html.UnescapeString(s), true },
		func(s string) (string, bool) { return norm.NFKC.String(s), true },
		func(s string) (string, bool) { return strings.TrimSpace(s), true },
	}
	forms := []string{s}
	seen := map[string]bool{s: true}
	frontier := forms
	for depth := 0; depth < 3; depth++ {
		var next []string
		for _, f := range frontier {
			for _, d := range decoders {
				if g, ok := d(f); ok && !seen[g] && len(forms) < 256 {
					seen[g] = true
					forms = append(forms, g)
					next = append(next, g)
				}
			}
		}
		frontier = next
	}
	return forms
}

// dotDotIn reports a ".." segment, with '/', '\' and control characters
// as separators.
func dotDotIn(s string) (string, bool) {
	for _, seg := range strings.FieldsFunc(s, func(r rune) bool { return r == '/' || r == '\\' || unicode.IsControl(r) }) {
		if seg == ".." {
			return seg, true
		}
	}
	return "", false
}

// outsideFuzzRoots reports an absolute reading of s outside fuzzRoots.
func outsideFuzzRoots(s string) (string, bool) {
	inside := func(p string) bool {
		p = path.Clean(strings.ReplaceAll(p, `\`, "/"))
		for _, r := range fuzzRoots {
			r = strings.ReplaceAll(r, `\`, "/")
			q := p
			if r[1] == ':' {
				q, r = strings.ToLower(q), strings.ToLower(r) // Windows
			}
			if q == r || strings.HasPrefix(q, r+"/") {
				return true
			}
		}
		return false
	}
	t := strings.TrimSpace(s)
	if strings.IndexFunc(t, isControl) >= 0 {
		// Multi-line (line breaks as the check counts them). Taken whole,
		// its folder, when that has no line break and a top-level folder a
		// non-root user could have made (no spaces or '*' in its name).
		slashed := strings.ReplaceAll(t, `\`, "/")
		if i := strings.LastIndexByte(slashed, '/'); i > 0 && slashed[0] == '/' && slashed[1] != '/' && strings.IndexFunc(slashed[:i], isControl) < 0 {
			dir := path.Clean(slashed[:i])
			top, _, _ := strings.Cut(dir[1:], "/")
			if top != "" && !strings.ContainsFunc(top, func(r rune) bool { return r == '*' || unicode.IsSpace(r) }) && !inside(dir) {
				return dir, true
			}
		}
		// Lines that read as paths.
		for _, line := range strings.FieldsFunc(t, isControl) {
			line = strings.TrimSpace(line)
			if strings.HasPrefix(line, "/") && !strings.HasPrefix(line, "//") && !strings.HasPrefix(line, "/*") &&
				!strings.ContainsFunc(line, unicode.IsSpace) && strings.ContainsFunc(line, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) &&
				!inside(line) {
				return line, true
			}
		}
		return "", false
	}
	slashed := strings.ReplaceAll(t, `\`, "/")
	if strings.HasPrefix(slashed, "/") && !inside(slashed) {
		return path.Clean(slashed), true
	}
	if u, err := url.Parse(t); err == nil && strings.EqualFold(u.Scheme, "file") {
		p := u.Path
		if u.Opaque != "" {
			p, _ = url.PathUnescape("/" + u.Opaque)
		}
		if u.Host != "" && !strings.EqualFold(u.Host, "localhost") {
			return "//" + u.Host + p, true
		}
		if len(p) >= 4 && p[0] == '/' && p[2] == ':' {
			p = p[1:] // /C:/x
		}
		if !inside(p) {
			return path.Clean(p), true
		}
	}
	return "", false
}
