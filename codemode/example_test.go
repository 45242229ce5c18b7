package codemode_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/sandboxrt/sandbox/codemode"
	"github.com/sandboxrt/sandbox/gateway"
	"github.com/sandboxrt/sandbox/runtime"
)

// An agent's two steps over a gateway: search for the tools a task needs and
// read their TypeScript declarations, then run a snippet that calls them. Only
// what the snippet returns comes back; every tool call went through the
// gateway (validation, limits, tokens) and is in the trace.
//
// Snippets run in worker subprocesses: the binary must call
// runtime.ServeWorkerIfChild first thing in main (this package's tests do so
// in TestMain).
func Example() {
	ctx := context.Background()
	g, err := gateway.New(nil,
		gateway.WithInProcessServer("tasks", tasksServer(), nil),
		gateway.WithInProcessServer("mail", mailServer(), nil))
	if err != nil {
		panic(err)
	}
	defer g.Close()
	if err := g.Start(ctx); err != nil {
		panic(err)
	}
	rt, err := runtime.New(runtime.Options{Workers: 1})
	if err != nil {
		panic(err)
	}
	defer rt.Close()
	engine, err := codemode.New(g, rt, codemode.Options{})
	if err != nil {
		panic(err)
	}
	defer engine.Close()

	found, err := engine.Search(ctx, codemode.SearchRequest{Intent: "close the open tasks of a project", K: 2})
	if err != nil {
		panic(err)
	}
	for _, t := range found.Tools {
		fmt.Println(t.ID, "is called as", t.Call)
	}
	fmt.Println(found.Note)
	// The declarations start with the shared types (ToolResult,
	// MCPToolError); then come the tools found:
	decl := found.Declarations
	fmt.Println(strings.TrimSpace(decl[strings.Index(decl, "declare namespace"):]))

	// The snippet names the tools it calls, which binds them (an Intent
	// would bind the top tools of its search as well).
	res, err := engine.Execute(ctx, codemode.ExecuteRequest{Code: `
const { tasks: open } = (await tasks.listTasks({ project: "apollo", status: "open" })) as any;
for (const t of open) await tasks.closeTask({ id: t.id });
return open.map((t: any) => t.id);`})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.OK, string(res.Value))
	for _, c := range res.Calls {
		fmt.Println(c.Tool, c.OK)
	}
	// Output:
	// tasks:close_task is called as tasks.closeTask
	// tasks:list_tasks is called as tasks.listTasks
	// 2 of 3 tools shown, best first. Call them exactly as declared (e.g. `await tasks.closeTask({...})`) in execute_code; search again with other words to see different tools.
	// declare namespace tasks {
	// 	/** Mark a task as done. */
	// 	function closeTask(input: {
	// 		/** @pattern ^T-[0-9]+$ */ id: string;
	// 	}): Promise<ToolResult>;
	// 	/** List the tasks of a project, optionally only those with a given status. */
	// 	function listTasks(input: { project: string; status?: "open" | "done" }): Promise<ToolResult>;
	// }
	// true ["T-1","T-3"]
	// tasks:list_tasks true
	// tasks:close_task true
	// tasks:close_task true
}

// tasksServer is a tiny task tracker.
func tasksServer() *server.MCPServer {
	var mu sync.Mutex
	status := map[string]string{"T-1": "open", "T-2": "done", "T-3": "open"}
	s := server.NewMCPServer("tasks", "1.0.0")
	s.AddTool(mcp.NewToolWithRawSchema("list_tasks", "List the tasks of a project, optionally only those with a given status.",
		json.RawMessage(`{"type":"object","properties":{"project":{"type":"string"},"status":{"type":"string","enum":["open","done"]}},"required":["project"]}`)),
		func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			mu.Lock()
			defer mu.Unlock()
			var out []map[string]string
			for _, id := range []string{"T-1", "T-2", "T-3"} {
				if want := r.GetString("status", ""); want == "" || status[id] == want {
					out = append(out, map[string]string{"id": id, "status": status[id]})
				}
			}
			return mcp.NewToolResultStructured(map[string]any{"tasks": out}, fmt.Sprint(len(out), " tasks")), nil
		})
	s.AddTool(mcp.NewToolWithRawSchema("close_task", "Mark a task as done.",
		json.RawMessage(`{"type":"object","properties":{"id":{"type":"string","pattern":"^T-[0-9]+$"}},"required":["id"]}`)),
		func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			mu.Lock()
			defer mu.Unlock()
			status[r.GetString("id", "")] = "done"
			return mcp.NewToolResultText("closed"), nil
		})
	return s
}

// mailServer is another server in the catalog, which the search leaves out.
func mailServer() *server.MCPServer {
	s := server.NewMCPServer("mail", "1.0.0")
	s.AddTool(mcp.NewToolWithRawSchema("send_message", "Send an email message to a recipient.",
		json.RawMessage(`{"type":"object","properties":{"to":{"type":"string"},"subject":{"type":"string"},"body":{"type":"string"}},"required":["to","subject"]}`)),
		func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("sent"), nil
		})
	return s
}
