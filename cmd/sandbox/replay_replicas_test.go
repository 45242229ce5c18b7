package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/sandboxrt/sandbox/internal/testpeers"
)

// countedFiles is an upstream shared by every replica, counting the calls
// that reach it: list (slow: it is in flight when the run pauses) and
// remove (behind an approve rule).
func countedFiles(t *testing.T) (upstreamURL string, list, remove *atomic.Int32) {
	list, remove = new(atomic.Int32), new(atomic.Int32)
	s := server.NewMCPServer("files", "1.0.0")
	s.AddTool(mcp.NewTool("list", mcp.WithString("dir")), func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		list.Add(1)
		time.Sleep(200 * time.Millisecond)
		return mcp.NewToolResultText(`["a.txt","b.txt"]`), nil
	})
	s.AddTool(mcp.NewTool("remove", mcp.WithString("name")), func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		remove.Add(1)
		return mcp.NewToolResultText("removed " + r.GetString("name", "")), nil
	})
	srv := httptest.NewServer(server.NewStreamableHTTPServer(s))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp", list, remove
}

// replaySnippet lists, then lists again while it removes (an approval):
// the second list is in flight when the run pauses.
const replaySnippet = `const names = await files.list({dir: "/tmp"})
const [again, removed] = await Promise.all([files.list({dir: "/var"}), files.remove({name: names[0]})])
console.log("removed", removed)
return {removed, again: again.length}`

// TestPausedRunResumesByReplayOnAnotherReplica: three replicas on one
// redis-server behind a round-robin balancer without affinity. The
// TypeScript SDK v2 client (2026-07-28) runs a snippet whose call needs a
// person's approval: the run is released on the replica that started it,
// and the SDK's retry with the answer, which the balancer sends to
// another replica, resumes it there by replay: the upstream sees each call
// once. Over raw HTTP: a retry without the answer is asked again, two
// copies of the same retry sent at once to two replicas resume the run
// once (the other is refused), and a tampered state or another
// principal's retry resumes nothing.
func TestPausedRunResumesByReplayOnAnotherReplica(t *testing.T) {
	if testing.Short() {
		t.Skip("starts redis-server, three replicas and the SDK client")
	}
	client := testpeers.Package(t, "client-v2")
	upstream, list, remove := countedFiles(t)
	srv := startSharedRedis(t)
	cfg := writeConfig(t, fmt.Sprintf(`{"mcpServers": {"files": {"url": %q}},
  "gateway": {"redis": {"url": %q, "encryptionKey": "${SANDBOX_REDIS_KEY}", "keyPrefix": "replay:"},
    "policy": {"rules": [{"tools": "files:remove", "action": "approve"}], "approvalTimeout": "30s"},
    "auth": {"apiKeys": [{"name": "agent-a", "key": "${SANDBOX_TEST_AGENT_KEY}"}, {"name": "agent-b", "key": %q}]}}}`,
		upstream, srv.URL(), otherAgentKey))
	rr := &roundRobin{down: map[int]bool{}, marked: -1}
	var direct []string
	for range 3 {
		cmd := exec.Command(sandboxBinary(t), "serve", "-c", cfg, "--http", "127.0.0.1:0", "--log-level", "warn")
		mcpURL := startLogged(t, cmd, listening)
		direct = append(direct, mcpURL)
		u, _ := url.Parse(mcpURL)
		u.Path = ""
		rr.backends = append(rr.backends, u)
	}
	lb := httptest.NewServer(rr)
	t.Cleanup(lb.Close)

	script := `
const [url, pkg, key, code] = process.argv.slice(2);
const { Client, StreamableHTTPClientTransport } = await import(pkg + "/dist/index.mjs");
const client = new Client({ name: "approver", version: "1.0.0" }, { capabilities: { elicitation: {} }, versionNegotiation: { mode: { pin: "2026-07-28" } } });
const asked = [];
client.setRequestHandler("elicitation/create", async (req) => { asked.push(req.params.message); return { action: "accept", content: { decision: "approve" } }; });
await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: "Bearer " + key } } }));
const r = await client.callTool({ name: "execute_code", arguments: { code } });
process.stdout.write(JSON.stringify({ result: JSON.parse(r.content.map((c) => c.text).join("")), asked }));
await client.close();
`
	out := runNodeScript(t, filepath.Join(t.TempDir(), "approver.mjs"), script, lb.URL+"/mcp", "file://"+client, agentKey, replaySnippet)
	var got struct {
		Result struct {
			Value json.RawMessage
			Logs  []string
			Error any
		}
		Asked []string
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if !strings.Contains(string(got.Result.Value), `"removed":"removed a.txt"`) || len(got.Asked) != 1 || !strings.Contains(got.Asked[0], "a.txt") {
		t.Fatalf("the SDK client's approved snippet: %s", out)
	}
	if len(got.Result.Logs) != 1 {
		t.Errorf("the resumed run's console: %+v", got.Result.Logs)
	}
	if list.Load() != 2 || remove.Load() != 1 {
		t.Fatalf("the upstream saw list %d, remove %d times; want 2 and 1", list.Load(), remove.Load())
	}

	// Raw HTTP: paused on replica 0, two copies of the answer at once to
	// replicas 1 and 2.
	args := map[string]any{"code": replaySnippet}
	first := postModernCall(t, direct[0], agentKey, "execute_code", args, nil, "")
	state, _ := first.Result["requestState"].(string)
	reqs, _ := first.Result["inputRequests"].(map[string]any)
	if first.Result["resultType"] != "input_required" || len(reqs) != 1 {
		t.Fatalf("execute_code did not pause: %+v", first)
	}
	var key string
	for k := range reqs {
		key = k
	}
	approve := map[string]any{key: map[string]any{"action": "accept", "content": map[string]any{"decision": "approve"}}}
	// A retry without the answer (on another replica) is asked again.
	again := postModernCall(t, direct[2], agentKey, "execute_code", args, nil, state)
	if asked, _ := again.Result["inputRequests"].(map[string]any); again.Result["resultType"] != "input_required" || asked[key] == nil {
		t.Fatalf("a retry without the answer: %+v", again)
	}
	tampered := []byte(state)
	tampered[len(tampered)/2] ^= 0x04
	if r := postModernCall(t, direct[1], agentKey, "execute_code", args, approve, string(tampered)); r.Status != 400 || r.Error == nil || r.Error.Code != -32602 {
		t.Errorf("a tampered state: HTTP %d %+v", r.Status, r)
	}
	if r := postModernCall(t, direct[1], otherAgentKey, "execute_code", args, approve, state); r.Status != 400 || r.Error == nil {
		t.Errorf("another principal's retry: HTTP %d %+v", r.Status, r)
	}
	var wg sync.WaitGroup
	answers := make([]modernAnswer, 2)
	for i := range answers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			answers[i] = postModernCall(t, direct[1+i], agentKey, "execute_code", args, approve, state)
		}()
	}
	wg.Wait()
	ran, refused := 0, 0
	for _, a := range answers {
		content, _ := a.Result["content"].([]any)
		switch {
		case a.Error == nil && len(content) == 1 && strings.Contains(fmt.Sprint(content[0]), "removed a.txt"):
			ran++
		case a.Error != nil && a.Status == 400:
			refused++
		}
	}
	if ran != 1 || refused != 1 {
		t.Errorf("two copies of one retry at once: %+v", answers)
	}
	if list.Load() != 4 || remove.Load() != 2 {
		t.Errorf("the upstream saw list %d, remove %d times; want 4 and 2", list.Load(), remove.Load())
	}
}

// TestReleasedRunsAreCappedPerPrincipal: one principal's snippets paused
// for approvals are released and kept, 16 at most (frontend.MaxPausedRuns):
// the next is refused with a tool error saying why, while another
// principal's still pauses; and none of them holds a worker (serve runs
// with two).
func TestReleasedRunsAreCappedPerPrincipal(t *testing.T) {
	if testing.Short() {
		t.Skip("starts sandbox serve")
	}
	upstream, list, remove := countedFiles(t)
	url := serveHTTP(t, fmt.Sprintf(`{"mcpServers": {"files": {"url": %q}},
  "codeMode": {"workers": 2},
  "gateway": {"policy": {"rules": [{"tools": "files:remove", "action": "approve"}]},
    "auth": {"apiKeys": [{"name": "agent-a", "key": %q}, {"name": "agent-b", "key": %q}]}}}`, upstream, agentKey, otherAgentKey))
	pause := func(key string, n int) modernAnswer {
		code := fmt.Sprintf(`return await files.remove({name: "f%d"})`, n)
		return postModernCall(t, url, key, "execute_code", map[string]any{"code": code}, nil, "")
	}
	for i := range 16 {
		if r := pause(agentKey, i); r.Result["resultType"] != "input_required" {
			t.Fatalf("paused run %d: %+v", i, r)
		}
	}
	over := pause(agentKey, 99)
	content, _ := over.Result["content"].([]any)
	if over.Result["isError"] != true || len(content) != 1 || !strings.Contains(fmt.Sprint(content[0]), "paused already, waiting for your answers, are as many (16)") {
		t.Errorf("the 17th paused run: %+v", over)
	}
	if r := pause(otherAgentKey, 0); r.Result["resultType"] != "input_required" {
		t.Errorf("another principal's paused run: %+v", r)
	}
	// Two workers, 17 paused runs: none holds one.
	if r := postModernCall(t, url, agentKey, "execute_code", map[string]any{"code": `return await files.list({})`}, nil, ""); r.Result["isError"] == true || r.Result["resultType"] == "input_required" {
		t.Errorf("a run beside the paused ones: %+v", r)
	}
	if remove.Load() != 0 || list.Load() != 1 {
		t.Errorf("the upstream saw list %d, remove %d times; want 1 and 0", list.Load(), remove.Load())
	}
}
