package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

func TestCanonicalArgs(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		// Numbers as written, members in the caller's order, compact.
		{` { "n": 1e400, "big": 12345678901234567890, "f": 0.10, "e": 1E+2, "neg": -0 } `,
			`{"n":1e400,"big":12345678901234567890,"f":0.10,"e":1E+2,"neg":-0}`},
		{`{"z": {"b": 1, "a": [true, null, false, []]}, "a": {}}`, `{"z":{"b":1,"a":[true,null,false,[]]},"a":{}}`},
		// Strings are re-escaped from their decoded value.
		{`{"s": "\u0041\/\u00e9\ud83d\ude00"}`, `{"s":"A/é😀"}`},
		{`{"s": "<a&b>\"\\\n\t\u0001\u2028"}`, `{"s":"<a&b>\"\\\n\t\u0001\u2028"}`},
		{`{"\u0070ath": "x"}`, `{"path":"x"}`},
		{``, `{}`},
		{"  \n", `{}`},
		{`[1, "x"]`, `[1,"x"]`}, // not an object: validation refuses it, not the decoder
	} {
		got, v, err := canonicalArgs([]byte(c.in))
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		if string(got) != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.in, got, c.want)
		}
		// What is forwarded decodes to exactly what was checked.
		_, again, err := canonicalArgs(got)
		if err != nil || !reflect.DeepEqual(again, v) {
			t.Errorf("%s: re-decoding the canonical form gives %#v (%v), checked %#v", c.in, again, err, v)
		}
	}
	n, _ := decodeArgs(json.RawMessage(`{"n": 1e400}`))
	if n.(map[string]any)["n"] != json.Number("1e400") {
		t.Fatalf("numbers must stay json.Number: %#v", n)
	}
}

func TestCanonicalArgsRefuses(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, ptr, want string }{
		// Duplicate keys, at any depth (first-wins and last-wins parsers disagree).
		{`{"path":"../../x","path":"ok"}`, "/path", `the key "path" appears more than once in the object at the top level`},
		{`{"a":[{"p":1,"q":2,"p":3}]}`, "/a/0/p", "send each key once"},
		{`{"path":"x","p\u0061th":"y"}`, "/path", "more than once"}, // equal once decoded
		// Invalid UTF-8 in values and keys (raw bytes, not escapes).
		{"{\"path\":\"\xc0\xae\xc0\xae/etc\"}", "/path", "not valid UTF-8 (byte 0xc0"},
		{"{\"a\":[\"ok\",\"\xff\"]}", "/a/1", "not valid UTF-8"},
		{"{\"\xe0\x80\xae\":1}", "", "object key is not valid UTF-8"},
		{"{\"s\":\"\xed\xa0\x80\"}", "/s", "not valid UTF-8"}, // a surrogate encoded in UTF-8
		// Unpaired surrogate escapes.
		{`{"s":"\ud800"}`, "/s", `\ud800`},
		{`{"s":"\udc00x"}`, "/s", `\udc00`},
		{`{"s":"\ud800\u0041"}`, "/s", "surrogate"},
		{`{"s":"\ud800\ud800"}`, "/s", "surrogate"},
		// Not one JSON value.
		{`{"path":"ok"} {"path":"../x"}`, "", "unexpected data after the top-level value"},
		{`{"a":`, "", "not valid JSON"},
		{`{not json`, "", "not valid JSON"},
		{strings.Repeat("[", maxArgsDepth+2) + strings.Repeat("]", maxArgsDepth+2), "", "nested more than"},
	} {
		_, _, err := canonicalArgs([]byte(c.in))
		if err == nil {
			t.Errorf("%q was accepted", c.in)
			continue
		}
		if !strings.Contains(err.Message, c.want) || c.ptr != "" && err.Path != c.ptr {
			t.Errorf("%q: got %q at %q, want %q at %q", c.in, err.Message, err.Path, c.want, c.ptr)
		}
	}
	if _, _, err := canonicalArgs([]byte(`{"s":"\ud83d\ude00 \uFFFD","t":"` + "\uFFFD" + `"}`)); err != nil {
		t.Fatalf("a valid pair and a real U+FFFD were refused: %v", err)
	}
	deep := strings.Repeat("[", maxArgsDepth) + strings.Repeat("]", maxArgsDepth)
	if _, _, err := canonicalArgs([]byte(deep)); err != nil {
		t.Fatalf("nesting at the limit was refused: %v", err)
	}
}

// FuzzCanonicalArgs: what the gateway forwards is valid JSON, decodes to
// exactly what it checked, and is a fixed point; the standard decoder agrees
// with the strict one on everything the strict one accepts.
func FuzzCanonicalArgs(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `{"a":"b","a":"c"}`, "{\"p\":\"\xc0\xae\"}", `{"s":"\ud800"}`, `{"n":1e400,"x":[0.10,-0,{"k":null}]}`, `{"s":"\u2028<>&\u0000"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		canon, v, err := canonicalArgs(raw)
		if err != nil {
			return
		}
		if !json.Valid(canon) {
			t.Fatalf("%q -> invalid JSON %q", raw, canon)
		}
		canon2, v2, err := canonicalArgs(canon)
		if err != nil || !bytes.Equal(canon, canon2) || !reflect.DeepEqual(v, v2) {
			t.Fatalf("%q -> %q -> %q (%v): not a fixed point", raw, canon, canon2, err)
		}
		dec := json.NewDecoder(bytes.NewReader(canon))
		dec.UseNumber()
		var std any
		if err := dec.Decode(&std); err != nil || !reflect.DeepEqual(std, v) {
			t.Fatalf("%q: encoding/json reads %#v (%v), the gateway checked %#v", canon, std, err, v)
		}
	})
}

// TestForwardsCanonicalArguments runs the review's bypasses through the whole
// pipeline against an upstream that records the arguments bytes it receives:
// none of them may arrive, and what does arrive is the canonical encoding.
func TestForwardsCanonicalArguments(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var received []string
	srv := server.NewMCPServer("rec", "1")
	srv.AddTool(mcp.NewToolWithRawSchema("read", "Record the raw arguments.", json.RawMessage(`{"type":"object"}`)),
		func(_ context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			mu.Lock()
			defer mu.Unlock()
			received = append(received, string(r.Params.RawArguments))
			return mcp.NewToolResultText("ok"), nil
		})
	g, _ := startGateway(t, `{"mcpServers": {}}`,
		WithInProcessServer("rec", srv, &ServerConfig{CheckPaths: true, PathRoots: []string{"/srv/data"}}))
	call := func(args string) error {
		_, err := g.Call(context.Background(), CallRequest{Tool: "rec:read", Arguments: json.RawMessage(args)})
		return err
	}

	refused := []struct {
		args string
		code Code
	}{
		{`{"path": "/etc/` + strings.Repeat("./", 2100) + `passwd"}`, CodePathTraversal},
		{`{"path": "/etc/passwd\n"}`, CodePathTraversal},
		{`{"path": "/etc/passwd\r"}`, CodePathTraversal},
		{`{"path": "/etc/passwd\u0000"}`, CodePathTraversal},
		{`{"path": "/srv/data/x\n/etc/passwd"}`, CodePathTraversal},
		{`{"path": "FILE:///etc/passwd"}`, CodePathTraversal},
		{"{\"path\": \"/srv/data/\xc0\xae\xc0\xae/\xc0\xae\xc0\xae/etc/passwd\"}", CodeValidationFailed},
		{`{"path": "../../x", "path": "/srv/data/ok"}`, CodeValidationFailed},
		{`{"path": "/srv/data/ok", "opts": {"p": "../../x", "p": "ok"}}`, CodeValidationFailed},
		{`{"path": "‥/‥/etc/passwd"}`, CodePathTraversal},
		{`{"path": "/srv/data/…/x"}`, CodePathTraversal},
		{`{"path": "︙/x"}`, CodePathTraversal},
		{`{"path": "&#046;&#046;/&#046;&#046;/etc/passwd"}`, CodePathTraversal},
		{`{"path": "&#46&#46/&#46&#46/etc/passwd"}`, CodePathTraversal},
		{`{"path": "/srv/data/x"} {"path": "/etc/passwd"}`, CodeValidationFailed},
	}
	for _, c := range refused {
		err := call(c.args)
		if err == nil {
			t.Errorf("%.80q reached the upstream", c.args)
			continue
		}
		e := wantCode(t, err, c.code)
		if !strings.Contains(e.Message, "/path") && !strings.Contains(e.Message, "/opts/p") && !strings.Contains(e.Message, "(arguments)") {
			t.Errorf("%.80q: the message does not say where: %s", c.args, e.Message)
		}
	}
	mu.Lock()
	if len(received) != 0 {
		t.Fatalf("the upstream received %q", received)
	}
	mu.Unlock()

	if err := call(`{ "path": "/srv/data/\u0041.txt", "n": 12345678901234567890, "f": 0.10, "z": {"b": 1, "a": [true, null]}, "note": "line 1\nline 2... v1.2" }`); err != nil {
		t.Fatal(err)
	}
	want := `{"path":"/srv/data/A.txt","n":12345678901234567890,"f":0.10,"z":{"b":1,"a":[true,null]},"note":"line 1\nline 2... v1.2"}`
	mu.Lock()
	defer mu.Unlock()
	if len(received) != 1 || received[0] != want {
		t.Fatalf("the upstream received %q, want %q", received, want)
	}
}

// FuzzSplitArgs: what splitArgs takes, the token reader takes too, with
// the same canonical bytes and the same decoded value; what the token
// reader refuses, splitArgs never takes.
func FuzzSplitArgs(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `{"a":"b","a":"c"}`, "{\"p\":\"\xc0\xae\"}", `{"s":"\ud800"}`, `{"n":1e400,"x":[0.10,-0,{"k":null}]}`,
		`{"s":"\u2028<>&\u0000"}`, "{\"s\":\"\u2028é\"}", `{"p\u0061th":1}`, ` [ true , false , "x" ] `, `"s"`, `{"a":{"b":[]},"c":{}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		canon, v, ok := splitArgs(raw)
		want, wantV, err := tokenArgs(raw)
		if !ok {
			return
		}
		if err != nil {
			t.Fatalf("%q: split, but the token reader refuses it: %v", raw, err)
		}
		if !bytes.Equal(canon, want) || !reflect.DeepEqual(v, wantV) {
			t.Fatalf("%q:\nsplit %q %#v\ntoken %q %#v", raw, canon, v, want, wantV)
		}
	})
}

// TestSplitArgsTakesPlainArguments: arguments as agents send them, escapes
// and all, are read without the token reader.
func TestSplitArgsTakesPlainArguments(t *testing.T) {
	t.Parallel()
	canon, _, ok := splitArgs([]byte(` {"text": "hello \"you\"\n", "path": "/srv/é", "opts": {"n": [1, 2.5, true, null]}} `))
	if !ok || string(canon) != `{"text":"hello \"you\"\n","path":"/srv/é","opts":{"n":[1,2.5,true,null]}}` {
		t.Fatalf("%v %s", ok, canon)
	}
}

// TestDeepArgumentsGoToTheTokenReader: the walk's cost is its size times
// its depth, so arguments nested past maxSplitArgsDepth are read by the
// token reader, with the same outcome; a crafted 64 KiB nested
// maxArgsDepth levels deep cost the walk nearly twice the token reader's
// time, and a key twice at its bottom the walk's time for nothing.
func TestDeepArgumentsGoToTheTokenReader(t *testing.T) {
	t.Parallel()
	nest := func(depth int) string {
		return strings.Repeat(`{"a":`, depth) + `["x","y"]` + strings.Repeat("}", depth)
	}
	if _, _, ok := splitArgs([]byte(nest(maxSplitArgsDepth - 1))); !ok {
		t.Fatalf("arguments %d objects deep were not split", maxSplitArgsDepth-1)
	}
	for _, depth := range []int{maxSplitArgsDepth, maxArgsDepth - 1} {
		deep := nest(depth)
		if _, _, ok := splitArgs([]byte(deep)); ok {
			t.Fatalf("split arguments %d objects deep, past the depth it takes", depth)
		}
		canon, _, err := canonicalArgs([]byte(deep))
		if err != nil || string(canon) != deep {
			t.Fatalf("%d objects deep: %v, canonical form %q", depth, err, canon)
		}
	}
}

// TestLargeArgumentsGoToTheTokenReader: arguments past maxSplitArgsBytes
// are read by the token reader, whose time is linear however deep they
// nest, with the same outcome.
func TestLargeArgumentsGoToTheTokenReader(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat("[", maxArgsDepth) + strings.Repeat("1,", maxSplitArgsBytes/2) + "1" + strings.Repeat("]", maxArgsDepth)
	if _, _, ok := splitArgs([]byte(deep)); ok {
		t.Fatal("split arguments past the size it takes")
	}
	canon, _, err := canonicalArgs([]byte(deep))
	if err != nil || string(canon) != deep {
		t.Fatalf("%v, canonical form changed", err)
	}
}
