package frontend

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/gateway"
	"github.com/sandboxrt/sandbox/runs"
)

// newAskFirstFixture is a front end with tasks in front of a 2026-07-28
// upstream whose tools run only as tasks: "namer" asks a name through
// input_required before anything else (as the conformance fixture's
// test_tool_with_task does), "slow" works 2 s (or ms) before it answers (and
// counts the calls whose context was cancelled in stopped).
func newAskFirstFixture(t *testing.T) (*taskFixture, *atomic.Int32) {
	t.Helper()
	up := server.NewMCPServer("up", "1", server.WithToolCapabilities(true),
		server.WithToolFilter(func(_ context.Context, tools []mcp.Tool) []mcp.Tool {
			for i := range tools {
				tools[i].Execution = &mcp.ToolExecution{TaskSupport: mcp.TaskSupportRequired}
			}
			return tools
		}))
	namer := mcp.NewTool("namer", mcp.WithDescription("Asks a name, then greets."))
	namer.Execution = &mcp.ToolExecution{TaskSupport: mcp.TaskSupportOptional}
	up.AddTool(namer, func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if answer := server.ElicitationResponse(req.Params.InputResponses, "user_name"); answer != nil {
			return mcp.NewToolResultText(fmt.Sprintf("Hello, %v!", answer.Content.(map[string]any)["name"])), nil
		}
		return server.NewInputRequestBuilder("").Elicit("user_name", mcp.ElicitationParams{Message: "Your name?",
			RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}}).ToolResult(), nil
	})
	var stopped atomic.Int32
	slow := mcp.NewTool("slow", mcp.WithDescription("Works for ms milliseconds (2000 unless told)."), mcp.WithNumber("ms"))
	slow.Execution = &mcp.ToolExecution{TaskSupport: mcp.TaskSupportOptional}
	up.AddTool(slow, func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		select {
		case <-time.After(time.Duration(req.GetFloat("ms", 2000)) * time.Millisecond):
			return mcp.NewToolResultText("slow done"), nil
		case <-ctx.Done():
			stopped.Add(1)
			return nil, ctx.Err()
		}
	})
	upSrv := httptest.NewServer(server.NewStreamableHTTPServer(up, server.WithStateLess(true)))
	t.Cleanup(upSrv.Close)
	settings := gateway.DefaultSettings()
	settings.HealthInterval = 0
	g := startGateway(t, &gateway.Config{Settings: settings, Servers: map[string]*gateway.ServerConfig{
		"up": {Name: "up", Transport: gateway.TransportStreamableHTTP, URL: upSrv.URL + "/mcp"}}})
	f := New(g, WithTasks(TaskOptions{Registry: runs.NewRegistry(runs.NewMemoryStore(nil), runs.Options{})}))
	t.Cleanup(f.Close)
	h := f.HTTPHandler(HTTPOptions{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(auth.WithPrincipal(r.Context(), auth.Principal{ID: r.Header.Get("X-Test-Principal")})))
	}))
	t.Cleanup(srv.Close)
	return &taskFixture{url: srv.URL + "/mcp"}, &stopped
}

// callAsking calls a tool as a client that declares elicitation and the
// tasks extension, with the answers and state of a retry when given.
func (fx *taskFixture) callAsking(t *testing.T, name, retry string) map[string]any {
	t.Helper()
	_, m := fx.rpc(t, "alice", "tools/call", `{"name":"`+name+`","arguments":{}`+retry+`,"_meta":{`+modernMeta+
		`,"io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}}}`, "Mcp-Name", name)
	res, _ := m["result"].(map[string]any)
	if res == nil {
		t.Fatalf("tools/call %s: %v", name, m)
	}
	return res
}

// TestRequiredTaskAsksBeforeItIsATask: a tool that runs only as a task and
// asks for input first is answered input_required in the request, with no
// task; the retry with the answer is the round that becomes the task, its
// answer carrying no requestState, and the task's result reflects the
// answer (the conformance scenario tasks-mrtr-composition).
func TestRequiredTaskAsksBeforeItIsATask(t *testing.T) {
	t.Parallel()
	fx, _ := newAskFirstFixture(t)
	first := fx.callAsking(t, "up__namer", "")
	state, _ := first["requestState"].(string)
	if first["resultType"] != "input_required" || first["taskId"] != nil || state == "" {
		t.Fatalf("round 1: %v", first)
	}
	if q, _ := first["inputRequests"].(map[string]any)["user_name"].(map[string]any); q["method"] != "elicitation/create" {
		t.Fatalf("round 1's input requests: %v", first)
	}
	second := fx.callAsking(t, "up__namer", `,"inputResponses":{"user_name":{"action":"accept","content":{"name":"Alice"}}},"requestState":"`+state+`"`)
	id, _ := second["taskId"].(string)
	if second["resultType"] != "task" || id == "" {
		t.Fatalf("round 2 is not a task: %v", second)
	}
	for _, k := range []string{"requestState", "inputRequests"} {
		if _, ok := second[k]; ok {
			t.Errorf("round 2's CreateTaskResult carries %s: %v", k, second)
		}
	}
	done := fx.waitStatus(t, "alice", id, "completed")
	if !strings.Contains(fmt.Sprint(done["result"]), "Hello, Alice!") {
		t.Fatalf("the task's result: %v", done)
	}
}

// TestRequiredTaskThatWorksBecomesATask: a round of a required-task tool
// that does not ask at once is a task within askFirstWindow, the task goes
// on with that very round (the upstream is called once), and cancelling
// the task cancels the round upstream.
func TestRequiredTaskThatWorksBecomesATask(t *testing.T) {
	t.Parallel()
	fx, stopped := newAskFirstFixture(t)
	start := time.Now()
	res := fx.callAsking(t, "up__slow", "")
	id, _ := res["taskId"].(string)
	if res["resultType"] != "task" || id == "" || res["status"] != "working" {
		t.Fatalf("a round that works: %v", res)
	}
	if took := time.Since(start); took < askFirstWindow || took > askFirstWindow+time.Second {
		t.Errorf("the task was answered after %v; want the window, %v", took, askFirstWindow)
	}
	if done := fx.waitStatus(t, "alice", id, "completed"); !strings.Contains(fmt.Sprint(done["result"]), "slow done") {
		t.Fatalf("the adopted round's result: %v", done)
	}

	id, _ = fx.callAsking(t, "up__slow", "")["taskId"].(string)
	fx.task(t, "alice", "tasks/cancel", id, "")
	fx.waitStatus(t, "alice", id, "cancelled")
	deadline := time.Now().Add(5 * time.Second)
	for stopped.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("cancelling the task did not cancel its first round upstream")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
