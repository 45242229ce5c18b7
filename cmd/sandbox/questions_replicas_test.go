package main

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// TestReplicasRunAnApprovalOnce: an approval answered by input_required
// runs its call once in a deployment. Two replicas on one Redis, one
// upstream over HTTP that counts the calls it runs: the first round of a
// call on replica A asks for approval; the approved retry, one
// requestState, is then sent to both replicas at once, and again to each:
// the upstream runs the call once, and every other copy is DENIED saying
// the approval was used. Without the shared ledger each replica would run
// it (its ledger was per process).
func TestReplicasRunAnApprovalOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("starts sandbox serve twice and redis-server")
	}
	var runs atomic.Int32
	s := server.NewMCPServer("counted", "1")
	s.AddTool(mcp.NewTool("drop_table", mcp.WithDescription("Drop a table for good."), mcp.WithString("table", mcp.Required())),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(fmt.Sprintf("dropped (run %d)", runs.Add(1))), nil
		})
	upstream := httptest.NewServer(server.NewStreamableHTTPServer(s, server.WithStateLess(true)))
	t.Cleanup(upstream.Close)

	srv := startSharedRedis(t)
	cfg := fmt.Sprintf(`{"mcpServers": {"counted": {"url": %q}},
  "gateway": {"redis": {"url": %q, "encryptionKey": "${SANDBOX_REDIS_KEY}", "keyPrefix": "questions:"},
    "auth": {"apiKeys": [{"name": "agent-a", "key": "${SANDBOX_TEST_AGENT_KEY}"}]},
    "policy": {"rules": [{"tools": "counted:drop_*", "action": "approve"}]}}}`, upstream.URL+"/mcp", srv.URL())
	a, b := serveHTTP(t, cfg, "--expose", "all"), serveHTTP(t, cfg, "--expose", "all")

	args := map[string]any{"table": "users"}
	first := postModernCall(t, a, agentKey, "counted__drop_table", args, nil, "")
	state, _ := first.Result["requestState"].(string)
	if first.Result["resultType"] != "input_required" || state == "" {
		t.Fatalf("the first round did not ask for approval: %+v", first)
	}
	approve := map[string]any{"sandbox_approval": map[string]any{"action": "accept", "content": map[string]any{"decision": "approve"}}}
	var (
		mu      sync.Mutex
		answers []modernAnswer
		wg      sync.WaitGroup
	)
	for _, replica := range []string{a, b, a, b} {
		wg.Go(func() {
			r := postModernCall(t, replica, agentKey, "counted__drop_table", args, approve, state)
			mu.Lock()
			defer mu.Unlock()
			answers = append(answers, r)
		})
	}
	wg.Wait()
	answers = append(answers, postModernCall(t, a, agentKey, "counted__drop_table", args, approve, state),
		postModernCall(t, b, agentKey, "counted__drop_table", args, approve, state))
	if n := runs.Load(); n != 1 {
		t.Fatalf("one approval ran the call %d times at the upstream; answers: %+v", n, answers)
	}
	ran, used := 0, 0
	for _, r := range answers {
		text := fmt.Sprint(r.Result["content"])
		switch {
		case r.Error == nil && r.Result["isError"] != true && strings.Contains(text, "dropped (run 1)"):
			ran++
		case r.Result["isError"] == true && strings.Contains(text, "DENIED") && strings.Contains(text, "answered already"):
			used++
		default:
			t.Errorf("an answer neither ran nor was denied as used: %+v", r)
		}
	}
	if ran != 1 || used != len(answers)-1 {
		t.Errorf("%d answers ran the call and %d were denied as used, of %d", ran, used, len(answers))
	}
}
