package frontend

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/gateway"
	"github.com/sandboxrt/sandbox/gateway/internal/testserver"
	"github.com/sandboxrt/sandbox/gateway/toolspec"
	"github.com/sandboxrt/sandbox/internal/testlog"
	"github.com/sandboxrt/sandbox/internal/testwait"
	"github.com/sandboxrt/sandbox/runs"
)

// taskFixture is a front end with tasks on, a built-in tool "job" that
// runs as a task, and principals named by the X-Test-Principal header.
type taskFixture struct {
	url     string
	audit   string        // the gateway's audit log
	release chan struct{} // a "job" call of {"wait":true} ends when this is closed
	stopped atomic.Int32  // "job" calls whose context was cancelled
}

func newTaskFixture(t *testing.T, limits runs.Limits, httpOpts ...HTTPOptions) *taskFixture {
	t.Helper()
	fx := &taskFixture{release: make(chan struct{}), audit: filepath.Join(t.TempDir(), "audit.jsonl")}
	settings := gateway.DefaultSettings()
	settings.Audit = &gateway.AuditConfig{Path: fx.audit}
	g := startGateway(t, &gateway.Config{Settings: settings, Servers: map[string]*gateway.ServerConfig{}}, gateway.WithInProcessServer("a", testserver.New(), nil))
	reg := runs.NewRegistry(runs.NewMemoryStore(nil), runs.Options{Limits: limits})
	f := New(g, WithTasks(TaskOptions{Registry: reg, Tools: func(name string) bool { return name == "job" }}))
	t.Cleanup(f.Close)
	err := f.AddTool(toolspec.Spec{Name: "job", InputSchema: json.RawMessage(`{"type":"object"}`),
		Handler: func(ctx context.Context, req toolspec.Request) (*gateway.CallResult, error) {
			var in struct {
				Wait bool   `json:"wait"`
				Ask  string `json:"ask"`
			}
			_ = json.Unmarshal(req.Arguments, &in)
			req.Progress(1, 2, "console.log: halfway")
			text := "done"
			if in.Ask != "" {
				run := runs.FromContext(ctx)
				if run == nil {
					return nil, fmt.Errorf("no task to ask through")
				}
				ans, err := run.Ask(ctx, map[string]json.RawMessage{"q": json.RawMessage(`{"method":"elicitation/create","params":{"message":"` + in.Ask + `","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}}`)})
				if err != nil {
					return nil, err
				}
				text = "answered " + string(ans["q"])
			}
			if in.Wait {
				select {
				case <-fx.release:
				case <-ctx.Done():
					fx.stopped.Add(1)
					return nil, ctx.Err()
				}
			}
			b, _ := json.Marshal(map[string]any{"type": "text", "text": text})
			return &gateway.CallResult{Content: []json.RawMessage{b}}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	ho := HTTPOptions{}
	if len(httpOpts) > 0 {
		ho = httpOpts[0]
	}
	h := f.HTTPHandler(ho)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(auth.WithPrincipal(r.Context(), auth.Principal{ID: r.Header.Get("X-Test-Principal")})))
	}))
	t.Cleanup(srv.Close)
	fx.url = srv.URL + "/mcp"
	return fx
}

const modernMeta = `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}`
const withTasksExt = `"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}`

// rpc posts a 2026-07-28 request as principal and decodes the response.
func (fx *taskFixture) rpc(t *testing.T, principal, method, params string, header ...string) (int, map[string]any) {
	t.Helper()
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":%q,"params":%s}`, method, params)
	std := []string{"X-Test-Principal", principal, "Mcp-Protocol-Version", "2026-07-28", "Mcp-Method", method}
	if method == "tools/call" {
		std = append(std, "Mcp-Name", "job")
	}
	status, _, resp := rawPost(t, fx.url, body, append(std, header...)...)
	var m map[string]any
	if i := strings.Index(resp, "data: "); i >= 0 && strings.HasPrefix(resp, "event") {
		resp = resp[i+6:]
	}
	if err := json.Unmarshal([]byte(resp), &m); err != nil {
		t.Fatalf("%s: %d %q", method, status, resp)
	}
	return status, m
}

func (fx *taskFixture) call(t *testing.T, principal, args string, ext bool) map[string]any {
	t.Helper()
	meta := modernMeta + `,"io.modelcontextprotocol/clientCapabilities":{}`
	if ext {
		meta = modernMeta + "," + withTasksExt
	}
	_, m := fx.rpc(t, principal, "tools/call", `{"name":"job","arguments":`+args+`,"_meta":{`+meta+`}}`)
	res, _ := m["result"].(map[string]any)
	if res == nil {
		t.Fatalf("tools/call: %v", m)
	}
	return res
}

func (fx *taskFixture) task(t *testing.T, principal, method, id, extra string) (int, map[string]any) {
	t.Helper()
	return fx.rpc(t, principal, method, `{"taskId":"`+id+`"`+extra+`,"_meta":{`+modernMeta+`,`+withTasksExt+`}}`)
}

// waitStatus polls tasks/get until the task is in status (or fails the test).
func (fx *taskFixture) waitStatus(t *testing.T, principal, id, status string) map[string]any {
	t.Helper()
	var res map[string]any
	for i := 0; i < 500; i++ {
		_, m := fx.task(t, principal, "tasks/get", id, "")
		res, _ = m["result"].(map[string]any)
		if res != nil && res["status"] == status {
			return res
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("task %s never got to %s: %v", id, status, res)
	return nil
}

func errCode(m map[string]any) float64 {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(float64)
	return c
}

// TestTaskLifecycle: a client that declares the extension gets a task at
// once; the call goes on after the response; tasks/get shows its progress
// and console lines, then its result inlined.
func TestTaskLifecycle(t *testing.T) {
	t.Parallel()
	fx := newTaskFixture(t, runs.Limits{})
	created := fx.call(t, "alice", `{"wait":true}`, true)
	id, _ := created["taskId"].(string)
	if created["resultType"] != "task" || created["status"] != "working" || id == "" || created["ttlMs"] != float64(time.Hour.Milliseconds()) {
		t.Fatalf("CreateTaskResult: %v", created)
	}
	for _, k := range []string{"result", "error", "inputRequests", "requestState", "task", "ttl", "pollInterval"} {
		if _, ok := created[k]; ok {
			t.Fatalf("CreateTaskResult carries %q: %v", k, created)
		}
	}
	// The POST is answered; the run goes on without its client.
	var working map[string]any
	for i := 0; i < 500 && working == nil; i++ {
		_, m := fx.task(t, "alice", "tasks/get", id, "")
		res := m["result"].(map[string]any)
		if meta, _ := res["_meta"].(map[string]any); meta["sandbox/console"] != nil {
			working = res
		}
		time.Sleep(10 * time.Millisecond)
	}
	if working == nil || working["status"] != "working" || working["result"] != nil {
		t.Fatalf("a working task: %v", working)
	}
	meta := working["_meta"].(map[string]any)
	if fmt.Sprint(meta["sandbox/console"]) != "[console.log: halfway]" || meta["sandbox/progress"].(map[string]any)["progress"] != float64(1) {
		t.Fatalf("progress and console: %v", meta)
	}
	close(fx.release)
	done := fx.waitStatus(t, "alice", id, "completed")
	result := done["result"].(map[string]any)
	if done["resultType"] != "complete" || fmt.Sprint(result["content"]) != "[map[text:done type:text]]" || result["resultType"] != "complete" {
		t.Fatalf("completed: %v", done)
	}

	// Without the extension the same tool answers as ever.
	sync := fx.call(t, "alice", `{}`, false)
	if sync["taskId"] != nil || fmt.Sprint(sync["content"]) != "[map[text:done type:text]]" {
		t.Fatalf("a call without the extension: %v", sync)
	}
	// tasks/* without the extension: -32021, HTTP 400.
	status, m := fx.rpc(t, "alice", "tasks/get", `{"taskId":"`+id+`","_meta":{`+modernMeta+`,"io.modelcontextprotocol/clientCapabilities":{}}}`)
	if status != http.StatusBadRequest || errCode(m) != -32021 || !strings.Contains(fmt.Sprint(m), TasksExtension) {
		t.Fatalf("tasks/get without the extension: %d %v", status, m)
	}
	// A routing header that disagrees with the body: -32020.
	status, m = fx.rpc(t, "alice", "tasks/get", `{"taskId":"`+id+`","_meta":{`+modernMeta+`,`+withTasksExt+`}}`, "Mcp-Name", "task-other")
	if status != http.StatusBadRequest || errCode(m) != -32020 {
		t.Fatalf("a mismatched Mcp-Name: %d %v", status, m)
	}
}

// TestTaskBodiesCountAgainstTheBudget: a running task holds its request,
// and those bytes count against its owner's share of the in-flight budget
// until it ends; another principal's share is untouched.
func TestTaskBodiesCountAgainstTheBudget(t *testing.T) {
	t.Parallel()
	fx := newTaskFixture(t, runs.Limits{}, HTTPOptions{MaxInFlightBytes: 200 << 10, MaxInFlightBytesPerPrincipal: 32 << 10})
	args := `{"wait":true,"pad":"` + strings.Repeat("x", 10<<10) + `"}`
	var ids []string
	for range 2 {
		id, _ := fx.call(t, "alice", args, true)["taskId"].(string)
		if id == "" {
			t.Fatal("no task")
		}
		ids = append(ids, id)
	}
	meta := modernMeta + "," + withTasksExt
	status, m := fx.rpc(t, "alice", "tools/call", `{"name":"job","arguments":`+args+`,"_meta":{`+meta+`}}`)
	if status != http.StatusServiceUnavailable || !strings.Contains(fmt.Sprint(m), "your running tasks' included") {
		t.Fatalf("a third 10 KiB task past a 32 KiB share: %d %v", status, m)
	}
	if id, _ := fx.call(t, "bob", args, true)["taskId"].(string); id == "" {
		t.Fatal("another principal's task was refused")
	}
	close(fx.release)
	for _, id := range ids {
		fx.waitStatus(t, "alice", id, "completed")
	}
	testwait.Until(t, 5*time.Second, "alice's share to come back", func() bool {
		status, _ := fx.rpc(t, "alice", "tools/call", `{"name":"job","arguments":{},"_meta":{`+meta+`}}`)
		return status == http.StatusOK
	})
}

// An unknown task id, however long, is quoted short in the error.
func TestUnknownTaskIDIsQuotedShort(t *testing.T) {
	t.Parallel()
	fx := newTaskFixture(t, runs.Limits{})
	long := "task-" + strings.Repeat("é", 100000)
	_, m := fx.rpc(t, "alice", "tasks/get", `{"taskId":"`+long+`","_meta":{`+modernMeta+`,`+withTasksExt+`}}`, "Mcp-Name", long)
	e, _ := m["error"].(map[string]any)
	msg := fmt.Sprint(e["message"])
	if errCode(m) != mcp.INVALID_PARAMS || len(msg) > 300 || !strings.Contains(msg, "no task \"task-éé") || !utf8.ValidString(msg) {
		t.Fatalf("an unknown long id: %.400v", m)
	}
}

// TestTasksAreAudited: a task's start, its input asked and answered, a
// cancel and its end are audit lines of the principal's (kind "task", the
// task id as name), with the outcome; never the arguments or the result.
func TestTasksAreAudited(t *testing.T) {
	t.Parallel()
	taskLines := func(fx *taskFixture, n int, ids map[string]string) string {
		var lines []string
		testwait.Until(t, 5*time.Second, "the tasks' last audit lines", func() bool {
			data, _ := os.ReadFile(fx.audit)
			lines = lines[:0]
			for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
				var r gateway.AuditRecord
				if json.Unmarshal([]byte(line), &r) == nil && r.Kind == gateway.AuditKindTask {
					lines = append(lines, r.Principal+" "+ids[r.Name]+" "+r.Decision+" "+r.Outcome)
				}
			}
			return len(lines) >= n
		})
		return strings.Join(lines, "\n")
	}
	// A call that answers input_required: asked, answered, completed.
	up := newUpstreamTaskFixture(t)
	asked, _ := up.callTool(t, "asker")["taskId"].(string)
	up.waitStatus(t, "alice", asked, "input_required")
	up.task(t, "alice", "tasks/update", asked, `,"inputResponses":{"name":{"action":"accept","content":{"name":"secret-name-7"}}}`)
	up.waitStatus(t, "alice", asked, "completed")
	want := "alice asked started \nalice asked input asked (1) \nalice asked input answered (1) \nalice asked completed OK"
	if got := taskLines(up, 4, map[string]string{asked: "asked"}); got != want {
		t.Errorf("audit lines of a task that asked:\n%s\nwant:\n%s", got, want)
	}
	if data, _ := os.ReadFile(up.audit); strings.Contains(string(data), "secret-name-7") || strings.Contains(string(data), "Your name?") {
		t.Errorf("the audit log holds a task's question or answer:\n%s", data)
	}
	// A cancelled task.
	fx := newTaskFixture(t, runs.Limits{})
	stopped, _ := fx.call(t, "bob", `{"wait":true}`, true)["taskId"].(string)
	fx.task(t, "bob", "tasks/cancel", stopped, "")
	fx.waitStatus(t, "bob", stopped, "cancelled")
	want = "bob stopped started \nbob stopped cancel asked \nbob stopped cancelled CANCELLED"
	if got := taskLines(fx, 3, map[string]string{stopped: "stopped"}); got != want {
		t.Errorf("audit lines of a cancelled task:\n%s\nwant:\n%s", got, want)
	}
}

// TestTaskCancelStopsTheRun: tasks/cancel acks with an empty complete
// result, the run's call is cancelled, and the task settles cancelled; a
// cancel of a final task acks the same.
func TestTaskCancelStopsTheRun(t *testing.T) {
	t.Parallel()
	fx := newTaskFixture(t, runs.Limits{})
	id := fx.call(t, "alice", `{"wait":true}`, true)["taskId"].(string)
	_, m := fx.task(t, "alice", "tasks/cancel", id, "")
	if ack, _ := m["result"].(map[string]any); ack == nil || ack["resultType"] != "complete" || len(ack) != 1 {
		t.Fatalf("cancel ack: %v", m)
	}
	fx.waitStatus(t, "alice", id, "cancelled")
	for i := 0; i < 500 && fx.stopped.Load() == 0; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if fx.stopped.Load() != 1 {
		t.Fatal("the cancelled task's call did not stop")
	}
	_, m = fx.task(t, "alice", "tasks/cancel", id, "")
	if ack, _ := m["result"].(map[string]any); ack == nil || ack["resultType"] != "complete" {
		t.Fatalf("cancel of a final task: %v", m)
	}
}

// TestTasksAreTheirOwners: another principal's task id is not found, for
// every method, and leaves the task as it was.
func TestTasksAreTheirOwners(t *testing.T) {
	t.Parallel()
	fx := newTaskFixture(t, runs.Limits{})
	id := fx.call(t, "alice", `{"wait":true}`, true)["taskId"].(string)
	for _, method := range []string{"tasks/get", "tasks/cancel", "tasks/update"} {
		extra := ""
		if method == "tasks/update" {
			extra = `,"inputResponses":{"q":{"action":"accept"}}`
		}
		_, m := fx.task(t, "mallory", method, id, extra)
		if errCode(m) != -32602 || !strings.Contains(fmt.Sprint(m), "not yours") {
			t.Fatalf("mallory's %s of alice's task: %v", method, m)
		}
	}
	_, m := fx.task(t, "alice", "tasks/get", "task-never-made", "")
	if errCode(m) != -32602 {
		t.Fatalf("an unknown task: %v", m)
	}
	if res := fx.waitStatus(t, "alice", id, "working"); res == nil {
		t.Fatal("unreachable")
	}
	close(fx.release)
	fx.waitStatus(t, "alice", id, "completed")
}

// TestTaskFloodIsCapped: past the live cap a principal's next call is
// refused (RATE_LIMITED) while another principal's is not; a task that ends
// frees its place.
func TestTaskFloodIsCapped(t *testing.T) {
	t.Parallel()
	fx := newTaskFixture(t, runs.Limits{LivePerPrincipal: 3})
	var ids []string
	for i := 0; i < 3; i++ {
		ids = append(ids, fx.call(t, "alice", `{"wait":true}`, true)["taskId"].(string))
	}
	for i := 0; i < 20; i++ {
		res := fx.call(t, "alice", `{"wait":true}`, true)
		if res["taskId"] != nil || res["isError"] != true || !strings.Contains(fmt.Sprint(res["content"]), "RATE_LIMITED") {
			t.Fatalf("call %d past the cap: %v", i, res)
		}
	}
	if fx.call(t, "bob", `{}`, true)["taskId"] == nil {
		t.Fatal("bob is held back by alice's tasks")
	}
	fx.task(t, "alice", "tasks/cancel", ids[0], "")
	if fx.call(t, "alice", `{}`, true)["taskId"] == nil {
		t.Fatal("a cancelled task did not free its place")
	}
	close(fx.release)
}

// TestTaskInputThroughUpdate: a run that asks goes input_required with its
// requests on tasks/get; tasks/update answers it and the run goes on with
// the answer; a malformed answer is refused.
func TestTaskInputThroughUpdate(t *testing.T) {
	t.Parallel()
	fx := newTaskFixture(t, runs.Limits{})
	id := fx.call(t, "alice", `{"ask":"your name?"}`, true)["taskId"].(string)
	res := fx.waitStatus(t, "alice", id, "input_required")
	reqs, _ := res["inputRequests"].(map[string]any)
	q, _ := reqs["q"].(map[string]any)
	if q["method"] != "elicitation/create" || !strings.Contains(fmt.Sprint(q["params"]), "your name?") {
		t.Fatalf("input requests: %v", res)
	}
	for _, bad := range []string{`,"inputResponses":null`, `,"inputResponses":{"q":12345}`, ``} {
		_, m := fx.task(t, "alice", "tasks/update", id, bad)
		if errCode(m) != -32602 {
			t.Fatalf("tasks/update with %s: %v", bad, m)
		}
	}
	_, m := fx.task(t, "alice", "tasks/update", id, `,"inputResponses":{"q":{"action":"accept","content":{"name":"Alice"}}}`)
	if ack, _ := m["result"].(map[string]any); ack == nil || ack["resultType"] != "complete" || len(ack) != 1 {
		t.Fatalf("update ack: %v", m)
	}
	done := fx.waitStatus(t, "alice", id, "completed")
	if !strings.Contains(fmt.Sprint(done["result"]), `answered {"action":"accept","content":{"name":"Alice"}}`) {
		t.Fatalf("the run's answer: %v", done)
	}
}

// newUpstreamTaskFixture is a task fixture whose gateway also has an
// upstream "up" with tools that offer tasks (execution.taskSupport) and one
// that does not, and a tool of the front end's mcp-go server that asks
// through input_required (a multi round-trip request).
// upstreamLeak is a configured secret the upstream fixture's "confirm"
// puts in its question, as a server that echoes a credential would.
const upstreamLeak = "s3cret-in-the-question-42"

func newUpstreamTaskFixture(t *testing.T, tune ...func(*TaskOptions)) *taskFixture {
	t.Helper()
	return newUpstreamTaskFixtureWith(t, nil, tune...)
}

// newUpstreamTaskFixtureWith is newUpstreamTaskFixture with more options
// for the front end.
func newUpstreamTaskFixtureWith(t *testing.T, frontendOpts []Option, tune ...func(*TaskOptions)) *taskFixture {
	t.Helper()
	// "confirm" is listed as running only as a task but served as an
	// ordinary call, as the conformance fixture does: the gateway in front
	// makes the task (an upstream that itself refuses calls without one is
	// not passed through yet: docs/serve.md).
	up := server.NewMCPServer("up", "1", server.WithToolCapabilities(true), server.WithElicitation(),
		server.WithToolFilter(func(_ context.Context, tools []mcp.Tool) []mcp.Tool {
			out := make([]mcp.Tool, len(tools))
			for i, t := range tools {
				if t.Name == "confirm" {
					t.Execution = &mcp.ToolExecution{TaskSupport: mcp.TaskSupportRequired}
				}
				out[i] = t
			}
			return out
		}))
	offered := mcp.NewTool("offered", mcp.WithDescription("Offers tasks."))
	offered.Execution = &mcp.ToolExecution{TaskSupport: mcp.TaskSupportOptional}
	failing := mcp.NewTool("rpcfail", mcp.WithDescription("Fails with a JSON-RPC error."))
	failing.Execution = &mcp.ToolExecution{TaskSupport: mcp.TaskSupportOptional}
	up.AddTool(offered, func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("offered ran"), nil
	})
	up.AddTool(failing, func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, fmt.Errorf("the upstream broke")
	})
	confirm := mcp.NewTool("confirm", mcp.WithDescription("Asks its client to confirm."))
	confirm.Execution = &mcp.ToolExecution{TaskSupport: mcp.TaskSupportOptional}
	up.AddTool(confirm, func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if answer := server.ElicitationResponse(req.Params.InputResponses, "sure"); answer != nil {
			return mcp.NewToolResultText(fmt.Sprintf("confirmed: %s %v", answer.Action, answer.Content)), nil
		}
		return server.NewInputRequestBuilder("").Elicit("sure", mcp.ElicitationParams{Message: "Sure? " + upstreamLeak,
			RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"sure": map[string]any{"type": "boolean"}}}}).ToolResult(), nil
	})
	up.AddTool(mcp.NewTool("plain", mcp.WithDescription("Offers no task.")), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("plain ran"), nil
	})
	fx := &taskFixture{release: make(chan struct{})}
	// Over streamable HTTP on 2025-11-25: mcp-go's bridge asks the gateway
	// (elicitation/create) for "confirm"'s input requests, and the call's
	// context reaches those requests (see docs/serve.md for stdio upstreams).
	upSrv := httptest.NewServer(server.NewStreamableHTTPServer(up, server.WithStateful(true), server.WithStreamableHTTPProtocolVersions("2025-11-25")))
	t.Cleanup(upSrv.Close)
	settings := gateway.DefaultSettings()
	settings.HealthInterval = 0
	fx.audit = filepath.Join(t.TempDir(), "audit.jsonl")
	settings.Audit = &gateway.AuditConfig{Path: fx.audit}
	settings.Secrets = []string{upstreamLeak}
	g := startGateway(t, &gateway.Config{Settings: settings, Servers: map[string]*gateway.ServerConfig{
		"up": {Name: "up", Transport: gateway.TransportStreamableHTTP, URL: upSrv.URL + "/mcp"}}})
	reg := runs.NewRegistry(runs.NewMemoryStore(nil), runs.Options{})
	opts := TaskOptions{Registry: reg, Tools: func(name string) bool { return name == "asker" || name == "lacking" }}
	for _, fn := range tune {
		fn(&opts)
	}
	f := New(g, append([]Option{WithTasks(opts)}, frontendOpts...)...)
	t.Cleanup(f.Close)
	f.MCPServer().AddTool(mcp.NewTool("lacking", mcp.WithDescription("Needs what the client lacks.")), func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, answerError(ctx, rpcError{Code: mcp.MISSING_REQUIRED_CLIENT_CAPABILITY, Message: "lacking needs sampling"})
	})
	f.MCPServer().AddTool(mcp.NewTool("asker", mcp.WithDescription("Asks a name.")), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if answer := server.ElicitationResponse(req.Params.InputResponses, "name"); answer != nil {
			return mcp.NewToolResultText(fmt.Sprintf("state %s, hello %v", req.Params.RequestState, answer.Content)), nil
		}
		return server.NewInputRequestBuilder("round-1").Elicit("name", mcp.ElicitationParams{Message: "Your name?",
			RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}}).ToolResult(), nil
	})
	h := f.HTTPHandler(HTTPOptions{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(auth.WithPrincipal(r.Context(), auth.Principal{ID: r.Header.Get("X-Test-Principal")})))
	}))
	t.Cleanup(srv.Close)
	fx.url = srv.URL + "/mcp"
	return fx
}

func (fx *taskFixture) callTool(t *testing.T, name string) map[string]any {
	t.Helper()
	_, m := fx.rpc(t, "alice", "tools/call", `{"name":"`+name+`","arguments":{},"_meta":{`+modernMeta+`,`+withTasksExt+`}}`, "Mcp-Name", name)
	res, _ := m["result"].(map[string]any)
	if res == nil {
		t.Fatalf("tools/call %s: %v", name, m)
	}
	return res
}

// TestUpstreamToolsThatOfferTasks: an upstream tool whose definition offers
// tasks runs as one through the gateway; one that does not answers as
// ever; an upstream's JSON-RPC error fails its task with an error.
func TestUpstreamToolsThatOfferTasks(t *testing.T) {
	t.Parallel()
	fx := newUpstreamTaskFixture(t)
	id, _ := fx.callTool(t, "up__offered")["taskId"].(string)
	if id == "" {
		t.Fatal("an upstream tool that offers tasks did not run as one")
	}
	if done := fx.waitStatus(t, "alice", id, "completed"); !strings.Contains(fmt.Sprint(done["result"]), "offered ran") {
		t.Fatalf("the upstream task: %v", done)
	}
	if res := fx.callTool(t, "up__plain"); res["taskId"] != nil || !strings.Contains(fmt.Sprint(res["content"]), "plain ran") {
		t.Fatalf("an upstream tool without tasks: %v", res)
	}
	id, _ = fx.callTool(t, "up__rpcfail")["taskId"].(string)
	failed := fx.waitStatus(t, "alice", id, "failed")
	e, _ := failed["error"].(map[string]any)
	if failed["result"] != nil || e["code"] == nil || !strings.Contains(fmt.Sprint(e["message"]), "the upstream broke") {
		t.Fatalf("an upstream's JSON-RPC error in a task: %v", failed)
	}
}

// TestTaskKeepsTheAnswersErrorCode: an error the front end answers itself
// (here -32021, a capability the request lacks) fails a task with its own
// code, as it answers a call that is not a task.
func TestTaskKeepsTheAnswersErrorCode(t *testing.T) {
	t.Parallel()
	fx := newUpstreamTaskFixture(t)
	id, _ := fx.callTool(t, "lacking")["taskId"].(string)
	if id == "" {
		t.Fatal("no task")
	}
	failed := fx.waitStatus(t, "alice", id, "failed")
	e, _ := failed["error"].(map[string]any)
	if c, _ := e["code"].(float64); c != mcp.MISSING_REQUIRED_CLIENT_CAPABILITY || !strings.Contains(fmt.Sprint(e["message"]), "needs sampling") {
		t.Fatalf("the task's error: %v", failed)
	}
}

// TestTaskRetriesInputRequired: a call that answers input_required parks
// its task in input_required with those requests; tasks/update's answers
// and the call's requestState go back to it, as a client's retry would.
func TestTaskRetriesInputRequired(t *testing.T) {
	t.Parallel()
	fx := newUpstreamTaskFixture(t)
	id, _ := fx.callTool(t, "asker")["taskId"].(string)
	waiting := fx.waitStatus(t, "alice", id, "input_required")
	if q, _ := waiting["inputRequests"].(map[string]any)["name"].(map[string]any); q["method"] != "elicitation/create" {
		t.Fatalf("the task's input requests: %v", waiting)
	}
	if _, ok := waiting["requestState"]; ok {
		t.Fatalf("tasks/get carries requestState: %v", waiting)
	}
	fx.task(t, "alice", "tasks/update", id, `,"inputResponses":{"name":{"action":"accept","content":{"name":"Alice"}}}`)
	done := fx.waitStatus(t, "alice", id, "completed")
	if !strings.Contains(fmt.Sprint(done["result"]), "state round-1, hello map[name:Alice]") {
		t.Fatalf("the retried call: %v", done)
	}
}

// TestTaskAnswersAnUpstreamsElicitation: an upstream that asks its client
// (elicitation/create) while it serves a task's call asks the task's
// client: the task goes input_required with the request, and tasks/update's
// answer is the upstream's. A tool that runs only as a task is listed as
// such and refused (-32021) to a client without the extension.
func TestTaskAnswersAnUpstreamsElicitation(t *testing.T) {
	t.Parallel()
	fx := newUpstreamTaskFixture(t)
	status, m := fx.rpc(t, "alice", "tools/call", `{"name":"up__confirm","arguments":{},"_meta":{`+modernMeta+`,"io.modelcontextprotocol/clientCapabilities":{}}}`, "Mcp-Name", "up__confirm")
	if status != http.StatusBadRequest || errCode(m) != -32021 {
		t.Fatalf("a required-task tool without the extension: %d %v", status, m)
	}
	_, m = fx.rpc(t, "alice", "tools/list", `{"_meta":{`+modernMeta+`,"io.modelcontextprotocol/clientCapabilities":{}}}`)
	if !strings.Contains(fmt.Sprint(m), "name:up__confirm") || !strings.Contains(fmt.Sprint(m), "taskSupport:required") {
		t.Fatalf("tools/list does not say up__confirm runs only as a task: %v", m)
	}
	id, _ := fx.callTool(t, "up__confirm")["taskId"].(string)
	waiting := fx.waitStatus(t, "alice", id, "input_required")
	var key string
	for k, v := range waiting["inputRequests"].(map[string]any) {
		if r := v.(map[string]any); r["method"] == "elicitation/create" && strings.Contains(fmt.Sprint(r["params"]), "Sure?") {
			key = k
		}
	}
	if key == "" {
		t.Fatalf("the upstream's elicitation is not the task's input request: %v", waiting)
	}
	// What the upstream asks is redacted as it is for a session's client.
	if got := fmt.Sprint(waiting["inputRequests"]); strings.Contains(got, upstreamLeak) {
		t.Errorf("a task's input request carries a configured secret the upstream sent: %s", got)
	}
	fx.task(t, "alice", "tasks/update", id, `,"inputResponses":{"`+key+`":{"action":"accept","content":{"sure":true}}}`)
	done := fx.waitStatus(t, "alice", id, "completed")
	if !strings.Contains(fmt.Sprint(done["result"]), "confirmed: accept map[sure:true]") {
		t.Fatalf("the upstream's answer: %v", done)
	}
}

// TestTaskInputWaitIsBounded: a task whose call answered input_required
// and that nobody answers fails once InputWait has passed, saying so,
// instead of holding its request and its place among the owner's live
// tasks for ever (the requestState its retry carries expires anyway).
func TestTaskInputWaitIsBounded(t *testing.T) {
	t.Parallel()
	fx := newUpstreamTaskFixture(t, func(o *TaskOptions) { o.InputWait = 300 * time.Millisecond })
	id, _ := fx.callTool(t, "asker")["taskId"].(string)
	fx.waitStatus(t, "alice", id, "input_required")
	failed := fx.waitStatus(t, "alice", id, "failed")
	if !strings.Contains(fmt.Sprint(failed["error"]), "nobody answered its input requests (tasks/update) within 300ms") {
		t.Fatalf("the unanswered task: %v", failed)
	}
}

// TestPanickingTaskCallIsLogged: a task's call runs on the task's own
// goroutine; a panic there (here a hook's, before the tool's handler and
// mcp-go's recovery) fails that task, and the log has the panic with its
// stack, so that the bug can be found rather than only counted.
func TestPanickingTaskCallIsLogged(t *testing.T) {
	t.Parallel()
	hooks := &server.Hooks{}
	hooks.AddBeforeCallTool(func(context.Context, any, *mcp.CallToolRequest) { panic("task hook") })
	logs := &testlog.Buffer{}
	g := startGateway(t, &gateway.Config{Settings: gateway.DefaultSettings(), Servers: map[string]*gateway.ServerConfig{}})
	reg := runs.NewRegistry(runs.NewMemoryStore(nil), runs.Options{})
	f := New(g, WithLogger(slog.New(slog.NewTextHandler(logs, nil))), WithTasks(TaskOptions{Registry: reg, Tools: func(name string) bool { return name == "job" }}),
		func(s *Server) { s.extra = append(s.extra, server.WithHooks(hooks)) })
	t.Cleanup(f.Close)
	if err := f.AddTool(toolspec.Spec{Name: "job", InputSchema: json.RawMessage(`{"type":"object"}`),
		Handler: func(context.Context, toolspec.Request) (*gateway.CallResult, error) {
			return nil, fmt.Errorf("never called")
		}}); err != nil {
		t.Fatal(err)
	}
	h := f.HTTPHandler(HTTPOptions{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(auth.WithPrincipal(r.Context(), auth.Principal{ID: r.Header.Get("X-Test-Principal")})))
	}))
	t.Cleanup(srv.Close)
	fx := &taskFixture{url: srv.URL + "/mcp"}
	id, _ := fx.call(t, "alice", `{}`, true)["taskId"].(string)
	if id == "" {
		t.Fatal("no task")
	}
	failed := fx.waitStatus(t, "alice", id, "failed")
	if e, _ := failed["error"].(map[string]any); !strings.Contains(fmt.Sprint(e["message"]), "failed inside the server") {
		t.Fatalf("the task's error: %v", failed)
	}
	if !strings.Contains(logs.String(), "task hook") || !strings.Contains(logs.String(), "goroutine ") {
		t.Errorf("the log does not have the panic and its stack:\n%s", logs.String())
	}
}

// storePanicsOnAsk is a task store whose write of a task's input
// requests panics.
type storePanicsOnAsk struct{ *runs.MemoryStore }

func (s storePanicsOnAsk) Modify(ctx context.Context, owner, id string, change func(*runs.Run, runs.Held) error) (runs.Run, error) {
	return s.MemoryStore.Modify(ctx, owner, id, func(r *runs.Run, held runs.Held) error {
		err := change(r, held)
		if err == nil && r.State == runs.InputRequired {
			panic("task store")
		}
		return err
	})
}

// TestPanickingTaskIsContained: a task runs on a goroutine of its own,
// which nothing else recovers; beside its call's rounds (recovered in
// serveTaskCall) it asks for input, stores its outcome and audits. A panic
// there (here the task store's, as the task asks for input) fails that
// task with the error that says to call again, is in the log with its
// stack, and serve keeps serving.
func TestPanickingTaskIsContained(t *testing.T) {
	t.Parallel()
	logs := &testlog.Buffer{}
	fx := newUpstreamTaskFixtureWith(t, []Option{WithLogger(slog.New(slog.NewTextHandler(logs, nil)))}, func(o *TaskOptions) {
		o.Registry = runs.NewRegistry(storePanicsOnAsk{runs.NewMemoryStore(nil)}, runs.Options{})
	})
	id, _ := fx.callTool(t, "asker")["taskId"].(string)
	if id == "" {
		t.Fatal("no task")
	}
	failed := fx.waitStatus(t, "alice", id, "failed")
	if e, _ := failed["error"].(map[string]any); !strings.Contains(fmt.Sprint(e["message"]), "failed inside the server") {
		t.Fatalf("the task's error: %v", failed)
	}
	if !strings.Contains(logs.String(), "task store") || !strings.Contains(logs.String(), "goroutine ") {
		t.Errorf("the log does not have the panic and its stack:\n%s", logs.String())
	}
	if id, _ := fx.callTool(t, "up__offered")["taskId"].(string); id == "" || !strings.Contains(fmt.Sprint(fx.waitStatus(t, "alice", id, "completed")["result"]), "offered ran") {
		t.Fatal("after the panic, a task did not run")
	}
}
