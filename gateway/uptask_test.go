package gateway

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/sandboxrt/sandbox/auth"
)

// taskOnlyServer is an mcp-go server whose tools run only as tasks (it
// refuses a call without one): "greet" asks a name (elicitation) and greets,
// "hang" works until its task is cancelled: the server's tasks/cancel
// requests are counted in cancels and end it. (mcp-go 1.2.1 runs a task
// under its tools/call request's context, which it cancels once it
// answered: a handler that waited on its context would end at once.)
func taskOnlyServer(t *testing.T, cancels *atomic.Int32) *server.MCPServer {
	release := make(chan struct{})
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	hooks := &server.Hooks{}
	hooks.AddBeforeCancelTask(func(context.Context, any, *mcp.CancelTaskRequest) {
		cancels.Add(1)
		once.Do(func() { close(release) })
	})
	s := server.NewMCPServer("tasky", "1", server.WithToolCapabilities(true), server.WithElicitation(),
		server.WithTaskCapabilities(false, true, true), server.WithHooks(hooks))
	greet := mcp.NewTool("greet", mcp.WithDescription("Asks a name, then greets."))
	greet.Execution = &mcp.ToolExecution{TaskSupport: mcp.TaskSupportRequired}
	s.AddTool(greet, func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res, err := server.ServerFromContext(ctx).RequestElicitation(ctx, mcp.ElicitationRequest{Params: mcp.ElicitationParams{Message: "Your name?",
			RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}}})
		if err != nil {
			return nil, err
		}
		name, _ := res.Content.(map[string]any)["name"].(string)
		return mcp.NewToolResultText("Hello, " + name + "!"), nil
	})
	hang := mcp.NewTool("hang", mcp.WithDescription("Works until its task is cancelled."))
	hang.Execution = &mcp.ToolExecution{TaskSupport: mcp.TaskSupportRequired}
	s.AddTool(hang, func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		<-release
		return mcp.NewToolResultText("released"), nil
	})
	return s
}

// TestUpstreamToolThatRunsOnlyAsATask: a tool of a server that takes tasks
// (2025-11-25) and refuses the tool
// without one is called as the server's task: the
// gateway polls it to its end and answers its result as any call's; what
// the server asks meanwhile reaches the caller's asker (a gateway task's
// client); a call cancelled before the task ends cancels the task.
func TestUpstreamToolThatRunsOnlyAsATask(t *testing.T) {
	t.Parallel()
	var cancelled atomic.Int32
	g, err := New(&Config{Servers: map[string]*ServerConfig{}, Settings: DefaultSettings()}, WithInProcessServer("tasky", taskOnlyServer(t, &cancelled), &ServerConfig{ProtocolVersion: "2025-11-25"}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	if err := g.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	callUpstreamTasks(t, g, &cancelled)
}

func callUpstreamTasks(t *testing.T, g *Gateway, cancelled *atomic.Int32) {
	t.Helper()
	var asked atomic.Int32
	ctx := WithInputAsker(context.Background(), func(_ context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		asked.Add(1)
		if method != "elicitation/create" || !strings.Contains(string(params), "Your name?") {
			t.Errorf("asked %s %s", method, params)
		}
		return json.RawMessage(`{"action":"accept","content":{"name":"Alice"}}`), nil
	})
	caller := auth.Caller{Principal: auth.Anonymous()}
	res, err := g.Call(ctx, CallRequest{Tool: "tasky:greet", Caller: caller})
	if err != nil {
		t.Fatal(err)
	}
	if got := callText(t, res); got != "Hello, Alice!" || asked.Load() != 1 {
		t.Fatalf("got %q, asked %d times", got, asked.Load())
	}

	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ended := make(chan error, 1)
	go func() {
		_, err := g.Call(cctx, CallRequest{Tool: "tasky:hang", Caller: caller})
		ended <- err
	}()
	select {
	case err := <-ended:
		t.Fatalf("the call of a task that works on ended by itself: %v", err)
	case <-time.After(500 * time.Millisecond):
	}
	if n := cancelled.Load(); n != 0 {
		t.Fatalf("the upstream's task was cancelled before the call was (%d tasks/cancel)", n)
	}
	cancel()
	if err := <-ended; err == nil {
		t.Fatal("a cancelled call of a task answered")
	}
	deadline := time.Now().Add(5 * time.Second)
	for cancelled.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("cancelling the call did not cancel the upstream's task")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
