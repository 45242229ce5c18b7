package conformancefixture_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/sandboxrt/sandbox/internal/conformancefixture"
)

func newHTTPFixture(t *testing.T) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("/mcp", conformancefixture.NewHTTPHandler(conformancefixture.New()))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

// post sends one JSON-RPC message and returns the response.
func post(t *testing.T, url, session string, body string, header map[string]string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// initSession performs the 2025 handshake and returns the session id.
func initSession(t *testing.T, url string) string {
	t.Helper()
	resp := post(t, url, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, nil)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	session := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || session == "" {
		t.Fatalf("initialize: %s, session %q", resp.Status, session)
	}
	resp = post(t, url, session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil)
	resp.Body.Close()
	return session
}

type sseEvent struct{ id, data string }

func readEvents(t *testing.T, r io.Reader) []sseEvent {
	t.Helper()
	var events []sseEvent
	var cur sseEvent
	seen := false
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if seen {
				events = append(events, cur)
			}
			cur, seen = sseEvent{}, false
		case strings.HasPrefix(line, "id: "):
			cur.id, seen = strings.TrimPrefix(line, "id: "), true
		case strings.HasPrefix(line, "data:"):
			cur.data, seen = strings.TrimSpace(strings.TrimPrefix(line, "data:")), true
		}
	}
	return events
}

// TestHTTPResumeAfterServerClose: test_reconnection closes its stream after
// the priming event; a GET with Last-Event-ID delivers the answer produced
// meanwhile, and the stream's id cannot be used from another session.
func TestHTTPResumeAfterServerClose(t *testing.T) {
	t.Parallel()
	url := newHTTPFixture(t)
	session := initSession(t, url)

	resp := post(t, url, session, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"test_reconnection","arguments":{}}}`, nil)
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("tools/call answered with %q, want an SSE stream", ct)
	}
	events := readEvents(t, resp.Body) // returns when the server closes the stream
	resp.Body.Close()
	if len(events) != 1 || events[0].data != "" || events[0].id == "" {
		t.Fatalf("before the close: %+v, want just the priming event", events)
	}

	resume := func(session string) *http.Response {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		req.Header.Set("Last-Event-ID", events[0].id)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	other := initSession(t, url)
	if resp := resume(other); resp.StatusCode != http.StatusNotFound {
		t.Errorf("resuming another session's stream: %s, want 404", resp.Status)
	}

	resp = resume(session)
	defer resp.Body.Close()
	got := readEvents(t, resp.Body) // ends after the response
	if len(got) != 1 {
		t.Fatalf("after resume: %+v, want the tool's answer", got)
	}
	var msg struct {
		ID     int                `json:"id"`
		Result mcp.CallToolResult `json:"result"`
	}
	if err := json.Unmarshal([]byte(got[0].data), &msg); err != nil || msg.ID != 7 {
		t.Fatalf("resumed event %q: %v", got[0].data, err)
	}
	if !strings.Contains(got[0].data, "after the server closed the stream") {
		t.Errorf("answer = %s", got[0].data)
	}
}

// TestHTTPProgressOnRequestStream: progress notifications of a call come on
// the call's own stream, after the priming event and before the response.
func TestHTTPProgressOnRequestStream(t *testing.T) {
	t.Parallel()
	url := newHTTPFixture(t)
	session := initSession(t, url)
	resp := post(t, url, session, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"test_tool_with_progress","arguments":{},"_meta":{"progressToken":"p"}}}`, nil)
	defer resp.Body.Close()
	events := readEvents(t, resp.Body)
	var kinds []string
	for _, ev := range events {
		switch {
		case ev.data == "":
			kinds = append(kinds, "priming")
		case strings.Contains(ev.data, `"notifications/progress"`):
			kinds = append(kinds, "progress")
		case strings.Contains(ev.data, `"result"`):
			kinds = append(kinds, "result")
		}
	}
	if strings.Join(kinds, ",") != "priming,progress,progress,progress,result" {
		t.Errorf("stream = %v", kinds)
	}
}

func TestHTTPRejects(t *testing.T) {
	t.Parallel()
	url := newHTTPFixture(t)
	session := initSession(t, url)
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	for _, tc := range []struct {
		name   string
		body   string
		header map[string]string
		status int
		says   string
	}{
		{"foreign Host", init, map[string]string{"Host": "evil.example.com"}, http.StatusForbidden, "Host"},
		// mcp-go itself checks only Host; a page on another site sends its Origin.
		{"foreign Origin", init, map[string]string{"Origin": "http://evil.example.com"}, http.StatusForbidden, "Origin"},
		{"loopback Origin", init, map[string]string{"Origin": "http://localhost:1234"}, http.StatusOK, ""},
		{"body over 16 MiB", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat("a", 17<<20) + `"}}`, nil, http.StatusRequestEntityTooLarge, "over"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			for k, v := range tc.header {
				req.Header.Set(k, v)
			}
			if h := tc.header["Host"]; h != "" {
				req.Host = h
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status || !strings.Contains(string(body), tc.says) {
				t.Errorf("%s: %s %q, want %d mentioning %q", tc.name, resp.Status, body, tc.status, tc.says)
			}
		})
	}

	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Mcp-Session-Id", session)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	req.Header.Set("Last-Event-ID", "rs_00000000.1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(body), "re-send the request") {
		t.Errorf("unknown Last-Event-ID: %s %q", resp.Status, body)
	}
}

// TestHTTPModernClient: a protocol 2026-07-28 client over HTTP bypasses the
// request-stream layer (no sessions) and still gets progress and sampling.
func TestHTTPModernClient(t *testing.T) {
	t.Parallel()
	url := newHTTPFixture(t)
	tr, err := transport.NewStreamableHTTP(url)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	c := client.NewClient(tr, client.WithSamplingHandler(rec))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		rec.mu.Lock()
		rec.notifications = append(rec.notifications, n)
		rec.mu.Unlock()
	})
	res, err := c.Initialize(ctx, mcp.InitializeRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if res.ProtocolVersion != mcp.ProtocolVersion20260728 {
		t.Fatalf("negotiated %s over HTTP, want %s", res.ProtocolVersion, mcp.ProtocolVersion20260728)
	}
	call(t, c, conformancefixture.ToolWithProgress, nil, &mcp.Meta{ProgressToken: "m"})
	if got := rec.waitFor(t, string(mcp.MethodNotificationProgress), 3); len(got) != 3 {
		t.Errorf("%d progress notifications over modern HTTP, want 3", len(got))
	}
	if got := text(call(t, c, conformancefixture.ToolSampling, map[string]any{"prompt": "hi"}, nil)); got != "LLM response: a sampled answer" {
		t.Errorf("sampling over modern HTTP = %q", got)
	}
}
