package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sandboxrt/sandbox/internal/conformancefixture/suite"
	"github.com/sandboxrt/sandbox/internal/testpeers"
)

// TestServeApprovalByInputRequired: a client on protocol 2026-07-28 (the
// TypeScript SDK v2 client pinned to it) that declares elicitation is
// asked to approve a call the policy's approve rule covers with
// input_required, and its SDK answers from its elicitation handler and
// retries under the gateway's requestState: approved, the call runs;
// declined, it is DENIED; a client that declares no elicitation is DENIED
// without being asked, as a 2025 client that cannot be asked is. The same
// from a snippet: execute_code pauses the run, answers input_required, and
// the retry resumes that run; the run's clock stands while the person
// reads.
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
// From a snippet: the run pauses, execute_code answers input_required, the
// SDK answers and retries, the same run goes on. "slow" answers after
// 1.2 s, past the snippet's 0.5 s limit: the run's clock stands meanwhile.
const snippet = (id) => 'try { await demo.deleteTask({ task_id: "' + id + '" }); return "ran" } catch (e) { return e.code === "DENIED" ? "DENIED: " + e.message : "threw: " + e.message }';
for (const [name, id, answer, slow] of [["snippetApprove", "T-108", { action: "accept", content: { decision: "approve" } }, false], ["snippetDecline", "T-109", { action: "decline" }, false], ["snippetSlow", "T-110", { action: "accept", content: { decision: "approve" } }, true]]) {
  const code = snippet(id);
  const client = new Client({ name: "approver", version: "1.0.0" }, { capabilities: { elicitation: {} }, versionNegotiation: { mode: { pin: "2026-07-28" } } });
  const asked = [];
  client.setRequestHandler("elicitation/create", async (req) => {
    asked.push(req.params.message);
    if (slow) await new Promise((r) => setTimeout(r, 1200));
    return answer;
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  const r = await client.callTool({ name: "execute_code", arguments: { code, limits: slow ? { timeoutMs: 500 } : undefined } });
  out[name] = { text: JSON.parse(text(r)).value, isError: !!r.isError, asked };
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
	var got struct{ Approve, Decline, Unaskable, SnippetApprove, SnippetDecline, SnippetSlow answer }
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
	if got.SnippetApprove.Text != "ran" || len(got.SnippetApprove.Asked) != 1 || !strings.Contains(got.SnippetApprove.Asked[0], `task_id: "T-108"`) {
		t.Errorf("a snippet's approval: %+v", got.SnippetApprove)
	}
	if !strings.Contains(got.SnippetDecline.Text, "DENIED") || !strings.Contains(got.SnippetDecline.Text, "the person declined it") {
		t.Errorf("a snippet's declined approval: %+v", got.SnippetDecline)
	}
	if got.SnippetSlow.Text != "ran" {
		t.Errorf("an approval slower than the snippet's time limit: %+v", got.SnippetSlow)
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
	return postModernCall(t, url, key, "demo__delete_task", map[string]any{"task_id": task}, responses, state)
}

// postModernCall sends tools/call of tool as a 2026-07-28 client that
// declares elicitation, over plain HTTP.
func postModernCall(t *testing.T, url, key, tool string, args map[string]any, responses map[string]any, state string) modernAnswer {
	t.Helper()
	return postModernCallCaps(t, url, key, tool, args, map[string]any{"elicitation": map[string]any{}}, responses, state)
}

// postModernCallCaps is postModernCall declaring caps.
func postModernCallCaps(t *testing.T, url, key, tool string, args, caps map[string]any, responses map[string]any, state string) modernAnswer {
	t.Helper()
	params := map[string]any{"name": tool, "arguments": args,
		"_meta": map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": caps}}
	if responses != nil {
		params["inputResponses"] = responses
	}
	if state != "" {
		params["requestState"] = state
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params})
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2026-07-28",
		"Mcp-Method": "tools/call", "Mcp-Name": tool, "Authorization": "Bearer " + key} {
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

// TestServePausedRunWithoutAnswer: a snippet's approval asked of a
// 2026-07-28 client by input_required, with no retry within the approval
// timeout, is DENIED as a 2025 session's is, and the run goes on to its
// end; a retry that comes later gets that result. The paused run's state
// serves only its principal: another's retry is refused and answers
// nothing.
func TestServePausedRunWithoutAnswer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts sandbox serve")
	}
	const aliceKey, bobKey = "alice-key-0123456789abcdef0123", "bob-key-0123456789abcdef012345"
	url := serveHTTP(t, fmt.Sprintf(`{"mcpServers": {"demo": {"command": %q}},
 "gateway": {"auth": {"apiKeys": [{"name": "alice", "key": %q}, {"name": "bob", "key": %q}]},
             "policy": {"rules": [{"tools": "demo:delete_*", "action": "approve"}], "approvalTimeout": "1s"}}}`, exampleServerBinary(t), aliceKey, bobKey))
	args := map[string]any{"code": `try { await demo.deleteTask({ task_id: "T-104" }); return "ran" } catch (e) { return e.code + ": " + e.message }`}
	first := postModernCall(t, url, aliceKey, "execute_code", args, nil, "")
	state, _ := first.Result["requestState"].(string)
	reqs, _ := first.Result["inputRequests"].(map[string]any)
	if first.Result["resultType"] != "input_required" || state == "" || len(reqs) != 1 {
		t.Fatalf("execute_code did not pause for the approval: %+v", first)
	}
	var key string
	for k := range reqs {
		key = k
	}
	approve := map[string]any{key: map[string]any{"action": "accept", "content": map[string]any{"decision": "approve"}}}
	if r := postModernCall(t, url, bobKey, "execute_code", args, approve, state); r.Status != 400 || r.Error == nil || r.Error.Code != -32602 {
		t.Errorf("bob answered alice's paused run: HTTP %d %+v", r.Status, r)
	}
	time.Sleep(1500 * time.Millisecond)
	late := postModernCall(t, url, aliceKey, "execute_code", args, approve, state)
	content, _ := late.Result["content"].([]any)
	if late.Error != nil || len(content) != 1 {
		t.Fatalf("the late retry: %+v", late)
	}
	text, _ := content[0].(map[string]any)["text"].(string)
	if !strings.Contains(text, "DENIED") || !strings.Contains(text, "nobody answered within 1s") {
		t.Errorf("an approval answered after the timeout: %s", text)
	}
}

// TestServeSnippetRelaysUpstreamQuestions: an upstream's own elicitation
// and sampling, asked while a snippet of a 2026-07-28 client (the
// TypeScript SDK v2 client) calls it, pause the run; the client answers
// them through input_required and the same run gets the answers.
func TestServeSnippetRelaysUpstreamQuestions(t *testing.T) {
	if testing.Short() {
		t.Skip("starts npm peers")
	}
	client := testpeers.Package(t, "client-v2")
	fixture := exec.Command(suite.BuildFixture(t), "-http", "127.0.0.1:0")
	upstream := startLogged(t, fixture, regexp.MustCompile(`serving (http://\S+/mcp)`))
	url := serveHTTP(t, fmt.Sprintf(`{"mcpServers": {"conf": {"url": %q}}}`, upstream))
	script := `
const [url, pkg] = process.argv.slice(2);
const { Client, StreamableHTTPClientTransport } = await import(pkg + "/dist/index.mjs");
const client = new Client({ name: "asked", version: "1.0.0" }, { capabilities: { elicitation: {}, sampling: {} }, versionNegotiation: { mode: { pin: "2026-07-28" } } });
const asked = [];
client.setRequestHandler("elicitation/create", async (req) => { asked.push("elicitation: " + req.params.message); return { action: "accept", content: { username: "ada", email: "ada@example.com" } }; });
client.setRequestHandler("sampling/createMessage", async (req) => { asked.push("sampling"); return { role: "assistant", model: "test", content: { type: "text", text: "Paris" } }; });
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
const code = 'const a = await conf.testElicitation({ message: "Who are you?" }); const b = await conf.testSampling({ prompt: "Capital of France?" }); return [a, b]';
const r = await client.callTool({ name: "execute_code", arguments: { code } });
process.stdout.write(JSON.stringify({ result: JSON.parse(r.content.map((c) => c.text).join("")), asked }));
await client.close();
`
	out := runNodeScript(t, filepath.Join(t.TempDir(), "asked.mjs"), script, url, "file://"+client)
	var got struct {
		Result struct {
			Value any
			Error any
		}
		Asked []string
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	value, _ := json.Marshal(got.Result.Value)
	if !strings.Contains(string(value), "ada@example.com") || !strings.Contains(string(value), "Paris") || len(got.Asked) != 2 || got.Asked[0] != "elicitation: Who are you?" {
		t.Errorf("the snippet's questions: %s", out)
	}
}

// TestServeOldUpstreamAsksNewClient: an upstream on protocol 2025-11-25
// asks by a request of its own (elicitation/create) during a call of a
// 2026-07-28 client, which has no session to be asked through: the call
// pauses, answers input_required, and the client's retry (the TypeScript
// SDK v2 client's) hands the answer to the waiting upstream request; the
// same for prompts/get. A request that did not declare elicitation is
// refused with -32021.
func TestServeOldUpstreamAsksNewClient(t *testing.T) {
	if testing.Short() {
		t.Skip("starts npm peers")
	}
	client := testpeers.Package(t, "client-v2")
	fixture := exec.Command(suite.BuildFixture(t), "-http", "127.0.0.1:0")
	upstream := startLogged(t, fixture, regexp.MustCompile(`serving (http://\S+/mcp)`))
	url := serveHTTP(t, fmt.Sprintf(`{"mcpServers": {"conf": {"url": %q, "protocolVersion": "2025-11-25"}}, "gateway": {"toolNames": "passthrough"}}`, upstream), "--expose", "all")
	script := `
const [url, pkg] = process.argv.slice(2);
const { Client, StreamableHTTPClientTransport } = await import(pkg + "/dist/index.mjs");
const client = new Client({ name: "asked", version: "1.0.0" }, { capabilities: { elicitation: {} }, versionNegotiation: { mode: { pin: "2026-07-28" } } });
const asked = [];
client.setRequestHandler("elicitation/create", async (req) => { asked.push(req.params.message); return { action: "accept", content: { username: "ada", email: "ada@example.com" } }; });
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
const r = await client.callTool({ name: "test_elicitation", arguments: { message: "Who are you?" } });
client.setRequestHandler("elicitation/create", async (req) => { asked.push(req.params.message); return { action: "accept", content: { context: "tea" } }; });
const p = await client.getPrompt({ name: "test_input_required_result_prompt" });
process.stdout.write(JSON.stringify({ text: r.content.map((c) => c.text).join(""), isError: !!r.isError, asked, prompt: JSON.stringify(p.messages) }));
await client.close();
`
	out := runNodeScript(t, filepath.Join(t.TempDir(), "old.mjs"), script, url, "file://"+client)
	var got struct {
		Text    string
		IsError bool
		Asked   []string
		Prompt  string
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if got.IsError || !strings.Contains(got.Text, "ada@example.com") || len(got.Asked) != 2 || got.Asked[0] != "Who are you?" {
		t.Errorf("a 2025 upstream's question to a 2026 client: %s", out)
	}
	if !strings.Contains(got.Prompt, "tea") || len(got.Asked) != 2 || got.Asked[1] != "What context should the prompt use?" {
		t.Errorf("a 2025 upstream's question during prompts/get: %s", out)
	}

	// A request that declares no elicitation is not asked: the call is
	// refused with -32021 naming the capability, HTTP 400.
	body := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"test_elicitation","arguments":{"message":"Who?"},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "test_elicitation"} {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var msg struct {
		Error *struct {
			Code int
			Data struct {
				RequiredCapabilities map[string]any
			}
		}
	}
	_ = json.Unmarshal(raw, &msg)
	if resp.StatusCode != 400 || msg.Error == nil || msg.Error.Code != -32021 || msg.Error.Data.RequiredCapabilities["elicitation"] == nil {
		t.Errorf("a request without elicitation: HTTP %d %s", resp.StatusCode, raw)
	}
}

// TestServeApprovalThenUpstreamRounds: a call that a person must approve
// and whose upstream then asks twice (test_input_required_result_multi_round
// behind an approve rule) takes four rounds under the gateway's states:
// the approval, step1, step2, the result. The approval is asked once and
// each round's state carries the upstream's own (that the approval's
// answer stays the gateway's: gateway's TestForwardAskingKeepsTheApprovalToItself).
func TestServeApprovalThenUpstreamRounds(t *testing.T) {
	if testing.Short() {
		t.Skip("starts sandbox serve")
	}
	const key = "alice-key-0123456789abcdef0123"
	fixture := exec.Command(suite.BuildFixture(t), "-http", "127.0.0.1:0")
	upstream := startLogged(t, fixture, regexp.MustCompile(`serving (http://\S+/mcp)`))
	audit := filepath.Join(t.TempDir(), "audit.jsonl")
	url := serveHTTP(t, fmt.Sprintf(`{"mcpServers": {"conf": {"url": %q}},
 "gateway": {"toolNames": "passthrough", "auth": {"apiKeys": [{"name": "alice", "key": %q}]},
             "policy": {"rules": [{"tools": "conf:test_input_required_result_multi_round", "action": "approve"}]},
             "audit": {"path": %q}}}`, upstream, key, audit), "--expose", "all")
	const tool = "test_input_required_result_multi_round"
	accept := func(k string, content map[string]any) map[string]any {
		return map[string]any{k: map[string]any{"action": "accept", "content": content}}
	}
	var asked []string
	r := postModernCall(t, url, key, tool, map[string]any{}, nil, "")
	answers := []map[string]any{
		accept("sandbox_approval", map[string]any{"decision": "approve"}),
		accept("step1", map[string]any{"name": "Ada"}),
		accept("step2", map[string]any{"color": "green"}),
	}
	for round := 0; r.Result["resultType"] == "input_required"; round++ {
		if round >= len(answers) {
			t.Fatalf("asked more than %d times: %v, then %+v", len(answers), asked, r)
		}
		reqs, _ := r.Result["inputRequests"].(map[string]any)
		for k := range reqs {
			asked = append(asked, k)
		}
		state, _ := r.Result["requestState"].(string)
		r = postModernCall(t, url, key, tool, map[string]any{}, answers[round], state)
	}
	content, _ := r.Result["content"].([]any)
	if r.Error != nil || len(content) != 1 || !strings.Contains(fmt.Sprint(content[0]), "green") {
		t.Fatalf("after %v: %+v", asked, r)
	}
	if strings.Join(asked, ",") != "sandbox_approval,step1,step2" {
		t.Errorf("asked %v, want the approval, step1, step2", asked)
	}
	data, err := os.ReadFile(audit)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), `"kind":"approval"`); n != 1 || !strings.Contains(string(data), `"decision":"approved"`) {
		t.Errorf("the audit log holds %d approvals for one approved call:\n%s", n, data)
	}
}
