package gateway

import (
	"fmt"
	"html"
	"path"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Path-traversal check of every string in a call's arguments (values and
// object keys, at any depth), before anything is sent upstream. The strings
// judged are exactly the ones forwarded: arguments are decoded strictly and
// re-encoded (args.go), so no parser upstream can read other values.
//
// A string is refused when, in any of its decoded forms, it has a ".." path
// segment (with '/', '\' or a line break as separator), or when path roots
// are configured and it is an absolute path (/x, C:\x, \\host\x, file:/x in
// any case, ~/x) that does not lie inside one of them. The decoded forms
// cover the encodings used to smuggle dots and slashes past naive filters,
// in every order and subset, until nothing changes (at most maxDecodeRounds
// and maxForms; a string still changing is refused): percent-encoding (%2e,
// %252e, %u002e), HTML entities (named and numeric, with or without ';',
// leading zeros, hex), and Unicode folding: overlong UTF-8 (%c0%ae), NFKC
// (fullwidth ．／, ‥, …, ︙) and other look-alike dots and slashes; and each
// form once more without line breaks, tabs and invisible format characters
// (URL parsers drop them).
//
// Servers trim: a string is judged with surrounding white space and control
// characters removed, whatever its length. A string with line breaks inside
// is judged line by line (a server may split it); a line there counts as an
// absolute path when it reads as one (no spaces, not a // or /* comment), so
// that file contents and prose pass. A path-looking string with any other
// control character (NUL, ESC, ...) cannot be judged and is refused.
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

// maxDecodeRounds bounds the decoding rounds; a string that still decodes
// further after that many is refused (nothing legitimate nests so deep).
const maxDecodeRounds = 8

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
	forms, settled := decodedForms(s)
	for _, form := range forms {
		if reason := judgeForm(form, s, roots); reason != "" {
			return reason
		}
	}
	if !settled {
		return fmt.Sprintf("it is still encoded after %d rounds of decoding (or has over %d decoded forms), so it cannot be judged", maxDecodeRounds, maxForms)
	}
	return ""
}

// judgeForm judges one decoded form of the original string orig.
func judgeForm(form, orig string, roots []string) string {
	decodes := func(f string) string {
		if f == orig {
			return "it"
		}
		return fmt.Sprintf("it decodes to %q, which", truncate(f, 80))
	}
	if c, ok := opaqueControl(form); ok && looksLikePath(form) {
		return fmt.Sprintf("%s contains the control character %U in what looks like a path, so it cannot be judged (a server may cut the path there); send the path without control characters", decodes(form), c)
	}
	if hasDotDotSegment(strings.ReplaceAll(form, `\`, "/"), false) {
		return decodes(form) + ` contains a ".." path segment (path traversal)`
	}
	stripped := stripInvisible(form)
	if stripped != form && hasDotDotSegment(strings.ReplaceAll(stripped, `\`, "/"), true) {
		return fmt.Sprintf(`without line breaks and invisible characters it reads %q, which contains a ".." path segment (path traversal)`, truncate(stripped, 80))
	}
	if len(roots) == 0 {
		return ""
	}
	if r := outsideRoots(form, roots); r != "" {
		return r
	}
	if stripped != form && hasFileScheme(trimEnds(stripped)) {
		return outsideRoots(stripped, roots)
	}
	return ""
}

// outsideRoots returns why the form is an absolute path outside the roots, or "".
func outsideRoots(form string, roots []string) string {
	t := trimEnds(form)
	if hasFileScheme(t) {
		// URL parsers drop tabs and line breaks anywhere in a URL.
		t = strings.Map(func(r rune) rune {
			if r == '\t' || r == '\n' || r == '\r' {
				return -1
			}
			return r
		}, t)
	}
	if strings.IndexFunc(t, isControl) < 0 {
		if abs, ok := absolutePath(t); ok && !insideRoots(abs, roots) {
			return fmt.Sprintf("%q is an absolute path outside the allowed roots", truncate(abs, 80))
		}
		return ""
	}
	// Several lines (or fields). The whole string is still one path to a
	// server that takes it as it is (names may hold line breaks): the folder
	// it lies in must be inside the roots, unless that folder has control
	// characters itself or is one nobody but root could have made (see
	// ordinaryFolder) — so a file's contents starting with "// comment" or
	// "/* header */" pass, and "/home/me/.config/autostart/a b\nc.desktop"
	// does not.
	if i := strings.LastIndexAny(t, `/\`); i >= 0 && strings.IndexFunc(t[:i], isControl) < 0 {
		if abs, ok := absolutePath(t[:i+1]); ok && !insideRoots(abs, roots) && ordinaryFolder(abs) {
			return fmt.Sprintf("taken as one path it lies in %q, outside the allowed roots", truncate(abs, 80))
		}
	}
	// And a server may split it: each line that reads as a path is judged.
	for line := range strings.FieldsFuncSeq(t, isControl) {
		line = trimEnds(line)
		if line == "" || !strings.ContainsAny(line[:1], `/\~fF`) && !(len(line) > 1 && line[1] == ':') || !readsAsPath(line) {
			continue
		}
		if abs, ok := absolutePath(line); ok && !insideRoots(abs, roots) {
			return fmt.Sprintf("it has a line %q, an absolute path outside the allowed roots", truncate(line, 80))
		}
	}
	return ""
}

// ordinaryFolder reports whether the cleaned absolute folder abs can exist
// or be made without root's rights: its top-level folder (under /, a drive
// or a share host; ~ counts) has a name without white space or '*'. A file
// directly in / or C:\, or under "/ comment" or "/* header *", is not.
func ordinaryFolder(abs string) bool {
	top := abs
	switch {
	case strings.HasPrefix(top, "~"):
		return true
	case strings.HasPrefix(top, "//"):
		top = top[2:]
	case len(top) >= 2 && top[1] == ':' && isLetter(top[0]):
		top = strings.TrimPrefix(top[2:], "/")
	default:
		top = strings.TrimPrefix(top, "/")
	}
	top, _, _ = strings.Cut(top, "/")
	return top != "" && !strings.ContainsFunc(top, func(r rune) bool { return r == '*' || unicode.IsSpace(r) })
}

// readsAsPath tells a line that is plausibly a path from a line of prose or
// code: no white space, not a "//" or "/*" comment, some letter or digit.
func readsAsPath(line string) bool {
	if strings.HasPrefix(line, "//") || strings.HasPrefix(line, "/*") {
		return false
	}
	alnum := false
	for _, r := range line {
		if unicode.IsSpace(r) {
			return false
		}
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			alnum = true
		}
	}
	return alnum
}

// mayBePath is the fast path: strings without any of these cannot be a
// traversal or an absolute path in any decoding.
func mayBePath(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= utf8.RuneSelf:
			return true
		case c == '.' || c == '/' || c == '\\' || c == ':' || c == '~' || c == '%' || c == '&':
			return true
		}
	}
	return false
}

// looksLikePath: the string has a path separator or starts like a path.
func looksLikePath(s string) bool {
	if strings.ContainsAny(s, `/\`) {
		return true
	}
	_, ok := absolutePath(trimEnds(s))
	return ok
}

// isControl reports C0 and C1 control characters, DEL and the Unicode line
// and paragraph separators: what ends a line or field for some reader.
func isControl(r rune) bool {
	return r < 0x20 || r >= 0x7f && r < 0xa0 || r == '\u2028' || r == '\u2029'
}

// opaqueControl returns the first control character that is not ordinary
// text layout (tab, line feed, vertical tab, form feed, carriage return,
// line and paragraph separators).
func opaqueControl(s string) (rune, bool) {
	for _, r := range s {
		if isControl(r) && !(r >= '\t' && r <= '\r') && r != '\u2028' && r != '\u2029' {
			return r, true
		}
	}
	return 0, false
}

// trimEnds removes white space, control and format characters at both ends
// (what servers' trim() and URL parsers remove).
func trimEnds(s string) string {
	return strings.TrimFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || isControl(r) || unicode.Is(unicode.Cf, r)
	})
}

// stripInvisible removes tabs, line breaks and format characters (zero-width
// spaces, joiners, BOM, soft hyphen, bidi controls) anywhere.
func stripInvisible(s string) string {
	invisible := func(r rune) bool {
		return r == '\t' || r == '\n' || r == '\r' || r >= 0xad && unicode.Is(unicode.Cf, r)
	}
	if strings.IndexFunc(s, invisible) < 0 {
		return s
	}
	return strings.Map(func(r rune) rune {
		if invisible(r) {
			return -1
		}
		return r
	}, s)
}

// maxForms bounds how many distinct decoded forms one string may have.
const maxForms = 64

// maxAnyOrderBytes: strings longer than this (far longer than any path) get
// the decodings all at once in each round, not in every order.
const maxAnyOrderBytes = 64 << 10

// decoders are the decodings applied, alone and in every order: a server
// may apply any subset of them, in any order, any number of times.
var decoders = [...]func(string) string{
	func(s string) string { // HTML character references
		if strings.IndexByte(s, '&') < 0 {
			return s
		}
		return decodeEntities(s)
	},
	func(s string) string { // %XX, %uXXXX
		if strings.IndexByte(s, '%') < 0 {
			return s
		}
		return percentDecode(s)
	},
	foldUnicode, // overlong UTF-8, NFKC, look-alikes
}

// decodedForms returns s and every distinct string reachable from it by
// applying decoders in any order, round by round, and whether that settled
// (no new form after maxDecodeRounds rounds, at most maxForms forms).
// Each form is judged on its own.
func decodedForms(s string) ([]string, bool) {
	forms := []string{s}
	if len(s) > maxAnyOrderBytes {
		// Long text (no path is this long): every decoding at once, round by
		// round, so that the work stays linear in the length.
		for cur, round := s, 0; ; round++ {
			next := cur
			for _, decode := range decoders {
				next = decode(next)
			}
			if next == cur {
				return forms, true
			}
			if round == maxDecodeRounds {
				return forms, false
			}
			forms = append(forms, next)
			cur = next
		}
	}
	seen := map[string]bool{s: true}
	frontier := forms
	for round := 0; len(frontier) > 0; round++ {
		var next []string
		for _, f := range frontier {
			for _, decode := range decoders {
				g := decode(f)
				if seen[g] {
					continue
				}
				if round == maxDecodeRounds || len(forms) == maxForms {
					return forms, false
				}
				seen[g] = true
				forms = append(forms, g)
				next = append(next, g)
			}
		}
		frontier = next
	}
	return forms, true
}

// lookalikes maps characters that NFKC leaves alone but that look like, or
// that some layer may fold into, '.', '/' or '\'. (NFKC itself folds the
// fullwidth and small forms, ‥ U+2025, … U+2026, ︙ U+FE19, ︰ U+FE30.)
var lookalikes = strings.NewReplacer(
	// dots
	"\u3002", ".", // ideographic full stop (NFKC target of ｡ U+FF61)
	"\u0701", ".", "\u0702", ".", // Syriac full stops
	"\u06d4", ".", // Arabic full stop
	"\ua4f8", ".", // Lisu tone mya ti
	"\ua60e", ".", // Vai full stop
	"\u2e33", ".", // raised dot
	"\u00b7", ".", "\u2219", ".", "\u22c5", ".", "\u2027", ".", // middle dots
	"\u205a", "..", // two dot punctuation
	"\u2056", "...", "\u205d", "...", "\u22ee", "...", "\u22ef", "...", "\u2234", "...", "\u2235", "...", // three dots
	"\u2058", "....", "\u2059", ".....",
	// slashes
	"\u2215", "/", "\u2044", "/", "\u29f8", "/", "\u2571", "/", "\u27cb", "/",
	// backslashes
	"\u2216", `\`, "\u29f9", `\`, "\u29f5", `\`, "\u2572", `\`, "\u27cd", `\`,
)

// foldUnicode folds overlong UTF-8, then applies NFKC, then the look-alikes.
func foldUnicode(s string) string {
	if isASCII(s) {
		return s // all three change only non-ASCII text
	}
	s = foldOverlong(s)
	s = norm.NFKC.String(s)
	return lookalikes.Replace(s)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
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
				if r, ok := hex4([]byte(s[i+2 : i+6])); ok {
					b.WriteRune(r)
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

// foldOverlong turns overlong UTF-8 encodings of ASCII characters (2 to 6
// bytes: \xc0\xae, \xe0\x80\xae, \xf0\x80\x80\xae, ... for '.'), which
// lenient decoders accept, into the characters. Valid UTF-8 is untouched.
func foldOverlong(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r != utf8.RuneError || size != 1 {
			b.WriteString(s[i : i+size])
			i += size
			continue
		}
		if c, n := overlongASCII(s[i:]); n > 0 {
			b.WriteByte(c)
			i += n
			continue
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}

// overlongASCII decodes an overlong multi-byte sequence of an ASCII
// character at the start of s, returning it and the sequence's length.
func overlongASCII(s string) (byte, int) {
	lead := s[0]
	var n int
	var v uint32
	switch {
	case lead&0xe0 == 0xc0:
		n, v = 2, uint32(lead&0x1f)
	case lead&0xf0 == 0xe0:
		n, v = 3, uint32(lead&0x0f)
	case lead&0xf8 == 0xf0:
		n, v = 4, uint32(lead&0x07)
	case lead&0xfc == 0xf8:
		n, v = 5, uint32(lead&0x03)
	case lead&0xfe == 0xfc:
		n, v = 6, uint32(lead&0x01)
	default:
		return 0, 0
	}
	if len(s) < n {
		return 0, 0
	}
	for i := 1; i < n; i++ {
		if s[i]&0xc0 != 0x80 {
			return 0, 0
		}
		v = v<<6 | uint32(s[i]&0x3f)
	}
	if v >= utf8.RuneSelf {
		return 0, 0
	}
	return byte(v), n
}

// decodeEntities decodes HTML character references the way the most
// lenient decoders do: numeric (&#46; &#046 &#x2E &#X2e), with or without
// the ';' and with any leading zeros, and named (&period; &sol; &bsol;
// &hellip; &nldr; ...), also without the ';' (the longest name that is an
// entity wins). Anything else stays as it is.
func decodeEntities(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != '&' {
			b.WriteByte(s[i])
			continue
		}
		if dec, n := entityAt(s[i:]); n > 0 {
			b.WriteString(dec)
			i += n - 1
			continue
		}
		b.WriteByte('&')
	}
	return b.String()
}

// entityAt decodes the character reference at the start of s ("&..."),
// returning the text and how many bytes it spans, or n == 0.
func entityAt(s string) (string, int) {
	if len(s) > 1 && s[1] == '#' {
		i, base := 2, 10
		if i < len(s) && (s[i] == 'x' || s[i] == 'X') {
			i, base = 3, 16
		}
		start := i
		var v rune
		for i < len(s) {
			d := hexVal(s[i])
			if d < 0 || base == 10 && d > 9 {
				break
			}
			if v < 0x110000 {
				v = v*rune(base) + rune(d)
			}
			i++
		}
		if i == start {
			return "", 0
		}
		if i < len(s) && s[i] == ';' {
			i++
		}
		// As HTML reads the value: 0x80-0x9F as Windows-1252 (&#133; is
		// "…"), invalid ones as U+FFFD.
		return html.UnescapeString(fmt.Sprintf("&#x%X;", min(v, 0x110000))), i
	}
	// Named: letters and digits (HTML's longest name has 31).
	end := 1
	for end < len(s) && end <= 33 && (isLetter(s[end]) || s[end] >= '0' && s[end] <= '9') {
		end++
	}
	if end < len(s) && s[end] == ';' {
		if dec := html.UnescapeString(s[:end+1]); dec != s[:end+1] {
			return dec, end + 1
		}
	}
	// Without ';': lenient decoders take the longest name that is an entity
	// (only short names are tried: the ones that decode to dots, slashes and
	// their look-alikes have at most 10 letters).
	for n := min(end, 11); n > 2; n-- {
		if dec := html.UnescapeString(s[:n] + ";"); dec != s[:n]+";" {
			return dec, n
		}
	}
	return "", 0
}

// hasDotDotSegment reports a ".." segment in a '/'-separated string; line
// breaks and other control characters separate too. A segment ends at ';'
// (path parameters, "..;/" in Java servers). Windows ignores trailing spaces
// and dots in a segment, so ".. " and "..." count too (loose) — except for
// a whole line of a multi-line string with no '/' in it, which must be
// exactly "..", so that an ellipsis line in prose or code passes. strict
// counts only exact ".." segments.
func hasDotDotSegment(s string, strict bool) bool {
	if !strings.Contains(s, "..") {
		return false
	}
	multi := strings.IndexFunc(trimEnds(s), isControl) >= 0
	start, left := 0, byte(0) // segment start; what is before it: '/', control (1) or nothing (0)
	for i := 0; i <= len(s); {
		var right byte
		size := 1
		if i < len(s) {
			c := s[i]
			switch {
			case c == '/':
				right = '/'
			case c < utf8.RuneSelf:
				if isControl(rune(c)) {
					right = 1
				}
			default:
				var r rune
				r, size = utf8.DecodeRuneInString(s[i:])
				if isControl(r) {
					right = 1
				}
			}
			if right == 0 {
				i += size
				continue
			}
		}
		seg := s[start:i]
		if j := strings.IndexByte(seg, ';'); j >= 0 {
			seg = seg[:j]
		}
		// "C:..\x" style: a drive prefix glued to the segment.
		if len(seg) >= 4 && seg[1] == ':' && isLetter(seg[0]) {
			seg = seg[2:]
		}
		loose := !strict && (!multi || left == '/' || right == '/')
		if isDotDot(seg, loose) {
			return true
		}
		start, left = i+size, right
		i += size
	}
	return false
}

func isDotDot(seg string, loose bool) bool {
	if strings.TrimSpace(seg) == ".." {
		return true
	}
	return loose && strings.HasPrefix(seg, "..") && strings.Trim(seg, ". ") == ""
}

// hasFileScheme reports a "file:" URL, in any case.
func hasFileScheme(s string) bool {
	return len(s) >= 5 && strings.EqualFold(s[:5], "file:")
}

// absolutePath reports whether s (trimmed, one line) is an absolute
// filesystem path (or a file: URL or ~ path) and returns it in cleaned,
// '/'-separated form.
func absolutePath(s string) (string, bool) {
	p := strings.ReplaceAll(s, `\`, "/")
	switch {
	case hasFileScheme(p):
		return fileURLPath(p[len("file:"):]), true
	case isHomePath(p):
		return p, true // home-relative: never inside a configured root
	case len(p) >= 3 && p[1] == ':' && p[2] == '/' && isLetter(p[0]):
		return path.Clean(p), true // C:/x
	case len(p) >= 2 && p[1] == ':' && isLetter(p[0]) && !strings.ContainsFunc(p, unicode.IsSpace):
		return p, true // C:x, relative to the drive's current folder: never inside a root
	case strings.HasPrefix(p, "//"):
		return uncPath(p), true // \\host\share, //host/share
	case strings.HasPrefix(p, "/"):
		return path.Clean(p), true
	}
	return "", false
}

// uncPath cleans a network path, keeping its leading "//" (path.Clean would
// make \\srv\data\x the local /srv/data/x): inside only a root that is
// the same share, or "/".
func uncPath(p string) string {
	return "/" + path.Clean(p)
}

// fileURLPath is the path of a file: URL (what follows "file:"), read as
// URL parsers do: no slashes, one or three are all a local path, a host
// other than localhost is a UNC share, query and fragment are cut off;
// "/C:/x" stays as it is (see insideRoots), "/C|/x" is read as "/C:/x".
func fileURLPath(rest string) string {
	if i := strings.IndexAny(rest, "?#"); i >= 0 {
		rest = rest[:i]
	}
	if strings.HasPrefix(rest, "//") {
		host := rest[2:]
		if i := strings.IndexByte(host, '/'); i >= 0 {
			host = host[:i]
		}
		rest = rest[2+len(host):]
		if host != "" && !strings.EqualFold(host, "localhost") {
			return uncPath("//" + host + "/" + rest)
		}
	}
	p := "/" + strings.TrimLeft(rest, "/")
	if len(p) >= 4 && isLetter(p[1]) && p[2] == '|' && p[3] == '/' {
		p = p[:2] + ":" + p[3:] // the legacy /C|/x
	}
	return path.Clean(p)
}

// isHomePath: "~", "~/x", "~user", "~user/x" (as shells expand them).
func isHomePath(p string) bool {
	if !strings.HasPrefix(p, "~") {
		return false
	}
	user, _, _ := strings.Cut(p[1:], "/")
	for i := 0; i < len(user); i++ {
		if c := user[i]; !isLetter(c) && !(c >= '0' && c <= '9') && c != '.' && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// insideRoots reports whether the cleaned absolute path p is a root or
// below one (roots compared as configured and in NFKC). "/C:/x" (a file
// URL's path) is a POSIX path, and C:/x to a Windows server: it is inside
// a drive root like C:/x would be.
func insideRoots(p string, roots []string) bool {
	if len(p) >= 4 && p[0] == '/' && isLetter(p[1]) && p[2] == ':' && p[3] == '/' && insideRoots(p[1:], roots) {
		return true
	}
	for _, r := range roots {
		r = strings.ReplaceAll(r, `\`, "/")
		if strings.HasPrefix(r, "//") {
			r = uncPath(r)
		} else {
			r = path.Clean(r)
		}
		if within(p, r) || !norm.NFKC.IsNormalString(r) && within(p, norm.NFKC.String(r)) {
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

func within(p, root string) bool {
	if len(root) >= 2 && root[1] == ':' && isLetter(root[0]) {
		// Windows: paths are case-insensitive.
		p, root = strings.ToLower(p), strings.ToLower(root)
	}
	return p == root || root == "/" || strings.HasPrefix(p, strings.TrimRight(root, "/")+"/")
}
