package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/sandboxrt/sandbox/internal/redistest"
	"github.com/sandboxrt/sandbox/internal/testpeers"
	"github.com/sandboxrt/sandbox/internal/testwait"
)

// startSharedRedis starts a redis-server for replicas and gives the
// environment a fresh SANDBOX_REDIS_KEY (the configs name it) and the
// agent's API key.
func startSharedRedis(tb testing.TB) *redistest.Server {
	tb.Helper()
	srv := redistest.Start(tb)
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	tb.Setenv("SANDBOX_TEST_AGENT_KEY", agentKey)
	tb.Setenv("SANDBOX_REDIS_KEY", base64.StdEncoding.EncodeToString(key))
	return srv
}

// replicas starts n `sandbox serve --http` processes on one config that
// shares state in a real redis-server.
func replicas(t *testing.T, n int, extra string) (*redistest.Server, []string) {
	t.Helper()
	srv := startSharedRedis(t)
	cfg := fmt.Sprintf(`{"mcpServers": {"demo": {"command": %q, "rateLimit": {"perSecond": 0.5, "burst": 3}, "maxWait": "0s"}},
  "gateway": {"redis": {"url": %q, "encryptionKey": "${SANDBOX_REDIS_KEY}", "keyPrefix": "replicas:"},
    "auth": {"apiKeys": [{"name": "agent-a", "key": "${SANDBOX_TEST_AGENT_KEY}"}]}}%s}`, exampleServerBinary(t), srv.URL(), extra)
	var urls []string
	for range n {
		urls = append(urls, serveHTTP(t, cfg))
	}
	return srv, urls
}

func execute(t *testing.T, c *client.Client, code string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "execute_code", Arguments: map[string]any{"code": code}}})
	if err != nil {
		t.Fatal(err)
	}
	return toolText(res)
}

// TestReplicasShareState: three replicas on one Redis: a value one keeps
// for a principal (sandbox.store) is read on another, a script saved
// through one runs on another, a server's rate limit
// holds for the whole deployment, and when Redis stops under a stream of
// writes the calls that need it fail at once saying so, /readyz says so,
// both recover by themselves when it returns, and every write a snippet saw
// acknowledged is still there; and what a session called after a search
// ranks that tool on another replica.
func TestReplicasShareState(t *testing.T) {
	if testing.Short() {
		t.Skip("starts redis-server and three replicas")
	}
	redisSrv, urls := replicas(t, 3, "")
	a, b, c := keyClient(t, urls[0], agentKey), keyClient(t, urls[1], agentKey), keyClient(t, urls[2], agentKey)

	if out := execute(t, a, `await sandbox.store.set("prefs", {tz: "UTC"}, {scope: "principal"}); return "kept"`); !strings.Contains(out, `"kept"`) {
		t.Fatalf("set on replica 1: %s", out)
	}
	if out := execute(t, b, `return await sandbox.store.get("prefs", {scope: "principal"})`); !strings.Contains(out, `"tz":"UTC"`) {
		t.Fatalf("get on replica 2: %s", out)
	}
	// A script saved through one replica runs on another.
	res, err := a.CallTool(context.Background(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "save_script", Arguments: map[string]any{
		"name": "double", "description": "Twice the input's n", "code": `return input.n * 2`,
		"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "number"}}, "required": []string{"n"}}}}})
	if err != nil || res.IsError {
		t.Fatalf("save_script on replica 1: %v %s", err, toolText(res))
	}
	if out := execute(t, c, `return await scripts.double({n: 21})`); !strings.Contains(out, `"value":42`) {
		t.Fatalf("the script on replica 3: %s", out)
	}

	// The bucket holds 3 calls and refills one per 2 s: of six calls made
	// two on each replica, three pass, wherever they land.
	passed := 0
	for i := range 6 {
		out := execute(t, []*client.Client{a, b, c}[i%3], `try { await demo.listProjects({}); return "ran" } catch (e) { return e.code }`)
		if strings.Contains(out, `"value":"ran"`) {
			passed++
		} else if !strings.Contains(out, "RATE_LIMITED") {
			t.Fatalf("call %d: %s", i, out)
		}
	}
	if passed != 3 {
		t.Fatalf("%d of 6 calls passed a limit of 3 for the deployment", passed)
	}

	// Under load: a stream of writes through the replicas while Redis stops
	// and comes back. Every write a snippet saw succeed must be there after.
	stopLoad := make(chan struct{})
	loadDone := make(chan []int)
	go func() {
		var acked []int
		for i := 0; ; i++ {
			select {
			case <-stopLoad:
				loadDone <- acked
				return
			default:
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			res, err := []*client.Client{a, b, c}[i%3].CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "execute_code", Arguments: map[string]any{
				"code": fmt.Sprintf(`try { await sandbox.store.set("w%d", %d, {scope: "principal"}); return "acked" } catch (e) { return e.code }`, i, i)}}})
			cancel()
			if err == nil && strings.Contains(toolText(res), `"acked"`) {
				acked = append(acked, i)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	time.Sleep(300 * time.Millisecond)

	redisSrv.Stop()
	start := time.Now()
	out := execute(t, c, `try { await sandbox.store.get("prefs", {scope: "principal"}); return "read" } catch (e) { return e.code + ": " + e.message }`)
	if !strings.Contains(out, "redis is unavailable") {
		t.Fatalf("a store call with Redis down: %s", out)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("failing took %v", d)
	}
	ready := func(url string) (int, string) {
		resp, err := http.Get(strings.TrimSuffix(url, "/mcp") + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if code, body := ready(urls[0]); code != http.StatusServiceUnavailable || !strings.Contains(body, notReadySharedState) {
		t.Fatalf("/readyz with Redis down: %d %s", code, body)
	}
	redisSrv.Restart()
	testwait.Until(t, 10*time.Second, "/readyz to recover", func() bool { code, _ := ready(urls[0]); return code == http.StatusOK })
	time.Sleep(300 * time.Millisecond)
	close(stopLoad)
	acked := <-loadDone
	if len(acked) < 5 {
		t.Fatalf("only %d writes were acknowledged around the restart", len(acked))
	}
	var check strings.Builder
	check.WriteString("const missing = [];\n")
	for _, i := range acked {
		fmt.Fprintf(&check, "if (await sandbox.store.get(\"w%d\", {scope: \"principal\"}) !== %d) missing.push(%d);\n", i, i, i)
	}
	check.WriteString("return missing")
	if out := execute(t, b, check.String()); !strings.Contains(out, `"value":[]`) {
		t.Fatalf("acknowledged writes lost across the Redis restart (of %d): %s", len(acked), out)
	}
	if out := execute(t, b, `return await sandbox.store.get("prefs", {scope: "principal"})`); !strings.Contains(out, `"tz":"UTC"`) {
		t.Fatalf("a value kept before the restart: %s", out)
	}
	if out := execute(t, a, `await sandbox.store.set("again", 1, {scope: "principal"}); return await sandbox.store.get("again", {scope: "principal"})`); !strings.Contains(out, `"value":1`) {
		t.Fatalf("after Redis came back: %s", out)
	}

	// What a session called after a search is learnt for the deployment: a
	// search with the same words through another replica shows the tool.
	const words = "who is swamped in the zymurgy ledger"
	search := func(c *client.Client) string {
		res, err := c.CallTool(context.Background(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "search_tools", Arguments: map[string]any{"intent": words}}})
		if err != nil {
			t.Fatal(err)
		}
		return toolText(res)
	}
	search(a)
	if out := execute(t, a, `return typeof (await demo.teamWorkload({}))`); !strings.Contains(out, `"value":"string"`) {
		t.Fatalf("the call after the search: %s", out)
	}
	testwait.Until(t, 10*time.Second, "replica 2 to rank what replica 1 learnt", func() bool {
		return strings.Contains(search(b), "demo.teamWorkload: ") && strings.Contains(search(b), "; called after searches with these words (1 caller)")
	})
}

// roundRobin is the load balancer in front of the replicas: each request
// to the next live one, no affinity. SSE answers are flushed as they come.
// It reads a request's body before forwarding it, as nginx does by default
// (proxy_request_buffering): httputil.ReverseProxy streaming a body from Go's
// HTTP/1 server cuts answers off now and then (golang/go#40747: writing the
// response headers closes the inbound body, the transport's final read of
// it fails and tears down the upstream connection mid-answer).
//
// For the resumability tests it can misbehave on cue: a request whose body
// holds "CUT-ME" has its answer cut off after the first write (the client
// loses the stream mid-call, the replica lives on: cutTransport); one holding "KILL-ME"
// reports the replica it went to on killed. A resume (Last-Event-ID) never
// goes to the replica that ran the marked call, so it is served elsewhere.
type roundRobin struct {
	mu       sync.Mutex
	backends []*url.URL
	down     map[int]bool
	next     int
	marked   int // the replica that served the last marked call; -1: none
	killed   chan int
}

func (rr *roundRobin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	cut, kill := bytes.Contains(body, []byte("CUT-ME")), bytes.Contains(body, []byte("KILL-ME"))
	rr.mu.Lock()
	target := -1
	for range rr.backends {
		i := rr.next % len(rr.backends)
		rr.next++
		if !rr.down[i] && !(r.Header.Get("Last-Event-ID") != "" && i == rr.marked && len(rr.backends) > 1) {
			target = i
			break
		}
	}
	if target >= 0 && (cut || kill) {
		rr.marked = target
	}
	rr.mu.Unlock()
	if target < 0 {
		http.Error(w, "no replica", http.StatusBadGateway)
		return
	}
	if kill && rr.killed != nil {
		rr.killed <- target
	}
	p := httputil.NewSingleHostReverseProxy(rr.backends[target])
	p.FlushInterval = -1
	if cut {
		p.Transport = cutTransport{}
		p.ErrorLog = log.New(io.Discard, "", 0)
	}
	p.ServeHTTP(w, r)
}

// cutTransport forwards a request and breaks off its answer 300 ms after
// the first read of it (the priming event of a call's stream), while the
// call still runs: the balancer then drops the client's connection and the
// replica's, as a proxy losing a client would.
type cutTransport struct{}

func (cutTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil {
		resp.Body = &cutBody{ReadCloser: resp.Body}
	}
	return resp, err
}

type cutBody struct {
	io.ReadCloser
	reads int
}

func (c *cutBody) Read(p []byte) (int, error) {
	if c.reads++; c.reads == 1 {
		return c.ReadCloser.Read(p)
	}
	time.Sleep(300 * time.Millisecond)
	return 0, errors.New("the balancer lost the client")
}

func (rr *roundRobin) markDown(i int) {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	rr.down[i] = true
}

// balancedReplicas starts redis-server and three `sandbox serve --http`
// replicas on it (principals agent-a and admin), behind a roundRobin; it
// returns the balancer, the replicas' processes and the balancer's URL.
func balancedReplicas(t *testing.T, mcpServers string) (*roundRobin, []*exec.Cmd, string) {
	t.Helper()
	srv := startSharedRedis(t)
	cfg := writeConfig(t, fmt.Sprintf(`{"mcpServers": %s,
  "gateway": {"redis": {"url": %q, "encryptionKey": "${SANDBOX_REDIS_KEY}"},
    "auth": {"apiKeys": [{"name": "agent-a", "key": "${SANDBOX_TEST_AGENT_KEY}"}, {"name": "admin", "key": %q}]}}}`, mcpServers, srv.URL(), adminKey))
	rr := &roundRobin{down: map[int]bool{}, marked: -1}
	var procs []*exec.Cmd
	for range 3 {
		cmd := exec.Command(sandboxBinary(t), "serve", "-c", cfg, "--http", "127.0.0.1:0", "--log-level", "warn")
		u, _ := url.Parse(startLogged(t, cmd, listening))
		u.Path = "" // the balancer passes the request's path on
		rr.backends = append(rr.backends, u)
		procs = append(procs, cmd)
	}
	lb := httptest.NewServer(rr)
	t.Cleanup(lb.Close)
	return rr, procs, lb.URL
}

// TestSessionMovesBetweenReplicas: a 2025-era client's session, made on
// one replica, is served by every replica behind a round-robin balancer
// (re-established there for the same principal only); when a replica dies
// under a call, the call fails at once instead of hanging, and the session
// goes on on the others.
func TestSessionMovesBetweenReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("starts redis-server and three replicas")
	}
	demo := exampleServerBinary(t)
	rr, procs, lbURL := balancedReplicas(t, fmt.Sprintf(`{"demo": {"command": %q}, "other": {"command": %q}}`, demo, demo))

	c := keyClient(t, lbURL+"/mcp", agentKey) // initialize: replica 1
	call := func(code, want string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		res, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "execute_code", Arguments: map[string]any{"code": code}}})
		if err != nil || !strings.Contains(toolText(res), want) {
			t.Fatalf("%s through the balancer: %v %s", code, err, toolText(res))
		}
	}
	for i := range 6 { // every replica, twice
		call(fmt.Sprintf(`return %d`, i), fmt.Sprintf(`"value":%d`, i))
	}

	// What the session chose on one replica holds on all: narrowed to
	// demo, no replica's snippets may call the other server.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	res, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "gateway__connect_servers", Arguments: map[string]any{"servers": []string{"demo"}}}})
	cancel()
	if err != nil || res.IsError {
		t.Fatalf("connect_servers: %v %s", err, toolText(res))
	}
	for range 3 {
		call(`const p = await demo.listProjects({}); try { await other.listProjects({}); return "other ran" } catch (e) { return [typeof p, e.code] }`, `"value":["object","SERVICE_NOT_FOUND"]`)
	}

	// Another principal naming that session gets nothing, on any replica.
	sid := c.GetSessionId()
	if sid == "" {
		t.Fatal("no session id: not a 2025-era session")
	}
	for _, b := range rr.backends {
		if r := rpc(t, b.String()+"/mcp", adminKey, `{"jsonrpc":"2.0","id":9,"method":"tools/list"}`, "Mcp-Session-Id", sid); r.Status != http.StatusNotFound {
			t.Fatalf("admin with agent-a's session on %s: %d %s", b, r.Status, r.Body)
		}
	}

	// A client that loses a call's stream resumes it on another replica
	// (Last-Event-ID) and gets the call's answer from there.
	ctx, cancel = context.WithCancel(context.Background())
	post, _ := http.NewRequestWithContext(ctx, "POST", rr.backends[0].String()+"/mcp", strings.NewReader(
		`{"jsonrpc":"2.0","id":"slow-1","method":"tools/call","params":{"name":"execute_code","arguments":{"code":"await new Promise(r => setTimeout(r, 1500)); return 'slow done'"}}}`))
	for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"Authorization": "Bearer " + agentKey, "Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"} {
		post.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(post)
	if err != nil {
		t.Fatal(err)
	}
	var primingID string
	for sc := bufio.NewScanner(resp.Body); primingID == "" && sc.Scan(); {
		primingID, _ = strings.CutPrefix(sc.Text(), "id: ")
	}
	cancel() // the client goes away mid-call
	resp.Body.Close()
	if primingID == "" {
		t.Fatal("no priming event on the call's stream")
	}
	get, _ := http.NewRequest("GET", rr.backends[1].String()+"/mcp", nil)
	for k, v := range map[string]string{"Accept": "text/event-stream", "Authorization": "Bearer " + agentKey,
		"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25", "Last-Event-ID": primingID} {
		get.Header.Set(k, v)
	}
	resp, err = http.DefaultClient.Do(get)
	if err != nil {
		t.Fatal(err)
	}
	rest, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(rest), `"id":"slow-1"`) || !strings.Contains(string(rest), "slow done") {
		t.Fatalf("resuming on another replica the stream of a call run on the first: %d %s", resp.StatusCode, rest)
	}

	// A replica dies under a call: the call fails at once.
	rr.mu.Lock()
	victim := rr.next % 3
	rr.mu.Unlock()
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		_, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "execute_code",
			Arguments: map[string]any{"code": `await new Promise(r => setTimeout(r, 20000)); return "late"`}}})
		done <- err
	}()
	time.Sleep(500 * time.Millisecond)
	rr.markDown(victim)
	_ = procs[victim].Process.Kill()
	select {
	case err := <-done:
		// mcp-go's client does not resume a stream that broke off (the
		// official TypeScript client does: TestCallStreamsResumeOnAnotherReplicaWithTheSDKClient).
		if err == nil {
			t.Fatal("the call on the killed replica answered")
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the call on the killed replica hung")
	}
	for i := range 4 {
		call(fmt.Sprintf(`return "after %d"`, i), fmt.Sprintf(`"after %d"`, i))
	}
}

// TestCallStreamsResumeOnAnotherReplicaWithTheSDKClient: the official
// TypeScript SDK client, through a round-robin balancer, on three replicas.
// Its connection breaks in the middle of a call (the balancer cuts it; the
// replica lives on): it resumes the call's stream (GET + Last-Event-ID) on
// another replica and gets the call's answer there. The replica running a
// call is killed: the client resumes on another replica, which answers
// within seconds that the call's outcome is unknown, instead of the call
// hanging.
func TestCallStreamsResumeOnAnotherReplicaWithTheSDKClient(t *testing.T) {
	if testing.Short() {
		t.Skip("starts redis-server, three replicas and the SDK client")
	}
	sdk := testpeers.Package(t, "@modelcontextprotocol/sdk")
	rr, procs, lbURL := balancedReplicas(t, `{}`)
	rr.killed = make(chan int, 1)
	go func() {
		victim, ok := <-rr.killed
		if !ok {
			return
		}
		time.Sleep(500 * time.Millisecond) // the call is under way
		rr.markDown(victim)
		_ = procs[victim].Process.Kill()
	}()
	script := `
const [url, sdk, key] = process.argv.slice(2);
const { Client } = await import(sdk + "/dist/esm/client/index.js");
const { StreamableHTTPClientTransport } = await import(sdk + "/dist/esm/client/streamableHttp.js");
const client = new Client({ name: "resumer", version: "1.0.0" });
await client.connect(new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: "Bearer " + key } },
  reconnectionOptions: { initialReconnectionDelay: 200, maxReconnectionDelay: 1000, reconnectionDelayGrowFactor: 1.5, maxRetries: 3 },
}));
const out = {};
const cut = await client.callTool({ name: "execute_code", arguments: { code: "/* CUT-ME */ await new Promise(r => setTimeout(r, 1500)); return 'after the cut'" } });
out.cut = cut.content[0].text;
const started = Date.now();
try {
  const late = await client.callTool({ name: "execute_code", arguments: { code: "/* KILL-ME */ await new Promise(r => setTimeout(r, 20000)); return 'late'" } }, undefined, { timeout: 60000 });
  out.killed = "answered: " + late.content[0].text;
} catch (e) {
  out.killed = String(e.message);
}
out.killedAfterMs = Date.now() - started;
process.stdout.write(JSON.stringify(out));
process.exit(0);
`
	out := runNodeScript(t, filepath.Join(t.TempDir(), "resume.mjs"), script, lbURL+"/mcp", "file://"+sdk, agentKey)
	var got struct {
		Cut, Killed   string
		KilledAfterMs int
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if !strings.Contains(got.Cut, `"after the cut"`) {
		t.Errorf("the call whose connection broke, resumed on another replica: %s", got.Cut)
	}
	if !strings.Contains(got.Killed, "stopped before") || got.KilledAfterMs > 15000 {
		t.Errorf("the call whose replica was killed, after %d ms: %s", got.KilledAfterMs, got.Killed)
	}
}
