package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandboxrt/sandbox/internal/testpeers"
)

// TestServeApprovalByInputRequired: a client on protocol 2026-07-28 (the
// TypeScript SDK v2 client pinned to it) that declares elicitation is
// asked to approve a call the policy's approve rule covers with
// input_required, and its SDK answers from its elicitation handler and
// retries under the gateway's requestState: approved, the call runs;
// declined, it is DENIED; a client that declares no elicitation is DENIED
// without being asked, as a 2025 client that cannot be asked is.
func TestServeApprovalByInputRequired(t *testing.T) {
	if testing.Short() {
		t.Skip("starts npm peers")
	}
	client := testpeers.Package(t, "client-v2")
	dir := t.TempDir()
	audit := filepath.Join(dir, "audit.jsonl")
	cfg := fmt.Sprintf(`{"mcpServers": {"demo": {"command": %q}},
 "gateway": {"policy": {"rules": [{"tools": "demo:delete_*", "action": "approve"}], "approvalTimeout": "5s"},
             "audit": {"path": %q}}}`, exampleServerBinary(t), audit)
	url := serveHTTP(t, cfg, "--expose", "all")
	script := `
const [url, pkg] = process.argv.slice(2);
const { Client, StreamableHTTPClientTransport } = await import(pkg + "/dist/index.mjs");
async function connect(capabilities, answer) {
  const client = new Client({ name: "approver", version: "1.0.0" }, { capabilities, versionNegotiation: { mode: { pin: "2026-07-28" } } });
  const asked = [];
  if (answer) client.setRequestHandler("elicitation/create", async (req) => { asked.push(req.params.message); return answer; });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return { client, asked };
}
const text = (r) => r.content.map((c) => c.text).join("\n");
const out = {};
for (const [name, answer] of [["approve", { action: "accept", content: { decision: "approve" } }], ["decline", { action: "decline" }]]) {
  const { client, asked } = await connect({ elicitation: {} }, answer);
  const r = await client.callTool({ name: "demo__delete_task", arguments: { task_id: "T-106" } });
  out[name] = { text: text(r), isError: !!r.isError, asked };
  await client.close();
}
{
  const { client } = await connect({}, null);
  const r = await client.callTool({ name: "demo__delete_task", arguments: { task_id: "T-107" } });
  out.unaskable = { text: text(r), isError: !!r.isError };
  await client.close();
}
process.stdout.write(JSON.stringify(out));
`
	out := runNodeScript(t, filepath.Join(dir, "approver.mjs"), script, url, "file://"+client)
	type answer struct {
		Text    string
		IsError bool
		Asked   []string
	}
	var got struct{ Approve, Decline, Unaskable answer }
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if got.Approve.IsError || len(got.Approve.Asked) != 1 || !strings.Contains(got.Approve.Asked[0], `task_id: "T-106"`) {
		t.Errorf("approved: %+v", got.Approve)
	}
	if !got.Decline.IsError || !strings.Contains(got.Decline.Text, "DENIED") || !strings.Contains(got.Decline.Text, "the person declined it") || len(got.Decline.Asked) != 1 {
		t.Errorf("declined: %+v", got.Decline)
	}
	if !got.Unaskable.IsError || !strings.Contains(got.Unaskable.Text, "cannot be asked") {
		t.Errorf("a client that declared no elicitation: %+v", got.Unaskable)
	}
	data, err := os.ReadFile(audit)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"decision":"approved"`, `"decision":"not approved: the person declined it"`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("the audit log lacks %s:\n%s", want, data)
		}
	}
}

// TestServeRefusesRequestStatesItDidNotIssue: the requestState of an
// approval asked by input_required comes back only from the principal it
// was issued to, for the same call, as issued. Bob's retry with Alice's
// state, a tampered or forged state, and Alice's state on other arguments
// are refused with -32602 and HTTP 400, and nothing runs; Alice's own
// retry runs the call.
func TestServeRefusesRequestStatesItDidNotIssue(t *testing.T) {
	if testing.Short() {
		t.Skip("starts sandbox serve")
	}
	const aliceKey, bobKey = "alice-key-0123456789abcdef0123", "bob-key-0123456789abcdef012345"
	dir := t.TempDir()
	audit := filepath.Join(dir, "audit.jsonl")
	url := serveHTTP(t, fmt.Sprintf(`{"mcpServers": {"demo": {"command": %q}},
 "gateway": {"auth": {"apiKeys": [{"name": "alice", "key": %q}, {"name": "bob", "key": %q}]},
             "policy": {"rules": [{"tools": "demo:delete_*", "action": "approve"}]},
             "audit": {"path": %q}}}`, exampleServerBinary(t), aliceKey, bobKey, audit), "--expose", "all")

	approve := map[string]any{"sandbox_approval": map[string]any{"action": "accept", "content": map[string]any{"decision": "approve"}}}
	first := postModern(t, url, aliceKey, "T-106", nil, "")
	state, _ := first.Result["requestState"].(string)
	if first.Result["resultType"] != "input_required" || state == "" {
		t.Fatalf("the first call did not ask for approval: %+v", first)
	}
	if strings.Contains(state, "sandbox_approval") || strings.Contains(state, `"a"`) {
		t.Errorf("the requestState shows what it holds: %s", state)
	}
	tampered := []byte(state)
	tampered[len(tampered)/2] ^= 0x02
	for name, c := range map[string]struct{ key, task, state string }{
		"bob with alice's state":         {bobKey, "T-106", state},
		"a tampered state":               {aliceKey, "T-106", string(tampered)},
		"a forged state":                 {aliceKey, "T-106", "sbx1.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"},
		"alice's state on another call":  {aliceKey, "T-999", state},
		"the state with a suffix":        {aliceKey, "T-106", state + "-TAMPERED"},
		"an upstream-looking bare state": {aliceKey, "T-106", `{"u":"x","a":true}`},
	} {
		r := postModern(t, url, c.key, c.task, approve, c.state)
		if r.Status != 400 || r.Error == nil || r.Error.Code != -32602 || !strings.Contains(r.Error.Message, "requestState") {
			t.Errorf("%s: HTTP %d, %+v", name, r.Status, r)
		}
	}
	if data, _ := os.ReadFile(audit); strings.Contains(string(data), `"decision":"approved"`) {
		t.Fatalf("a refused state approved a call:\n%s", data)
	}
	done := postModern(t, url, aliceKey, "T-106", approve, state)
	if done.Error != nil || done.Result["resultType"] == "input_required" || done.Result["isError"] == true {
		t.Fatalf("alice's own retry: %+v", done)
	}
}

type modernAnswer struct {
	Status int
	Result map[string]any
	Error  *struct {
		Code    int
		Message string
	}
}

// postModern sends tools/call demo__delete_task as a 2026-07-28 client
// that declares elicitation, over plain HTTP.
func postModern(t *testing.T, url, key, task string, responses map[string]any, state string) modernAnswer {
	t.Helper()
	params := map[string]any{"name": "demo__delete_task", "arguments": map[string]any{"task_id": task},
		"_meta": map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": map[string]any{"elicitation": map[string]any{}}}}
	if responses != nil {
		params["inputResponses"] = responses
	}
	if state != "" {
		params["requestState"] = state
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params})
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2026-07-28",
		"Mcp-Method": "tools/call", "Mcp-Name": "demo__delete_task", "Authorization": "Bearer " + key} {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		var last []byte
		for _, line := range bytes.Split(raw, []byte("\n")) {
			if d, ok := bytes.CutPrefix(line, []byte("data:")); ok && len(bytes.TrimSpace(d)) > 0 {
				last = d
			}
		}
		raw = last
	}
	var msg struct {
		Result map[string]any
		Error  *struct {
			Code    int
			Message string
		}
	}
	if err := json.Unmarshal(raw, &msg); err != nil {
		t.Fatalf("HTTP %d, not a JSON-RPC answer: %q", resp.StatusCode, raw)
	}
	return modernAnswer{Status: resp.StatusCode, Result: msg.Result, Error: msg.Error}
}
