package frontend

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/server"

	"github.com/sandboxrt/sandbox/runs"
)

// initSession opens a 2025-11-25 session as principal with the given
// client capabilities and returns its id.
func (fx *taskFixture) initSession(t *testing.T, principal, capabilities string) string {
	t.Helper()
	status, h, resp := rawPost(t, fx.url, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":`+capabilities+`,"clientInfo":{"name":"t","version":"1"}}}`,
		"X-Test-Principal", principal)
	id := h.Get(server.HeaderKeySessionID)
	if status != http.StatusOK || id == "" {
		t.Fatalf("initialize: %d %s", status, resp)
	}
	rawPost(t, fx.url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, "X-Test-Principal", principal, server.HeaderKeySessionID, id, "Mcp-Protocol-Version", "2025-11-25")
	return id
}

// sessionRPC posts a request of a 2025 session and decodes its answer.
func (fx *taskFixture) sessionRPC(t *testing.T, principal, session, method, params string) (int, map[string]any) {
	t.Helper()
	status, _, resp := rawPost(t, fx.url, fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":%q,"params":%s}`, method, params),
		"X-Test-Principal", principal, server.HeaderKeySessionID, session, "Mcp-Protocol-Version", "2025-11-25")
	for _, line := range strings.Split(resp, "\n") { // an SSE answer: its last data line
		if d, ok := strings.CutPrefix(line, "data: "); ok && strings.TrimSpace(d) != "" {
			resp = d
		}
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(strings.TrimSpace(resp)), &m); err != nil {
		t.Fatalf("%s: %d %q", method, status, resp)
	}
	return status, m
}

// TestSessionDeclaresTasksAtInitialize: a 2025 session that declared the
// tasks extension at initialize gets a task for a tools/call that asks for
// one (params.task) without declaring it again in _meta, and its
// tasks/get is served; a call without the hint answers as ever, and a
// session that did not declare the extension gets no task and -32021 on
// tasks/get.
func TestSessionDeclaresTasksAtInitialize(t *testing.T) {
	t.Parallel()
	fx := newTaskFixture(t, runs.Limits{})
	sid := fx.initSession(t, "alice", `{"extensions":{"io.modelcontextprotocol/tasks":{}}}`)
	_, m := fx.sessionRPC(t, "alice", sid, "tools/call", `{"name":"job","arguments":{},"task":{"ttl":60000}}`)
	res, _ := m["result"].(map[string]any)
	id, _ := res["taskId"].(string)
	if res["resultType"] != "task" || id == "" {
		t.Fatalf("a hinted call of a session that declared the extension: %v", m)
	}
	for i := 0; ; i++ {
		_, m = fx.sessionRPC(t, "alice", sid, "tasks/get", `{"taskId":"`+id+`"}`)
		got, _ := m["result"].(map[string]any)
		if got["status"] == "completed" {
			if !strings.Contains(fmt.Sprint(got["result"]), "done") {
				t.Fatalf("the task's result: %v", got)
			}
			break
		}
		if i == 200 {
			t.Fatalf("tasks/get over the session: %v", m)
		}
	}
	_, m = fx.sessionRPC(t, "alice", sid, "tools/call", `{"name":"job","arguments":{}}`)
	if res, _ := m["result"].(map[string]any); res["taskId"] != nil || !strings.Contains(fmt.Sprint(res["content"]), "done") {
		t.Fatalf("a call without the hint: %v", m)
	}

	plain := fx.initSession(t, "alice", `{}`)
	_, m = fx.sessionRPC(t, "alice", plain, "tools/call", `{"name":"job","arguments":{},"task":{"ttl":60000}}`)
	if res, _ := m["result"].(map[string]any); res["taskId"] != nil {
		t.Fatalf("a session that did not declare the extension got a task: %v", m)
	}
	if status, m := fx.sessionRPC(t, "alice", plain, "tasks/get", `{"taskId":"`+id+`"}`); status != http.StatusBadRequest || errCode(m) != -32021 {
		t.Fatalf("tasks/get of a session without the extension: %d %v", status, m)
	}
	// Another principal cannot use the session (checkSession), nor see the task.
	if status, _, _ := rawPost(t, fx.url, `{"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"taskId":"`+id+`"}}`,
		"X-Test-Principal", "mallory", server.HeaderKeySessionID, sid, "Mcp-Protocol-Version", "2025-11-25"); status != http.StatusNotFound {
		t.Fatalf("another principal's request on alice's session: %d", status)
	}
}

// TestSessionDeclaresTasksOnAnotherReplica: the declaration made at
// initialize on one replica holds on another that serves the session from
// the shared directory (which has no client capabilities to read).
func TestSessionDeclaresTasksOnAnotherReplica(t *testing.T) {
	t.Parallel()
	dir := &memDirectory{}
	one := newTaskFixture(t, runs.Limits{}, HTTPOptions{Sessions: dir})
	two := newTaskFixture(t, runs.Limits{}, HTTPOptions{Sessions: dir})
	sid := one.initSession(t, "alice", `{"extensions":{"io.modelcontextprotocol/tasks":{}}}`)
	_, m := two.sessionRPC(t, "alice", sid, "tools/call", `{"name":"job","arguments":{},"task":{"ttl":60000}}`)
	if res, _ := m["result"].(map[string]any); res["resultType"] != "task" || res["taskId"] == nil {
		t.Fatalf("a hinted call on the replica that did not make the session: %v", m)
	}
	plain := one.initSession(t, "alice", `{}`)
	_, m = two.sessionRPC(t, "alice", plain, "tools/call", `{"name":"job","arguments":{},"task":{"ttl":60000}}`)
	if res, _ := m["result"].(map[string]any); res["taskId"] != nil {
		t.Fatalf("a session that did not declare the extension got a task on another replica: %v", m)
	}
}
