package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/sandboxrt/sandbox/internal/testwait"
)

// The hostile-client suite: every attack the serve-security review ran
// against `sandbox serve --http`, each a subtest named after it, through the
// real binary on loopback with API keys, in front of an upstream that records
// everything it receives (so "reached the upstream" is checked where it
// would happen, not inferred from the gateway's answer).
//
// Attacks covered elsewhere through a real server, not repeated here:
//   - OAuth JWTs (valid, expired, wrong audience/issuer, bad signature, rotated
//     key) from a real oidc-provider: auth/authserver_test.go.
//   - A scoped key on tools/list, execute_code and search_tools, and /metrics
//     per principal: TestServeAuthenticatesAndScopesPrincipals.
//   - Non-loopback without auth refuses to start: TestServeRefusesOpenExposure.
//   - DNS rebinding (Host/Origin): TestServeMetricsAndRebinding.
//   - Path-check bypasses at the checker itself, fuzzed and against Node:
//     gateway/paths_test.go, FuzzCheckPaths, TestCheckPathsAgreesWithNode.
//   - VM escapes and resource bombs: runtime/hostile_test.go.
//   - Bodies built to be read one way by the front end and another by
//     mcp-go (duplicate or case-variant params/arguments), fuzzed:
//     gateway/frontend FuzzSplitArguments.

const (
	aliceKey = "alice-secret-0123456789abcdef000"
	bobKey   = "bob-secret-0123456789abcdef00000"
)

// recorder is an upstream MCP server over streamable HTTP that records every
// tools/call it is sent and every Authorization header it sees.
type recorder struct {
	mu    sync.Mutex
	calls []string // "tool args-json"
	auths []string // "method authorization"
}

func (r *recorder) called(substr string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, c := range r.calls {
		if strings.Contains(c, substr) {
			out = append(out, c)
		}
	}
	return out
}

func (r *recorder) sawAuth(substr string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, a := range r.auths {
		if strings.Contains(a, substr) {
			out = append(out, a)
		}
	}
	return out
}

func startRecorder(t *testing.T) (*recorder, string) {
	t.Helper()
	rec := &recorder{}
	s := server.NewMCPServer("recorder", "1.0.0")
	record := func(ctx context.Context, req mcp.CallToolRequest) {
		args, _ := json.Marshal(req.GetArguments())
		rec.mu.Lock()
		rec.calls = append(rec.calls, req.Params.Name+" "+string(args))
		rec.mu.Unlock()
	}
	s.AddTool(mcp.NewTool("read_file", mcp.WithDescription("Read a file under /srv/data."),
		mcp.WithString("path", mcp.Required(), mcp.Description("the file's path"))),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			record(ctx, req)
			return mcp.NewToolResultText("read " + req.GetString("path", "")), nil
		})
	s.AddTool(mcp.NewTool("whoami", mcp.WithDescription("Say which bearer token the call carried.")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			record(ctx, req)
			auth, _ := ctx.Value(authKey{}).(string)
			return mcp.NewToolResultText("auth=" + auth), nil
		})
	inner := server.NewStreamableHTTPServer(s, server.WithStateful(true),
		server.WithHTTPContextFunc(func(ctx context.Context, r *http.Request) context.Context {
			return context.WithValue(ctx, authKey{}, r.Header.Get("Authorization"))
		}))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var msg struct {
			Method string `json:"method"`
		}
		_ = json.Unmarshal(body, &msg)
		rec.mu.Lock()
		rec.auths = append(rec.auths, r.Method+" "+msg.Method+" "+r.Header.Get("Authorization"))
		rec.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return rec, srv.URL + "/mcp"
}

type authKey struct{}

// hostileServe starts sandbox serve with alice (scoped to "files") and bob
// (every server), small code-mode ceilings and a queue of one.
func hostileServe(t *testing.T) (url string, files, other *recorder) {
	t.Helper()
	files, filesURL := startRecorder(t)
	other, otherURL := startRecorder(t)
	t.Setenv("SANDBOX_TEST_OPERATOR_TOKEN", "OPERATOR")
	config := fmt.Sprintf(`{"mcpServers": {
  "files": {"url": %q, "sessionToken": true, "pathRoots": ["/srv/data"]},
  "other": {"url": %q},
  "leaky": {"command": "sh", "args": ["-c", "echo 'connecting with password=hunter2' >&2; exit 3"]}},
 "gateway": {"restartBackoff": "50ms", "auth": {"apiKeys": [
   {"name": "alice", "key": %q, "servers": ["files"]},
   {"name": "bob", "key": %q}]}},
 "codeMode": {"workers": 2, "maxQueue": 1, "perSessionWorkers": 1,
   "limits": {"timeout": "5s", "memoryMB": 64, "toolCalls": 20, "outputKB": 64, "resultKB": 64}}}`,
		filesURL, otherURL, aliceKey, bobKey)
	url = serveHTTP(t, config, "--token-env", "files=SANDBOX_TEST_OPERATOR_TOKEN", "--expose", "all")
	return url, files, other
}

// rpcResult is one JSON-RPC answer read off a POST (JSON or SSE).
type rpcResult struct {
	Status  int
	Header  http.Header
	Body    string
	Result  json.RawMessage
	Error   *struct{ Message string }
	Session string
}

// rpc posts one JSON-RPC request with the key and header pairs.
func rpc(t *testing.T, url, key, body string, header ...string) rpcResult {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		// Not t.Fatal: the load test calls this from its client goroutines.
		return rpcResult{Body: err.Error()}
	}
	defer resp.Body.Close()
	out := rpcResult{Status: resp.StatusCode, Header: resp.Header, Session: resp.Header.Get("Mcp-Session-Id")}
	raw, _ := io.ReadAll(resp.Body)
	out.Body = string(raw)
	parse := func(b []byte) {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct{ Message string }
		}
		if json.Unmarshal(b, &m) == nil && len(m.ID) > 0 {
			out.Result, out.Error = m.Result, m.Error
		}
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(bytes.NewReader(raw))
		sc.Buffer(make([]byte, 1<<20), 8<<20)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				parse([]byte(data))
			}
		}
	} else {
		parse(raw)
	}
	return out
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"hostile","version":"1"}}}`

// session opens a 2025-11-25 session for key and returns its id.
func session(t *testing.T, url, key string, header ...string) string {
	t.Helper()
	r := rpc(t, url, key, initBody)
	if r.Status != http.StatusOK || r.Session == "" {
		t.Fatalf("initialize: %d %s", r.Status, r.Body)
	}
	// Token headers count on requests of an open session (an initialize
	// has none yet), so they go with the notification.
	rpc(t, url, key, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, append([]string{"Mcp-Session-Id", r.Session}, header...)...)
	return r.Session
}

// callTool calls a tool on a session ("" for a stateless 2026-07-28 request)
// and returns the result's text and whether it is an error result.
func callTool(t *testing.T, url, key, sid, tool string, args any, header ...string) (string, bool) {
	t.Helper()
	params := map[string]any{"name": tool, "arguments": args}
	if sid != "" {
		header = append(header, "Mcp-Session-Id", sid)
	} else {
		header = append(header, "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", tool)
		params["_meta"] = map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28",
			"io.modelcontextprotocol/clientCapabilities": map[string]any{},
			"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "hostile", "version": "1"}}
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params})
	r := rpc(t, url, key, string(b), header...)
	if r.Error != nil {
		return "rpc error: " + r.Error.Message, true
	}
	if r.Status != http.StatusOK || r.Result == nil {
		return fmt.Sprintf("HTTP %d: %s", r.Status, r.Body), true
	}
	var res struct {
		Content []struct{ Text string }
		IsError bool
	}
	if err := json.Unmarshal(r.Result, &res); err != nil {
		t.Fatalf("tools/call result: %v: %s", err, r.Result)
	}
	var text []string
	for _, c := range res.Content {
		text = append(text, c.Text)
	}
	return strings.Join(text, "\n"), res.IsError
}

func TestHostileClients(t *testing.T) {
	if testing.Short() {
		t.Skip("starts sandbox serve")
	}
	url, files, other := hostileServe(t)
	alice := session(t, url, aliceKey, "Sandbox-Token-files", "ALICE")
	bob := session(t, url, bobKey, "Sandbox-Token-files", "BOB")

	t.Run("no credential or a wrong one gets 401 and nothing is processed", func(t *testing.T) {
		before := len(files.called(""))
		for _, key := range []string{"", "not-a-key-of-ours-000000000000", aliceKey + "x"} {
			r := rpc(t, url, key, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"files__read_file","arguments":{"path":"/srv/data/a"}}}`,
				"MCP-Protocol-Version", "2026-07-28", "Sandbox-Token-files", "ATTACKER")
			// With API keys only there is no authorization server to point
			// at; with OAuth the challenge carries resource_metadata
			// (auth/authserver_test.go checks it against oidc-provider).
			if r.Status != http.StatusUnauthorized || !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), "Bearer") {
				t.Fatalf("key %.6q: %d %q", key, r.Status, r.Header.Get("WWW-Authenticate"))
			}
		}
		if n := len(files.called("")); n != before {
			t.Fatalf("an unauthenticated call reached the upstream (%d calls)", n-before)
		}
	})

	t.Run("limits far over the ceilings are clamped and the server lives", func(t *testing.T) {
		text, isErr := callTool(t, url, bobKey, bob, "execute_code", map[string]any{
			"code":   `let s = "x".repeat(1 << 16); for (let i = 0; i < 200000; i++) console.log(s); return 1`,
			"limits": map[string]any{"outputKB": 100000000, "timeoutMs": 120000, "memoryMB": 100000, "toolCalls": 20000},
		})
		var rep struct {
			Logs          []string
			LogsTruncated bool
			Limits        *struct {
				Clamped []string
			}
		}
		if err := json.Unmarshal([]byte(text), &rep); err != nil {
			t.Fatalf("execute_code: %v: %.300s", err, text)
		}
		// 12.8 GB of logs asked for, 64 KiB kept: the run ends, its logs cut.
		kept := 0
		for _, l := range rep.Logs {
			kept += len(l)
		}
		if isErr || !rep.LogsTruncated || kept > 64<<10+256 || rep.Limits == nil || len(rep.Limits.Clamped) != 4 {
			t.Fatalf("a log bomb with limits over the ceiling (%d bytes of logs kept): %.300s ... %.300s", kept, text, text[max(0, len(text)-300):])
		}
		// Still serving, the same session included.
		if text, isErr := callTool(t, url, bobKey, bob, "execute_code", map[string]any{"code": "return 6*7"}); isErr || !strings.Contains(text, `"value":42`) {
			t.Fatalf("after the bomb: %s", text)
		}
		text, _ = callTool(t, url, bobKey, bob, "execute_code", map[string]any{
			"code":   `for (let i = 0; i < 30; i++) await files.whoami({}); return 1`,
			"limits": map[string]any{"toolCalls": 20000},
		})
		if !strings.Contains(text, "TOOL_CALL_LIMIT") && !strings.Contains(strings.ToLower(text), "tool call") {
			t.Fatalf("toolCalls over the ceiling ran: %.400s", text)
		}
	})

	t.Run("a misspelt argument is refused by name, in both eras", func(t *testing.T) {
		// The front end hands execute_code's arguments past mcp-go
		// (gateway/frontend/arguments.go); code mode's strict decode must
		// still see every one of them.
		for _, sid := range []string{bob, ""} {
			text, isErr := callTool(t, url, bobKey, sid, "execute_code", map[string]any{"code": "return 1", "inent": "x"})
			if !isErr || !strings.Contains(text, `unknown field "inent"`) {
				t.Fatalf("session %q: a misspelt argument: %.300s", sid, text)
			}
		}
	})

	t.Run("forged session ids plant no upstream token", func(t *testing.T) {
		for _, forged := range []string{"stateless", "default", "stdio", "operator", "", bob} {
			rpc(t, url, aliceKey, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "Mcp-Session-Id", forged, "Sandbox-Token-files", "ATTACKER")
		}
		// A later stateless client, the operator's health checks and bob's
		// session never carry the planted token.
		if text, _ := callTool(t, url, bobKey, "", "files__whoami", map[string]any{}); strings.Contains(text, "ATTACKER") {
			t.Fatalf("a stateless call carried a planted token: %s", text)
		}
		if text, _ := callTool(t, url, bobKey, bob, "files__whoami", map[string]any{}); strings.Contains(text, "ATTACKER") {
			t.Fatalf("bob's session carried alice's planted token: %s", text)
		}
		if seen := files.sawAuth("ATTACKER"); len(seen) > 0 {
			t.Fatalf("the upstream saw the planted token: %q", seen)
		}
		// The operator's token still serves connection-level requests.
		if len(files.sawAuth("Bearer OPERATOR")) == 0 {
			t.Fatal("the operator's token was not used for the connection")
		}
	})

	t.Run("a stateless request's token serves that request only", func(t *testing.T) {
		// The upstream sees the token; the echo of it comes back redacted.
		text, isErr := callTool(t, url, aliceKey, "", "files__whoami", map[string]any{}, "Sandbox-Token-files", "alice-own")
		seen := len(files.sawAuth("Bearer alice-own"))
		if isErr || text != "auth=Bearer [redacted]" || seen == 0 {
			t.Fatalf("with its own token: %s (the upstream saw it %d times)", text, seen)
		}
		callTool(t, url, aliceKey, "", "files__whoami", map[string]any{})
		if again := len(files.sawAuth("Bearer alice-own")); again != seen {
			t.Fatalf("the next stateless request reused it (%d uses, then %d)", seen, again)
		}
	})

	t.Run("oversized or too many token headers are refused", func(t *testing.T) {
		r := rpc(t, url, aliceKey, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "Mcp-Session-Id", alice, "Sandbox-Token-files", strings.Repeat("t", 40<<10))
		if r.Status != http.StatusBadRequest || !strings.Contains(r.Body, "Sandbox-Token") {
			t.Fatalf("a 40 KB token: %d %s", r.Status, r.Body)
		}
		r = rpc(t, url, aliceKey, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "Mcp-Session-Id", alice, "Sandbox-Token-nosuchserver", "x")
		if r.Status != http.StatusBadRequest {
			t.Fatalf("a token for a server that takes none: %d %s", r.Status, r.Body)
		}
	})

	t.Run("principals cannot reach each other's sessions", func(t *testing.T) {
		// Alice knows bob's session id: every use of it is a 404, and her
		// token header is not stored on it.
		r := rpc(t, url, aliceKey, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "Mcp-Session-Id", bob, "Sandbox-Token-files", "ALICE-ON-BOB")
		if r.Status != http.StatusNotFound {
			t.Fatalf("alice on bob's session: %d %.200s", r.Status, r.Body)
		}
		req, _ := http.NewRequest("DELETE", url, nil)
		req.Header.Set("Authorization", "Bearer "+aliceKey)
		req.Header.Set("Mcp-Session-Id", bob)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Fatalf("alice deleting bob's session: %d", resp.StatusCode)
		}
		if text, _ := callTool(t, url, bobKey, bob, "files__whoami", map[string]any{}); text != "auth=Bearer BOB" {
			t.Fatalf("bob's session after alice's attempts: %s", text)
		}
	})

	t.Run("a scoped principal is refused other servers everywhere", func(t *testing.T) {
		// A direct call of a tool outside the scope is answered as for a
		// tool that does not exist, as tools/list hides it (mcp-go checks
		// its tool filter on calls too).
		if text, isErr := callTool(t, url, aliceKey, alice, "other__read_file", map[string]any{"path": "/srv/data/a"}); !isErr || !strings.Contains(text, "not found") {
			t.Fatalf("tools/call: %s", text)
		}
		if text, isErr := callTool(t, url, aliceKey, alice, "gateway__connect_servers", map[string]any{"servers": []string{"other"}}); !isErr || !strings.Contains(text, "[files]") {
			t.Fatalf("connecting a server outside the scope: %s", text)
		}
		// In code mode a server outside the scope is no namespace at all:
		// the same UNKNOWN_TOOL as for a server that does not exist.
		text, _ := callTool(t, url, aliceKey, alice, "execute_code", map[string]any{"code": `return await other.readFile({path: "/srv/data/a"})`})
		unknown, _ := callTool(t, url, aliceKey, alice, "execute_code", map[string]any{"code": `return await nosuch.readFile({path: "/srv/data/a"})`})
		message := func(text string) string {
			var r struct {
				Error struct{ Code, Message string }
			}
			_ = json.Unmarshal([]byte(text), &r)
			return r.Error.Code + ": " + r.Error.Message
		}
		if got, want := message(text), strings.ReplaceAll(message(unknown), "nosuch", "other"); !strings.HasPrefix(got, "UNKNOWN_TOOL") || got != want {
			t.Fatalf("execute_code on a forbidden server: %q\nvs an unknown one: %q", got, want)
		}
		text, _ = callTool(t, url, aliceKey, alice, "search_tools", map[string]any{"intent": "read a file", "k": 50})
		if strings.Contains(text, "other.") || strings.Contains(text, "other:") {
			t.Fatalf("search_tools shows other: %.300s", text)
		}
		r := rpc(t, url, aliceKey, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "Mcp-Session-Id", alice)
		if strings.Contains(string(r.Result), "other__") || !strings.Contains(string(r.Result), "files__read_file") {
			t.Fatalf("tools/list: %.300s", r.Result)
		}
		if len(other.called("")) != 0 {
			t.Fatalf("alice reached other: %q", other.called(""))
		}
	})

	t.Run("path bypasses never reach the upstream", func(t *testing.T) {
		attacks := map[string]string{
			"over 4096 chars":   "/etc/" + strings.Repeat("./", 2100) + "passwd",
			"line feed":         "/srv/data/../../etc/passwd\n",
			"carriage return":   "/srv/data/\r../../etc/passwd",
			"NUL":               "/srv/data/a\x00/../../../etc/passwd",
			"FILE scheme":       "FILE:///etc/passwd",
			"two-dot leader":    "/srv/data/‥/‥/etc/passwd",
			"ellipsis":          "/srv/data/…/etc/passwd",
			"vertical ellipsis": "/srv/data/︙/etc/passwd",
			"entity with zeros": "/srv/data/&#046;&#046;/&#046;&#046;/etc/passwd",
			"entity without ;":  "/srv/data/&#46&#46/&#46&#46/etc/passwd",
		}
		for name, path := range attacks {
			if text, isErr := callTool(t, url, aliceKey, alice, "files__read_file", map[string]any{"path": path}); !isErr || !strings.Contains(text, "PATH_TRAVERSAL") {
				t.Errorf("%s, direct: %.200s", name, text)
			}
			code := fmt.Sprintf("try { await files.readFile({path: %s}); return 'reached' } catch (e) { return e.code }", mustJSON(path))
			if text, _ := callTool(t, url, aliceKey, alice, "execute_code", map[string]any{"code": code}); !strings.Contains(text, "PATH_TRAVERSAL") {
				t.Errorf("%s, from execute_code: %.200s", name, text)
			}
		}
		// Bytes JSON encoders would not produce: raw overlong UTF-8 and a
		// duplicate key, sent as written.
		for name, args := range map[string]string{
			"overlong UTF-8": "{\"path\":\"/srv/data/\xc0\xae\xc0\xae/\xc0\xae\xc0\xae/etc/passwd\"}",
			"duplicate keys": `{"path":"../../x","path":"/srv/data/ok"}`,
		} {
			r := rpc(t, url, aliceKey, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"files__read_file","arguments":`+args+`}}`, "Mcp-Session-Id", alice)
			if strings.Contains(r.Body, "read ") || (!strings.Contains(r.Body, "VALIDATION_FAILED") && !strings.Contains(r.Body, "PATH_TRAVERSAL") && r.Status == http.StatusOK && r.Error == nil) {
				t.Errorf("%s: %d %.300s", name, r.Status, r.Body)
			}
		}
		if reached := files.called("passwd"); len(reached) > 0 {
			t.Fatalf("reached the upstream: %q", reached)
		}
		if reached := files.called("../"); len(reached) > 0 {
			t.Fatalf("reached the upstream: %q", reached)
		}
		// The check is not a wall: a path inside the roots goes through.
		if text, isErr := callTool(t, url, aliceKey, alice, "files__read_file", map[string]any{"path": "/srv/data/notes.txt"}); isErr || text != "read /srv/data/notes.txt" {
			t.Fatalf("a good path: %s", text)
		}
	})

	t.Run("a session's narrowing holds in code mode", func(t *testing.T) {
		s := session(t, url, bobKey)
		if text, isErr := callTool(t, url, bobKey, s, "gateway__disconnect_servers", map[string]any{"servers": []string{"other"}}); isErr {
			t.Fatalf("disconnect: %s", text)
		}
		before := len(other.called(""))
		text, _ := callTool(t, url, bobKey, s, "execute_code", map[string]any{"code": `return await other.readFile({path: "/srv/data/a"})`})
		if len(other.called("")) != before {
			t.Fatalf("execute_code reached a disconnected server: %.300s", text)
		}
		text, _ = callTool(t, url, bobKey, s, "search_tools", map[string]any{"intent": "read a file", "k": 50})
		if strings.Contains(text, "other.") {
			t.Fatalf("search_tools shows a disconnected server: %.300s", text)
		}
	})

	t.Run("upstream stderr never reaches an agent", func(t *testing.T) {
		// Once leaky has failed, its stderr is in the operator's log.
		var text string
		testwait.Until(t, 30*time.Second, "leaky to fail", func() bool {
			text, _ = callTool(t, url, bobKey, bob, "gateway__list_servers", map[string]any{})
			return strings.Contains(text, `{"name":"leaky","transport":"stdio","state":"failed"`)
		})
		if !strings.Contains(text, "leaky") {
			t.Fatalf("list_servers lacks the failing server: %.300s", text)
		}
		if strings.Contains(text, "hunter2") {
			t.Fatalf("list_servers shows the upstream's stderr: %.500s", text)
		}
		text, _ = callTool(t, url, bobKey, bob, "execute_code", map[string]any{"code": `return await leaky.anything({})`})
		if strings.Contains(text, "hunter2") {
			t.Fatalf("execute_code shows the upstream's stderr: %.500s", text)
		}
	})

	t.Run("code that closes the snippet's wrapper is a compile error", func(t *testing.T) {
		text, _ := callTool(t, url, bobKey, bob, "execute_code", map[string]any{"code": "return 1\n})(); 5; (() => {"})
		if !strings.Contains(text, `"kind":"compile"`) {
			t.Fatalf("%.300s", text)
		}
	})

	t.Run("bodies over the cap are refused before they are held", func(t *testing.T) {
		big := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", 17<<20) + `"}}`
		r := rpc(t, url, aliceKey, big, "Mcp-Session-Id", alice)
		if r.Status != http.StatusRequestEntityTooLarge && r.Status != http.StatusServiceUnavailable {
			t.Fatalf("a 17 MiB body: %d %.200s", r.Status, r.Body)
		}
	})

	t.Run("past the queue execute_code is BUSY at once, and another session still gets a worker", func(t *testing.T) {
		// Two workers and a queue of one: bob's three slow snippets take both
		// workers and the queue, so his fourth is BUSY at once. Another
		// session's run then displaces bob's waiting one (he holds more than
		// his share while others wait) and runs when a worker frees.
		slow := map[string]any{"code": `await new Promise(r => setTimeout(r, 2000)); return "slow"`}
		results := make(chan string, 4)
		for range 4 {
			go func() {
				text, _ := callTool(t, url, bobKey, bob, "execute_code", slow)
				results <- text
			}()
		}
		var got []string
		text := <-results // the first answer is the one past the queue
		got = append(got, text)
		if !strings.HasPrefix(text, "BUSY") || !strings.Contains(text, "again in about") {
			t.Fatalf("bob past the queue: %.300s", text)
		}
		defer func() {
			for len(got) < 4 {
				got = append(got, <-results)
			}
			busy := 0
			for _, r := range got {
				if strings.HasPrefix(r, "BUSY") {
					busy++
				}
			}
			if busy != 2 { // one past the queue, one displaced by the other session
				t.Errorf("bob's answers: %q", got)
			}
		}()
		other := session(t, url, bobKey)
		text, isErr := callTool(t, url, bobKey, other, "execute_code", map[string]any{"code": "return 'other'"})
		if isErr || !strings.Contains(text, `"value":"other"`) {
			t.Fatalf("another session while bob holds every worker and the queue: %.300s", text)
		}
	})
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
