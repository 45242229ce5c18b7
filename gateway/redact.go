package gateway

import (
	"bytes"
	"encoding/json"
	"io"
	"sort"
	"strings"
)

// Secret redaction. Values the gateway knows to be secret never reach an
// agent or a snippet: the bearer token of the call, the values of the
// "env" and "headers" the config gives servers (8 characters or more:
// shorter ones are settings, not secrets, and replacing "prod" everywhere
// would corrupt results), and the config's "secrets" list. They are
// replaced by "[redacted]" in tool results and error messages, as written
// and as they appear JSON-escaped. A server that echoes its own API key
// back, or an error message that quotes a request header, shows
// "[redacted]" instead.

// redacted is what a secret is replaced by.
const redacted = "[redacted]"

// minSecretLength is the shortest config value treated as a secret.
const minSecretLength = 8

// redactor replaces known secrets.
type redactor struct {
	secrets []string // as given and as they appear JSON-escaped
	given   []string // as given
	r       *strings.Replacer
}

func newRedactor(secrets []string) *redactor {
	seen := map[string]bool{}
	var list, given []string
	for _, s := range secrets {
		if len(s) < minSecretLength || seen[s] {
			continue
		}
		seen[s] = true
		given = append(given, s)
		list = append(list, s)
		if esc := jsonEscaped(s); esc != s {
			list = append(list, esc) // as it appears inside a JSON string
		}
	}
	// Longest first, so a secret that contains another is replaced whole.
	sort.Slice(list, func(i, j int) bool { return len(list[i]) > len(list[j]) })
	var pairs []string
	for _, s := range list {
		pairs = append(pairs, s, redacted)
	}
	return &redactor{secrets: list, given: given, r: strings.NewReplacer(pairs...)}
}

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

// jsonEscaped is s as it is written inside a JSON string.
func jsonEscaped(s string) string {
	esc, _ := json.Marshal(s)
	return string(esc[1 : len(esc)-1])
}

// text redacts a string, with one more secret (the call's token) if given.
func (r *redactor) text(s string, extra string) string {
	if len(r.secrets) > 0 {
		s = r.r.Replace(s)
	}
	if len(extra) >= minSecretLength && strings.Contains(s, extra) {
		s = strings.ReplaceAll(s, extra, redacted)
	}
	return s
}

// raw redacts JSON text; the result stays valid JSON since a secret and
// its replacement are both plain string contents.
func (r *redactor) raw(b json.RawMessage, extra string) json.RawMessage {
	if len(b) == 0 {
		return b
	}
	s := string(b)
	out := r.text(s, extra)
	if len(extra) >= minSecretLength {
		if esc := jsonEscaped(extra); esc != extra {
			out = strings.ReplaceAll(out, esc, redacted)
		}
	}
	if out == s {
		return b
	}
	if !json.Valid([]byte(out)) { // never hand over broken JSON for a redaction
		return b
	}
	return json.RawMessage(out)
}

// result redacts a call's result in place.
func (r *redactor) result(res *CallResult, extra string) {
	if res == nil {
		return
	}
	for i, b := range res.Content {
		res.Content[i] = r.raw(b, extra)
	}
	res.StructuredContent = r.raw(res.StructuredContent, extra)
}

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

// writer redacts JSON text written through it, as raw does, for a result
// too large to hold (spill.go): a secret split between two writes is still
// found, since the last bytes of each write wait for the next. Secrets
// holding a quote or a backslash are replaced only as they appear
// JSON-escaped: as written, they could only match across a string's edge,
// and replacing them there would break the JSON. Close writes what waits.
func (r *redactor) writer(w io.Writer, extra string) io.WriteCloser {
	var secrets [][]byte
	add := func(s string) {
		if len(s) >= minSecretLength {
			secrets = append(secrets, []byte(jsonEscaped(s))) // as written when it needs no escaping
		}
	}
	for _, s := range r.given {
		add(s)
	}
	add(extra)
	if len(secrets) == 0 {
		return nopCloser{w}
	}
	sort.Slice(secrets, func(i, j int) bool { return len(secrets[i]) > len(secrets[j]) })
	return &redactingWriter{w: w, secrets: secrets, keep: len(secrets[0]) - 1}
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

type redactingWriter struct {
	w       io.Writer
	secrets [][]byte // longest first
	keep    int      // bytes held back for a secret that may go on in the next write
	buf     []byte
	next    []int // flush's, reused
}

func (rw *redactingWriter) Write(p []byte) (int, error) {
	rw.buf = append(rw.buf, p...)
	if err := rw.flush(len(rw.buf) - rw.keep); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (rw *redactingWriter) Close() error { return rw.flush(len(rw.buf)) }

// flush writes the buffer up to limit, redacted: a secret that starts
// before limit is whole in the buffer, since keep bytes follow limit.
func (rw *redactingWriter) flush(limit int) error {
	// next[k] is where secret k is next found at or after i (-1: nowhere
	// in the buffer). A secret is searched for again only once a match has
	// passed where it was found: a text dense with one secret costs a pass
	// of the buffer per secret, not one per match.
	next := rw.next[:0]
	for range rw.secrets {
		next = append(next, -2) // not searched yet
	}
	rw.next = next
	i := 0
	for i < limit {
		at, n := -1, 0
		for k, s := range rw.secrets {
			if next[k] != -1 && next[k] < i {
				if j := bytes.Index(rw.buf[i:], s); j >= 0 {
					next[k] = i + j
				} else {
					next[k] = -1
				}
			}
			if next[k] >= 0 && (at < 0 || next[k] < at) {
				at, n = next[k], len(s) // longest first: a tie keeps the longer
			}
		}
		if at < 0 || at >= limit {
			if _, err := rw.w.Write(rw.buf[i:limit]); err != nil {
				return err
			}
			i = limit
			break
		}
		if _, err := rw.w.Write(rw.buf[i:at]); err != nil {
			return err
		}
		if _, err := io.WriteString(rw.w, redacted); err != nil {
			return err
		}
		i = at + n
	}
	rw.buf = rw.buf[:copy(rw.buf, rw.buf[max(i, 0):])]
	return nil
}
