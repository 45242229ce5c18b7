package conformancefixture_test

import (
	"context"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/sandboxrt/sandbox/internal/conformancefixture"
)

// TestStdioTaskTools: the tools of the tasks scenarios, called directly in
// both eras (the gateway in front makes the tasks): which offer tasks, and
// what each answers.
func TestStdioTaskTools(t *testing.T) {
	t.Parallel()
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			t.Parallel()
			client, _ := startStdio(t, era.version, true)
			tools, err := client.ListTools(context.Background(), mcp.ListToolsRequest{})
			if err != nil {
				t.Fatal(err)
			}
			support := map[string]mcp.TaskSupport{}
			for _, tool := range tools.Tools {
				if tool.Execution != nil {
					support[tool.Name] = tool.Execution.TaskSupport
				}
			}
			for name, want := range map[string]mcp.TaskSupport{
				conformancefixture.ToolGreet: "", conformancefixture.ToolSlowCompute: mcp.TaskSupportOptional,
				conformancefixture.ToolFailingJob: mcp.TaskSupportRequired, conformancefixture.ToolProtocolErrorJob: mcp.TaskSupportOptional,
				conformancefixture.ToolConfirmDelete: mcp.TaskSupportOptional, conformancefixture.ToolMultiInput: mcp.TaskSupportOptional,
				conformancefixture.ToolWithTask: mcp.TaskSupportRequired,
			} {
				if support[name] != want {
					t.Errorf("%s: taskSupport %q, want %q", name, support[name], want)
				}
			}
			for name, c := range map[string]struct {
				args map[string]any
				want string
				err  bool
			}{
				conformancefixture.ToolGreet:         {map[string]any{"name": "World"}, "Hello, World!", false},
				conformancefixture.ToolSlowCompute:   {map[string]any{"seconds": 0, "label": "now"}, "computed now after 0s", false},
				conformancefixture.ToolFailingJob:    {nil, "the job failed", true},
				conformancefixture.ToolConfirmDelete: {map[string]any{"filename": "a.txt"}, "Deleted a.txt", false},
				conformancefixture.ToolMultiInput:    {nil, `first: accept {"email":"ada@example.com","username":"ada"}; second: accept`, false},
				conformancefixture.ToolWithTask:      {nil, "Hello, ", false},
			} {
				res := call(t, client, name, c.args, nil)
				if res.IsError != c.err || !strings.Contains(text(res), c.want) {
					t.Errorf("%s = %v %q, want %v %q", name, res.IsError, text(res), c.err, c.want)
				}
			}
			req := mcp.CallToolRequest{}
			req.Params.Name = conformancefixture.ToolProtocolErrorJob
			if _, err := client.CallTool(context.Background(), req); err == nil || !strings.Contains(err.Error(), "protocol_error_job failed") {
				t.Errorf("protocol_error_job: %v, want a JSON-RPC error", err)
			}
		})
	}
}
