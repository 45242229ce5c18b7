package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// TestSecretsAreRedacted: a configured secret and an operator token that a
// server echoes (in text, in structured content, JSON-escaped, in an
// error) reach the caller as [redacted]; short config values are left.
func TestSecretsAreRedacted(t *testing.T) {
	t.Parallel()
	const secret, token = `s3cret"value-123`, "operator-token-abcdef"
	s := server.NewMCPServer("leaky", "1")
	s.AddTool(mcp.NewTool("echo"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res := mcp.NewToolResultText("key " + secret + ", token " + token + ", mode prod")
		res.StructuredContent = map[string]any{"key": secret, "nested": []any{"Bearer " + token}}
		return res, nil
	})
	s.AddTool(mcp.NewTool("fail"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultError("auth failed for " + token), nil
	})
	settings := DefaultSettings()
	settings.Secrets = []string{secret, "prod"}
	g, err := New(&Config{Servers: map[string]*ServerConfig{}, Settings: settings}, WithInProcessServer("leaky", s, nil))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := g.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := g.SetOperatorToken(ctx, "other", token); err != nil {
		t.Fatal(err)
	}
	res, err := g.Call(ctx, CallRequest{Tool: "leaky:echo"})
	if err != nil {
		t.Fatal(err)
	}
	all := string(res.StructuredContent)
	for _, b := range res.Content {
		all += string(b)
	}
	if strings.Contains(all, "s3cret") || strings.Contains(all, token) || !strings.Contains(all, redacted) || !strings.Contains(all, "mode prod") {
		t.Errorf("result: %s", all)
	}
	_, err = g.Call(ctx, CallRequest{Tool: "leaky:fail"})
	var ge *Error
	if !errors.As(err, &ge) || strings.Contains(ge.Message, token) || strings.Contains(string(ge.Data), token) || !strings.Contains(ge.Message, redacted) {
		t.Errorf("error: %v %s", err, ge.Data)
	}
}

func TestConfigSecretsAreTheSecretOnes(t *testing.T) {
	cfg := &Config{Servers: map[string]*ServerConfig{
		"a": {Env: map[string]string{"GITHUB_TOKEN": "ghp_abcdefgh123", "ALLOWED_DIR": "/home/user/projects", "API_KEY": "short"}},
		"b": {Headers: map[string]string{"Authorization": "Bearer tok-1234567890", "Accept": "application/json"}},
	}}
	got := strings.Join(newRedactor(configSecrets(cfg)).given, ",")
	for _, want := range []string{"ghp_abcdefgh123", "tok-1234567890", "Bearer tok-1234567890"} {
		if !strings.Contains(got, want) {
			t.Errorf("secrets lack %q: %s", want, got)
		}
	}
	for _, not := range []string{"/home/user/projects", "application/json", "short"} {
		if strings.Contains(got, not) {
			t.Errorf("secrets hold %q, which is not one: %s", not, got)
		}
	}
}

// leakFinder says where a secret shows in JSON text as its readers read
// it: any string or key, decoded; a string that is JSON itself (a text block
// code mode parses) decoded again, up to levels deep. It is written apart
// from the redactor, on encoding/json, so that both cannot share a blind spot.
func leakFinder(levels int, secrets ...string) func(raw []byte) []string {
	var walk func(v any, level int, path string, out *[]string)
	str := func(s string, level int, path string, out *[]string) {
		for _, secret := range secrets {
			if strings.Contains(s, secret) {
				*out = append(*out, fmt.Sprintf("%s (level %d): %q", path, level, s))
			}
		}
		if inner, err := decodeNumbers([]byte(s)); level < levels && err == nil {
			walk(inner, level+1, path+"{text}", out)
		}
	}
	walk = func(v any, level int, path string, out *[]string) {
		switch v := v.(type) {
		case string:
			str(v, level, path, out)
		case []any:
			for i, e := range v {
				walk(e, level, fmt.Sprintf("%s[%d]", path, i), out)
			}
		case map[string]any:
			for k, e := range v {
				str(k, level, path+".key", out)
				walk(e, level, path+"."+k, out)
			}
		}
	}
	return func(raw []byte) []string {
		v, err := decodeNumbers(raw)
		if err != nil {
			return []string{"not JSON: " + err.Error()}
		}
		var out []string
		walk(v, 1, "$", &out)
		return out
	}
}

// decodeNumbers decodes JSON keeping numbers as written (1e400 included).
func decodeNumbers(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, errors.New("more than one value")
	}
	return v, nil
}

// escapeAll writes s as JSON string contents with every character escaped
// as \uXXXX in upper-case hex (a surrogate pair above U+FFFF), as some
// servers' encoders do for every non-ASCII one.
func escapeAll(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r > 0xFFFF {
			hi, lo := utf16.EncodeRune(r)
			fmt.Fprintf(&b, `\u%04X\u%04X`, hi, lo)
			continue
		}
		fmt.Fprintf(&b, `\u%04X`, r)
	}
	return b.String()
}

// TestRedactionReadsStringsAsDecoded: a secret however a server's encoder
// escapes it, in a value or a key, in a text that is JSON itself (escaped
// again), is replaced; what holds no secret stays byte for byte.
func TestRedactionReadsStringsAsDecoded(t *testing.T) {
	t.Parallel()
	const secret = `sk-live/Tök"en\12345😀`
	goEscaped := jsonEscaped(secret)                                  // as Go writes it: sk-live/Tök\"en\\12345😀
	nested := func(inner string) string { return jsonEscaped(inner) } // a JSON document as the text of a string
	s := newRedactor([]string{secret}).secrets
	find := leakFinder(decodeLevels, secret)
	for name, doc := range map[string]string{
		"as Go writes it":                    `{"text":"key ` + goEscaped + ` here"}`,
		"every character \\u escaped":        `{"text":"key ` + escapeAll(secret) + `"}`,
		"lower-case hex and \\/":             `{"text":"sk-live\/T\u00f6k\u0022en\u005c12345\ud83d\ude00"}`,
		"in a key":                           `{"` + goEscaped + `":1, "b":[2.50, -0, 1e400]}`,
		"in JSON text (code mode parses it)": `{"type":"text","text":"` + nested(`{"k":"`+escapeAll(secret)+`","n":1.0}`) + `"}`,
		"three levels deep":                  `["` + nested(`{"t":"`+nested(`{"k":"`+escapeAll(secret)+`"}`)+`"}`) + `"]`,
		"four levels deep":                   `["` + nested(`{"t":"`+nested(`{"k":"`+nested(`{"k":"`+escapeAll(secret)+`"}`)+`"}`)+`"}`) + `"]`,
		"next to another string":             `{"a":"` + goEscaped + `","b":"` + goEscaped + goEscaped + `"}`,
	} {
		if leaks := find([]byte(doc)); len(leaks) == 0 {
			t.Fatalf("%s: the test's document holds no secret: %s", name, doc)
		}
		out := s.json([]byte(doc))
		if leaks := find(out); len(leaks) > 0 {
			t.Errorf("%s: %s\nleaks %v", name, out, leaks)
		}
		if !bytes.Contains(out, []byte(redacted)) {
			t.Errorf("%s: nothing replaced: %s", name, out)
		}
	}
	// Numbers exactly as sent, key order as sent, other escapes as written.
	doc := `{"z":1.50,"a":"\u00e9 \/ ` + escapeAll(secret) + `","m":[1e400,-0,12345678901234567890]}`
	want := `{"z":1.50,"a":"\u00e9 \/ [redacted]","m":[1e400,-0,12345678901234567890]}`
	if got := string(s.json([]byte(doc))); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	// Nothing to redact: the very same bytes.
	clean := []byte(`{"text":"\u0073k-live and \"quotes\" \\ \ud83d\ude00","n":1.0}`)
	if got := s.json(clean); &got[0] != &clean[0] {
		t.Errorf("a clean answer was copied: %s", got)
	}
	// Text that reads as a secret only inside an escape is not one (and
	// replacing it there would break the string).
	inside := newRedactor([]string{"u00e9-tail-123"}).secrets
	if doc := []byte(`{"a":"\u00e9-tail-123"}`); string(inside.rewrite(doc)) != string(doc) {
		t.Errorf("an escape's text was taken for a secret: %s", inside.rewrite(doc))
	}
	// A message read as it is: the secret as written, Go-escaped, or \u-escaped.
	for _, msg := range []string{"auth " + secret + " failed", "auth " + goEscaped, `body {"k":"` + escapeAll(secret) + `"}`} {
		if got := s.text(msg); strings.Contains(got, secret) || strings.Contains(got, goEscaped) || strings.Contains(got, `\u0073\u006B`) || !strings.Contains(got, redacted) {
			t.Errorf("text %q -> %q", msg, got)
		}
	}
}

// randomEncoder writes JSON the way no one encoder does: each character of
// a string as it is, \u-escaped in lower or upper case, "/" as "\/",
// control characters as their short escapes or \u. With shortOnly, it
// never writes \u (as Go's encoder does without HTML escaping).
type randomEncoder struct {
	rng       *rand.Rand
	shortOnly bool
}

func (e randomEncoder) str(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		hexFmt := `\u%04x`
		if e.rng.IntN(2) == 0 {
			hexFmt = `\u%04X`
		}
		switch {
		case e.shortOnly && (r == '"' || r == '\\'):
			b.WriteString(`\` + string(r))
		case e.shortOnly && r == '\n':
			b.WriteString(`\n`)
		case e.shortOnly && r == '/' && e.rng.IntN(2) == 0:
			b.WriteString(`\/`) // as PHP writes it
		case e.shortOnly:
			b.WriteRune(r)
		case r == '"' || r == '\\':
			if e.rng.IntN(3) == 0 {
				fmt.Fprintf(&b, hexFmt, r)
			} else {
				b.WriteString(`\` + string(r))
			}
		case r == '/' && e.rng.IntN(2) == 0:
			b.WriteString(`\/`)
		case r == '\n' && e.rng.IntN(2) == 0:
			b.WriteString(`\n`)
		case r < 0x20:
			fmt.Fprintf(&b, `\u%04x`, r)
		case e.rng.IntN(4) == 0:
			if r > 0xFFFF {
				hi, lo := utf16.EncodeRune(r)
				fmt.Fprintf(&b, hexFmt+hexFmt, hi, lo)
			} else {
				fmt.Fprintf(&b, hexFmt, r)
			}
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// value writes a random JSON value; strings hold pieces of text, the
// secrets and, while depth lasts, JSON documents of their own (text blocks
// holding JSON).
func (e randomEncoder) value(depth int, secrets ...string) string {
	pieces := []string{"plain", "é", "😀", " ", "\n", `"`, `\`, "/", "\u2028", "{}", "0000", "\\u00"}
	text := func() string {
		var b strings.Builder
		for range e.rng.IntN(6) {
			if len(secrets) > 0 && e.rng.IntN(5) == 0 {
				b.WriteString(secrets[e.rng.IntN(len(secrets))])
			} else {
				b.WriteString(pieces[e.rng.IntN(len(pieces))])
			}
		}
		return b.String()
	}
	switch k := e.rng.IntN(8); {
	case depth > 0 && k == 0:
		var b strings.Builder
		b.WriteByte('{')
		for i := range e.rng.IntN(4) {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(e.str(text()) + ":" + e.value(depth-1, secrets...))
		}
		return b.String() + "}"
	case depth > 0 && k == 1:
		var parts []string
		for range e.rng.IntN(4) {
			parts = append(parts, e.value(depth-1, secrets...))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case depth > 0 && k == 2: // JSON as text
		return e.str(e.value(depth-1, secrets...))
	case k == 3:
		return []string{"1.50", "-0", "1e400", "12345678901234567890", "true", "null"}[e.rng.IntN(6)]
	}
	return e.str(text())
}

// TestRedactionOfRandomlyEncodedJSON: documents written by an encoder that
// escapes at random, with the secret in strings, keys and JSON texts up to
// decodeLevels deep. Whatever the encoding: the output is JSON, no reader
// finds the secret, the quick look never misses what the full reading
// finds, streaming in random pieces gives the same bytes, and a document
// without the secret comes back unchanged.
func TestRedactionOfRandomlyEncodedJSON(t *testing.T) {
	t.Parallel()
	const secret, slashed = `tok/"é😀\n-0123`, "ab/cdefghi/jklmnop-99"
	s := newRedactor([]string{secret, slashed}).secrets
	find := leakFinder(decodeLevels, secret, slashed)
	rng := rand.New(rand.NewPCG(27, 1))
	withSecret := 0
	for i := range 4000 {
		e := randomEncoder{rng: rng, shortOnly: i%2 == 1}
		var doc string
		clean := i%3 == 0
		if clean {
			doc = e.value(4)
		} else {
			doc = e.value(4, secret, slashed)
		}
		if !json.Valid([]byte(doc)) {
			t.Fatalf("the test's encoder wrote broken JSON: %s", doc)
		}
		out := s.json([]byte(doc))
		if clean {
			if string(out) != doc {
				t.Fatalf("a document without the secret changed:\n%s\n%s", doc, out)
			}
			continue
		}
		if len(find([]byte(doc))) > 0 {
			withSecret++
		}
		if !json.Valid(out) {
			t.Fatalf("broken JSON out of\n%s:\n%s", doc, out)
		}
		if leaks := find(out); len(leaks) > 0 {
			t.Fatalf("%s\nleaks %v from\n%s", out, leaks, doc)
		}
		if full := s.rewrite([]byte(doc)); !bytes.Equal(full, out) {
			t.Fatalf("the quick look missed what the full reading found in\n%s", doc)
		}
		var streamed bytes.Buffer
		w := s.writer(&streamed)
		for rest := doc; rest != ""; {
			n := min(len(rest), 1+rng.IntN(40))
			if _, err := w.Write([]byte(rest[:n])); err != nil {
				t.Fatal(err)
			}
			rest = rest[n:]
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if streamed.String() != string(out) {
			t.Fatalf("streamed:\n%s\nwhole:\n%s", streamed.String(), out)
		}
	}
	if withSecret < 700 {
		t.Fatalf("only %d documents held the secret where a reader finds it", withSecret)
	}
}

// The streaming writer holds back a bounded tail of a long string and
// finds a secret written across any two writes, at any escape level: in a
// text dense with escapes and secrets (every part read through its
// escapes), and in one with long plain stretches and a secret now and then
// (most parts written as they are, cut where no escape can be split).
func TestRedactingWriterOnLongStrings(t *testing.T) {
	t.Parallel()
	const secret = "call-token-0123456789"
	s := newRedactor([]string{secret}).secrets
	find := leakFinder(decodeLevels, secret)
	// A 3 MiB text block holding JSON, with the secret \u-escaped inside
	// it: strings far longer than what is held back.
	text := func(every int, row func(i int) string) string {
		var inner strings.Builder
		inner.WriteString(`{"rows":[`)
		for i := 0; inner.Len() < 3<<20; i++ {
			if i > 0 {
				inner.WriteByte(',')
			}
			if i%every == every/2 {
				fmt.Fprintf(&inner, `{"i":%d,"k":"%s"}`, i, escapeAll(secret))
			} else {
				inner.WriteString(row(i))
			}
		}
		inner.WriteString(`]}`)
		return `{"content":[{"type":"text","text":` + string(mustMarshal(t, inner.String())) + `}]}`
	}
	dense := text(997, func(i int) string { return fmt.Sprintf(`{"i":%d,"k":"row \"%d\" \\ é"}`, i, i) })
	sparse := text(10007, func(i int) string {
		return fmt.Sprintf(`{"i":%d,"k":"a plain row of text without escapes, number %d"}`, i, i)
	})
	rng := rand.New(rand.NewPCG(3, 4))
	for name, doc := range map[string]string{"dense": dense, "sparse": sparse} {
		whole := s.json([]byte(doc))
		if len(find(whole)) > 0 || !json.Valid(whole) || bytes.Count(whole, []byte(redacted)) < 3 {
			t.Fatalf("%s: the whole document is not redacted", name)
		}
		for _, most := range []int{1, 7, 4096, 1 << 20} {
			var out bytes.Buffer
			w := s.writer(&out)
			for rest := doc; rest != ""; {
				n := min(len(rest), 1+rng.IntN(most))
				if _, err := w.Write([]byte(rest[:n])); err != nil {
					t.Fatal(err)
				}
				rest = rest[n:]
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(out.Bytes(), whole) {
				t.Fatalf("%s, writes of up to %d bytes: streamed %d bytes differ from the whole %d", name, most, out.Len(), len(whole))
			}
		}
	}
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A text dense with one secret, while another is never found, is redacted
// in time linear in its length.
func TestRedactingWriterIsLinearInMatches(t *testing.T) {
	t.Parallel()
	s := newRedactor([]string{"AAAAAAAA", "ZZZZZZZZZZZZZZZZ"}).secrets
	text := `"` + strings.Repeat("AAAAAAAA", 1<<18) + `"` // 2 MiB
	var out bytes.Buffer
	w := s.writer(&out)
	start := time.Now()
	if _, err := w.Write([]byte(text)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("redacting 2 MiB took %v", took)
	}
	if out.String() != `"`+strings.Repeat(redacted, 1<<18)+`"` {
		t.Errorf("redacted %d bytes wrong", out.Len())
	}
}

// jsonEscaped is s as Go writes it inside a JSON string.
func jsonEscaped(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

// A position boundary accepts is one where the text can be cut and each
// half read through its escapes apart, at every level, reading as the
// whole does: the streaming writer cuts only there.
func TestBoundariesFallBetweenEscapes(t *testing.T) {
	t.Parallel()
	s := newRedactor([]string{"no-such-secret-here"}).secrets
	levels := func(b []byte) [][]byte {
		out := [][]byte{b}
		for range decodeLevels {
			b = unescape(nil, b, nil, false)
			out = append(out, b)
		}
		return out
	}
	rng := rand.New(rand.NewPCG(5, 6))
	e := randomEncoder{rng: rng}
	// Pieces of escapes, which make escapes at one level out of escapes
	// (and plain bytes) of the level above.
	pieces := []string{`\\`, `\`, "u", "0", "00", "5", "c", "C", "3", "7", `\u0030`, `\u005c`, `\u005C`, `\u0075`, `\"`, "x", "plain text "}
	// And the longest chains: each level's \u005C makes the next one's
	// backslash, behind a run without one that grows by 5 bytes a level;
	// at the last level read, an escape spans "u003" and the "0" after it.
	var chains [][]byte
	for level := 1; level < decodeLevels; level++ {
		chains = append(chains, []byte(`\u005C`+strings.Repeat("u005C", level-1)+"u0030 and more"))
	}
	for i := range 3000 + len(chains) {
		var text []byte
		if i >= 3000 {
			text = chains[i-3000]
		} else if i < 300 {
			doc := e.value(3, "sk\\u0041")
			text = []byte(doc[1 : len(doc)-1]) // a string's contents
		} else {
			for range 20 + rng.IntN(120) {
				text = append(text, pieces[rng.IntN(len(pieces))]...)
			}
		}
		_, d := s.find(text, true)
		whole, cuts := levels(text), 0
		for pos := 1; pos < len(text); pos++ {
			if !d.boundary(pos) {
				continue
			}
			cuts++
			head, tail := levels(text[:pos]), levels(text[pos:])
			for k := range whole {
				if !bytes.Equal(append(append([]byte(nil), head[k]...), tail[k]...), whole[k]) {
					t.Fatalf("cut at %d of %q reads differently at level %d", pos, text, k)
				}
			}
		}
		if i < 300 && len(text) > 40 && cuts == 0 {
			t.Fatalf("no place to cut %q", text)
		}
		// The writer's quick cut, for contents it need not read, is one.
		for limit := 1; limit <= len(text); limit++ {
			if pos := plainCut(text, limit); pos > 0 && (pos > limit || !d.boundary(pos)) {
				t.Fatalf("plainCut(%q, %d) = %d, inside an escape", text, limit, pos)
			}
		}
	}
}

// The sieve finds a pattern exactly where a plain search does, over texts
// made of the patterns' own pieces (where it skips least and errs most).
func TestSieveFindsWhatASearchFinds(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 8))
	alphabet := "ab-_x0"
	word := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return b
	}
	for range 2000 {
		var patterns [][]byte
		for range 1 + rng.IntN(5) {
			patterns = append(patterns, word(4+rng.IntN(12)))
		}
		sv := newSieve(patterns)
		text := word(rng.IntN(200))
		if rng.IntN(3) == 0 { // one of them, somewhere
			p := patterns[rng.IntN(len(patterns))]
			at := rng.IntN(len(text) + 1)
			text = append(append(append([]byte(nil), text[:at]...), p...), text[at:]...)
		}
		want := false
		for _, p := range patterns {
			want = want || bytes.Contains(text, p)
		}
		if got := sv.in(text); got != want {
			t.Fatalf("patterns %q in %q: sieve %v, search %v", patterns, text, got, want)
		}
	}
}
