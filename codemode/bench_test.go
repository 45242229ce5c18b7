package codemode

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/sandboxrt/sandbox/examples/mcpserver"
	"github.com/sandboxrt/sandbox/gateway/toolspec"
	"github.com/sandboxrt/sandbox/runtime"
)

// logMiB logs 1 MiB of console output: 256 entries of 4 KiB of JSON text
// (quotes to escape, as console.log(JSON.stringify(x)) writes), and returns
// a small value.
const logMiB = `const line = JSON.stringify(Array.from({ length: 80 }, (_, i) => ({ id: i, name: "item" })));
const entry = line.repeat(Math.ceil(4096 / line.length)).slice(0, 4096);
for (let i = 0; i < 256; i++) console.log(entry);
return { logged: 256 };`

// BenchmarkExecuteCodeLogs: what the parent allocates (B/op; the worker is
// another process) to run a snippet that logs 1 MiB and build execute_code's
// result, as the MCP front end gets it.
func BenchmarkExecuteCodeLogs(b *testing.B) {
	e := newEngineWith(b, map[string]*server.MCPServer{"demo": mcpserver.New()}, runtime.Options{Workers: 1})
	e.opts.Limits.OutputBytes = 2 << 20
	e.opts.MaxLimits.OutputBytes = 2 << 20
	args, _ := json.Marshal(map[string]any{"code": logMiB})
	req := toolspec.Request{Arguments: args}
	ctx := context.Background()
	check := func() int {
		res, err := e.handleExecute(ctx, req)
		if err != nil || res.IsError {
			b.Fatalf("%v %s", err, res.Content)
		}
		return len(res.Content[0]) + len(res.StructuredContent)
	}
	size := check()
	if size < 2<<20 {
		b.Fatalf("the result is %d bytes; the snippet did not log 1 MiB", size)
	}
	b.ReportAllocs()
	for b.Loop() {
		check()
	}
	b.ReportMetric(float64(size)/(1<<20), "result-MiB")
}

// BenchmarkBindCatalog: what a run costs in the parent as the catalog grows
// (100 vs 10,000 tools on 100 servers), for a snippet that names one tool
// and misspells a namespace: every server is opened as a namespace, but
// tools are bound only as the code names them, so the cost grows with the
// servers, not the tools. In-process, so the worker's start is not measured.
func BenchmarkBindCatalog(b *testing.B) {
	for _, perServer := range []int{1, 100} {
		b.Run(fmt.Sprintf("tools=%d", 100*perServer), func(b *testing.B) {
			servers := map[string]*server.MCPServer{}
			for i := range 100 {
				s := server.NewMCPServer(fmt.Sprintf("s%d", i), "1")
				for j := range perServer {
					s.AddTool(mcp.NewTool(fmt.Sprintf("tool_%d", j), mcp.WithDescription("A tool.")),
						func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
							return mcp.NewToolResultText("ok"), nil
						})
				}
				servers[fmt.Sprintf("srv%d", i)] = s
			}
			e := newEngineWith(b, servers, runtime.Options{Isolation: runtime.InProcess, Workers: 1})
			if n := e.ToolCount(); n != 100*perServer {
				b.Fatalf("%d tools in the catalog", n)
			}
			req := ExecuteRequest{Code: `const r = await srv7.tool0({}); try { await srv7x.tool0({}) } catch (e) { return [r, e.code] }`}
			ctx := context.Background()
			for b.Loop() {
				res, err := e.Execute(ctx, req)
				if err != nil || !res.OK || string(res.Value) != `["ok","UNKNOWN_TOOL"]` {
					b.Fatalf("%v %+v %s", err, res.Error, res.Value)
				}
			}
		})
	}
}
