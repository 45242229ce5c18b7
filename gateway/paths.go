package gateway

import (
	"fmt"
	"path"
	"strings"
	"unicode/utf8"
)

// Path-traversal check of every string in a call's arguments (values and
// object keys, at any depth), before anything is sent upstream.
//
// A string is refused when, in any of its decoded forms, it has a ".." path
// segment (with '/' or '\' as separator), or when path roots are configured
// and it is an absolute path (/x, C:\x, \\host\x, file:///x, ~/x) that does
// not lie inside one of them. The decoded forms cover the encodings used to
// smuggle dots and slashes past naive filters: percent-encoding applied up
// to three times (%2e%2e%2f, %252e), %u002e, overlong UTF-8 (%c0%ae),
// fullwidth and other look-alike dots and slashes, and HTML numeric entities.
//
// Text that merely contains dots ("wait...", "v1.2") is not a path segment
// "..", so prose passes. A server whose arguments are legitimately
// path-like but unrelated to files can turn the check off with
// "checkPaths": false.

// traversal describes the first offending string found.
type traversal struct {
	Path   string   `json:"path"`   // JSON pointer to the string in the arguments
	Value  string   `json:"value"`  // the string, truncated
	Reason string   `json:"reason"` // what was found
	Roots  []string `json:"roots,omitempty"`
}

// maxScanDepth bounds recursion into nested arguments.
const maxScanDepth = 128

// checkPaths scans decoded arguments; it returns nil when every string is safe.
func checkPaths(args any, roots []string) *traversal {
	return scanValue(args, "", roots, 0)
}

func scanValue(v any, ptr string, roots []string, depth int) *traversal {
	if depth > maxScanDepth {
		return &traversal{Path: ptr, Reason: "arguments nested too deeply to check"}
	}
	switch x := v.(type) {
	case string:
		if reason := unsafePath(x, roots); reason != "" {
			return &traversal{Path: ptr, Value: truncate(x, 120), Reason: reason, Roots: roots}
		}
	case map[string]any:
		for k, e := range x {
			p := ptr + "/" + escapePointer(k)
			if reason := unsafePath(k, roots); reason != "" {
				return &traversal{Path: p, Value: truncate(k, 120), Reason: "object key: " + reason, Roots: roots}
			}
			if t := scanValue(e, p, roots, depth+1); t != nil {
				return t
			}
		}
	case []any:
		for i, e := range x {
			if t := scanValue(e, fmt.Sprintf("%s/%d", ptr, i), roots, depth+1); t != nil {
				return t
			}
		}
	}
	return nil
}

// unsafePath returns why s is refused, or "".
func unsafePath(s string, roots []string) string {
	if !mayBePath(s) {
		return ""
	}
	for _, form := range decodedForms(s) {
		norm := strings.ReplaceAll(form, `\`, "/")
		if hasDotDotSegment(norm) {
			if form == s {
				return `it contains a ".." path segment (path traversal)`
			}
			return fmt.Sprintf(`it decodes to %q, which contains a ".." path segment (path traversal)`, truncate(form, 80))
		}
		if len(roots) > 0 {
			if abs, ok := absolutePath(form); ok && !insideRoots(abs, roots) {
				return fmt.Sprintf("%q is an absolute path outside the allowed roots", truncate(abs, 80))
			}
		}
	}
	return ""
}

// mayBePath is the fast path: strings without any of these cannot be a
// traversal or an absolute path in any decoding.
func mayBePath(s string) bool {
	if s == "" {
		return false
	}
	switch s[0] {
	case '/', '\\', '~':
		return true
	}
	if len(s) >= 2 && s[1] == ':' {
		return true
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '.' || c == '%' || c == '&' || c >= utf8.RuneSelf:
			return true
		case c == 'f' && strings.HasPrefix(s[i:], "file:"):
			return true
		}
	}
	return false
}

// decodedForms returns s and every distinct decoding of it (bounded).
func decodedForms(s string) []string {
	forms := []string{s}
	cur := s
	for i := 0; i < 3; i++ {
		next := decodeOnce(cur)
		if next == cur {
			break
		}
		forms = append(forms, next)
		cur = next
	}
	return forms
}

// lookalikes maps characters that some layer may fold into '.', '/' or '\'.
var lookalikes = strings.NewReplacer(
	"\uff0e", ".", "\u2024", ".", "\ufe52", ".", "\u3002", ".",
	"\uff0f", "/", "\u2215", "/", "\u2044", "/", "\u29f8", "/",
	"\uff3c", `\`, "\u2216", `\`, "\u29f9", `\`, "\ufe68", `\`,
)

// decodeOnce applies one round of every decoding.
func decodeOnce(s string) string {
	if strings.Contains(s, "&") {
		s = decodeEntities(s)
	}
	if strings.Contains(s, "%") {
		s = percentDecode(s)
	}
	s = foldOverlong(s)
	return lookalikes.Replace(s)
}

// percentDecode decodes %XX and %uXXXX; invalid escapes stay as they are.
func percentDecode(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' {
			if i+2 < len(s) && hexVal(s[i+1]) >= 0 && hexVal(s[i+2]) >= 0 {
				b.WriteByte(byte(hexVal(s[i+1])<<4 | hexVal(s[i+2])))
				i += 2
				continue
			}
			if i+5 < len(s) && (s[i+1] == 'u' || s[i+1] == 'U') {
				r := 0
				ok := true
				for _, c := range []byte(s[i+2 : i+6]) {
					if hexVal(c) < 0 {
						ok = false
						break
					}
					r = r<<4 | hexVal(c)
				}
				if ok {
					b.WriteRune(rune(r))
					i += 5
					continue
				}
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func hexVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// foldOverlong turns the overlong UTF-8 encodings of '.', '/' and '\' (which
// lenient decoders accept) into the characters.
func foldOverlong(s string) string {
	// Byte searches: the lead bytes are not valid UTF-8 on their own, so a
	// rune search (strings.ContainsAny) would match every invalid byte.
	if strings.IndexByte(s, 0xc0) < 0 && strings.IndexByte(s, 0xc1) < 0 && strings.IndexByte(s, 0xe0) < 0 {
		return s
	}
	r := strings.NewReplacer(
		"\xc0\xae", ".", "\xe0\x80\xae", ".",
		"\xc0\xaf", "/", "\xe0\x80\xaf", "/",
		"\xc1\x9c", `\`, "\xe0\x81\x9c", `\`,
	)
	return r.Replace(s)
}

// decodeEntities decodes the HTML numeric and named entities for '.', '/', '\'.
func decodeEntities(s string) string {
	r := strings.NewReplacer(
		"&#46;", ".", "&#x2e;", ".", "&#x2E;", ".", "&period;", ".",
		"&#47;", "/", "&#x2f;", "/", "&#x2F;", "/", "&sol;", "/",
		"&#92;", `\`, "&#x5c;", `\`, "&#x5C;", `\`, "&bsol;", `\`,
	)
	return r.Replace(s)
}

// hasDotDotSegment reports a ".." segment in a '/'-separated string. Windows
// ignores trailing spaces and dots in a segment, so ".. " and "..." count too
// when nothing but dots and spaces follow the first two dots.
func hasDotDotSegment(s string) bool {
	for len(s) > 0 {
		seg := s
		if i := strings.IndexByte(s, '/'); i >= 0 {
			seg, s = s[:i], s[i+1:]
		} else {
			s = ""
		}
		if strings.HasPrefix(seg, "..") && strings.Trim(seg, ". ") == "" {
			return true
		}
		// "C:..\x" style: a drive prefix glued to the segment.
		if len(seg) >= 4 && seg[1] == ':' && strings.HasPrefix(seg[2:], "..") && strings.Trim(seg[2:], ". ") == "" {
			return true
		}
	}
	return false
}

// absolutePath reports whether s is an absolute filesystem path (or a
// file: URI or ~ path) and returns it in cleaned, '/'-separated form.
func absolutePath(s string) (string, bool) {
	if strings.ContainsAny(s, "\n\r\x00") || len(s) > 4096 {
		return "", false
	}
	p := strings.ReplaceAll(s, `\`, "/")
	switch {
	case strings.HasPrefix(strings.ToLower(p), "file:"):
		p = p[len("file:"):]
		p = strings.TrimPrefix(p, "//localhost")
		if strings.HasPrefix(p, "//") && !strings.HasPrefix(p, "///") {
			return path.Clean(p), true // file://host/share
		}
		p = "/" + strings.TrimLeft(p, "/")
	case strings.HasPrefix(p, "~"):
		return p, true // home-relative: never inside a configured root
	case len(p) >= 3 && p[1] == ':' && p[2] == '/' && isLetter(p[0]):
		return path.Clean(p), true // C:/x
	case strings.HasPrefix(p, "/"):
	default:
		return "", false
	}
	return path.Clean(p), true
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// insideRoots reports whether the cleaned absolute path p is a root or below one.
func insideRoots(p string, roots []string) bool {
	for _, r := range roots {
		r = strings.ReplaceAll(r, `\`, "/")
		if p == r || r == "/" || strings.HasPrefix(p, strings.TrimRight(r, "/")+"/") {
			return true
		}
	}
	return false
}

// pathTraversalError builds the PATH_TRAVERSAL error for a tool call.
func pathTraversalError(tool string, t *traversal) *Error {
	where := t.Path
	if where == "" {
		where = "(arguments)"
	}
	msg := fmt.Sprintf("argument %s was refused before anything was sent: %s.", where, t.Reason)
	if len(t.Roots) > 0 {
		msg += fmt.Sprintf(" Use a path inside one of the allowed roots (%s), without \"..\" segments.", strings.Join(t.Roots, ", "))
	} else {
		msg += ` Use a path without ".." segments.`
	}
	return newError(CodePathTraversal, tool, nil, t, "%s", msg)
}
