package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/server"

	"github.com/sandboxrt/sandbox/gateway/internal/testserver"
)

// spilledText reads a spilled result and removes it.
func spilledText(t *testing.T, res *CallResult) []byte {
	t.Helper()
	if res == nil || res.Spilled == nil {
		t.Fatalf("not spilled: %+v", res)
	}
	f, err := res.Spilled.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(b)) != res.Spilled.Bytes {
		t.Errorf("Bytes = %d, the file holds %d", res.Spilled.Bytes, len(b))
	}
	if err := res.Spilled.Remove(); err != nil {
		t.Error(err)
	}
	return b
}

// TestResultsTooLargeForMemorySpill runs the stdio test server with a
// 64 KiB memory cap and a 1 MiB spill ceiling: a call that takes a spilled
// result receives its value in a file, counted once and redacted; any
// other call is told the real maximum and where a larger result can go;
// past the ceiling, both are refused; the connection survives them all,
// and nothing is left on disk.
func TestResultsTooLargeForMemorySpill(t *testing.T) {
	t.Parallel()
	spillBase := t.TempDir()
	g, _ := startGateway(t, `{"mcpServers": {"t": `+testServerConfig(t, "stdio", "")+`},
		"gateway": {"maxResultBytes": 65536, "maxSpilledResultBytes": 1048576, "secrets": ["sekrit-value-0123"]}}`, WithSpillDir(spillBase))
	ctx := context.Background()
	call := func(tool, args string, spill bool) (*CallResult, error) {
		return g.Call(ctx, CallRequest{Tool: tool, Arguments: json.RawMessage(args), Spill: spill})
	}

	// A text result: the value is the text as one JSON string.
	res, err := call("t:big", `{"bytes": 300000}`, true)
	if err != nil {
		t.Fatal(err)
	}
	if got := spilledText(t, res); string(got) != `"`+strings.Repeat("x", 300000)+`"` {
		t.Fatalf("spilled text: %.80s... (%d bytes)", got, len(got))
	}

	// Sent twice (content and structuredContent), kept and counted once:
	// the structuredContent, redacted.
	res, err = call("t:big_twice", `{"bytes": 400000, "insert": "[sekrit-value-0123]"}`, true)
	if err != nil {
		t.Fatal(err)
	}
	got := spilledText(t, res)
	var structured struct{ Content string }
	if err := json.Unmarshal(got, &structured); err != nil {
		t.Fatalf("the spilled value is not the structuredContent: %v (%.80s)", err, got)
	}
	if len(got) > 400100 || strings.Contains(structured.Content, "sekrit") || !strings.Contains(structured.Content, "[[redacted]]") {
		t.Fatalf("spilled %d bytes; redacted: %v", len(got), strings.Contains(structured.Content, "[redacted]"))
	}

	// Without Spill: the real maximum, and where more fits.
	_, err = call("t:big_twice", `{"bytes": 400000}`, false)
	e := wantCode(t, err, CodeResultTooLarge)
	for _, want := range []string{"65536 bytes (64 KiB)", "execute_code", "1048576 bytes (1 MiB)", "sandbox.results"} {
		if !strings.Contains(e.Message, want) {
			t.Errorf("message lacks %q: %s", want, e.Message)
		}
	}

	// Over the ceiling once counted (staged whole: 2 x 600 KB), and over
	// what is staged (cut while it streams): the ceiling is the maximum.
	for _, n := range []int{1200000, 4000000} {
		_, err = call("t:big_twice", fmt.Sprintf(`{"bytes": %d}`, n), true)
		e = wantCode(t, err, CodeResultTooLarge)
		if !strings.Contains(e.Message, "1048576 bytes (1 MiB), the most the gateway hands over") || strings.Contains(e.Message, "execute_code") {
			t.Errorf("%d bytes: %s", n, e.Message)
		}
	}

	// A tool's own error, too large to hold: its start, as UPSTREAM_ERROR.
	res, err = call("t:big_twice", `{"bytes": 300000, "isError": true}`, true)
	e = wantCode(t, err, CodeUpstreamError)
	if res == nil || !res.IsError || res.Spilled != nil || !strings.HasPrefix(e.Message, "xxxx") || len(e.Message) > 2200 || !strings.Contains(e.Message, "too large to keep") {
		t.Fatalf("tool error: %+v %.100s... (%d bytes)", res, e.Message, len(e.Message))
	}

	// Still connected, and small results are as they were.
	if res, err := call("t:echo", `{"text": "still here"}`, true); err != nil || res.Spilled != nil || callText(t, res) != "still here" {
		t.Fatalf("after the large results: %v %+v", err, res)
	}
	dirs, _ := os.ReadDir(spillBase)
	for _, d := range dirs {
		left, _ := os.ReadDir(spillBase + "/" + d.Name())
		for _, f := range left {
			if f.Name() != spillOwnerFile {
				t.Errorf("%s left in %s", f.Name(), d.Name())
			}
		}
	}
	g.Close()
	if dirs, _ := os.ReadDir(spillBase); len(dirs) != 0 {
		t.Errorf("the gateway's spill folder outlived it: %v", dirs)
	}
}

// The value of a staged answer is the value runtime.DecodeResult gives,
// except that text stays text (paths reach into it later).
func TestSpilledValueFollowsTheDecodingRule(t *testing.T) {
	t.Parallel()
	for answer, want := range map[string]string{
		`{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"a"}],"structuredContent":{"k":[1,"}"]}},"id":1}`:                      `{"k":[1,"}"]}`,
		`{"result":{"content":[{"text":"line \"1\"","type":"text"},{"type":"text","text":"{\"a\":2}"}],"structuredContent":null},"id":"x"}`: `"line \"1\"\n{\"a\":2}"`,
		`{"id":2,"result":{"content":[{"type":"text","text":"t"},{"type":"image","data":"AAAA","mimeType":"image/png"}]}}`:                  `[{"type":"text","text":"t"},{"type":"image","data":"AAAA","mimeType":"image/png"}]`,
		`{"id":3,"result":{"content":[]}}`:                         `null`,
		`{"id":4,"result":{"_meta":{"x":1},"isError":false}}`:      `null`,
		`{"id":5,"result":{"content":[{"type":"text"}],"x":true}}`: `[{"type":"text"}]`,
	} {
		p, err := findResultParts(strings.NewReader(answer))
		if err != nil {
			t.Fatalf("%s: %v", answer, err)
		}
		var out bytes.Buffer
		if err := p.writeValue(&out, strings.NewReader(answer)); err != nil {
			t.Fatal(err)
		}
		if out.String() != want || p.valueSize() != int64(out.Len()) {
			t.Errorf("%s:\n got %s (size %d)\nwant %s", answer, out.String(), p.valueSize(), want)
		}
	}
	for _, answer := range []string{`{"id":1,"error":{"code":1,"message":"x"}}`, `{"result":"str"}`, `{"result":{"content":{}}}`, `{"result":{"content":[1]}}`, `{"result":`} {
		if _, err := findResultParts(strings.NewReader(answer)); err == nil {
			t.Errorf("%s: no error", answer)
		}
	}
}

// An HTTP server's answers are not staged: over maxResultBytes a call is
// refused with that as the real maximum, even from code mode.
func TestHTTPAnswersAreNotSpilled(t *testing.T) {
	t.Parallel()
	up := server.NewStreamableHTTPServer(testserver.New(), server.WithStateful(true))
	httpUpstream := httptest.NewServer(up)
	t.Cleanup(httpUpstream.Close)
	g, _ := startGateway(t, fmt.Sprintf(`{"mcpServers": {"h": {"url": %q}}, "gateway": {"maxResultBytes": 65536, "maxSpilledResultBytes": 1048576}}`, httpUpstream.URL+"/mcp"))
	for _, spill := range []bool{true, false} {
		_, err := g.Call(context.Background(), CallRequest{Tool: "h:big_twice", Arguments: json.RawMessage(`{"bytes": 100000}`), Spill: spill})
		e := wantCode(t, err, CodeResultTooLarge)
		if !strings.Contains(e.Message, "65536 bytes (64 KiB), the most the gateway hands over") || strings.Contains(e.Message, "execute_code") {
			t.Errorf("spill %v: %s", spill, e.Message)
		}
	}
}
