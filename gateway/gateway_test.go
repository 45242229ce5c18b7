package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/gateway/internal/testserver"
	"github.com/sandboxrt/sandbox/gateway/internal/upstream"
	"github.com/sandboxrt/sandbox/internal/testlog"
	"github.com/sandboxrt/sandbox/internal/testwait"
)

func TestMain(m *testing.M) {
	testserver.MaybeServeStdio()
	os.Exit(m.Run())
}

// testServerConfig is a stdio server entry that runs this test binary as
// the test MCP server.
func testServerConfig(t testing.TB, mode string, extra string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd, _ := json.Marshal(exe)
	if extra != "" {
		extra = ", " + extra
	}
	return fmt.Sprintf(`{"command": %s, "env": {%q: %q}%s}`, cmd, testserver.EnvVar, mode, extra)
}

// startGateway parses cfgJSON, starts a gateway and closes it with the test.
func startGateway(t testing.TB, cfgJSON string, opts ...Option) (*Gateway, *testlog.Buffer) {
	t.Helper()
	cfg, err := ParseConfig("test.json", []byte(cfgJSON))
	if err != nil {
		t.Fatal(err)
	}
	logs := &testlog.Buffer{}
	opts = append([]Option{WithLogger(slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))}, opts...)
	g, err := New(cfg, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := g.Start(ctx); err != nil {
		t.Fatal(err)
	}
	return g, logs
}

func callText(t testing.TB, res *CallResult) string {
	t.Helper()
	var parts []string
	for _, b := range res.Content {
		var tb struct {
			Type, Text string
		}
		if err := json.Unmarshal(b, &tb); err != nil {
			t.Fatalf("content block %s: %v", b, err)
		}
		parts = append(parts, tb.Text)
	}
	return strings.Join(parts, "")
}

func wantCode(t testing.TB, err error, code Code) *Error {
	t.Helper()
	var ge *Error
	if !errors.As(err, &ge) {
		t.Fatalf("error %v (%T) is not a *gateway.Error", err, err)
	}
	if ge.Code != code {
		t.Fatalf("code = %s, want %s; message: %s", ge.Code, code, ge.Message)
	}
	if !json.Valid(ge.Data) {
		t.Fatalf("error data is not JSON: %q", ge.Data)
	}
	return ge
}

func TestStdioCatalogAndCalls(t *testing.T) {
	t.Parallel()
	g, logs := startGateway(t, `{"mcpServers": {"t": `+testServerConfig(t, "stdio", "")+`}}`)
	ids := map[string]Tool{}
	for _, tool := range g.Tools() {
		ids[tool.ID] = tool
	}
	for _, want := range []string{"t:echo", "t:add", "t:slow", "t:union", "t:ask_llm"} {
		if _, ok := ids[want]; !ok {
			t.Fatalf("catalog lacks %s; has %v", want, keys(ids))
		}
	}
	for id := range ids {
		if strings.Contains(id, "proto") || strings.Contains(id, "constructor") || strings.Contains(id, "!") {
			t.Fatalf("refused name %q reached the catalog", id)
		}
	}
	if !strings.Contains(logs.String(), "tool refused") || !strings.Contains(logs.String(), "reserved") {
		t.Fatalf("refused tools were not logged with a reason:\n%s", logs.String())
	}
	union := ids["t:union"]
	want := `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","$defs":{"id":{"type":"integer","minimum":1}},"anyOf":[{"required":["id"]},{"required":["name"]}],"properties":{"id":{"$ref":"#/$defs/id"},"name":{"type":"string"}}}`
	if compactJSON(t, union.InputSchema) != compactJSON(t, json.RawMessage(want)) {
		t.Fatalf("schema not kept whole:\n got %s\nwant %s", union.InputSchema, want)
	}
	if union.WireName != "t__union" || union.UpstreamName != "union" || union.Server != "t" {
		t.Fatalf("names = %+v", union)
	}

	res, err := g.Call(context.Background(), CallRequest{Tool: "t:echo", Arguments: json.RawMessage(`{"text":"hi"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if callText(t, res) != "hi" || res.IsError {
		t.Fatalf("echo = %+v", res)
	}
	res, err = g.Call(context.Background(), CallRequest{Tool: "t:add", Arguments: json.RawMessage(`{"a":2,"b":40}`)})
	if err != nil {
		t.Fatal(err)
	}
	if compactJSON(t, res.StructuredContent) != `{"sum":42}` {
		t.Fatalf("structuredContent = %s", res.StructuredContent)
	}
	// Unknown content types come through raw, in order.
	res, err = g.Call(context.Background(), CallRequest{Tool: "t:odd_content"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Content) != 2 || !strings.Contains(string(res.Content[1]), `"resource_link"`) {
		t.Fatalf("content = %s", res.Content)
	}
	// The wire name resolves too.
	if _, err := g.Call(context.Background(), CallRequest{Tool: "t__echo", Arguments: json.RawMessage(`{"text":"x"}`)}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), `"outcome":"OK"`) || !strings.Contains(logs.String(), `"tool":"t:echo"`) {
		t.Fatalf("calls not logged:\n%s", logs.String())
	}
	st := g.Servers()
	if len(st) != 1 || st[0].State != StateReady || st[0].Tools != len(ids) || st[0].ProtocolVersion == "" {
		t.Fatalf("status = %+v", st)
	}
}

func keys[M ~map[string]V, V any](m M) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func compactJSON(t testing.TB, raw json.RawMessage) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Fatalf("compact %s: %v", raw, err)
	}
	return b.String()
}

func TestCallPipelineErrors(t *testing.T) {
	t.Parallel()
	g, _ := startGateway(t, `{"mcpServers": {"t": `+testServerConfig(t, "stdio",
		`"toolTimeouts": {"slow": "500ms"}, "pathRoots": ["/srv/data"]`)+`}, "gateway": {"maxResultBytes": 1048576}}`)
	ctx := context.Background()
	call := func(tool, args string) (*CallResult, error) {
		return g.Call(ctx, CallRequest{Tool: tool, Arguments: json.RawMessage(args)})
	}

	_, err := call("nope:echo", `{}`)
	e := wantCode(t, err, CodeServiceNotFound)
	if !strings.Contains(e.Message, `"nope"`) || !strings.Contains(e.Message, "t") {
		t.Fatalf("message = %s", e.Message)
	}

	_, err = call("t:ecko", `{}`)
	e = wantCode(t, err, CodeUnknownTool)
	if !strings.Contains(e.Message, "t:echo") || !strings.Contains(string(e.Data), "t:echo") {
		t.Fatalf("no closest name in %s / %s", e.Message, e.Data)
	}

	_, err = call("t:echo", `{"text": 5, "extra": true}`)
	e = wantCode(t, err, CodeValidationFailed)
	for _, want := range []string{"t:echo", "Echo the text back", "/text", "/extra", "Required: text (string)", `Valid example: t:echo {"text":"text"}`} {
		if !strings.Contains(e.Message, want) {
			t.Errorf("validation help lacks %q:\n%s", want, e.Message)
		}
	}
	if e.Tool != "t:echo" {
		t.Fatalf("tool = %q", e.Tool)
	}

	_, err = call("t:echo", `[1,2]`)
	wantCode(t, err, CodeValidationFailed)
	_, err = call("t:echo", `{not json`)
	wantCode(t, err, CodeValidationFailed)

	_, err = call("t:read_path", `{"path": "/srv/data/../../etc/passwd"}`)
	e = wantCode(t, err, CodePathTraversal)
	if !strings.Contains(e.Message, "/path") || !strings.Contains(e.Message, "/srv/data") {
		t.Fatalf("message = %s", e.Message)
	}
	_, err = call("t:read_path", `{"path": "/etc/shadow"}`)
	wantCode(t, err, CodePathTraversal)
	_, err = call("t:read_path", `{"path": "ok", "options": {"nested": ["%2e%2e%2fsecret"]}}`)
	e = wantCode(t, err, CodePathTraversal)
	if !strings.Contains(e.Message, "/options/nested/0") {
		t.Fatalf("message = %s", e.Message)
	}
	if res, err := call("t:read_path", `{"path": "/srv/data/reports/q3.csv"}`); err != nil || callText(t, res) != "read /srv/data/reports/q3.csv" {
		t.Fatalf("a path inside the roots was refused: %v", err)
	}

	res, err := call("t:fail", `{}`)
	e = wantCode(t, err, CodeToolError)
	if res == nil || !res.IsError || e.Message != "the widget is broken: try widget 2" || !strings.Contains(string(e.Data), "widget") {
		t.Fatalf("isError result = %+v, err = %+v", res, e)
	}

	_, err = call("t:rpcerror", `{}`)
	e = wantCode(t, err, CodeProtocolError)
	if !strings.Contains(e.Message, "database is down") || !strings.Contains(string(e.Data), `"code"`) {
		t.Fatalf("protocol error = %s / %s", e.Message, e.Data)
	}

	_, err = call("t:big", `{"bytes": 3000000}`)
	e = wantCode(t, err, CodeResultTooLarge)
	if !strings.Contains(e.Message, "1048576") {
		t.Fatalf("message = %s", e.Message)
	}
	// The connection survives a refused result.
	if res, err := call("t:big", `{"bytes": 500000}`); err != nil || len(callText(t, res)) != 500000 {
		t.Fatalf("call after a too-large result: %v", err)
	}

	start := time.Now()
	_, err = call("t:slow", `{"ms": 5000}`)
	wantCode(t, err, CodeTimeout)
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("timeout took %v", d)
	}

	if _, err = call("t:slow", `{"ms": 50}`); err != nil {
		t.Fatalf("50ms call under a 500ms timeout: %v", err)
	}
	// A caller that gives up (wherever its call is by then) gets CANCELLED.
	cctx, cancel := context.WithCancel(ctx)
	time.AfterFunc(30*time.Millisecond, cancel)
	_, err = g.Call(cctx, CallRequest{Tool: "t:wait_cancel"})
	wantCode(t, err, CodeCancelled)
}

func TestRateLimitAndConcurrencyCap(t *testing.T) {
	t.Parallel()
	clock := newManualClock()
	g, _ := startGateway(t, `{"mcpServers": {
		"r": `+testServerConfig(t, "stdio", `"rateLimit": {"perSecond": 2, "burst": 1}, "maxWait": "0s"`)+`,
		"c": `+testServerConfig(t, "stdio", `"maxConcurrent": 1, "maxWait": "50ms"`)+`}}`,
		WithRateLimiter(NewMemoryRateLimiter(clock.Now)))
	ctx := context.Background()
	if _, err := g.Call(ctx, CallRequest{Tool: "r:echo", Arguments: json.RawMessage(`{"text":"a"}`)}); err != nil {
		t.Fatal(err)
	}
	_, err := g.Call(ctx, CallRequest{Tool: "r:echo", Arguments: json.RawMessage(`{"text":"b"}`)})
	e := wantCode(t, err, CodeRateLimited)
	if !strings.Contains(e.Message, "rate limit") || !strings.Contains(e.Message, "call again in 500ms") || !strings.Contains(string(e.Data), `"retryAfterMs":500`) {
		t.Fatalf("message = %s data = %s", e.Message, e.Data)
	}
	// Another principal has a bucket of its own: the first one's calls did
	// not spend its tokens.
	other := CallRequest{Tool: "r:echo", Arguments: json.RawMessage(`{"text":"o"}`), Caller: auth.Caller{Principal: auth.Principal{ID: "tenant-b"}}}
	if _, err := g.Call(ctx, other); err != nil {
		t.Fatalf("another principal was limited by the first one's calls: %v", err)
	}
	wantCode(t, func() error { _, err := g.Call(ctx, other); return err }(), CodeRateLimited)
	clock.advance(500 * time.Millisecond)
	if _, err := g.Call(ctx, CallRequest{Tool: "r:echo", Arguments: json.RawMessage(`{"text":"c"}`)}); err != nil {
		t.Fatalf("after the bucket refilled: %v", err)
	}

	// One call holds the only slot until it is cancelled; another waits
	// maxWait for it and gives up.
	hold, release := context.WithCancel(ctx)
	defer release()
	held := make(chan error, 1)
	go func() {
		_, err := g.Call(hold, CallRequest{Tool: "c:wait_cancel"})
		held <- err
	}()
	testwait.Until(t, 10*time.Second, "the first call to take the slot", func() bool { return inFlight(g, "c") == 1 })
	start := time.Now()
	_, err = g.Call(ctx, CallRequest{Tool: "c:echo", Arguments: json.RawMessage(`{"text":"x"}`)})
	e = wantCode(t, err, CodeRateLimited)
	if !strings.Contains(e.Message, "concurrency cap") {
		t.Fatalf("message = %s", e.Message)
	}
	if d := time.Since(start); d < 50*time.Millisecond {
		t.Fatalf("refused after %v, before maxWait", d)
	}
	release()
	wantCode(t, <-held, CodeCancelled)
	if _, err := g.Call(ctx, CallRequest{Tool: "c:echo", Arguments: json.RawMessage(`{"text":"y"}`)}); err != nil {
		t.Fatalf("after the slot was released: %v", err)
	}
}

func TestProgressIsRelayedInOrder(t *testing.T) {
	t.Parallel()
	g, _ := startGateway(t, `{"mcpServers": {"t": `+testServerConfig(t, "stdio", "")+`}}`)
	var mu sync.Mutex
	var got []Progress
	res, err := g.Call(context.Background(), CallRequest{Tool: "t:progress", Arguments: json.RawMessage(`{"steps": 5}`),
		Progress: func(p Progress) { mu.Lock(); got = append(got, p); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	if callText(t, res) != "done 5 steps" {
		t.Fatal(callText(t, res))
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 5 {
		t.Fatalf("got %d progress notifications: %+v", len(got), got)
	}
	for i, p := range got {
		if p.Progress != float64(i+1) || p.Total != 5 || p.Message != fmt.Sprintf("step %d", i+1) {
			t.Fatalf("progress %d = %+v", i, p)
		}
	}
}

func TestCrashFailsInFlightCallsAtOnceAndRestarts(t *testing.T) {
	t.Parallel()
	g, _ := startGateway(t, `{"mcpServers": {"t": `+testServerConfig(t, "stdio", `"timeout": "30s"`)+`},
		"gateway": {"restartBackoff": "100ms"}}`)
	ctx := context.Background()
	// Calls in flight when the server dies fail together, not after 30 s.
	var wg sync.WaitGroup
	errs := make([]error, 4)
	start := time.Now()
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = g.Call(ctx, CallRequest{Tool: "t:slow", Arguments: json.RawMessage(`{"ms": 20000}`)})
		}()
	}
	testwait.Until(t, 10*time.Second, "4 slow calls under way", func() bool { return running(t, g, "t", "slow") == "4" })
	_, err := g.Call(ctx, CallRequest{Tool: "t:crash"})
	wantCode(t, err, CodeUpstreamUnavailable)
	wg.Wait()
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("in-flight calls took %v to fail", d)
	}
	for _, err := range errs {
		e := wantCode(t, err, CodeUpstreamUnavailable)
		if !strings.Contains(e.Message, "exit status 7") {
			t.Fatalf("message does not say why: %s", e.Message)
		}
	}
	// It is restarted and its tools work again.
	testwait.Until(t, 20*time.Second, "the server to come back", func() bool {
		res, err := g.Call(ctx, CallRequest{Tool: "t:echo", Arguments: json.RawMessage(`{"text":"back"}`)})
		if err != nil {
			wantCode(t, err, CodeUpstreamUnavailable)
			return false
		}
		if callText(t, res) != "back" {
			t.Fatal(callText(t, res))
		}
		return true
	})
	st := g.Servers()[0]
	if st.Restarts != 1 || st.State != StateReady || !strings.Contains(st.LastError, "exit status 7") {
		t.Fatalf("status = %+v", st)
	}
}

func TestBrokenServersDoNotStopTheOthers(t *testing.T) {
	t.Parallel()
	start := time.Now()
	g, _ := startGateway(t, `{"mcpServers": {
		"good": `+testServerConfig(t, "stdio", "")+`,
		"missing": {"command": "/nonexistent/mcp-server"},
		"hangs": `+testServerConfig(t, "hang", "")+`,
		"exits": `+testServerConfig(t, "exit", "")+`,
		"off": {"command": "true", "disabled": true}},
		"gateway": {"startupTimeout": "3s", "restartBackoff": "5s"}}`)
	if d := time.Since(start); d > 6*time.Second {
		t.Fatalf("Start took %v; a hanging server must not hold it past startupTimeout", d)
	}
	states := map[string]ServerStatus{}
	for _, s := range g.Servers() {
		states[s.Name] = s
	}
	if states["good"].State != StateReady {
		t.Fatalf("good = %+v", states["good"])
	}
	for _, name := range []string{"missing", "hangs", "exits"} {
		if states[name].State != StateFailed || states[name].LastError == "" {
			t.Fatalf("%s = %+v", name, states[name])
		}
	}
	if !strings.Contains(states["exits"].LastError, "exiting at once as asked") {
		t.Fatalf("stderr not reported: %q", states["exits"].LastError)
	}
	// What the server printed is the operator's alone: agents see a reason.
	if st := states["exits"].ForAgents(); st.LastError != "" || st.Reason == "" || strings.Contains(st.Reason, "exiting at once") {
		t.Fatalf("status for agents = %+v", st)
	}
	_, err := g.Call(context.Background(), CallRequest{Tool: "exits:echo", Arguments: json.RawMessage(`{"text":"x"}`)})
	if e := wantCode(t, err, CodeUpstreamUnavailable); strings.Contains(e.Message+string(e.Data), "exiting at once") {
		t.Fatalf("an agent saw the server's stderr: %s %s", e.Message, e.Data)
	}
	if states["off"].State != StateDisabled {
		t.Fatalf("off = %+v", states["off"])
	}
	if _, err := g.Call(context.Background(), CallRequest{Tool: "good:echo", Arguments: json.RawMessage(`{"text":"x"}`)}); err != nil {
		t.Fatal(err)
	}
	_, err = g.Call(context.Background(), CallRequest{Tool: "hangs:echo", Arguments: json.RawMessage(`{"text":"x"}`)})
	e := wantCode(t, err, CodeUpstreamUnavailable)
	if !strings.Contains(e.Message, "failed") {
		t.Fatalf("message = %s", e.Message)
	}
}

func TestListChangedUpdatesCatalog(t *testing.T) {
	t.Parallel()
	g, _ := startGateway(t, `{"mcpServers": {"t": `+testServerConfig(t, "stdio", "")+`}}`)
	changes := make(chan CatalogChange, 10)
	stop := g.Subscribe(func(c CatalogChange) { changes <- c })
	defer stop()
	if _, err := g.Call(context.Background(), CallRequest{Tool: "t:add_tool", Arguments: json.RawMessage(`{"name":"Fresh.Tool"}`)}); err != nil {
		t.Fatal(err)
	}
	select {
	case c := <-changes:
		if c.Server != "t" || len(c.Added) != 1 || c.Added[0].ID != "t:fresh_tool" || c.Added[0].UpstreamName != "Fresh.Tool" || len(c.Removed) != 0 {
			t.Fatalf("change = %+v", c)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no catalog change after tools/list_changed")
	}
	res, err := g.Call(context.Background(), CallRequest{Tool: "t:fresh_tool"})
	if err != nil || callText(t, res) != "I am Fresh.Tool" {
		t.Fatalf("new tool: %v", err)
	}
}

// fakePeer is a downstream client that answers sampling and records notifications.
type fakePeer struct {
	mu       sync.Mutex
	caps     map[string]bool
	requests []string
	notes    []string
}

func (p *fakePeer) Request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	p.mu.Lock()
	p.requests = append(p.requests, method+" "+string(params))
	p.mu.Unlock()
	return json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"42"},"model":"fake"}`), nil
}

func (p *fakePeer) Notify(method string, params json.RawMessage) {
	p.mu.Lock()
	p.notes = append(p.notes, method+" "+string(params))
	p.mu.Unlock()
}

func (p *fakePeer) Supports(c string) bool { return p.caps[c] }

func TestSamplingIsRelayedToTheCallingSession(t *testing.T) {
	t.Parallel()
	for _, version := range []string{"", "2025-11-25"} {
		t.Run("protocol="+version, func(t *testing.T) {
			t.Parallel()
			extra := ""
			if version != "" {
				extra = fmt.Sprintf(`"protocolVersion": %q`, version)
			}
			g, _ := startGateway(t, `{"mcpServers": {"t": `+testServerConfig(t, "stdio", extra)+`}}`)
			if version == "" && !strings.HasPrefix(g.Servers()[0].ProtocolVersion, "2026") {
				t.Fatalf("expected the stateless protocol, got %q", g.Servers()[0].ProtocolVersion)
			}
			p := &fakePeer{caps: map[string]bool{"sampling": true}}
			defer g.OpenSession(testCaller("s1"), p).Close()
			res, err := g.Call(context.Background(), CallRequest{Tool: "t:ask_llm", Caller: testCaller("s1"), Arguments: json.RawMessage(`{"prompt":"meaning of life?"}`)})
			if err != nil {
				t.Fatal(err)
			}
			if callText(t, res) != "LLM said: 42" {
				t.Fatalf("got %q", callText(t, res))
			}
			if len(p.requests) != 1 || !strings.Contains(p.requests[0], "sampling/createMessage") || !strings.Contains(p.requests[0], "meaning of life?") {
				t.Fatalf("peer saw %v", p.requests)
			}
			// A session whose client cannot sample gets an error, not another session's answer.
			_, err = g.Call(context.Background(), CallRequest{Tool: "t:ask_llm", Caller: testCaller("s2"), Arguments: json.RawMessage(`{"prompt":"x"}`)})
			if err == nil {
				t.Fatal("a session without a sampling client got an answer")
			}
		})
	}
}

func TestLogsGoOnlyToTheCallingSession(t *testing.T) {
	t.Parallel()
	g, _ := startGateway(t, `{"mcpServers": {"t": `+testServerConfig(t, "stdio", `"protocolVersion": "2025-11-25"`)+`}}`)
	p1, p2 := &fakePeer{}, &fakePeer{}
	defer g.OpenSession(testCaller("s1"), p1).Close()
	defer g.OpenSession(testCaller("s2"), p2).Close()
	g.SetLogLevel(context.Background(), testCaller("s1"), "debug")
	if _, err := g.Call(context.Background(), CallRequest{Tool: "t:log", Caller: testCaller("s1")}); err != nil {
		t.Fatal(err)
	}
	p1.mu.Lock()
	defer p1.mu.Unlock()
	if len(p1.notes) != 1 || !strings.Contains(p1.notes[0], "careful now") {
		t.Fatalf("s1 got %v", p1.notes)
	}
	if len(p2.notes) != 0 {
		t.Fatalf("s2 got another session's log: %v", p2.notes)
	}
}

func TestResourcesPromptsPassThrough(t *testing.T) {
	t.Parallel()
	g, _ := startGateway(t, `{"mcpServers": {"t": `+testServerConfig(t, "stdio", "")+`}}`)
	ctx := context.Background()
	if rs := g.Resources(); len(rs) != 1 || rs[0].URI != "test://static" || rs[0].Server != "t" {
		t.Fatalf("resources = %+v", rs)
	}
	if ts := g.ResourceTemplates(); len(ts) != 1 || ts[0].URITemplate != "test://item/{id}" {
		t.Fatalf("templates = %+v", ts)
	}
	raw, err := g.ReadResource(ctx, operator, "test://item/77")
	if err != nil || !strings.Contains(string(raw), "item 77") {
		t.Fatalf("read = %s, %v", raw, err)
	}
	_, err = g.ReadResource(ctx, operator, "nothing://here")
	if err == nil {
		t.Fatal("reading an unlisted scheme from a single server should go to it and fail there, or be NOT_FOUND")
	}
	ps := g.Prompts()
	if len(ps) != 1 || ps[0].WireName != "t__greet" {
		t.Fatalf("prompts = %+v", ps)
	}
	raw, err = g.GetPrompt(ctx, operator, "t__greet", map[string]string{"name": "Ada"})
	if err != nil || !strings.Contains(string(raw), "Hello, Ada") {
		t.Fatalf("prompt = %s, %v", raw, err)
	}
	_, err = g.GetPrompt(ctx, operator, "nope", nil)
	wantCode(t, err, CodeNotFound)
}

func TestInProcessServer(t *testing.T) {
	t.Parallel()
	g, err := New(nil, WithInProcessServer("mem", testserver.New(), nil))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if err := g.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	res, err := g.Call(context.Background(), CallRequest{Tool: "mem:add", Arguments: json.RawMessage(`{"a":1,"b":2}`)})
	if err != nil {
		t.Fatal(err)
	}
	if compactJSON(t, res.StructuredContent) != `{"sum":3}` {
		t.Fatalf("structured = %s", res.StructuredContent)
	}
	// Cancellation reaches an in-process handler too.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = g.Call(ctx, CallRequest{Tool: "mem:slow", Arguments: json.RawMessage(`{"ms": 5000}`)})
	wantCode(t, err, CodeTimeout)
	if time.Since(start) > time.Second {
		t.Fatal("in-process call ignored its deadline")
	}
}

// TestCancellationReachesTheUpstream: a caller that gives up makes the
// gateway send notifications/cancelled, and the upstream handler stops.
func TestCancellationReachesTheUpstream(t *testing.T) {
	t.Parallel()
	up := server.NewStreamableHTTPServer(testserver.New(), server.WithStateful(true))
	httpUpstream := httptest.NewServer(up)
	t.Cleanup(httpUpstream.Close)
	servers := map[string]string{
		"stdio":        testServerConfig(t, "stdio", ""),
		"stdio-legacy": testServerConfig(t, "stdio", `"protocolVersion": "2025-11-25"`),
		"http":         fmt.Sprintf(`{"url": %q}`, httpUpstream.URL+"/mcp"),
		"http-legacy":  fmt.Sprintf(`{"url": %q, "protocolVersion": "2025-11-25"}`, httpUpstream.URL+"/mcp"),
	}
	for name, sc := range servers {
		t.Run(name, func(t *testing.T) {
			g, _ := startGateway(t, `{"mcpServers": {"t": `+sc+`}}`)
			count := func() string {
				res, err := g.Call(context.Background(), CallRequest{Tool: "t:cancelled_count"})
				if err != nil {
					t.Fatal(err)
				}
				return callText(t, res)
			}
			before, _ := strconv.Atoi(count())
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			go func() {
				_, err := g.Call(ctx, CallRequest{Tool: "t:wait_cancel"})
				done <- err
			}()
			testwait.Until(t, 10*time.Second, "the upstream handler to start", func() bool { return running(t, g, "t", "wait_cancel") == "1" })
			cancel()
			wantCode(t, <-done, CodeCancelled)
			want := strconv.Itoa(before + 1)
			testwait.Until(t, 10*time.Second, "the upstream handler to see the cancellation (count "+want+")", func() bool { return count() == want })
		})
	}
}

// TestHungServerIsRestarted: a server that stops answering (SIGSTOP: alive
// but silent) fails its health check, which is a real request, and is
// restarted; the call stuck in it fails with UPSTREAM_UNAVAILABLE well
// before its own timeout.
func TestHungServerIsRestarted(t *testing.T) {
	t.Parallel()
	g, _ := startGateway(t, `{"mcpServers": {"t": `+testServerConfig(t, "stdio", `"timeout": "60s"`)+`},
		"gateway": {"healthInterval": "300ms", "restartBackoff": "100ms"}}`)
	start := time.Now()
	res, err := g.Call(context.Background(), CallRequest{Tool: "t:freeze"})
	if err == nil {
		t.Fatalf("the frozen call answered after %v: %s", time.Since(start), res.Content)
	}
	e := wantCode(t, err, CodeUpstreamUnavailable)
	if !strings.Contains(e.Message, "health check failed") {
		t.Fatalf("message = %s", e.Message)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("the hung call took %v to fail", d)
	}
	testwait.Until(t, 20*time.Second, "the hung server to be replaced", func() bool {
		_, err := g.Call(context.Background(), CallRequest{Tool: "t:echo", Arguments: json.RawMessage(`{"text":"x"}`)})
		return err == nil
	})
	if st := g.Servers()[0]; st.Restarts != 1 {
		t.Fatalf("status = %+v", st)
	}
}

// TestManyConcurrentCalls: thousands of calls at once through one gateway
// (routing keeps no per-call state beyond its own stack).
func TestManyConcurrentCalls(t *testing.T) {
	t.Parallel()
	g, err := New(nil, WithInProcessServer("mem", testserver.New(), nil))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if err := g.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	const n = 3000
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			want := fmt.Sprintf("call %d", i)
			args, _ := json.Marshal(map[string]string{"text": want})
			res, err := g.Call(context.Background(), CallRequest{Tool: "mem:echo", Arguments: args, Caller: testCaller(fmt.Sprint(i % 7))})
			if err != nil {
				errs <- err
				return
			}
			var b struct{ Text string }
			_ = json.Unmarshal(res.Content[0], &b)
			if b.Text != want {
				errs <- fmt.Errorf("got %q, want %q", b.Text, want)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if st := g.Servers()[0]; st.InFlight != 0 {
		t.Fatalf("in-flight count leaked: %+v", st)
	}
}

// TestHostileUpstream: a server that lies about everything leaves a usable
// catalog and typed errors, never a crash or a hang.
func TestHostileUpstream(t *testing.T) {
	t.Parallel()
	g, logs := startGateway(t, `{"mcpServers": {"h": `+testServerConfig(t, "hostile", "")+`}, "gateway": {"healthInterval": "0s"}}`)
	if st := g.Servers()[0]; st.State != StateReady {
		t.Fatalf("status = %+v", st)
	}
	got := map[string]Tool{}
	for _, tool := range g.Tools() {
		got[tool.ID] = tool
	}
	for _, want := range []string{"h:ok", "h:no_schema", "h:bad_content", "h:not_json_result", "h:meta_leak"} {
		if _, ok := got[want]; !ok {
			t.Errorf("%s missing from %v", want, keys(got))
		}
	}
	if len(got) != 5 {
		t.Fatalf("catalog = %v", keys(got))
	}
	if got["h:ok"].UpstreamName != "OK" {
		// "OK" and "ok" normalize alike; the one that sorts first stays.
		t.Fatalf("duplicate resolution: %+v", got["h:ok"])
	}
	if strings.Contains(string(got["h:meta_leak"].Raw), "secret") {
		t.Fatal("the tool's _meta was kept")
	}
	for _, reason := range []string{"reserved", "character", "inputSchema is not a JSON object", "more than 1048576", "normalizes to"} {
		if !strings.Contains(logs.String(), reason) {
			t.Errorf("no logged reason %q", reason)
		}
	}
	ctx := context.Background()
	if res, err := g.Call(ctx, CallRequest{Tool: "h:ok"}); err != nil || callText(t, res) != "ok" {
		t.Fatalf("ok: %v", err)
	}
	_, err := g.Call(ctx, CallRequest{Tool: "h:bad_content"})
	wantCode(t, err, CodeProtocolError)
	_, err = g.Call(ctx, CallRequest{Tool: "h:not_json_result"})
	wantCode(t, err, CodeProtocolError)
	res, err := g.Call(ctx, CallRequest{Tool: "h:meta_leak"})
	if err != nil || strings.Contains(string(res.Content[0]), "secret") {
		t.Fatalf("meta_leak: %v %s", err, res.Content)
	}
}

// testCaller is an anonymous caller in session id.
func testCaller(id string) auth.Caller {
	return auth.Caller{Principal: auth.Anonymous(), Session: auth.SessionID(id)}
}

// operator is the CLI's caller.
var operator = auth.Caller{Principal: auth.Operator()}

// TestServerStatesAreTheSupervisors: the states the gateway reports are its
// supervisors' (route.status converts one to the other by its spelling).
func TestServerStatesAreTheSupervisors(t *testing.T) {
	for mine, theirs := range map[ServerState]upstream.State{
		StateStarting: upstream.Starting, StateReady: upstream.Ready, StateRestarting: upstream.Restarting,
		StateFailed: upstream.Failed, StateStopped: upstream.Stopped, StateDisabled: upstream.Disabled,
	} {
		if string(mine) != string(theirs) {
			t.Errorf("gateway state %q is the supervisor's %q", mine, theirs)
		}
	}
	if len(allStates) != 6 {
		t.Errorf("the metrics know %d states, the supervisor 6", len(allStates))
	}
}

// TestInProcessServerPanicIsContained: an in-process server built without
// mcp-go's recovery whose handler panics fails that call, on the goroutine
// the gateway runs it on for a caller with a deadline, and the gateway
// keeps serving.
func TestInProcessServerPanicIsContained(t *testing.T) {
	t.Parallel()
	up := server.NewMCPServer("fragile", "1", server.WithToolCapabilities(true))
	up.AddTool(mcp.NewTool("boom"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) { panic("boom") })
	up.AddTool(mcp.NewTool("ok"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("fine"), nil
	})
	logs := &testlog.Buffer{}
	g, err := New(&Config{Settings: DefaultSettings()}, WithInProcessServer("f", up, nil), WithLogger(slog.New(slog.NewJSONHandler(logs, nil))))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	if err := g.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if res, err := g.Call(ctx, CallRequest{Tool: "f:boom"}); err == nil {
		t.Fatalf("a call whose handler panicked answered %+v", res)
	}
	res, err := g.Call(ctx, CallRequest{Tool: "f:ok"})
	if err != nil || callText(t, res) != "fine" {
		t.Fatalf("after the panic: %v %+v", err, res)
	}
	if !strings.Contains(logs.String(), "boom") || !strings.Contains(logs.String(), "goroutine") {
		t.Errorf("the log does not have the panic and its stack:\n%s", logs.String())
	}
}

// TestRelayPanicIsContained: what the gateway relays from an upstream to
// its caller runs on the transport's goroutine (the stdio reader, or the
// goroutine answering the upstream's request), which nothing else
// recovers. A relay that panics there, a progress notification's or a
// sampling request's, fails that relay, not the process: the progress is
// dropped and the call still answers, the upstream's request is answered
// an error, and the gateway keeps serving.
func TestRelayPanicIsContained(t *testing.T) {
	t.Parallel()
	g, logs := startGateway(t, `{"mcpServers": {"t": `+testServerConfig(t, "stdio", `"protocolVersion": "2025-11-25"`)+`}, "gateway": {"healthInterval": "0s"}}`)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := g.Call(ctx, CallRequest{Tool: "t:progress", Arguments: json.RawMessage(`{"steps": 2}`),
		Progress: func(Progress) { panic("progress relay") }})
	if err != nil || callText(t, res) != "done 2 steps" {
		t.Fatalf("a call whose progress relay panicked: %v %+v", err, res)
	}
	asking := WithInputAsker(ctx, func(context.Context, string, json.RawMessage) (json.RawMessage, error) { panic("sampling relay") })
	res, err = g.Call(asking, CallRequest{Tool: "t:ask_llm", Caller: auth.Caller{Principal: auth.Anonymous()}, Arguments: json.RawMessage(`{"prompt":"p"}`)})
	if err == nil && !res.IsError {
		t.Fatalf("a call whose sampling relay panicked answered %+v", res)
	}
	res, err = g.Call(ctx, CallRequest{Tool: "t:echo", Arguments: json.RawMessage(`{"text":"still here"}`)})
	if err != nil || !strings.Contains(callText(t, res), "still here") {
		t.Fatalf("after the panics: %v %+v", err, res)
	}
	for _, want := range []string{"progress relay", "sampling relay", "goroutine"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the log does not have %q (the panic and its stack):\n%s", want, logs.String())
		}
	}
}
