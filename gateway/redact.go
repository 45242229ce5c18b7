package gateway

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/sandboxrt/sandbox/gateway/internal/upstream"
)

// Secret redaction. Values the gateway knows to be secret never reach an
// agent or a snippet: the bearer tokens of the calls in flight on a server,
// the values of the "env" and "headers" the config gives servers (8
// characters or more: shorter ones are settings, not secrets, and
// replacing "prod" everywhere would corrupt results), the config's
// "secrets" list and the operator's tokens. Every string an upstream sends
// that reaches a client or a snippet is redacted: results (spilled ones as
// they stream), pass-through answers, notifications, relayed requests,
// instructions, errors. docs/operations.md lists them.
//
// A string is redacted as it is read, not as it was written: JSON lets a
// server write any character as \uXXXX (and "/" as "\/"), so a secret is
// looked for in each string's (and key's) decoded text. And the decoded
// text is often JSON itself (a text block holding a JSON document, which
// code mode parses: ARCHITECTURE.md contract 2), whose strings have escapes
// of their own: so the text is read through its escapes again, up to
// decodeLevels times. Where a secret is found, the bytes it was read from
// are replaced by "[redacted]", whole escapes at every level, so what was
// JSON stays JSON and everything else (numbers, key order, other escapes)
// stays byte for byte as the server sent it.
//
// The common case is cheap (secretSet.mayHold): JSON without a backslash
// holds a secret only as written; JSON whose only escapes are short ones
// (\" around a text block's JSON, mostly) holds a secret's longest part
// without " \ / as written; only JSON with \u escapes is read through its
// escapes into a scratch buffer first. All of these searches are one pass
// that skips most bytes (sieve). Only when a secret may be there are
// strings decoded one by one.

// redacted is what a secret is replaced by.
const redacted = "[redacted]"

// minSecretLength is the shortest value treated as a secret.
const minSecretLength = 8

// decodeLevels is how many times a string is read through JSON's escapes:
// a result's string as a client decodes it (1), the text of a block parsed
// as JSON by code mode (2), a string of that parsed again by a snippet (3),
// and once more (4). A secret nested deeper is not found (docs/operations.md):
// a snippet can parse on and on, and each level read costs a pass.
const decodeLevels = 4

// redactor holds the secrets every answer is redacted of.
type redactor struct {
	given   []string // as given, deduplicated: what addSecrets extends
	secrets secretSet
}

func newRedactor(secrets []string) *redactor {
	r := &redactor{}
	seen := map[string]bool{}
	for _, s := range secrets {
		if len(s) < minSecretLength || seen[s] {
			continue
		}
		seen[s] = true
		r.given = append(r.given, s)
	}
	r.secrets = newSecretSet(r.given)
	return r
}

// with is the redactor's secrets and more (the tokens a server was sent).
func (r *redactor) with(more ...string) secretSet {
	s := r.secrets
	added := false
	for _, v := range more {
		if len(v) < minSecretLength || slices.Contains(r.given, v) || slices.ContainsFunc(s.whole.extra, func(e []byte) bool { return string(e) == v }) {
			continue
		}
		if !added { // r.secrets is shared: extend copies
			s.list = slices.Clip(s.list)
			s.whole.extra, s.cores.extra = nil, nil
			added = true
		}
		s.list = append(s.list, []byte(v))
		s.maxLen = max(s.maxLen, len(v))
		s.whole.extra = append(s.whole.extra, []byte(v))
		if c := core([]byte(v)); len(c) >= minCore {
			s.cores.extra = append(s.cores.extra, c)
		} else {
			s.coresOK = false
		}
	}
	return s
}

// secretSet is the secrets one answer is redacted of.
type secretSet struct {
	list   [][]byte
	maxLen int
	whole  finder // finds any secret
	// cores finds the longest part of any secret that JSON text without
	// \u escapes can only hold as written (mayHold); not coresOK when a
	// secret has too short a one to look for.
	cores   finder
	coresOK bool
}

func newSecretSet(secrets []string) secretSet {
	s := secretSet{coresOK: true}
	var cores [][]byte
	for _, v := range secrets {
		b := []byte(v)
		s.list = append(s.list, b)
		s.maxLen = max(s.maxLen, len(v))
		c := core(b)
		s.coresOK = s.coresOK && len(c) >= minCore
		cores = append(cores, c)
	}
	s.whole.sv = newSieve(s.list)
	if s.coresOK {
		s.cores.sv = newSieve(cores)
	}
	return s
}

// finder finds whether any of some patterns occurs in a text: the
// gateway's own secrets through a sieve made once, a call's tokens one
// by one.
type finder struct {
	sv    *sieve
	extra [][]byte
}

func (f finder) in(b []byte) bool {
	if f.sv != nil && f.sv.in(b) {
		return true
	}
	for _, v := range f.extra {
		if bytes.Contains(b, v) {
			return true
		}
	}
	return false
}

// sieve tells whether any of a few patterns occurs in a text while
// reading a fraction of a text that holds none (Wu and Manber's search
// with two-byte blocks): a window as long as the shortest pattern moves on
// by as much as its last two bytes allow, so that no pattern can end
// inside what it skips. One search of each secret in turn read every
// byte once per secret.
type sieve struct {
	patterns [][]byte
	m        int // the window: the shortest pattern's length, at most 255
	shift    [1 << 12]uint8
}

// newSieve is the sieve of patterns of at least 2 bytes (nil for none).
func newSieve(patterns [][]byte) *sieve {
	if len(patterns) == 0 {
		return nil
	}
	sv := &sieve{patterns: patterns, m: 255}
	for _, p := range patterns {
		sv.m = min(sv.m, len(p))
	}
	for i := range sv.shift {
		sv.shift[i] = uint8(sv.m - 1)
	}
	for _, p := range patterns {
		for q := 1; q < sv.m; q++ {
			h := blockHash(p[q-1], p[q])
			sv.shift[h] = min(sv.shift[h], uint8(sv.m-1-q))
		}
	}
	return sv
}

func blockHash(a, b byte) uint16 { return (uint16(a)<<4 ^ uint16(b)) & (1<<12 - 1) }

func (sv *sieve) in(t []byte) bool {
	return sv.each(t, func(int, int) bool { return false })
}

// each calls found with the start and pattern (its index) of every
// occurrence of a pattern in t, in order of their starts, until it returns
// false; each reports whether it found any.
func (sv *sieve) each(t []byte, found func(at, k int) (more bool)) bool {
	m, any := sv.m, false
	for i := m - 1; i < len(t); {
		if s := sv.shift[blockHash(t[i-1], t[i])]; s > 0 {
			i += int(s)
			continue
		}
		// The window's last two bytes may end a pattern's first m bytes.
		w := t[i-m+1:]
		for k, p := range sv.patterns {
			if bytes.HasPrefix(w, p) {
				any = true
				if !found(i-m+1, k) {
					return true
				}
			}
		}
		i++
	}
	return any
}

// minCore is the shortest core worth a search of its own.
const minCore = 4

// core is the longest run of v without a character that a JSON string
// may write as a short escape (\" \\ \/ and the control characters):
// without \u escapes, every other character is written as itself, at every
// level, so a string that reads as v holds its core as written.
func core(v []byte) []byte {
	var best, cur []byte
	for i, c := range v {
		if c == '"' || c == '\\' || c == '/' || c < 0x20 {
			cur = nil
			continue
		}
		if cur == nil {
			cur = v[i : i+1]
		} else {
			cur = cur[:len(cur)+1]
		}
		if len(cur) > len(best) {
			best = cur
		}
	}
	return best
}

func (s secretSet) empty() bool { return len(s.list) == 0 }

// containedIn reports whether any secret occurs in b.
func (s secretSet) containedIn(b []byte) bool { return s.whole.in(b) }

// configSecrets are the secrets a config names: the values of servers' env
// variables and headers whose names say they are secret (GITHUB_TOKEN,
// API_KEY, Authorization, ...; not ALLOWED_DIR, whose value is a path
// results must keep), the bearer of an Authorization header, and Secrets.
func configSecrets(cfg *Config) []string {
	out := append([]string(nil), cfg.Settings.Secrets...)
	for _, sc := range cfg.Servers {
		if sc.OAuth != nil && sc.OAuth.ClientSecret != "" {
			out = append(out, sc.OAuth.ClientSecret)
		}
		for k, v := range sc.Env {
			if secretName(k) {
				out = append(out, v)
			}
		}
		for k, v := range sc.Headers {
			if !secretName(k) {
				continue
			}
			out = append(out, v)
			if _, tok, ok := strings.Cut(v, " "); ok { // "Bearer abc", "Basic abc"
				out = append(out, tok)
			}
		}
	}
	return out
}

// secretName reports whether an env variable's or header's name says its
// value is a secret.
func secretName(name string) bool {
	n := strings.ToUpper(name)
	for _, w := range []string{"TOKEN", "KEY", "SECRET", "PASSWORD", "PASSWD", "PASS", "AUTH", "CREDENTIAL", "PRIVATE", "COOKIE", "SESSION", "SIGNATURE", "CERT"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// --- what the gateway redacts with ---

func (g *Gateway) redactor() *redactor { return g.redactP.Load() }

// addSecrets adds values to redact (an operator token given at start).
func (g *Gateway) addSecrets(values ...string) {
	for {
		old := g.redactP.Load()
		next := newRedactor(append(append([]string(nil), old.given...), values...))
		if g.redactP.CompareAndSwap(old, next) {
			return
		}
	}
}

// serverSecrets are the secrets what a server sends now is redacted of:
// the gateway's, and the tokens of the requests in flight on it (a server
// that echoes a request's Authorization header, into that request's answer
// or into a log message while it runs).
func (g *Gateway) serverSecrets(server string) secretSet {
	return g.redactor().with(g.sentTokens.of(server)...)
}

// sentTokens are the bearer tokens of the requests in flight on each
// server. A call's token is per caller and lives in the token store, so
// it is not among the gateway-wide secrets: while it is in flight, it is
// here, for whatever the server sends meanwhile.
type sentTokens struct {
	mu sync.Mutex
	by map[string]map[string]int // server -> token -> requests in flight
}

// hold records a token sent to a server until the returned func is called.
func (t *sentTokens) hold(server, token string) (release func()) {
	if len(token) < minSecretLength {
		return func() {}
	}
	t.mu.Lock()
	if t.by == nil {
		t.by = map[string]map[string]int{}
	}
	if t.by[server] == nil {
		t.by[server] = map[string]int{}
	}
	t.by[server][token]++
	t.mu.Unlock()
	return func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		if t.by[server][token]--; t.by[server][token] <= 0 {
			delete(t.by[server], token)
		}
	}
}

// of lists the tokens in flight on a server.
func (t *sentTokens) of(server string) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.by[server]) == 0 {
		return nil
	}
	out := make([]string, 0, len(t.by[server]))
	for tok := range t.by[server] {
		out = append(out, tok)
	}
	return out
}

// --- redacting ---

// text redacts a string that is read as it is (an error message, a
// server's instructions, a progress message).
func (s secretSet) text(str string) string {
	if s.empty() || (strings.IndexByte(str, '\\') < 0 && !s.containedIn([]byte(str))) {
		return str
	}
	b := []byte(str)
	found, _ := s.find(b, false)
	if len(found) == 0 {
		return str
	}
	return string(replaceSpans(nil, b, found))
}

// json redacts JSON text: b itself when it holds no secret, else a copy
// with each secret in its strings and keys replaced.
func (s secretSet) json(b []byte) []byte {
	if !s.mayHold(b) {
		return b
	}
	return s.rewrite(b)
}

// rewrite is json without the quick look.
func (s secretSet) rewrite(b []byte) []byte {
	var out []byte
	last := 0
	for i := 0; i < len(b); {
		q := bytes.IndexByte(b[i:], '"')
		if q < 0 {
			break
		}
		start := i + q + 1
		end := stringEnd(b, start)
		if str := b[start:end]; bytes.IndexByte(str, '\\') < 0 && !s.containedIn(str) {
			i = end + 1
			continue
		}
		if found, _ := s.find(b[start:end], true); len(found) > 0 {
			out = append(out, b[last:start]...)
			out = replaceSpans(out, b[start:end], found)
			last = end
		}
		i = end + 1
	}
	if out == nil {
		return b
	}
	return append(out, b[last:]...)
}

// error redacts an error's message and data in place.
func (s secretSet) error(e *Error) *Error {
	if e != nil && !s.empty() {
		e.Message = s.text(e.Message)
		e.Data = s.json(e.Data)
	}
	return e
}

// rpcError redacts a JSON-RPC error of the server in place: its message
// is cut to fit the gateway's, and a secret cut in two is not found.
func (s secretSet) rpcError(err error) {
	var re *upstream.RPCError
	if errors.As(err, &re) && !s.empty() {
		re.Message = s.text(re.Message)
		re.Data = s.json(re.Data)
	}
}

// result redacts a call's result in place.
func (s secretSet) result(res *CallResult) {
	if res == nil || s.empty() {
		return
	}
	for i, b := range res.Content {
		res.Content[i] = s.json(b)
	}
	res.StructuredContent = s.json(res.StructuredContent)
}

// stringEnd is where the JSON string whose contents start at start ends:
// the index of its closing quote, or len(b).
func stringEnd(b []byte, start int) int {
	for i := start; i < len(b); i++ {
		switch b[i] {
		case '"':
			return i
		case '\\':
			i++
		}
	}
	return len(b)
}

// scratch buffers of mayHold, which reads whole answers through their
// escapes without keeping them.
var scratch = sync.Pool{New: func() any { return new([]byte) }}

// mayHold reports whether JSON text may hold a secret in a string or a key,
// read through its escapes up to decodeLevels times. It never misses one
// that json would find: each level's text holds every string's text of that
// level whole, strings kept apart by a byte no escape reads through (NUL,
// where the quotes were), and a secret holds no NUL.
func (s secretSet) mayHold(b []byte) bool {
	if s.empty() || len(b) == 0 {
		return false
	}
	if bytes.IndexByte(b, '\\') < 0 {
		return s.containedIn(b)
	}
	if s.coresOK && !bytes.Contains(b, []byte(`\u`)) {
		// Only short escapes (a text block's \" around JSON, mostly): no
		// core as written, no secret at any level ("\\u" holds "\u" too).
		return s.cores.in(b)
	}
	p1, p2 := scratch.Get().(*[]byte), scratch.Get().(*[]byte)
	defer func() {
		if cap(*p1) <= 4<<20 {
			scratch.Put(p1)
		}
		if cap(*p2) <= 4<<20 {
			scratch.Put(p2)
		}
	}()
	if cap(*p1) < len(b) {
		*p1 = make([]byte, 0, len(b))
	}
	view := unescape((*p1)[:0], b, nil, true)
	*p1 = view
	for level := 1; ; level++ {
		if s.containedIn(view) {
			return true
		}
		if level == decodeLevels || bytes.IndexByte(view, '\\') < 0 {
			return false
		}
		next := unescape((*p2)[:0], view, nil, false)
		*p2 = next
		view = next
		p1, p2 = p2, p1
	}
}

// textSpan is a range of bytes, [start, end).
type textSpan struct{ start, end int }

// escapeAt is where one escape was read: its bytes in the text read
// (inStart, inEnd) and what it gave in the text read from it (outStart,
// outEnd). A text with an escape every few bytes has many: int32 halves
// them (a text held in memory is far below 2 GiB).
type escapeAt struct{ inStart, inEnd, outStart, outEnd int32 }

// decoding is a text read through its escapes level by level: views[0] is
// the text, views[k+1] views[k] read once (escapes[k] says where).
type decoding struct {
	views   [][]byte
	escapes [][]escapeAt
}

// find returns where secrets are in text: in text itself and in its
// readings through escapes, as spans of text that cover whole escapes at
// every level, sorted and apart. A JSON string's contents (jsonString) are
// looked at as decoded only: matched as written, a secret could start
// inside an escape, and replacing it there would break the string.
func (s secretSet) find(text []byte, jsonString bool) ([]textSpan, *decoding) {
	d := &decoding{views: [][]byte{text}}
	first, last := 0, decodeLevels-1
	if jsonString {
		first, last = 1, decodeLevels
	}
	var found []textSpan
	for level := 0; ; level++ {
		view := d.views[level]
		plain := bytes.IndexByte(view, '\\') < 0 // every deeper view is this one
		if level >= first || plain {
			for _, m := range matches(s, view) {
				found = append(found, d.toText(level, m))
			}
		}
		if level == last || plain {
			break
		}
		esc := make([]escapeAt, 0, bytes.Count(view, []byte{'\\'})) // at most one per backslash
		next := unescape(make([]byte, 0, len(view)), view, &esc, false)
		d.views = append(d.views, next)
		d.escapes = append(d.escapes, esc)
	}
	return mergeSpans(found), d
}

// matches are where the secrets occur in view: each secret's occurrences
// one after the other ("AAAAAAAA" twice in "AAAAAAAAAAAAAAAAA"), those of
// different secrets however they overlap (merged by find).
func matches(s secretSet, view []byte) []textSpan {
	var out []textSpan
	if sv := s.whole.sv; sv != nil {
		ends := make([]int, len(sv.patterns))
		sv.each(view, func(at, k int) bool {
			if at >= ends[k] {
				ends[k] = at + len(sv.patterns[k])
				out = append(out, textSpan{at, ends[k]})
			}
			return true
		})
	}
	for _, v := range s.whole.extra {
		for i := 0; ; {
			j := bytes.Index(view[i:], v)
			if j < 0 {
				break
			}
			out = append(out, textSpan{i + j, i + j + len(v)})
			i += j + len(v)
		}
	}
	return out
}

// toText maps a textSpan of views[level] back to text: a textSpan that starts or
// ends inside what one escape gave grows to cover the escape.
func (d *decoding) toText(level int, sp textSpan) textSpan {
	for k := level - 1; k >= 0; k-- {
		esc := d.escapes[k]
		// sp.start: inside an escape's output, that escape's start;
		// else as far past the last escape before it as it is past its output.
		i := sort.Search(len(esc), func(i int) bool { return int(esc[i].outEnd) > sp.start })
		switch {
		case i < len(esc) && int(esc[i].outStart) <= sp.start:
			sp.start = int(esc[i].inStart)
		case i > 0:
			sp.start = sp.start - int(esc[i-1].outEnd) + int(esc[i-1].inEnd)
		}
		j := sort.Search(len(esc), func(i int) bool { return int(esc[i].outEnd) >= sp.end })
		switch {
		case j < len(esc) && int(esc[j].outStart) < sp.end:
			sp.end = int(esc[j].inEnd)
		case j > 0:
			sp.end = sp.end - int(esc[j-1].outEnd) + int(esc[j-1].inEnd)
		}
	}
	return sp
}

// boundary reports whether a position of text falls between what escapes
// gave at every level: text cut there reads, level by level, as the two
// halves read apart.
func (d *decoding) boundary(pos int) bool {
	for _, esc := range d.escapes {
		i := sort.Search(len(esc), func(i int) bool { return int(esc[i].inEnd) > pos })
		if i < len(esc) && int(esc[i].inStart) < pos {
			return false // inside an escape
		}
		if i > 0 {
			pos = pos - int(esc[i-1].inEnd) + int(esc[i-1].outEnd)
		}
	}
	return true
}

// mergeSpans sorts spans and joins those that overlap.
func mergeSpans(spans []textSpan) []textSpan {
	if len(spans) < 2 {
		return spans
	}
	byStart := func(a, b textSpan) int { return a.start - b.start }
	if !slices.IsSortedFunc(spans, byStart) {
		slices.SortFunc(spans, byStart)
	}
	out := spans[:1]
	for _, sp := range spans[1:] {
		if last := &out[len(out)-1]; sp.start < last.end {
			last.end = max(last.end, sp.end)
			continue
		}
		out = append(out, sp)
	}
	return out
}

// replaceSpans appends text to dst with each textSpan replaced by "[redacted]".
func replaceSpans(dst, text []byte, spans []textSpan) []byte {
	at := 0
	for _, sp := range spans {
		dst = append(dst, text[at:sp.start]...)
		dst = append(dst, redacted...)
		at = sp.end
	}
	return append(dst, text[at:]...)
}

// unescape appends s read once through JSON's string escapes (\" \\ \/ \b
// \f \n \r \t \uXXXX, a surrogate pair as one character, a lone surrogate
// as U+FFFD, as encoding/json reads them) to dst. What is not a valid
// escape is kept as it is: s need not be JSON. With esc, each escape read
// is recorded. With breakQuotes (s is whole JSON text), a quote that is not
// escaped, a string's edge, is read as NUL.
func unescape(dst, s []byte, esc *[]escapeAt, breakQuotes bool) []byte {
	run := 0 // where the bytes read as themselves start
	for i := 0; i < len(s); {
		c := s[i]
		if c != '\\' && (c != '"' || !breakQuotes) {
			i++
			continue
		}
		dst = append(dst, s[run:i]...)
		if c == '"' {
			dst = append(dst, 0)
			i++
			run = i
			continue
		}
		r, n := readEscape(s[i:])
		if n == 0 { // not an escape: the backslash is itself
			i++
			run = i - 1
			continue
		}
		out := len(dst)
		if r < utf8.RuneSelf {
			dst = append(dst, byte(r))
		} else {
			dst = utf8.AppendRune(dst, r)
		}
		if esc != nil {
			*esc = append(*esc, escapeAt{int32(i), int32(i + n), int32(out), int32(len(dst))})
		}
		i += n
		run = i
	}
	return append(dst, s[run:]...)
}

// readEscape reads the escape s starts with: the character and its length
// in s, or n == 0 when s does not start with a valid one.
func readEscape(s []byte) (r rune, n int) {
	if len(s) < 2 || s[0] != '\\' {
		return 0, 0
	}
	switch s[1] {
	case '"', '\\', '/':
		return rune(s[1]), 2
	case 'b':
		return '\b', 2
	case 'f':
		return '\f', 2
	case 'n':
		return '\n', 2
	case 'r':
		return '\r', 2
	case 't':
		return '\t', 2
	case 'u':
		r, ok := hex4(s[2:])
		if !ok {
			return 0, 0
		}
		if r < 0xD800 || r > 0xDFFF {
			return r, 6
		}
		if r < 0xDC00 && len(s) >= 12 && s[6] == '\\' && s[7] == 'u' {
			if lo, ok := hex4(s[8:]); ok && lo >= 0xDC00 && lo <= 0xDFFF {
				return 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00), 12
			}
		}
		return utf8.RuneError, 6
	}
	return 0, 0
}

// --- streaming, for a result too large to hold (spill.go) ---

// writer redacts JSON text written through it as json does, holding back
// only the end of the string being written: a secret split between two
// writes is still found. Close writes what waits.
func (s secretSet) writer(w io.Writer) io.WriteCloser {
	if s.empty() {
		return nopCloser{w}
	}
	// A secret's byte read at level k was written in at most 6^k bytes
	// (\u0073 for s, each of its bytes escaped again, ...), and an escape
	// is at most 12 bytes: what is held back covers both at every level.
	keep := max(s.maxLen, 12)
	for range decodeLevels {
		keep *= 6
	}
	chunk := max(keep, 256<<10)
	return &redactingWriter{w: w, s: s, keep: keep, chunk: chunk, next: keep + chunk}
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

type redactingWriter struct {
	w        io.Writer
	s        secretSet
	keep     int // bytes of a string held back for what may go on in the next write
	chunk    int // bytes of a string redacted at once, past keep
	next     int // the held bytes that start the next redaction
	inString bool
	escaped  bool   // the string's last byte written began an escape
	buf      []byte // the string's contents not yet redacted and written
}

func (rw *redactingWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		if !rw.inString {
			q := bytes.IndexByte(p, '"')
			if q < 0 {
				_, err := rw.w.Write(p)
				return n, err
			}
			if _, err := rw.w.Write(p[:q+1]); err != nil {
				return 0, err
			}
			p, rw.inString = p[q+1:], true
			continue
		}
		end := rw.closingQuote(p)
		if end < 0 {
			rw.buf = append(rw.buf, p...)
			if len(rw.buf) >= rw.next {
				if err := rw.flush(false); err != nil {
					return 0, err
				}
			}
			return n, nil
		}
		rw.buf = append(rw.buf, p[:end]...)
		if err := rw.flush(true); err != nil {
			return 0, err
		}
		if _, err := io.WriteString(rw.w, `"`); err != nil {
			return 0, err
		}
		p, rw.inString = p[end+1:], false
	}
	return n, nil
}

// closingQuote is the index in p of the quote that ends the string, or -1,
// following escapes across writes.
func (rw *redactingWriter) closingQuote(p []byte) int {
	for i, c := range p {
		switch {
		case rw.escaped:
			rw.escaped = false
		case c == '\\':
			rw.escaped = true
		case c == '"':
			return i
		}
	}
	return -1
}

// Close writes what waits (a string left open by broken JSON included).
func (rw *redactingWriter) Close() error { return rw.flush(true) }

// flush redacts and writes the string's contents held: all of them at the
// string's end, else up to a cut at least keep bytes before the end, where
// no escape at any level and no secret is split.
func (rw *redactingWriter) flush(all bool) error {
	if !rw.s.mayHold(rw.buf) { // no secret in what is held, at any level: as it is
		cut := len(rw.buf)
		if !all {
			cut = plainCut(rw.buf, len(rw.buf)-rw.keep)
		}
		if cut > 0 {
			if _, err := rw.w.Write(rw.buf[:cut]); err != nil {
				return err
			}
			rw.buf = rw.buf[:copy(rw.buf, rw.buf[cut:])]
			rw.next = rw.keep + rw.chunk
			return nil
		}
	}
	found, d := rw.s.find(rw.buf, true)
	cut := len(rw.buf)
	if !all {
		cut = rw.cleanCut(len(rw.buf)-rw.keep, found, d)
		if cut <= 0 { // not yet: no cut fits (one will, a few hundred bytes on)
			rw.next = len(rw.buf) + rw.chunk
			return nil
		}
	}
	rw.next = rw.keep + rw.chunk
	var head []textSpan
	for _, sp := range found {
		if sp.start < cut {
			head = append(head, sp)
		}
	}
	if _, err := rw.w.Write(replaceSpans(nil, rw.buf[:cut], head)); err != nil {
		return err
	}
	rw.buf = rw.buf[:copy(rw.buf, rw.buf[cut:])]
	return nil
}

// plainCut is the last position at or before limit (and not far before it)
// that a run of more than plainRun bytes without a backslash reaches, or 0:
// no escape is split there at any level. What follows an escape's last
// backslash is at most 5 bytes (uXXXX), so at most the first 5 bytes of
// such a run can end an escape begun before it; the rest reads as itself,
// a run at most 5 bytes shorter one level down, and so on: more than
// 5 × decodeLevels bytes leave no escape across the end at any level. It
// saves reading the contents through their escapes when they hold no
// secret.
func plainCut(b []byte, limit int) int {
	const plainRun, lookBack = 6 * (decodeLevels + 1), 64 << 10
	for end := limit; end > 0 && limit-end < lookBack; {
		j := bytes.LastIndexByte(b[:end], '\\')
		if end-j > plainRun {
			return end
		}
		end = j
	}
	return 0
}

// cleanCut is the last position at or before limit where the held contents
// can be cut: outside every secret found, and between escapes at every
// level (the rest then reads as it would have whole).
func (rw *redactingWriter) cleanCut(limit int, found []textSpan, d *decoding) int {
	for pos := limit; pos > 0; pos-- {
		if i := sort.Search(len(found), func(i int) bool { return found[i].end > pos }); i < len(found) && found[i].start < pos {
			pos = found[i].start + 1 // inside a secret: try before it
			continue
		}
		if d.boundary(pos) {
			return pos
		}
	}
	return 0
}
