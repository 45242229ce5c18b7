package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"
)

const otherAgentKey = "agent-b-secret-0123456789abcdef"

// taskReplica is one `sandbox serve --http` process of a tasks test.
type taskReplica struct {
	url string
	cmd *exec.Cmd
}

// taskReplicas starts n replicas sharing a redis-server, with a short task
// lease (a replica that dies fails its tasks within about two seconds) and
// two API keys (agent-a, agent-b).
func taskReplicas(t *testing.T, n int) []taskReplica {
	t.Helper()
	srv := startSharedRedis(t)
	cfg := writeConfig(t, fmt.Sprintf(`{"mcpServers": {"demo": {"command": %q}},
  "gateway": {"redis": {"url": %q, "encryptionKey": "${SANDBOX_REDIS_KEY}", "keyPrefix": "tasks:"},
    "tasks": {"lease": "2s", "livePerPrincipal": 4},
    "auth": {"apiKeys": [{"name": "agent-a", "key": "${SANDBOX_TEST_AGENT_KEY}"}, {"name": "agent-b", "key": %q}]}}}`,
		exampleServerBinary(t), srv.URL(), otherAgentKey))
	var out []taskReplica
	for range n {
		cmd := exec.Command(sandboxBinary(t), "serve", "-c", cfg, "--http", "127.0.0.1:0", "--log-level", "warn")
		out = append(out, taskReplica{url: startLogged(t, cmd, listening), cmd: cmd})
	}
	return out
}

// taskRPC posts a 2026-07-28 request declaring the tasks extension, as the
// principal of key, and returns its result or its error.
func taskRPC(t *testing.T, url, key, method, params string) (result, rpcErr map[string]any) {
	t.Helper()
	var p map[string]any
	if err := json.Unmarshal([]byte(params), &p); err != nil {
		t.Fatal(err)
	}
	p["_meta"] = map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "tasks-test", "version": "1"},
		"io.modelcontextprotocol/clientCapabilities": map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}},
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": p})
	req, _ := http.NewRequest("POST", url, strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	if name, ok := p["name"].(string); ok {
		req.Header.Set("Mcp-Name", name)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	text := string(raw)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		text = text[strings.LastIndex(text, "data: ")+6:]
	}
	var m struct {
		Result map[string]any `json:"result"`
		Error  map[string]any `json:"error"`
	}
	if err := json.Unmarshal([]byte(text), &m); err != nil {
		t.Fatalf("%s: %d %s", method, resp.StatusCode, raw)
	}
	return m.Result, m.Error
}

// startTask starts execute_code of code as a task on url; its id.
func startTask(t *testing.T, url, code string) string {
	t.Helper()
	args, _ := json.Marshal(map[string]any{"name": "execute_code", "arguments": map[string]any{"code": code}})
	res, e := taskRPC(t, url, agentKey, "tools/call", string(args))
	id, _ := res["taskId"].(string)
	if e != nil || res["resultType"] != "task" || id == "" {
		t.Fatalf("execute_code as a task: %v %v", res, e)
	}
	return id
}

// pollTask asks round the replicas until the task is in one of states.
func pollTask(t *testing.T, urls []string, id string, within time.Duration, states ...string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(within)
	var res map[string]any
	for i := 0; time.Now().Before(deadline); i++ {
		var e map[string]any
		res, e = taskRPC(t, urls[i%len(urls)], agentKey, "tasks/get", `{"taskId":"`+id+`"}`)
		if e != nil {
			t.Fatalf("tasks/get: %v", e)
		}
		for _, s := range states {
			if res["status"] == s {
				return res
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("task %s is not %v after %v: %v", id, states, within, res)
	return nil
}

// TestTasksOnAnyReplica: three replicas on one redis-server. A task started
// on one is polled (progress, console lines) and read on the others; a
// cancel sent to another replica stops it; a replica killed mid-task leaves
// its task failed, not working; another principal finds none of them; the
// live cap holds across replicas.
func TestTasksOnAnyReplica(t *testing.T) {
	if testing.Short() {
		t.Skip("starts redis-server and three replicas")
	}
	reps := taskReplicas(t, 3)
	urls := []string{reps[0].url, reps[1].url, reps[2].url}

	id := startTask(t, urls[0], `for (let i = 0; i < 15; i++) { console.log("tick " + i); await new Promise(r => setTimeout(r, 100)) } return 6 * 7`)
	if other, e := taskRPC(t, urls[1], otherAgentKey, "tasks/get", `{"taskId":"`+id+`"}`); e == nil || e["code"] != float64(-32602) {
		t.Fatalf("agent-b read agent-a's task: %v %v", other, e)
	}
	if _, e := taskRPC(t, urls[2], otherAgentKey, "tasks/cancel", `{"taskId":"`+id+`"}`); e == nil || e["code"] != float64(-32602) {
		t.Fatalf("agent-b cancelled agent-a's task: %v", e)
	}
	done := pollTask(t, urls[1:], id, 30*time.Second, "completed", "failed", "cancelled")
	result, _ := done["result"].(map[string]any)
	if done["status"] != "completed" || !strings.Contains(fmt.Sprint(result["structuredContent"]), "value:42") {
		t.Fatalf("the task read on another replica: %v", done)
	}
	meta, _ := done["_meta"].(map[string]any)
	if !strings.Contains(fmt.Sprint(meta["sandbox/console"]), "tick 14") {
		t.Fatalf("the task's last console lines: %v", meta)
	}

	// A cancel sent to another replica stops the run where it runs.
	id = startTask(t, urls[0], `await new Promise(r => setTimeout(r, 20000)); return "not cancelled"`)
	pollTask(t, urls[1:], id, 10*time.Second, "working")
	if ack, e := taskRPC(t, urls[1], agentKey, "tasks/cancel", `{"taskId":"`+id+`"}`); e != nil || ack["resultType"] != "complete" {
		t.Fatalf("cancel on replica 2: %v %v", ack, e)
	}
	if res := pollTask(t, urls[2:], id, 10*time.Second, "cancelled", "completed"); res["status"] != "cancelled" {
		t.Fatalf("after a cancel on another replica: %v", res)
	}

	// The live cap holds for the deployment: four live tasks, wherever
	// they were started, and the fifth is refused.
	var live []string
	for i := range 4 {
		live = append(live, startTask(t, urls[i%3], `await new Promise(r => setTimeout(r, 20000)); return 1`))
	}
	args := `{"name":"execute_code","arguments":{"code":"return 1"}}`
	if res, _ := taskRPC(t, urls[2], agentKey, "tools/call", args); res["taskId"] != nil || !strings.Contains(fmt.Sprint(res["content"]), "RATE_LIMITED") {
		t.Fatalf("a fifth live task: %v", res)
	}
	for _, id := range live[1:] {
		taskRPC(t, urls[1], agentKey, "tasks/cancel", `{"taskId":"`+id+`"}`)
	}

	// A replica killed mid-task: the task fails, saying why, within about
	// a lease; it never stays working.
	id = live[0] // started on replica 1
	pollTask(t, urls[1:], id, 10*time.Second, "working")
	if err := reps[0].cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	res := pollTask(t, urls[1:], id, 10*time.Second, "failed", "completed", "cancelled")
	if res["status"] != "failed" || !strings.Contains(fmt.Sprint(res["error"]), "the replica running it stopped") {
		t.Fatalf("the task of a killed replica: %v", res)
	}
	t.Logf("the killed replica's task failed %v after the kill", time.Since(start).Round(100*time.Millisecond))
}
