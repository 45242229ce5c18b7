package frontend

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/gateway"
	"github.com/sandboxrt/sandbox/gateway/internal/testserver"
	"github.com/sandboxrt/sandbox/gateway/toolspec"
	"github.com/sandboxrt/sandbox/internal/testwait"
)

// frontendFixture is a gateway with two in-process test servers ("a", "b")
// and its HTTP front end on a loopback test server.
type frontendFixture struct {
	g   *gateway.Gateway
	f   *Server
	url string
}

func newFrontend(t testing.TB, opts ...gateway.Option) *frontendFixture {
	t.Helper()
	opts = append([]gateway.Option{
		gateway.WithInProcessServer("a", testserver.New(), nil),
		gateway.WithInProcessServer("b", testserver.New(), nil),
	}, opts...)
	g := startGateway(t, nil, opts...)
	f := New(g)
	t.Cleanup(f.Close)
	srv := httptest.NewServer(f.HTTPHandler(HTTPOptions{}))
	t.Cleanup(srv.Close)
	return &frontendFixture{g: g, f: f, url: srv.URL}
}

// startGateway makes a gateway of cfg and opts, started, closed when t ends.
func startGateway(t testing.TB, cfg *gateway.Config, opts ...gateway.Option) *gateway.Gateway {
	t.Helper()
	g, err := gateway.New(cfg, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	if err := g.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return g
}

// legacyClient connects with protocol 2025-11-25 (sessions).
func legacyClient(t *testing.T, url string, opts ...transport.StreamableHTTPCOption) *client.Client {
	t.Helper()
	c, err := client.NewStreamableHttpClient(url, opts...)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{
		ProtocolVersion: mcp.ProtocolVersion20251125,
		ClientInfo:      mcp.Implementation{Name: "test", Version: "1"},
	}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// modernClient connects with the newest protocol, 2026-07-28 (stateless),
// and fails the test if another was negotiated.
func modernClient(t *testing.T, url string) *client.Client {
	t.Helper()
	c, err := client.NewStreamableHttpClient(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{ClientInfo: mcp.Implementation{Name: "modern", Version: "1"}}}); err != nil {
		t.Fatal(err)
	}
	if !mcp.IsModernProtocol(c.ProtocolVersion()) {
		t.Fatalf("negotiated %q", c.ProtocolVersion())
	}
	return c
}

func toolNames(t *testing.T, c *client.Client) map[string]mcp.Tool {
	t.Helper()
	res, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]mcp.Tool{}
	for _, tool := range res.Tools {
		out[tool.Name] = tool
	}
	return out
}

func resultText(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func TestToolsListedWithRawSchemasAndCallable(t *testing.T) {
	t.Parallel()
	fx := newFrontend(t)
	c := legacyClient(t, fx.url+"/mcp")
	tools := toolNames(t, c)
	for _, want := range []string{"a__echo", "b__echo", "a__union", HubListServers, HubConnectServers, HubDisconnectServer} {
		if _, ok := tools[want]; !ok {
			t.Fatalf("tools/list lacks %s", want)
		}
	}
	// The top-level anyOf and $defs survive the round trip through both
	// mcp-go layers (read raw: mcp-go's typed client would drop them).
	sid := rawSession(t, fx.url+"/mcp")
	var list struct {
		Result struct {
			Tools []struct {
				Name        string          `json:"name"`
				InputSchema json.RawMessage `json:"inputSchema"`
			} `json:"tools"`
		} `json:"result"`
	}
	rawRPC(t, fx.url+"/mcp", sid, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, &list)
	orig, _ := fx.g.Tool("a:union")
	found := false
	for _, tool := range list.Result.Tools {
		if tool.Name == "a__union" {
			found = true
			var got, want any
			_ = json.Unmarshal(tool.InputSchema, &got)
			_ = json.Unmarshal(orig.InputSchema, &want)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("schema changed:\n got %s\nwant %s", tool.InputSchema, orig.InputSchema)
			}
		}
	}
	if !found {
		t.Fatal("a__union not listed")
	}
	res, err := c.CallTool(context.Background(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "a__echo", Arguments: map[string]any{"text": "hello"}}})
	if err != nil || resultText(res) != "hello" || res.IsError {
		t.Fatalf("echo: %v %+v", err, res)
	}
	res, err = c.CallTool(context.Background(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "a__add", Arguments: map[string]any{"a": 1, "b": 2}}})
	if err != nil || fmt.Sprint(res.StructuredContent) != "map[sum:3]" {
		t.Fatalf("add: %v %+v", err, res)
	}
	// A gateway error is a tool error the model can read.
	res, err = c.CallTool(context.Background(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "a__echo", Arguments: map[string]any{}}})
	if err != nil || !res.IsError || !strings.HasPrefix(resultText(res), "VALIDATION_FAILED: ") {
		t.Fatalf("validation: %v %+v", err, res)
	}
	// The upstream's isError result passes through unchanged.
	res, err = c.CallTool(context.Background(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "a__fail"}})
	if err != nil || !res.IsError || resultText(res) != "the widget is broken: try widget 2" {
		t.Fatalf("fail: %v %+v", err, res)
	}
}

func TestSessionsSeeOnlyTheServersTheyConnect(t *testing.T) {
	t.Parallel()
	fx := newFrontend(t)
	c1 := legacyClient(t, fx.url+"/mcp")
	c2 := legacyClient(t, fx.url+"/mcp")
	changed := make(chan struct{}, 4)
	c1.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == string(mcp.MethodNotificationToolsListChanged) {
			changed <- struct{}{}
		}
	})
	res, err := c1.CallTool(context.Background(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: HubConnectServers, Arguments: map[string]any{"servers": []string{"b"}}}})
	if err != nil || res.IsError {
		t.Fatalf("connect: %v %s", err, resultText(res))
	}
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Fatal("no tools/list_changed after connecting to a subset")
	}
	t1, t2 := toolNames(t, c1), toolNames(t, c2)
	if _, ok := t1["a__echo"]; ok {
		t.Fatal("session 1 still sees server a")
	}
	if _, ok := t1["b__echo"]; !ok {
		t.Fatal("session 1 lost server b")
	}
	if _, ok := t1[HubListServers]; !ok {
		t.Fatal("hub tools must stay visible")
	}
	if _, ok := t2["a__echo"]; !ok {
		t.Fatal("session 2 was affected by session 1's choice")
	}
	// A hidden tool cannot be called either.
	if _, err := c1.CallTool(context.Background(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "a__echo", Arguments: map[string]any{"text": "x"}}}); err == nil {
		t.Fatal("session 1 called a tool of a server it is not connected to")
	}
	// Disconnect b too, connect a back.
	if _, err := c1.CallTool(context.Background(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: HubDisconnectServer, Arguments: map[string]any{"servers": []string{"b"}}}}); err != nil {
		t.Fatal(err)
	}
	if _, ok := toolNames(t, c1)["b__echo"]; ok {
		t.Fatal("b still visible after disconnect")
	}
	res, _ = c1.CallTool(context.Background(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: HubConnectServers, Arguments: map[string]any{"servers": []string{"nope"}}}})
	if !res.IsError || !strings.Contains(resultText(res), `"nope"`) {
		t.Fatalf("unknown server: %s", resultText(res))
	}
	// The server list reports state and this session's connections.
	res, err = c1.CallTool(context.Background(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: HubListServers}})
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Servers []struct {
			Name      string `json:"name"`
			State     string `json:"state"`
			Tools     int    `json:"tools"`
			Connected bool   `json:"connected"`
		} `json:"servers"`
	}
	b, _ := json.Marshal(res.StructuredContent)
	_ = json.Unmarshal(b, &list)
	if len(list.Servers) != 2 || list.Servers[0].Name != "a" || list.Servers[0].State != "ready" || list.Servers[0].Tools == 0 || list.Servers[0].Connected || list.Servers[1].Connected {
		t.Fatalf("list = %s", b)
	}
}

func TestBuiltinToolsGetSessionProgressAndLog(t *testing.T) {
	t.Parallel()
	fx := newFrontend(t)
	var gotCaller auth.Caller
	err := fx.f.AddTool(toolspec.Spec{Name: "execute_code", Description: "Run code.", InputSchema: json.RawMessage(`{"type":"object","properties":{"code":{"type":"string"}}}`),
		Handler: func(ctx context.Context, req toolspec.Request) (*gateway.CallResult, error) {
			gotCaller = req.Caller
			req.Progress(1, 2, "half")
			req.Log("warning", "from the built-in")
			if strings.Contains(string(req.Arguments), "boom") {
				return nil, &gateway.Error{Code: "RUNTIME_ERROR", Message: "it went boom"}
			}
			text, _ := json.Marshal(map[string]any{"type": "text", "text": "ran " + string(req.Arguments)})
			return &gateway.CallResult{Content: []json.RawMessage{text}}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []struct {
		spec toolspec.Spec
		want string
	}{
		{toolspec.Spec{Name: "execute_code", InputSchema: json.RawMessage(`{}`), Handler: noHandler}, "already registered"},
		{toolspec.Spec{Name: "bad name", InputSchema: json.RawMessage(`{}`), Handler: noHandler}, "must be 1-64 characters"},
		{toolspec.Spec{Name: "no_schema", InputSchema: json.RawMessage(`{`), Handler: noHandler}, "input schema is not valid JSON"},
		{toolspec.Spec{Name: "no_handler", InputSchema: json.RawMessage(`{}`)}, "has no handler"},
	} {
		if err := fx.f.AddTool(bad.spec); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("AddTool(%s): %v, want %q", bad.spec.Name, err, bad.want)
		}
	}
	c := legacyClient(t, fx.url+"/mcp")
	//lint:ignore SA1019 the 2025-era protocol (its logging, GET stream and subscriptions) is served and tested on purpose
	if err := c.SetLevel(context.Background(), mcp.SetLevelRequest{Params: mcp.SetLevelParams{Level: mcp.LoggingLevelDebug}}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var notes []string
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		mu.Lock()
		notes = append(notes, n.Method)
		mu.Unlock()
	})
	res, err := c.CallTool(context.Background(), mcp.CallToolRequest{
		Request: mcp.Request{},
		Params:  mcp.CallToolParams{Name: "execute_code", Arguments: map[string]any{"code": "1+1"}, Meta: &mcp.Meta{ProgressToken: "tok-1"}},
	})
	if err != nil || !strings.HasPrefix(resultText(res), "ran ") {
		t.Fatalf("%v %+v", err, res)
	}
	if !gotCaller.HasSession() || gotCaller.Session == stdioSessionID || gotCaller.Principal.IsOperator() {
		t.Fatalf("caller = %+v: an HTTP client is an anonymous caller in a session of its own", gotCaller)
	}
	mu.Lock()
	if strings.Join(notes, ",") != "notifications/progress,notifications/message" {
		t.Fatalf("notifications before the response = %v", notes)
	}
	mu.Unlock()
	res, _ = c.CallTool(context.Background(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "execute_code", Arguments: map[string]any{"code": "boom"}}})
	if !res.IsError || resultText(res) != "RUNTIME_ERROR: it went boom" {
		t.Fatalf("error result = %+v", res)
	}
}

// sse reads the events of an SSE response: data and id of each.
type sseEvent2 struct{ id, data string }

func readSSE(t *testing.T, body *bufio.Reader, n int) []sseEvent2 {
	t.Helper()
	var out []sseEvent2
	var cur sseEvent2
	for len(out) < n {
		line, err := body.ReadString('\n')
		if err != nil {
			t.Fatalf("after %d events: %v", len(out), err)
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "":
			out = append(out, cur)
			cur = sseEvent2{}
		case strings.HasPrefix(line, "id: "):
			cur.id = line[4:]
		case strings.HasPrefix(line, "data: "):
			cur.data = line[6:]
		case strings.HasPrefix(line, "data:"):
			cur.data = line[5:]
		}
	}
	return out
}

// rawSession initializes a 2025-11-25 session with plain HTTP.
func rawSession(t *testing.T, url string) string {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatal("no session id")
	}
	req, _ = http.NewRequest("POST", url, strings.NewReader(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	if resp, err = http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
	}
	return sid
}

func postCall(t *testing.T, ctx context.Context, url, sid, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// TestCallStreamOrderAndResume: a call's progress comes on its own stream,
// after a priming event and before the response, every event with an id;
// a client that drops the connection resumes with GET + Last-Event-ID and
// gets the rest, including the response.
func TestCallStreamOrderAndResume(t *testing.T) {
	t.Parallel()
	fx := newFrontend(t)
	url := fx.url + "/mcp"
	sid := rawSession(t, url)

	resp := postCall(t, context.Background(), url, sid, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"a__progress","arguments":{"steps":3},"_meta":{"progressToken":"p"}}}`)
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("content type %q", ct)
	}
	events := readSSE(t, bufio.NewReader(resp.Body), 5)
	if events[0].data != "" || !strings.HasSuffix(events[0].id, ".0") {
		t.Fatalf("first event is not a priming event: %+v", events[0])
	}
	for i := 1; i <= 3; i++ {
		if !strings.Contains(events[i].data, `"notifications/progress"`) || !strings.Contains(events[i].data, fmt.Sprintf(`"progress":%d`, i)) || !strings.HasSuffix(events[i].id, fmt.Sprintf(".%d", i)) {
			t.Fatalf("event %d = %+v", i, events[i])
		}
	}
	if !strings.Contains(events[4].data, `"id":7`) || !strings.Contains(events[4].data, "done 3 steps") {
		t.Fatalf("last event = %+v", events[4])
	}

	// Drop the connection mid-call, then resume.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp = postCall(t, ctx, url, sid, `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"a__progress","arguments":{"steps":100},"_meta":{"progressToken":"q"}}}`)
	br := bufio.NewReader(resp.Body)
	first := readSSE(t, br, 2)
	cancel()
	resp.Body.Close()
	last := first[1].id
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	req.Header.Set("Last-Event-ID", last)
	// The stream can be resumed once the front end has seen the client go
	// (until then it is unknown: 404).
	var rr *http.Response
	testwait.Until(t, 10*time.Second, "the dropped stream to become resumable", func() bool {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode == http.StatusNotFound {
			resp.Body.Close()
			return false
		}
		rr = resp
		return true
	})
	defer rr.Body.Close()
	if rr.StatusCode != 200 {
		t.Fatalf("resume status %d", rr.StatusCode)
	}
	rest, err := readAll(rr.Body)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rest, `"id":9`) || !strings.Contains(rest, "done 100 steps") {
		t.Fatalf("resumed stream lacks the response:\n%.2000s", rest)
	}
	if !strings.Contains(rest, `"progress":100`) {
		t.Fatal("resumed stream lacks the progress sent while disconnected")
	}
	// Another session cannot resume it.
	other := rawSession(t, url)
	req.Header.Set("Mcp-Session-Id", other)
	rr2, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	rr2.Body.Close()
	if rr2.StatusCode != 404 {
		t.Fatalf("another session resumed a stream: %d", rr2.StatusCode)
	}
}

func readAll(r interface{ Read([]byte) (int, error) }) (string, error) {
	var b bytes.Buffer
	_, err := b.ReadFrom(r)
	return b.String(), err
}

func TestDNSRebindingProtection(t *testing.T) {
	t.Parallel()
	fx := newFrontend(t)
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	for _, tc := range []struct {
		host, origin string
		want         int
	}{
		{"evil.example.com", "http://evil.example.com", 403},
		{"", "http://evil.example.com", 403},
		{"evil.example.com", "", 403},
		{"", "", 200},
		{"localhost:1234", "http://localhost:1234", 200},
		{"", "http://[::1]:9", 200},
	} {
		req, _ := http.NewRequest("POST", fx.url+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if tc.host != "" {
			req.Host = tc.host
		}
		if tc.origin != "" {
			req.Header.Set("Origin", tc.origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("Host %q Origin %q: status %d, want %d", tc.host, tc.origin, resp.StatusCode, tc.want)
		}
	}
}

// TestSessionTokensReachHTTPUpstream: a session's Sandbox-Token-<server>
// header becomes that session's bearer token for the upstream, and only its.
func TestSessionTokensReachHTTPUpstream(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	seen := map[string]bool{}
	up := server.NewStreamableHTTPServer(testserver.New(), server.WithStateful(true))
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.Header.Get("Authorization")] = true
		mu.Unlock()
		up.ServeHTTP(w, r)
	}))
	t.Cleanup(upstream.Close)
	opts := gateway.DefaultSettings()
	opts.HealthInterval = 0
	cfg := &gateway.Config{Settings: opts, Servers: map[string]*gateway.ServerConfig{
		"h": {Name: "h", Transport: gateway.TransportStreamableHTTP, URL: upstream.URL + "/mcp", SessionToken: true, CheckPaths: true}}}
	g, err := gateway.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if err := g.SetOperatorToken(context.Background(), "h", "connection-token"); err != nil {
		t.Fatal(err)
	}
	if err := g.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	f := New(g)
	defer f.Close()
	srv := httptest.NewServer(f.HTTPHandler(HTTPOptions{}))
	t.Cleanup(srv.Close)

	noToken := legacyClient(t, srv.URL+"/mcp")
	res, err := noToken.CallTool(context.Background(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "h__echo", Arguments: map[string]any{"text": "x"}}})
	if err != nil || !res.IsError || !strings.HasPrefix(resultText(res), "AUTH_REQUIRED") {
		t.Fatalf("without a token: %v %+v", err, res)
	}
	withToken := legacyClient(t, srv.URL+"/mcp", transport.WithHTTPHeaders(map[string]string{"Sandbox-Token-H": "alice-secret"}))
	res, err = withToken.CallTool(context.Background(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "h__echo", Arguments: map[string]any{"text": "y"}}})
	if err != nil || res.IsError || resultText(res) != "y" {
		t.Fatalf("with a token: %v %+v", err, res)
	}
	// A token sent with a session id the front end never issued is dropped:
	// it must reach neither the operator's calls nor anyone else's.
	for _, forged := range []string{"stdio", "default", "stateless", "operator", "no-such-session"} {
		rawPost(t, srv.URL+"/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"h__echo","arguments":{"text":"z"}}}`,
			"Mcp-Session-Id", forged, "Sandbox-Token-H", "ATTACKER")
	}
	late := legacyClient(t, srv.URL+"/mcp")
	res, err = late.CallTool(context.Background(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "h__echo", Arguments: map[string]any{"text": "w"}}})
	if err != nil || !res.IsError || !strings.HasPrefix(resultText(res), "AUTH_REQUIRED") {
		t.Fatalf("a later session without a token: %v %+v", err, res)
	}
	// A stateless (2026-07-28) request's tokens serve that request only.
	modern := func(headers map[string]string) *client.Client {
		c, err := client.NewStreamableHttpClient(srv.URL+"/mcp", transport.WithHTTPHeaders(headers))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		if err := c.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Initialize(context.Background(), mcp.InitializeRequest{Params: mcp.InitializeParams{ClientInfo: mcp.Implementation{Name: "modern", Version: "1"}}}); err != nil {
			t.Fatal(err)
		}
		return c
	}
	res, err = modern(map[string]string{"Sandbox-Token-h": "modern-secret"}).CallTool(context.Background(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "h__echo", Arguments: map[string]any{"text": "m"}}})
	if err != nil || res.IsError || resultText(res) != "m" {
		t.Fatalf("a stateless request with its token: %v %+v", err, res)
	}
	res, err = modern(nil).CallTool(context.Background(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "h__echo", Arguments: map[string]any{"text": "m"}}})
	if err != nil || !res.IsError || !strings.HasPrefix(resultText(res), "AUTH_REQUIRED") {
		t.Fatalf("a later stateless request used an earlier one's token: %v %+v", err, res)
	}
	// Tokens only for servers that take them, and of bounded size.
	for name, hdr := range map[string][2]string{
		"server without sessionToken": {"Sandbox-Token-nope", "x"},
		"oversized":                   {"Sandbox-Token-h", strings.Repeat("t", gateway.MaxTokenBytes+1)},
	} {
		status, _, body := rawPost(t, srv.URL+"/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, hdr[0], hdr[1])
		if status != http.StatusBadRequest || !strings.Contains(body, "Sandbox-Token") {
			t.Fatalf("%s: %d %s", name, status, body)
		}
	}
	// The operator's own call still carries the operator's token.
	if _, err := g.Call(context.Background(), gateway.CallRequest{Tool: "h:echo", Arguments: json.RawMessage(`{"text":"op"}`), Caller: auth.Caller{Principal: auth.Operator()}}); err != nil {
		t.Fatalf("operator call: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !seen["Bearer alice-secret"] || !seen["Bearer connection-token"] || !seen["Bearer modern-secret"] {
		t.Fatalf("upstream saw %v", seen)
	}
	if seen["Bearer ATTACKER"] {
		t.Fatal("a token planted with a forged session id reached the upstream")
	}
}

// rawRPC posts one request on a session and decodes its JSON answer.
func rawRPC(t *testing.T, url, sid, body string, out any) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := readAll(resp.Body)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		for _, line := range strings.Split(b, "\n") {
			if strings.HasPrefix(line, "data: {") {
				b = strings.TrimPrefix(line, "data: ")
			}
		}
	}
	if err := json.Unmarshal([]byte(b), out); err != nil {
		t.Fatalf("%v: %.500s", err, b)
	}
}

// TestResourceUpdatesGoToSubscribersOnly: a session that subscribed to a
// resource receives the upstream's notifications/resources/updated; a
// session that did not, does not.
func TestResourceUpdatesGoToSubscribersOnly(t *testing.T) {
	t.Parallel()
	for _, version := range []string{"", "2025-11-25"} {
		t.Run("upstream protocol="+version, func(t *testing.T) {
			t.Parallel()
			sc := &gateway.ServerConfig{CheckPaths: true, ProtocolVersion: version}
			g := startGateway(t, nil, gateway.WithInProcessServer("a", testserver.New(), sc))
			f := New(g)
			t.Cleanup(f.Close)
			srv := httptest.NewServer(f.HTTPHandler(HTTPOptions{}))
			t.Cleanup(srv.Close)
			//lint:ignore SA1019 the 2025-era protocol (its logging, GET stream and subscriptions) is served and tested on purpose
			sub := legacyClient(t, srv.URL+"/mcp", transport.WithContinuousListening())
			//lint:ignore SA1019 the 2025-era protocol (its logging, GET stream and subscriptions) is served and tested on purpose
			other := legacyClient(t, srv.URL+"/mcp", transport.WithContinuousListening())
			updates := func(c *client.Client) <-chan string {
				ch := make(chan string, 8)
				c.OnNotification(func(n mcp.JSONRPCNotification) {
					if n.Method == string(mcp.MethodNotificationResourceUpdated) {
						ch <- fmt.Sprint(n.Params.AdditionalFields["uri"])
					}
				})
				return ch
			}
			subUpdates, otherUpdates := updates(sub), updates(other)
			//lint:ignore SA1019 the 2025-era protocol (its logging, GET stream and subscriptions) is served and tested on purpose
			if err := sub.Subscribe(context.Background(), mcp.SubscribeRequest{Params: mcp.SubscribeParams{URI: "test://static"}}); err != nil {
				t.Fatal(err)
			}
			// The other session subscribes to another resource: its update,
			// touched second, arrives after any update of the first that
			// leaked to it, so no sleep is needed to see a leak.
			//lint:ignore SA1019 the 2025-era protocol (its logging, GET stream and subscriptions) is served and tested on purpose
			if err := other.Subscribe(context.Background(), mcp.SubscribeRequest{Params: mcp.SubscribeParams{URI: "test://item/1"}}); err != nil {
				t.Fatal(err)
			}
			for _, uri := range []string{"test://static", "test://item/1"} {
				if _, err := other.CallTool(context.Background(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "a__touch_resource", Arguments: map[string]any{"uri": uri}}}); err != nil {
					t.Fatal(err)
				}
			}
			next := func(who string, ch <-chan string) string {
				select {
				case uri := <-ch:
					return uri
				case <-time.After(10 * time.Second):
					t.Fatalf("%s got no notifications/resources/updated", who)
					return ""
				}
			}
			if uri := next("the subscriber", subUpdates); uri != "test://static" {
				t.Fatalf("the subscriber got an update for %s", uri)
			}
			if uri := next("the other subscriber", otherUpdates); uri != "test://item/1" {
				t.Fatalf("a session that did not subscribe to it got an update for %s", uri)
			}
			// Nor did the subscriber get the other's update: its next is its own.
			if _, err := sub.CallTool(context.Background(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "a__touch_resource", Arguments: map[string]any{"uri": "test://static"}}}); err != nil {
				t.Fatal(err)
			}
			if uri := next("the subscriber", subUpdates); uri != "test://static" {
				t.Fatalf("the subscriber got an update for %s", uri)
			}
		})
	}
}

// TestStdioNotificationsPrecedeTheResponse serves stdio (newline-delimited
// JSON-RPC) and checks that a call's progress notifications are written
// before its response, none after.
func TestStdioNotificationsPrecedeTheResponse(t *testing.T) {
	t.Parallel()
	fx := newFrontend(t)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- fx.f.ServeStdio(ctx, inR, outW) }()
	defer func() {
		cancel()
		inW.Close()
		<-done
	}()
	lines := bufio.NewReader(outR)
	send := func(s string) {
		if _, err := io.WriteString(inW, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if l, err := lines.ReadString('\n'); err != nil || !strings.Contains(l, `"id":1`) {
		t.Fatalf("initialize: %q %v", l, err)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	// mcp-go's in-process transport hands the upstream's notifications over
	// on another goroutine, so the last one of a call can lose the race with
	// the call's end and be dropped (never sent late). What must hold: no
	// notification of a call comes after its response, and progress does
	// arrive.
	total := 0
	for round := 0; round < 20; round++ {
		id := 100 + round
		send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"a__progress","arguments":{"steps":3},"_meta":{"progressToken":"t%d"}}}`, id, id))
		progress := 0
		for {
			l, err := lines.ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(l, `"notifications/progress"`) {
				if !strings.Contains(l, fmt.Sprintf(`"progressToken":"t%d"`, id)) {
					t.Fatalf("round %d: a notification of an earlier call came after its response: %s", round, l)
				}
				progress++
				continue
			}
			if strings.Contains(l, fmt.Sprintf(`"id":%d`, id)) {
				break
			}
		}
		if progress > 3 {
			t.Fatalf("round %d: %d progress notifications for 3 steps", round, progress)
		}
		total += progress
	}
	if total < 20*2 {
		t.Fatalf("only %d of 60 progress notifications arrived before their responses", total)
	}
}

// TestModernClient: a client on the stateless 2026-07-28 protocol lists and
// calls tools (with progress); session-bound hub tools say why they cannot
// apply.
func TestModernClient(t *testing.T) {
	t.Parallel()
	fx := newFrontend(t)
	c := modernClient(t, fx.url+"/mcp")
	ctx := context.Background()
	if _, ok := toolNames(t, c)["b__echo"]; !ok {
		t.Fatal("tools/list on the stateless protocol lacks b__echo")
	}
	var progress int
	var mu sync.Mutex
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == string(mcp.MethodNotificationProgress) {
			mu.Lock()
			progress++
			mu.Unlock()
		}
	})
	res, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "b__progress", Arguments: map[string]any{"steps": 3}, Meta: &mcp.Meta{ProgressToken: "m1"}}})
	if err != nil || resultText(res) != "done 3 steps" {
		t.Fatalf("%v %+v", err, res)
	}
	mu.Lock()
	// 3 steps; the in-process upstream's last notification may lose the race
	// with the call's end and be dropped (see TestStdioNotificationsPrecedeTheResponse).
	if progress < 2 || progress > 3 {
		t.Errorf("%d progress notifications on the stateless protocol", progress)
	}
	mu.Unlock()
	res, _ = c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: HubConnectServers, Arguments: map[string]any{"servers": []string{"a"}}}})
	if !res.IsError || !strings.Contains(resultText(res), "stateless") {
		t.Fatalf("connect on a stateless request: %s", resultText(res))
	}
}

// TestPanickingCallIsContained: a tool call that panics fails that call
// and leaves the server up, on either protocol. A 2025-era call runs on
// mcp-go's handler goroutine (server.WithRecovery); a 2026-07-28 call runs
// on a goroutine of its own (pausedrun.go), where nothing else would
// recover it and the panic would end the process, every tenant's calls
// with it.
func TestPanickingCallIsContained(t *testing.T) {
	t.Parallel()
	fx := newFrontend(t)
	if err := fx.f.AddTool(toolspec.Spec{Name: "boom", Description: "panics", InputSchema: json.RawMessage(`{"type":"object"}`),
		Handler: func(context.Context, toolspec.Request) (*gateway.CallResult, error) { panic("boom") }}); err != nil {
		t.Fatal(err)
	}
	modern := modernClient(t, fx.url+"/mcp")
	ctx := context.Background()
	for name, c := range map[string]*client.Client{"2025-era": legacyClient(t, fx.url+"/mcp"), "2026-07-28": modern} {
		res, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "boom", Arguments: map[string]any{}}})
		if err == nil {
			t.Fatalf("%s: a call that panicked answered %+v, not an error", name, res)
		}
		res, err = c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "b__echo", Arguments: map[string]any{"text": "still up"}}})
		if err != nil || resultText(res) != "still up" {
			t.Fatalf("%s: after the panic: %v %+v", name, err, res)
		}
	}
}

// TestPanicOnACallStreamIsContained: a 2025-era tools/call is served on a
// goroutine of the front end's own (its call stream), where mcp-go runs
// the request before the tool's handler and its recovery: a panic there
// (here a hook's) fails that call with a JSON-RPC error and leaves the
// server up, rather than ending the process.
func TestPanicOnACallStreamIsContained(t *testing.T) {
	t.Parallel()
	hooks := &server.Hooks{}
	hooks.AddBeforeCallTool(func(_ context.Context, _ any, r *mcp.CallToolRequest) {
		if r.Params.Name == "b__echo" && r.GetArguments()["text"] == "boom" {
			panic("boom")
		}
	})
	g := startGateway(t, nil, gateway.WithInProcessServer("b", testserver.New(), nil))
	f := New(g, func(s *Server) { s.extra = append(s.extra, server.WithHooks(hooks)) })
	t.Cleanup(f.Close)
	srv := httptest.NewServer(f.HTTPHandler(HTTPOptions{}))
	t.Cleanup(srv.Close)
	c := legacyClient(t, srv.URL+"/mcp")
	ctx := context.Background()
	res, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "b__echo", Arguments: map[string]any{"text": "boom"}}})
	if err == nil || !strings.Contains(err.Error(), "failed inside the server") {
		t.Fatalf("a call that panicked answered %v %+v, not the error", err, res)
	}
	res, err = c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "b__echo", Arguments: map[string]any{"text": "still up"}}})
	if err != nil || resultText(res) != "still up" {
		t.Fatalf("after the panic: %v %+v", err, res)
	}
}

// TestSessionsBelongToTheirPrincipal: a session is bound to the principal
// that started it; another principal that learns its id gets 404, and can
// neither call in it nor plant tokens in it.
func TestSessionsBelongToTheirPrincipal(t *testing.T) {
	t.Parallel()
	fx := newFrontend(t)
	// Stand-in for authentication: the principal is whoever X-Test-Principal names.
	h := fx.f.HTTPHandler(HTTPOptions{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(auth.WithPrincipal(r.Context(), auth.Principal{ID: r.Header.Get("X-Test-Principal")})))
	}))
	t.Cleanup(srv.Close)
	alice := legacyClient(t, srv.URL+"/mcp", transport.WithHTTPHeaders(map[string]string{"X-Test-Principal": "alice"}))
	sid := alice.GetSessionId()
	if sid == "" {
		t.Fatal("no session id")
	}
	for _, principal := range []string{"mallory", ""} {
		status, _, _ := rawPost(t, srv.URL+"/mcp", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"a__echo","arguments":{"text":"x"}}}`,
			"Mcp-Session-Id", sid, "X-Test-Principal", principal)
		if status != http.StatusNotFound {
			t.Fatalf("principal %q used alice's session: %d", principal, status)
		}
	}
	// Alice's own requests still work.
	res, err := alice.CallTool(context.Background(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "a__echo", Arguments: map[string]any{"text": "mine"}}})
	if err != nil || resultText(res) != "mine" {
		t.Fatalf("alice: %v %+v", err, res)
	}
}

// TestRequestBodiesHeldAreBounded: past the in-flight byte budget a request
// is refused at once with 503 and Retry-After, before its body is read.
func TestRequestBodiesHeldAreBounded(t *testing.T) {
	t.Parallel()
	fx := newFrontend(t)
	srv := httptest.NewServer(fx.f.HTTPHandler(HTTPOptions{MaxInFlightBytes: 4 << 10}))
	t.Cleanup(srv.Close)
	big := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", 8<<10) + `"}}`
	if status, h, _ := rawPost(t, srv.URL+"/mcp", big); status != http.StatusServiceUnavailable || h.Get("Retry-After") == "" {
		t.Fatalf("a body over the budget: %d", status)
	}
	if status, _, _ := rawPost(t, srv.URL+"/mcp", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`); status != http.StatusOK {
		t.Fatalf("a small body: %d", status)
	}
	// What a request held is given back: the budget does not leak.
	for range 10 {
		if status, _, _ := rawPost(t, srv.URL+"/mcp", `{"jsonrpc":"2.0","id":2,"method":"ping"}`); status == http.StatusServiceUnavailable {
			t.Fatal("the budget leaked")
		}
	}
}

// TestRequestBodiesHeldArePerPrincipal: one principal holding its share of
// the body budget (a body it is slow to send) is refused more, while another
// principal's requests still go through, a principal of the same name in
// another tenant's too (shares are by auth.Principal.Key).
func TestRequestBodiesHeldArePerPrincipal(t *testing.T) {
	t.Parallel()
	fx := newFrontend(t)
	h := fx.f.HTTPHandler(HTTPOptions{MaxInFlightBytes: 16 << 10, MaxInFlightBytesPerPrincipal: 4 << 10})
	// The handler reads a body only once it holds its bytes: the first
	// read of alice's slow body tells that she holds her whole share.
	held := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := auth.Principal{ID: r.Header.Get("X-Test-Principal"), Tenant: r.Header.Get("X-Test-Tenant")}
		if r.Header.Get("X-Test-Slow") != "" {
			r.Body = &firstReadSignal{ReadCloser: r.Body, read: held}
		}
		h.ServeHTTP(w, r.WithContext(auth.WithPrincipal(r.Context(), p)))
	}))
	t.Cleanup(srv.Close)

	// alice announces a 4 KiB body and sends only its first bytes.
	pr, pw := io.Pipe()
	t.Cleanup(func() { pw.CloseWithError(io.ErrUnexpectedEOF) }) // before srv.Close, which waits for the request
	req, _ := http.NewRequest("POST", srv.URL+"/mcp", pr)
	req.ContentLength = 4 << 10
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Test-Principal", "alice")
	req.Header.Set("X-Test-Slow", "1")
	answered := make(chan int, 1)
	go func() {
		status := 0 // no answer: the request failed
		if resp, err := http.DefaultClient.Do(req); err == nil {
			status = resp.StatusCode
			resp.Body.Close()
		}
		answered <- status
	}()
	if _, err := pw.Write([]byte(`{"jsonrpc":"2.0",`)); err != nil {
		t.Fatal(err)
	}
	// No other request of alice's until then: one holding its bytes as
	// her slow one arrived would have it refused.
	select {
	case <-held:
	case status := <-answered:
		t.Fatalf("alice's slow request was answered (%d) before the front end read its body", status)
	case <-time.After(30 * time.Second):
		t.Fatal("the front end did not start reading alice's slow body in 30 s")
	}
	ping := `{"jsonrpc":"2.0","id":2,"method":"ping"}`
	if status, _, _ := rawPost(t, srv.URL+"/mcp", ping, "X-Test-Principal", "alice"); status != http.StatusServiceUnavailable {
		t.Fatalf("alice holding her share: %d, want 503", status)
	}
	if status, _, _ := rawPost(t, srv.URL+"/mcp", ping, "X-Test-Principal", "bob"); status == http.StatusServiceUnavailable {
		t.Fatal("bob was refused while only alice held bytes")
	}
	if status, _, _ := rawPost(t, srv.URL+"/mcp", ping, "X-Test-Principal", "alice", "X-Test-Tenant", "other"); status == http.StatusServiceUnavailable {
		t.Fatal("another tenant's alice was refused while only this tenant's alice held bytes")
	}
	pw.CloseWithError(io.ErrUnexpectedEOF)
	select {
	case <-answered:
	case <-time.After(30 * time.Second):
		t.Fatal("alice's slow request did not end in 30 s after her body broke off")
	}
	testwait.Until(t, 10*time.Second, "alice's share to be given back", func() bool {
		status, _, _ := rawPost(t, srv.URL+"/mcp", ping, "X-Test-Principal", "alice")
		return status != http.StatusServiceUnavailable
	})
}

// firstReadSignal closes read on the first Read of the body it wraps.
type firstReadSignal struct {
	io.ReadCloser
	read chan struct{}
	once sync.Once
}

func (b *firstReadSignal) Read(p []byte) (int, error) {
	b.once.Do(func() { close(b.read) })
	return b.ReadCloser.Read(p)
}

// TestBuiltinArgumentLimit: arguments over a built-in tool's limit are
// answered with VALIDATION_FAILED before the handler runs: over HTTP before
// mcp-go decodes the body, in process after; under the limit the tool runs.
func TestBuiltinArgumentLimit(t *testing.T) {
	t.Parallel()
	fx := newFrontend(t)
	var ran atomic.Int32
	if err := fx.f.AddTool(toolspec.Spec{Name: "execute_code", Description: "Run code.", InputSchema: json.RawMessage(`{"type":"object"}`),
		MaxArgumentBytes: 64 << 10,
		Handler: func(ctx context.Context, req toolspec.Request) (*gateway.CallResult, error) {
			ran.Add(1)
			text, _ := json.Marshal(map[string]any{"type": "text", "text": "ran"})
			return &gateway.CallResult{Content: []json.RawMessage{text}}, nil
		}}); err != nil {
		t.Fatal(err)
	}
	c := legacyClient(t, fx.url+"/mcp")
	call := func(n int) *mcp.CallToolResult {
		res, err := c.CallTool(context.Background(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "execute_code",
			Arguments: map[string]any{"code": strings.Repeat("x", n)}}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := call(1 << 20); !res.IsError || !strings.HasPrefix(resultText(res), "VALIDATION_FAILED: the arguments of execute_code are 1.0 MiB, over the 64.0 KiB it takes") {
		t.Fatalf("1 MiB over HTTP: %+v", res)
	}
	// Just over the limit but under the HTTP check's slack: the handler
	// path refuses it (as it does on stdio).
	if res := call(64<<10 + 100); !res.IsError || !strings.Contains(resultText(res), "over the 64.0 KiB") {
		t.Fatalf("just over: %+v", res)
	}
	if ran.Load() != 0 {
		t.Fatal("the handler ran for arguments over the limit")
	}
	if res := call(1000); res.IsError || resultText(res) != "ran" {
		t.Fatalf("under the limit: %+v", res)
	}
}

// TestScopedPrincipalListsOnlyItsResources: resources/list and
// resources/templates/list show a principal scoped to servers only their
// resources. The test servers both list test://static and test://item/{id}:
// a principal scoped to b lists b's, once.
func TestScopedPrincipalListsOnlyItsResources(t *testing.T) {
	t.Parallel()
	fx := newFrontend(t)
	h := fx.f.HTTPHandler(HTTPOptions{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := auth.Principal{ID: "agent-" + r.Header.Get("X-Test-Scope")}
		if sc := r.Header.Get("X-Test-Scope"); sc != "" {
			p.Scopes = []string{auth.ServerScope(sc)}
		}
		h.ServeHTTP(w, r.WithContext(auth.WithPrincipal(r.Context(), p)))
	}))
	t.Cleanup(srv.Close)
	list := func(scope string) (resources, templates int) {
		c := legacyClient(t, srv.URL+"/mcp", transport.WithHTTPHeaders(map[string]string{"X-Test-Scope": scope}))
		rs, err := c.ListResources(context.Background(), mcp.ListResourcesRequest{})
		if err != nil {
			t.Fatal(err)
		}
		ts, err := c.ListResourceTemplates(context.Background(), mcp.ListResourceTemplatesRequest{})
		if err != nil {
			t.Fatal(err)
		}
		return len(rs.Resources), len(ts.ResourceTemplates)
	}
	if r, tm := list(""); r == 0 || tm == 0 {
		t.Fatalf("unscoped: %d resources, %d templates", r, tm)
	}
	if r, tm := list("a"); r == 0 || tm == 0 {
		t.Fatalf("scoped to a: %d resources, %d templates", r, tm)
	}
	unscoped, unscopedTemplates := list("")
	if r, tm := list("b"); r != unscoped || tm != unscopedTemplates {
		t.Fatalf("scoped to b: %d resources, %d templates; b lists %d and %d", r, tm, unscoped, unscopedTemplates)
	}
	if r, tm := list("nothing"); r != 0 || tm != 0 {
		t.Fatalf("scoped to no server: %d resources, %d templates", r, tm)
	}
}

// TestHiddenResourcesReadAsUnknown: a resource only servers outside the
// caller's scope offer gets mcp-go's own answer for a URI nobody offers
// (resources.go), as does a client naming the front end's routed URI.
func TestHiddenResourcesReadAsUnknown(t *testing.T) {
	t.Parallel()
	fx := newFrontend(t)
	h := fx.f.HTTPHandler(HTTPOptions{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := auth.Principal{ID: "agent", Tenant: "t", Scopes: []string{auth.ServerScope(r.Header.Get("X-Test-Scope"))}}
		h.ServeHTTP(w, r.WithContext(auth.WithPrincipal(r.Context(), p)))
	}))
	t.Cleanup(srv.Close)
	read := func(scope, uri string) string {
		c := legacyClient(t, srv.URL+"/mcp", transport.WithHTTPHeaders(map[string]string{"X-Test-Scope": scope}))
		res, err := c.ReadResource(context.Background(), mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: uri}})
		if err != nil {
			return "error: " + err.Error()
		}
		b, _ := json.Marshal(res)
		return string(b)
	}
	if got := read("a", "test://static"); !strings.Contains(got, "static text") {
		t.Fatalf("in scope: %s", got)
	}
	unknown := read("nothing", "test://nothing")
	if !strings.Contains(unknown, "resource not found") {
		t.Fatalf("an unknown URI: %s", unknown)
	}
	for _, uri := range []string{"test://static", "test://item/7"} {
		if got := read("nothing", uri); strings.ReplaceAll(got, uri, "test://nothing") != unknown {
			t.Errorf("%s out of scope: %s, unlike an unknown URI: %s", uri, got, unknown)
		}
	}
	if got := read("a", routedURI); !strings.Contains(got, "resource not found") {
		t.Errorf("the routed URI itself: %s", got)
	}
}

// TestScopedPrincipalListsOnlyItsServers: tools/list and gateway__list_servers
// show a principal scoped to servers only those servers.
func TestScopedPrincipalListsOnlyItsServers(t *testing.T) {
	t.Parallel()
	fx := newFrontend(t)
	h := fx.f.HTTPHandler(HTTPOptions{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(auth.WithPrincipal(r.Context(), auth.Principal{ID: "agent-b", Scopes: []string{auth.ServerScope("b")}})))
	}))
	t.Cleanup(srv.Close)
	c := legacyClient(t, srv.URL+"/mcp")
	names := toolNames(t, c)
	if _, ok := names["a__echo"]; ok {
		t.Fatal("tools/list shows a server outside the principal's scope")
	}
	if _, ok := names["b__echo"]; !ok {
		t.Fatal("tools/list lacks the principal's own server")
	}
	res, err := c.CallTool(context.Background(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: HubListServers}})
	if err != nil || strings.Contains(resultText(res), `"name":"a"`) || !strings.Contains(resultText(res), `"name":"b"`) {
		t.Fatalf("list_servers: %v %s", err, resultText(res))
	}
	res, _ = c.CallTool(context.Background(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: HubConnectServers, Arguments: map[string]any{"servers": []string{"a"}}}})
	if !res.IsError {
		t.Fatalf("connecting to a forbidden server: %s", resultText(res))
	}
	prompts, err := c.ListPrompts(context.Background(), mcp.ListPromptsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var own int
	for _, p := range prompts.Prompts {
		if strings.HasPrefix(p.Name, "a__") {
			t.Fatalf("prompts/list shows %s of a forbidden server", p.Name)
		}
		if strings.HasPrefix(p.Name, "b__") {
			own++
		}
	}
	if own == 0 {
		t.Fatal("prompts/list lacks the principal's own server's prompts")
	}
}

// TestSessionsPerPrincipalAreBounded: past the cap, initialize gets 429.
func TestSessionsPerPrincipalAreBounded(t *testing.T) {
	fx := newFrontend(t)
	srv := httptest.NewServer(fx.f.HTTPHandler(HTTPOptions{MaxSessionsPerPrincipal: 2}))
	t.Cleanup(srv.Close)
	legacyClient(t, srv.URL+"/mcp")
	legacyClient(t, srv.URL+"/mcp")
	status, _, _ := rawPost(t, srv.URL+"/mcp", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`)
	if status != http.StatusTooManyRequests {
		t.Fatalf("a third session: %d", status)
	}
}

// rawPost posts body to url with the JSON-RPC content headers and the given
// header pairs, and returns the status and the body read.
func rawPost(t *testing.T, url, body string, header ...string) (int, http.Header, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := readAll(resp.Body)
	return resp.StatusCode, resp.Header, b
}

// TestDetachedStreamsAreKeptPerPrincipal: a principal abandoning many calls
// evicts only its own resumable streams, never another principal's.
func TestDetachedStreamsAreKeptPerPrincipal(t *testing.T) {
	t.Parallel()
	h := &httpHandler{}
	stream := func(owner string) *callStream {
		cs := newCallStream(nil, "s-"+owner, true, nil)
		cs.owner = owner
		return cs
	}
	victim := stream("alice")
	h.keep(victim)
	for range 3 * maxDetachedPerPrincipal {
		h.keep(stream("mallory"))
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.streams[victim.ID()] != victim {
		t.Fatal("another principal's abandoned calls evicted alice's stream")
	}
	n := 0
	for _, s := range h.streams {
		if s.owner == "mallory" {
			n++
		}
	}
	if n != maxDetachedPerPrincipal {
		t.Fatalf("mallory keeps %d detached streams, want %d", n, maxDetachedPerPrincipal)
	}
}

// countingTokens counts what reaches a TokenStore's SetToken.
type countingTokens struct {
	gateway.TokenStore
	mu   sync.Mutex
	sets int
}

func (c *countingTokens) SetToken(ctx context.Context, scope gateway.TokenScope, server, token string) error {
	c.mu.Lock()
	c.sets++
	c.mu.Unlock()
	return c.TokenStore.SetToken(ctx, scope, server, token)
}

// TestRejectedTokenHeadersKeepNothing: 200 requests carrying 20 token
// headers of 40 KB each, on forged session ids, store nothing: the review
// measured +160 MB kept for good by such requests.
func TestRejectedTokenHeadersKeepNothing(t *testing.T) {
	t.Parallel()
	store := &countingTokens{TokenStore: gateway.NewMemoryTokenStore()}
	opts := gateway.DefaultSettings()
	opts.HealthInterval = 0
	g := startGateway(t, &gateway.Config{Settings: opts, Servers: map[string]*gateway.ServerConfig{}},
		gateway.WithTokenStore(store), gateway.WithInProcessServer("a", testserver.New(), nil))
	f := New(g)
	t.Cleanup(f.Close)
	srv := httptest.NewServer(f.HTTPHandler(HTTPOptions{}))
	t.Cleanup(srv.Close)
	big := strings.Repeat("t", 40<<10)
	for i := range 200 {
		header := []string{"Mcp-Session-Id", []string{"stateless", "default", "no-such-session", "operator"}[i%4]}
		for j := range 20 {
			header = append(header, fmt.Sprintf("Sandbox-Token-s%d", j), big)
		}
		if status, _, _ := rawPost(t, srv.URL+"/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, header...); status == http.StatusOK {
			t.Fatalf("request %d with 20 x 40 KB token headers was served", i)
		}
	}
	store.mu.Lock()
	defer store.mu.Unlock()
	if store.sets != 0 {
		t.Fatalf("%d tokens reached the store from rejected requests", store.sets)
	}
}

// TestSlowBodyIsCutByTheReadDeadline: a client that announces a body and
// trickles it is cut at the body read deadline, and what its request held
// of the byte budget is given back.
func TestSlowBodyIsCutByTheReadDeadline(t *testing.T) {
	t.Parallel()
	fx := newFrontend(t)
	srv := httptest.NewServer(fx.f.HTTPHandler(HTTPOptions{BodyReadTimeout: 200 * time.Millisecond, MaxInFlightBytes: 64 << 10, MaxInFlightBytesPerPrincipal: 64 << 10}))
	t.Cleanup(srv.Close)
	conn, err := net.Dial("tcp", strings.TrimPrefix(srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 60000\r\n\r\n{\"jsonrpc\":", strings.TrimPrefix(srv.URL, "http://"))
	// The server answers (or closes) on its own; the client never finishes.
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Fatalf("a trickled body: %d", resp.StatusCode)
		}
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("the server held a trickled body past its read deadline")
	}
	// The 60,000 bytes it reserved are free again: a request that needs
	// most of the budget goes through.
	pad := strings.Repeat("x", 60000)
	testwait.Until(t, 10*time.Second, "the slow body's reservation to be given back", func() bool {
		status, _, _ := rawPost(t, srv.URL+"/mcp", `{"jsonrpc":"2.0","id":2,"method":"ping","params":{"pad":"`+pad[:3000]+`"}}`+strings.Repeat(" ", 56000))
		return status != http.StatusServiceUnavailable
	})
}

// TestRefusalDoesNotWaitForTheBody: a request refused before its body is
// read (over the byte budget; a Host of another site; a GET, which takes
// no body) is answered at once,
// though the client has sent only the first bytes of its body, and the
// server lets the connection go rather than wait for the rest.
func TestRefusalDoesNotWaitForTheBody(t *testing.T) {
	t.Parallel()
	fx := newFrontend(t)
	srv := httptest.NewServer(fx.f.HTTPHandler(HTTPOptions{MaxInFlightBytes: 4 << 10}))
	t.Cleanup(srv.Close)
	addr := strings.TrimPrefix(srv.URL, "http://")
	for _, tc := range []struct {
		name, method, host string
		contentLength      int
		want               int
	}{
		{"over the budget", "POST", addr, 8 << 10, http.StatusServiceUnavailable},
		{"another site's host", "POST", "evil.example", 100, http.StatusForbidden},
		{"a GET with a body", "GET", addr, 100, http.StatusBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			// Under net/http's 256 KiB drain limit, so it would wait for the rest.
			fmt.Fprintf(conn, "%s /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{\"jsonrpc\":", tc.method, tc.host, tc.contentLength)
			_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
			br := bufio.NewReader(conn)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("no answer while the body is still coming (%v): the server waits for the rest of it", err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Fatalf("%d, want %d", resp.StatusCode, tc.want)
			}
			if _, err := br.ReadByte(); err != io.EOF {
				t.Fatalf("after the answer the connection gave %v, want EOF: the server holds it", err)
			}
		})
	}
	// A request whose body is read keeps its connection for the next one.
	if _, h, _ := rawPost(t, srv.URL+"/mcp", `{"jsonrpc":"2.0","id":1,"method":"ping"}`); h.Get("Connection") == "close" {
		t.Fatal("the answer to a request read to its end closes the connection")
	}
}

// TestMCPToolKeepsTheDefinition: an upstream tool is re-exposed with its
// title, annotations, icons and execution as listed and its schemas byte
// for byte (never through mcp-go's typed schema, which drops parts).
func TestMCPToolKeepsTheDefinition(t *testing.T) {
	raw := `{"name":"up","title":"Up","description":"d","inputSchema":{"type":"object","properties":{"x":{"type":"string","x-odd":[1,{"y":2}]}},"$defs":{"a":{}}},
"outputSchema":{"type":"object","properties":{"n":{"type":"integer"}}},"annotations":{"readOnlyHint":true,"title":"A"},
"icons":[{"src":"https://x/i.png","mimeType":"image/png"}],"execution":{"taskSupport":"optional"},"_meta":{"k":"v"}}`
	var rt struct {
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema"`
	}
	if err := json.Unmarshal([]byte(raw), &rt); err != nil {
		t.Fatal(err)
	}
	mt, err := mcpTool(gateway.Tool{WireName: "srv__up", Raw: json.RawMessage(raw), InputSchema: rt.InputSchema, OutputSchema: rt.OutputSchema, Title: "Up", Description: "d"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if mt.Name != "srv__up" || mt.Title != "Up" || mt.Description != "d" || mt.Annotations.ReadOnlyHint == nil || !*mt.Annotations.ReadOnlyHint ||
		mt.Annotations.Title != "A" || len(mt.Icons) != 1 || mt.Icons[0].Src != "https://x/i.png" || mt.Execution == nil || mt.Meta != nil {
		t.Errorf("definition not kept: %+v", mt)
	}
	out, err := json.Marshal(mt)
	if err != nil {
		t.Fatal(err)
	}
	for _, part := range []string{string(rt.InputSchema), string(rt.OutputSchema)} {
		if !strings.Contains(string(out), part) {
			t.Errorf("schema not byte for byte: %s not in %s", part, out)
		}
	}
	// A definition whose fields do not decode still exposes the tool.
	mt, _ = mcpTool(gateway.Tool{WireName: "srv__bad", Raw: json.RawMessage(`{"name":"bad","annotations":"not an object"}`), InputSchema: json.RawMessage(`{"type":"object"}`), Title: "T"}, false)
	if mt.Name != "srv__bad" || mt.Title != "T" {
		t.Errorf("odd definition: %+v", mt)
	}
}

// TestBuiltinToolsOnlyServesNoUpstreamTool: under WithBuiltinToolsOnly
// (sandbox serve --expose code) tools/list holds the built-in and hub
// tools, and a direct call of an upstream tool is answered as for a tool
// that does not exist; the built-ins work.
func TestBuiltinToolsOnlyServesNoUpstreamTool(t *testing.T) {
	t.Parallel()
	g := startGateway(t, nil, gateway.WithInProcessServer("a", testserver.New(), nil))
	f := New(g, WithBuiltinToolsOnly())
	t.Cleanup(f.Close)
	if err := f.AddTool(toolspec.Spec{Name: "run_it", Description: "runs", InputSchema: json.RawMessage(`{"type":"object"}`), Handler: func(ctx context.Context, req toolspec.Request) (*gateway.CallResult, error) {
		return &gateway.CallResult{Content: []json.RawMessage{json.RawMessage(`{"type":"text","text":"ran"}`)}}, nil
	}}); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(f.HTTPHandler(HTTPOptions{}))
	t.Cleanup(srv.Close)
	c := legacyClient(t, srv.URL+"/mcp")
	tools := toolNames(t, c)
	for _, want := range []string{"run_it", HubListServers, HubConnectServers, HubDisconnectServer} {
		if _, ok := tools[want]; !ok || len(tools) != 4 {
			t.Fatalf("tools/list: %v", tools)
		}
	}
	for name := range tools {
		if strings.HasPrefix(name, "a__") {
			t.Fatalf("upstream tool %s listed", name)
		}
	}
	res, err := c.CallTool(context.Background(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "a__echo", Arguments: map[string]any{"message": "x"}}})
	if err == nil && !res.IsError {
		t.Fatalf("a direct call of an upstream tool ran: %s", resultText(res))
	}
	res, err = c.CallTool(context.Background(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "run_it"}})
	if err != nil || res.IsError || resultText(res) != "ran" {
		t.Fatalf("the built-in: %v %+v", err, res)
	}
}

// TestBuiltinNamedLikeAnUpstreamTool: a built-in tool whose name an
// upstream tool had takes the name; the upstream tool is exposed under its
// new (hashed) name, and a later sync of the catalog keeps both.
func TestBuiltinNamedLikeAnUpstreamTool(t *testing.T) {
	t.Parallel()
	fx := newFrontend(t)
	if err := fx.f.AddTool(toolspec.Spec{Name: "a__echo", Description: "builtin", InputSchema: json.RawMessage(`{"type":"object"}`), Handler: func(ctx context.Context, req toolspec.Request) (*gateway.CallResult, error) {
		return &gateway.CallResult{Content: []json.RawMessage{json.RawMessage(`{"type":"text","text":"builtin"}`)}}, nil
	}}); err != nil {
		t.Fatal(err)
	}
	up, ok := fx.g.Tool("a:echo")
	if !ok || up.WireName == "a__echo" {
		t.Fatalf("the upstream tool kept the built-in's name: %+v", up)
	}
	check := func(when string) {
		t.Helper()
		if tl := fx.f.mcp.GetTool("a__echo"); tl == nil || tl.Tool.Description != "builtin" {
			t.Fatalf("%s: the built-in is not registered as a__echo: %+v", when, tl)
		}
		if fx.f.mcp.GetTool(up.WireName) == nil {
			t.Fatalf("%s: the upstream tool is not exposed as %s", when, up.WireName)
		}
	}
	check("after AddTool")
	fx.f.sync() // what any later catalog change does
	check("after a sync")
}

func noHandler(context.Context, toolspec.Request) (*gateway.CallResult, error) {
	return &gateway.CallResult{}, nil
}

// TestCallerToolsArePerPrincipal: tools of SetCallerTools are listed and
// called only in the sessions of the callers the provider gives them to,
// and RefreshCallerTools gives a principal's open sessions the provider's
// current answer; a caller tool's argument cap holds too.
func TestCallerToolsArePerPrincipal(t *testing.T) {
	t.Parallel()
	fx := newFrontend(t)
	var mu sync.Mutex
	owners := map[string]bool{"alice": true}
	fx.f.SetCallerTools(func(c auth.Caller) []toolspec.Spec {
		mu.Lock()
		defer mu.Unlock()
		if !owners[c.Principal.Key()] {
			return nil
		}
		return []toolspec.Spec{{Name: "mine", Description: "The caller's own.", InputSchema: json.RawMessage(`{"type":"object"}`), MaxArgumentBytes: 64,
			Handler: func(ctx context.Context, req toolspec.Request) (*gateway.CallResult, error) {
				text, _ := json.Marshal(map[string]string{"type": "text", "text": "for " + req.Caller.Principal.Key()})
				return &gateway.CallResult{Content: []json.RawMessage{text}}, nil
			}}}
	})
	h := fx.f.HTTPHandler(HTTPOptions{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(auth.WithPrincipal(r.Context(), auth.Principal{ID: r.Header.Get("X-Test-Principal")})))
	}))
	t.Cleanup(srv.Close)
	as := func(who string) *client.Client {
		return legacyClient(t, srv.URL+"/mcp", transport.WithHTTPHeaders(map[string]string{"X-Test-Principal": who}))
	}
	alice, bob := as("alice"), as("bob")
	call := func(c *client.Client, args map[string]any) (string, bool) {
		res, err := c.CallTool(context.Background(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "mine", Arguments: args}})
		if err != nil {
			return err.Error(), true
		}
		return resultText(res), res.IsError
	}
	if _, ok := toolNames(t, alice)["mine"]; !ok {
		t.Fatal("alice's session lacks her tool")
	}
	if _, ok := toolNames(t, bob)["mine"]; ok {
		t.Fatal("bob's session lists alice's tool")
	}
	if text, isErr := call(alice, nil); isErr || text != "for alice" {
		t.Fatalf("alice's call: %s", text)
	}
	if text, isErr := call(alice, map[string]any{"pad": strings.Repeat("x", 100)}); !isErr || !strings.HasPrefix(text, "VALIDATION_FAILED: the arguments of mine are 110 bytes, over the 64 bytes it takes") {
		t.Fatalf("alice's call over the cap: %s", text)
	}
	if text, isErr := call(bob, nil); !isErr {
		t.Fatalf("bob called alice's tool: %s", text)
	}
	mu.Lock()
	owners["bob"] = true
	mu.Unlock()
	fx.f.RefreshCallerTools("bob")
	if _, ok := toolNames(t, bob)["mine"]; !ok {
		t.Fatal("bob's session lacks the tool after the refresh")
	}
	if text, isErr := call(bob, nil); isErr || text != "for bob" {
		t.Fatalf("bob's call after the refresh: %s", text)
	}
}

// TestPolicyShowsInToolsList: a tool the policy always denies is not
// listed (a client would only learn of it by calling it in vain), and a tool
// whose every call waits for a person says so in its description.
func TestPolicyShowsInToolsList(t *testing.T) {
	t.Parallel()
	opts := gateway.DefaultSettings()
	opts.HealthInterval = 0
	opts.Policy = &gateway.Policy{Rules: []gateway.PolicyRule{
		{Tools: "a:fail", Action: gateway.PolicyDeny},
		{Tools: "a:add", Action: gateway.PolicyApprove},
	}}
	g := startGateway(t, &gateway.Config{Settings: opts, Servers: map[string]*gateway.ServerConfig{}},
		gateway.WithInProcessServer("a", testserver.New(), nil))
	f := New(g)
	t.Cleanup(f.Close)
	srv := httptest.NewServer(f.HTTPHandler(HTTPOptions{}))
	t.Cleanup(srv.Close)
	tools := toolNames(t, legacyClient(t, srv.URL+"/mcp"))
	if _, ok := tools["a__fail"]; ok {
		t.Error("a__fail, which the policy denies, is listed")
	}
	if _, ok := tools["a__echo"]; !ok {
		t.Fatalf("a__echo, which the policy allows, is not listed: %v", tools)
	}
	if d := tools["a__add"].Description; !strings.HasSuffix(d, ApprovalNote) {
		t.Errorf("a__add's description does not say its calls wait for approval: %q", d)
	}
	if d := tools["a__echo"].Description; strings.Contains(d, ApprovalNote) {
		t.Errorf("a__echo's description claims an approval it does not need: %q", d)
	}
}
