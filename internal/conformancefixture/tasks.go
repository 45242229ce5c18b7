package conformancefixture

import (
	"context"
	"fmt"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// The tools the tasks scenarios of suite 0.2 call (the extension
// io.modelcontextprotocol/tasks, SEP-2663). The fixture runs each of them
// as an ordinary call, saying in its definition which may run as a task
// (execution.taskSupport): it is the gateway in front of it that makes
// the task, so the suite measures the gateway's tasks.
const (
	ToolGreet            = "greet"
	ToolSlowCompute      = "slow_compute"
	ToolFailingJob       = "failing_job"
	ToolProtocolErrorJob = "protocol_error_job"
	ToolConfirmDelete    = "confirm_delete"
	ToolMultiInput       = "multi_input"
	ToolWithTask         = "test_tool_with_task"
)

// requiredTaskTools are listed with taskSupport "required", as the
// scenarios expect (a client that did not declare the extension is refused
// them), but registered as "optional": the gateway in front makes the task
// and calls the fixture without one, which mcp-go refuses for a tool
// registered as required. presentRequiredTasks, the server's tool filter,
// says "required" in every listing.
var requiredTaskTools = map[string]bool{ToolWithTask: true, ToolFailingJob: true}

func presentRequiredTasks(_ context.Context, tools []mcp.Tool) []mcp.Tool {
	out := make([]mcp.Tool, len(tools))
	for i, t := range tools {
		if requiredTaskTools[t.Name] {
			t.Execution = &mcp.ToolExecution{TaskSupport: mcp.TaskSupportRequired}
		}
		out[i] = t
	}
	return out
}

// maxComputeSeconds bounds slow_compute's sleep.
const maxComputeSeconds = 300

func (f *fixture) addTaskTools() {
	task := func(t mcp.Tool, support mcp.TaskSupport) mcp.Tool {
		t.Execution = &mcp.ToolExecution{TaskSupport: support}
		return t
	}
	f.srv.AddTools(
		server.ServerTool{
			Tool: mcp.NewTool(ToolGreet, mcp.WithDescription("Says hello, at once (never a task)."), mcp.WithString("name", mcp.Required())),
			Handler: func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return mcp.NewToolResultText(fmt.Sprintf("Hello, %s!", req.GetString("name", "World"))), nil
			},
		},
		server.ServerTool{
			Tool: task(mcp.NewTool(ToolSlowCompute, mcp.WithDescription("Sleeps the given seconds, then answers; stops when cancelled."),
				mcp.WithNumber("seconds"), mcp.WithString("label")), mcp.TaskSupportOptional),
			Handler: func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				seconds := min(max(req.GetFloat("seconds", 0), 0), maxComputeSeconds)
				if err := sleep(ctx, time.Duration(seconds*float64(time.Second))); err != nil {
					return nil, err
				}
				return mcp.NewToolResultText(fmt.Sprintf("computed %s after %gs", req.GetString("label", "it"), seconds)), nil
			},
		},
		server.ServerTool{
			Tool: task(mcp.NewTool(ToolFailingJob, mcp.WithDescription("Reports a tool error after about a second.")), mcp.TaskSupportOptional),
			Handler: func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				if err := sleep(ctx, time.Second); err != nil {
					return nil, err
				}
				return mcp.NewToolResultError("the job failed, as failing_job always does"), nil
			},
		},
		server.ServerTool{
			Tool: task(mcp.NewTool(ToolProtocolErrorJob, mcp.WithDescription("Fails with a JSON-RPC error (a protocol error).")), mcp.TaskSupportOptional),
			Handler: func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return nil, fmt.Errorf("protocol_error_job failed inside the server, as it always does")
			},
		},
		server.ServerTool{
			Tool: task(mcp.NewTool(ToolConfirmDelete, mcp.WithDescription("Asks to confirm (elicitation), then deletes the file."),
				mcp.WithString("filename")), mcp.TaskSupportOptional),
			Handler: func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				name := req.GetString("filename", "the file")
				if answer := server.ElicitationResponse(req.Params.InputResponses, "confirm"); answer != nil {
					if answer.Action != mcp.ElicitationResponseActionAccept || field(answer.Content, "confirm") == false {
						return mcp.NewToolResultText("Kept " + name), nil
					}
					return mcp.NewToolResultText("Deleted " + name), nil
				}
				return askFor(ctx, req, "confirm", mcp.ElicitationParams{Message: "Delete " + name + "?",
					RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"confirm": map[string]any{"type": "boolean"}}}})
			},
		},
		server.ServerTool{
			Tool: task(mcp.NewTool(ToolMultiInput, mcp.WithDescription("Asks two questions at once (two elicitations), then answers with both.")), mcp.TaskSupportOptional),
			Handler: func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				first := server.ElicitationResponse(req.Params.InputResponses, "first")
				second := server.ElicitationResponse(req.Params.InputResponses, "second")
				if first != nil && second != nil {
					return mcp.NewToolResultText(fmt.Sprintf("first: %s %s; second: %s %s", first.Action, mustJSON(first.Content), second.Action, mustJSON(second.Content))), nil
				}
				if clientCapabilities(ctx).Elicitation == nil {
					return mcp.NewToolResultError(req.Params.Name + " needs a client that declares the elicitation capability; this client did not"), nil
				}
				schema := map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}, "confirm": map[string]any{"type": "boolean"}}}
				return server.NewInputRequestBuilder("").
					Elicit("first", mcp.ElicitationParams{Message: "First question?", RequestedSchema: schema}).
					Elicit("second", mcp.ElicitationParams{Message: "Second question?", RequestedSchema: schema}).
					ToolResult(), nil
			},
		},
		server.ServerTool{
			Tool: task(mcp.NewTool(ToolWithTask, mcp.WithDescription("Asks a user name (input_required), then answers with it; must run as a task.")), mcp.TaskSupportOptional),
			Handler: func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				if answer := server.ElicitationResponse(req.Params.InputResponses, "user_name"); answer != nil {
					return mcp.NewToolResultText(fmt.Sprintf("Hello, %v!", field(answer.Content, "name"))), nil
				}
				return askFor(ctx, req, "user_name", mcp.ElicitationParams{Message: "Your name?",
					RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}, "required": []string{"name"}}})
			},
		},
	)
}

// askFor answers input_required with one elicitation, or a tool error when
// the client cannot be asked.
func askFor(ctx context.Context, req mcp.CallToolRequest, key string, p mcp.ElicitationParams) (*mcp.CallToolResult, error) {
	if clientCapabilities(ctx).Elicitation == nil {
		return mcp.NewToolResultError(req.Params.Name + " needs a client that declares the elicitation capability; this client did not"), nil
	}
	return server.NewInputRequestBuilder("").Elicit(key, p).ToolResult(), nil
}

// field is a field of an elicitation's content (nil when it has none).
func field(content any, name string) any {
	m, _ := content.(map[string]any)
	return m[name]
}
