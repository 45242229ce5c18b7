package frontend

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/gateway"
	"github.com/sandboxrt/sandbox/runs"
)

// TestUpstreamTaskPassesThroughATask: a 2025-11-25 upstream whose tool runs
// only as its own task (it refuses calls without one) is called through
// the front end's task: the gateway makes the upstream's task and polls it
// inside its own; the upstream's elicitation meanwhile is the task's
// input_required, tasks/update answers it, the upstream's result is the
// task's; tasks/cancel cancels the upstream's task.
func TestUpstreamTaskPassesThroughATask(t *testing.T) {
	t.Parallel()
	// "hang" works until its task is cancelled: mcp-go's tasks/cancel
	// (counted in cancels) ends it. (mcp-go 1.2.1 cancels the context a
	// task runs under once its tools/call is answered, so the handler
	// cannot wait on it.)
	var cancels atomic.Int32
	release := make(chan struct{})
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	hooks := &server.Hooks{}
	hooks.AddBeforeCancelTask(func(context.Context, any, *mcp.CancelTaskRequest) {
		cancels.Add(1)
		once.Do(func() { close(release) })
	})
	up := server.NewMCPServer("tasky", "1", server.WithToolCapabilities(true), server.WithElicitation(),
		server.WithTaskCapabilities(false, true, true), server.WithHooks(hooks))
	greet := mcp.NewTool("greet", mcp.WithDescription("Asks a name, then greets."))
	greet.Execution = &mcp.ToolExecution{TaskSupport: mcp.TaskSupportRequired}
	up.AddTool(greet, func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res, err := server.ServerFromContext(ctx).RequestElicitation(ctx, mcp.ElicitationRequest{Params: mcp.ElicitationParams{Message: "Your name?",
			RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}}})
		if err != nil {
			return nil, err
		}
		return mcp.NewToolResultText(fmt.Sprintf("Hello, %v!", res.Content.(map[string]any)["name"])), nil
	})
	hang := mcp.NewTool("hang", mcp.WithDescription("Works until its task is cancelled."))
	hang.Execution = &mcp.ToolExecution{TaskSupport: mcp.TaskSupportRequired}
	up.AddTool(hang, func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		<-release
		return mcp.NewToolResultText("released"), nil
	})
	settings := gateway.DefaultSettings()
	settings.HealthInterval = 0
	g := startGateway(t, &gateway.Config{Settings: settings, Servers: map[string]*gateway.ServerConfig{}},
		gateway.WithInProcessServer("up", up, &gateway.ServerConfig{ProtocolVersion: "2025-11-25"}))
	f := New(g, WithTasks(TaskOptions{Registry: runs.NewRegistry(runs.NewMemoryStore(nil), runs.Options{})}))
	t.Cleanup(f.Close)
	h := f.HTTPHandler(HTTPOptions{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(auth.WithPrincipal(r.Context(), auth.Principal{ID: r.Header.Get("X-Test-Principal")})))
	}))
	t.Cleanup(srv.Close)
	fx := &taskFixture{url: srv.URL + "/mcp"}

	id, _ := fx.callAsking(t, "up__greet", "")["taskId"].(string)
	if id == "" {
		t.Fatal("no task")
	}
	waiting := fx.waitStatus(t, "alice", id, "input_required")
	var key string
	for k, v := range waiting["inputRequests"].(map[string]any) {
		if strings.Contains(fmt.Sprint(v), "Your name?") {
			key = k
		}
	}
	if key == "" {
		t.Fatalf("the upstream's question is not the task's: %v", waiting)
	}
	fx.task(t, "alice", "tasks/update", id, `,"inputResponses":{"`+key+`":{"action":"accept","content":{"name":"Alice"}}}`)
	if done := fx.waitStatus(t, "alice", id, "completed"); !strings.Contains(fmt.Sprint(done["result"]), "Hello, Alice!") {
		t.Fatalf("the upstream task's result: %v", done)
	}

	id, _ = fx.callAsking(t, "up__hang", "")["taskId"].(string)
	if got := fx.waitStatus(t, "alice", id, "working"); cancels.Load() != 0 {
		t.Fatalf("the upstream's task was cancelled before the task: %v", got)
	}
	fx.task(t, "alice", "tasks/cancel", id, "")
	fx.waitStatus(t, "alice", id, "cancelled")
	deadline := time.Now().Add(5 * time.Second)
	for cancels.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("cancelling the task did not cancel the upstream's task")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestUpstreamExtensionTaskPassesThrough: a 2026-07-28 upstream that serves
// the tasks extension (here another sandbox front end, whose tools run
// only as tasks) is asked for a task for such a tool and its task awaited
// within the call: the upstream's input_required before the task (its
// first round) and its result after are the call's; a call cancelled while
// the upstream's task works cancels that task.
func TestUpstreamExtensionTaskPassesThrough(t *testing.T) {
	t.Parallel()
	inner, stopped := newAskFirstFixture(t)
	settings := gateway.DefaultSettings()
	settings.HealthInterval = 0
	g := startGateway(t, &gateway.Config{Settings: settings, Servers: map[string]*gateway.ServerConfig{
		"a": {Name: "a", Transport: gateway.TransportStreamableHTTP, URL: inner.url, Headers: map[string]string{"X-Test-Principal": "bob"}}}})
	var asked atomic.Int32
	ctx := gateway.WithInputAsker(context.Background(), func(_ context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		asked.Add(1)
		return json.RawMessage(`{"action":"accept","content":{"name":"Alice"}}`), nil
	})
	caller := auth.Caller{Principal: auth.Principal{ID: "carol"}}
	res, err := g.Call(ctx, gateway.CallRequest{Tool: "a:up__namer", Caller: caller})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(res.Content[0]); !strings.Contains(got, "Hello, Alice!") || asked.Load() != 1 {
		t.Fatalf("got %s, asked %d times", got, asked.Load())
	}
	res, err = g.Call(ctx, gateway.CallRequest{Tool: "a:up__slow", Caller: caller})
	if err != nil || !strings.Contains(string(res.Content[0]), "slow done") {
		t.Fatalf("a task that works: %v %v", res, err)
	}
	// Cancelled well past the window, when the upstream's task exists.
	cctx, cancel := context.WithTimeout(ctx, askFirstWindow+1500*time.Millisecond)
	defer cancel()
	if _, err := g.Call(cctx, gateway.CallRequest{Tool: "a:up__slow", Caller: caller, Arguments: json.RawMessage(`{"ms": 20000}`)}); err == nil {
		t.Fatal("a call cancelled while its upstream task worked answered")
	}
	deadline := time.Now().Add(5 * time.Second)
	for stopped.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("cancelling the call did not cancel the upstream's task")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
