package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandboxrt/sandbox/internal/testpeers"
)

// TestTasksWithTheSDKClient: the official TypeScript clients, the SDK v2
// client (@modelcontextprotocol/client, pinned to protocol 2026-07-28)
// with the tasks extension's client (@modelcontextprotocol/ext-tasks),
// run execute_code as a task: its progress and console lines show while it
// works; the client hands the task off and leaves, and a new session comes
// back for the result; a long one is cancelled; another principal gets
// not found. The tasks client asks for a host's raw dispatch on 2026-07-28
// (the SDK client's decoder knows no task results): here a fetch.
func TestTasksWithTheSDKClient(t *testing.T) {
	if testing.Short() {
		t.Skip("starts sandbox serve and the SDK client")
	}
	clientPkg := testpeers.Package(t, "@modelcontextprotocol/client")
	tasksPkg := testpeers.Package(t, "@modelcontextprotocol/ext-tasks")
	t.Setenv("SANDBOX_TEST_AGENT_KEY", agentKey)
	url := serveHTTP(t, fmt.Sprintf(`{"mcpServers": {"demo": {"command": %q}},
  "gateway": {"auth": {"apiKeys": [{"name": "agent-a", "key": "${SANDBOX_TEST_AGENT_KEY}"}, {"name": "agent-b", "key": %q}]}}}`,
		exampleServerBinary(t), otherAgentKey))
	script := `
const [url, clientPkg, tasksPkg, key, otherKey] = process.argv.slice(2);
const { Client, StreamableHTTPClientTransport } = await import(clientPkg + "/dist/index.mjs");
const { createTaskSessionFromClient } = await import(tasksPkg + "/dist/client/index.js");
const caps = { extensions: { "io.modelcontextprotocol/tasks": {} } };
const info = { name: "tasks-client", version: "1.0.0" };
const framing = { protocolVersion: "2026-07-28", clientInfo: info, clientCapabilities: caps };
let nextId = 1;
const dispatch = (k) => async (bare, options) => {
  const request = { jsonrpc: "2.0", id: nextId++, ...bare };
  const headers = { "Content-Type": "application/json", Accept: "application/json, text/event-stream", Authorization: "Bearer " + k,
    "Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": request.method };
  const name = request.params?.name ?? request.params?.taskId;
  if (name) headers["Mcp-Name"] = name;
  const r = await fetch(url, { method: "POST", headers, body: JSON.stringify(request), signal: options?.signal });
  let text = await r.text();
  if ((r.headers.get("content-type") ?? "").startsWith("text/event-stream")) text = text.slice(text.lastIndexOf("data: ") + 6);
  const msg = JSON.parse(text);
  return msg.error ? { kind: "error", error: msg.error } : { kind: "result", result: msg.result };
};
const open = async (k) => {
  const client = new Client(info, { capabilities: caps, versionNegotiation: { mode: { pin: "2026-07-28" } } });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: "Bearer " + k } } }));
  return createTaskSessionFromClient(client, { endpointId: "sandbox", rawDispatch: dispatch(k), v2RequestFraming: framing });
};
const get = (k, taskId) => dispatch(k)({ method: "tasks/get", params: { taskId, _meta: {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientInfo": info, "io.modelcontextprotocol/clientCapabilities": caps } } });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const out = {};
const a = await open(key);
const exec = await a.callTool("execute_code", { code: "for (let i = 0; i < 20; i++) { console.log('step ' + i); await new Promise(r => setTimeout(r, 100)) } return 6 * 7" });
out.kind = exec.kind;
for (let i = 0; i < 100 && !out.working; i++) {
  const t = await get(key, exec.handle.taskId);
  if (t.kind === "result" && t.result.status === "working" && t.result._meta?.["sandbox/console"]) out.working = t.result;
  await sleep(50);
}
let reference;
await exec.handoff((r) => { reference = r; }); // the client leaves; the task goes on
const b = await open(key);
out.done = (await (await b.resumeTask(reference)).settle()).outcome;
const long = await b.callTool("execute_code", { code: "await new Promise(r => setTimeout(r, 30000)); return 'late'" });
await long.cancel();
out.cancelled = (await get(key, long.handle.taskId)).result?.status;
out.stolen = await get(otherKey, exec.handle.taskId);
process.stdout.write(JSON.stringify(out));
process.exit(0);
`
	out := runNodeScript(t, filepath.Join(t.TempDir(), "tasks.mjs"), script, url, "file://"+clientPkg, "file://"+tasksPkg, agentKey, otherAgentKey)
	var got struct {
		Kind      string
		Working   map[string]any
		Done      map[string]any
		Cancelled string
		Stolen    struct {
			Kind  string
			Error struct{ Code float64 }
		}
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if got.Kind != "task" {
		t.Fatalf("execute_code did not run as a task: %s", out)
	}
	if meta, _ := got.Working["_meta"].(map[string]any); !strings.Contains(fmt.Sprint(meta["sandbox/console"]), "console.log: step") || meta["sandbox/progress"] == nil {
		t.Errorf("a working task's progress and console lines: %v", got.Working)
	}
	result, _ := got.Done["result"].(map[string]any)
	if got.Done["status"] != "completed" || !strings.Contains(fmt.Sprint(result["structuredContent"]), "value:42") {
		t.Errorf("the result, read by a new session after the first left: %v", got.Done)
	}
	if got.Cancelled != "cancelled" {
		t.Errorf("after cancel: %q", got.Cancelled)
	}
	if got.Stolen.Kind != "error" || got.Stolen.Error.Code != -32602 {
		t.Errorf("another principal's tasks/get: %+v", got.Stolen)
	}
}
