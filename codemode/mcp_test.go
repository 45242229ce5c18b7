package codemode

import (
	"context"
	"encoding/json"
	"errors"
	"go/build"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/sandboxrt/sandbox/examples/mcpserver"
	"github.com/sandboxrt/sandbox/gateway"
	"github.com/sandboxrt/sandbox/gateway/frontend"
	"github.com/sandboxrt/sandbox/runtime"
)

// mcpClient serves the engine's tools on a front end over streamable HTTP
// and connects an mcp-go client to it.
func mcpClient(t *testing.T, e *Engine) *client.Client {
	t.Helper()
	front := frontend.New(e.gw)
	t.Cleanup(front.Close)
	serveTools(t, front, e)
	srv := httptest.NewServer(front.HTTPHandler(frontend.HTTPOptions{}))
	t.Cleanup(srv.Close)
	c, err := client.NewStreamableHttpClient(srv.URL + "/mcp")
	if err != nil {
		t.Fatal(err)
	}
	return startClient(t, c)
}

// serveTools installs the engine's MCP tools on a front end as sandbox
// serve does (cmd/sandbox: installCodeMode).
func serveTools(t testing.TB, front *frontend.Server, e *Engine) {
	t.Helper()
	for _, spec := range e.MCPTools() {
		if err := front.AddTool(spec); err != nil {
			t.Fatal(err)
		}
	}
	front.SetCallerTools(e.CallerMCPTools)
	e.OnScriptsChanged(front.RefreshCallerTools)
}

// startClient starts c and opens its session (protocol 2025-11-25); it is
// closed when the test ends.
func startClient(t testing.TB, c *client.Client) *client.Client {
	t.Helper()
	t.Cleanup(func() { c.Close() })
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{
		ProtocolVersion: mcp.ProtocolVersion20251125, ClientInfo: mcp.Implementation{Name: "test", Version: "1"}}}); err != nil {
		t.Fatal(err)
	}
	return c
}

func callTool(t *testing.T, c *client.Client, name string, args map[string]any) (*mcp.CallToolResult, string) {
	t.Helper()
	res, err := c.CallTool(context.Background(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: name, Arguments: args}})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var b strings.Builder
	for _, block := range res.Content {
		if tc, ok := block.(mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return res, b.String()
}

func TestCodeModeToolsOverMCP(t *testing.T) {
	t.Parallel()
	e := newEngine(t, map[string]*server.MCPServer{"demo": mcpserver.New()}, runtime.IsolateWorkers)
	c := mcpClient(t, e)

	list, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tool := range list.Tools {
		names[tool.Name] = true
	}
	for _, want := range []string{SearchToolName, ExecuteToolName, "demo__list_projects"} {
		if !names[want] {
			t.Errorf("tools/list lacks %s", want)
		}
	}

	res, text := callTool(t, c, SearchToolName, map[string]any{"intent": "create a new task in a project", "k": 2})
	if res.IsError || !strings.Contains(text, "2 of 8 tools shown") || !strings.Contains(text, "function createTask(") {
		t.Fatalf("search_tools: isError=%v\n%s", res.IsError, text)
	}

	res, text = callTool(t, c, ExecuteToolName, map[string]any{
		"code": "const ps = (await demo.listProjects({})) as any[];\nconsole.log('projects', ps.length);\nreturn ps.map((p) => p.id);",
	})
	var rep struct {
		OK    bool
		Value []string
		Logs  []string
		Calls []struct {
			Tool string
			OK   bool
		}
	}
	if err := json.Unmarshal([]byte(text), &rep); err != nil {
		t.Fatalf("execute_code text is not the JSON report: %v\n%s", err, text)
	}
	if res.IsError || !rep.OK || len(rep.Value) == 0 || len(rep.Logs) != 1 || len(rep.Calls) != 1 || rep.Calls[0].Tool != "demo:list_projects" {
		t.Fatalf("execute_code: isError=%v %s", res.IsError, text)
	}

	// A failing snippet is an isError result with the error located in the snippet.
	res, text = callTool(t, c, ExecuteToolName, map[string]any{"code": "const x = 1;\nawait demo.getProject({ project_id: 42 } as any);"})
	if !res.IsError || !strings.Contains(text, `"code":"VALIDATION_FAILED"`) || !strings.Contains(text, `"line":2`) {
		t.Fatalf("failing snippet: isError=%v %s", res.IsError, text)
	}

	// Bad arguments are a tool error that says what to send.
	for _, args := range []map[string]any{{}, {"code": "return 1", "inent": "typo"}, {"code": "return 1", "limits": map[string]any{"timeoutMs": -5}}} {
		res, text = callTool(t, c, ExecuteToolName, args)
		if !res.IsError || !strings.Contains(text, "VALIDATION_FAILED") {
			t.Errorf("args %v: isError=%v %s", args, res.IsError, text)
		}
	}
	res, text = callTool(t, c, SearchToolName, map[string]any{"intent": "  "})
	if !res.IsError || !strings.Contains(text, "describe the task") {
		t.Errorf("empty intent: %s", text)
	}
}

func TestExecuteCodeLimitsApply(t *testing.T) {
	t.Parallel()
	e := newEngine(t, map[string]*server.MCPServer{"demo": mcpserver.New()}, runtime.IsolateWorkers)
	c := mcpClient(t, e)
	res, text := callTool(t, c, ExecuteToolName, map[string]any{"code": "while (true) {}", "limits": map[string]any{"timeoutMs": 200}})
	if !res.IsError || !strings.Contains(text, `"limit":"time"`) {
		t.Fatalf("isError=%v %s", res.IsError, text)
	}
}

// TestAgentLimitsAreHeldToTheCeiling: an agent that asks for gigabytes of
// output, minutes of CPU or tens of thousands of calls gets the ceiling,
// and the result says so.
func TestAgentLimitsAreHeldToTheCeiling(t *testing.T) {
	t.Parallel()
	e := newEngine(t, map[string]*server.MCPServer{"demo": mcpserver.New()}, runtime.InProcess)
	e.opts.Limits = runtime.Limits{OutputBytes: 64 << 10}
	e.opts.MaxLimits = runtime.Limits{OutputBytes: 128 << 10, ToolCalls: 50}
	c := mcpClient(t, e)

	tools, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools.Tools {
		if tl.Name == ExecuteToolName && !strings.Contains(tl.Description, "At most: 30s, 256 MiB, 50 tool calls, 128 KiB of console output") {
			t.Fatalf("the description does not state the ceiling:\n%s", tl.Description)
		}
	}

	_, text := callTool(t, c, ExecuteToolName, map[string]any{
		"code":   `for (let i = 0; i < 20000; i++) console.log("x".repeat(100)); return 1`,
		"limits": map[string]any{"outputKB": 65536, "timeoutMs": 600000, "memoryMB": 8192, "toolCalls": 100000},
	})
	var rep report
	if err := json.Unmarshal([]byte(text), &rep); err != nil {
		t.Fatalf("%v: %s", err, text)
	}
	if !rep.OK || !rep.LogsTruncated || rep.Limits == nil {
		t.Fatalf("report = %.300s", text)
	}
	got := rep.Limits
	if got.OutputKB != 128 || got.TimeoutMs != 30000 || got.MemoryMB != 256 || got.ToolCalls != 50 ||
		strings.Join(got.Clamped, ",") != "timeoutMs,memoryMB,toolCalls,outputKB" {
		t.Fatalf("applied = %+v", got)
	}
	logged := 0
	for _, l := range rep.Logs {
		logged += len(l)
	}
	if logged > 128<<10 {
		t.Fatalf("%d bytes of logs came back under a 128 KiB ceiling", logged)
	}

	// Within the ceiling a request gets what it asks for, and no note.
	_, text = callTool(t, c, ExecuteToolName, map[string]any{"code": "return 2", "limits": map[string]any{"outputKB": 100, "toolCalls": 10}})
	if strings.Contains(text, `"limits"`) || !strings.Contains(text, `"ok":true`) {
		t.Fatalf("within the ceiling: %s", text)
	}
	if l, cl := e.applyLimits(runtime.Limits{OutputBytes: 100 << 10, ToolCalls: 10}); l.OutputBytes != 100<<10 || l.ToolCalls != 10 || len(cl) != 0 {
		t.Fatalf("within the ceiling: %+v %v", l, cl)
	}
}

// TestExecuteCodeWhenBusy: with the one worker taken and no queue, an
// execute_code call is refused at once with BUSY and a retry hint, and runs
// again once the worker is free.
func TestExecuteCodeWhenBusy(t *testing.T) {
	e := newEngineWith(t, map[string]*server.MCPServer{"demo": mcpserver.New()}, runtime.Options{Isolation: runtime.InProcess, Workers: 1, MaxQueue: -1})
	c := mcpClient(t, e)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	blocked := make(chan error, 1)
	block := func() {
		go func() {
			_, err := e.Execute(ctx, ExecuteRequest{Code: "await new Promise((r) => setTimeout(r, 600000))"})
			blocked <- err
		}()
	}
	block()
	// Until the blocking snippet has the worker, the calls below run. With
	// no queue, the blocker itself is refused when one of them holds the
	// worker as it arrives: then it is started again.
	deadline := time.Now().Add(30 * time.Second)
	var res *mcp.CallToolResult
	var text string
	for {
		res, text = callTool(t, c, ExecuteToolName, map[string]any{"code": "return 1"})
		if strings.Contains(text, "BUSY") || time.Now().After(deadline) {
			break
		}
		select {
		case <-blocked:
			block()
		default:
		}
		time.Sleep(time.Millisecond)
	}
	if !res.IsError || !strings.HasPrefix(text, "BUSY: the sandbox is running all the snippets it can at once (1)") ||
		!strings.Contains(text, "The snippet did not run; run it again in about ") {
		t.Fatalf("isError=%v %s", res.IsError, text)
	}

	_, err := e.Execute(context.Background(), ExecuteRequest{Code: "return 1"})
	var ge *gateway.Error
	if !errors.As(err, &ge) || ge.Code != CodeBusy || !strings.Contains(string(ge.Data), `"retryAfterMs":`) {
		t.Fatalf("Execute while busy: err = %v, want a BUSY *gateway.Error with a retry hint", err)
	}

	cancel()
	if err := <-blocked; err != nil {
		t.Fatalf("the blocking snippet: %v", err)
	}
	res, text = callTool(t, c, ExecuteToolName, map[string]any{"code": "return 1"})
	if res.IsError || !strings.Contains(text, `"ok":true`) {
		t.Fatalf("after the worker freed up: isError=%v %s", res.IsError, text)
	}
}

// TestEngineDoesNotImportTheFrontEnd: code mode offers its MCP tools as
// toolspec.Specs and whoever serves MCP installs them; the engine never
// reaches for the front end (ARCHITECTURE.md, "Code mode and its MCP
// face"). Its tests may.
func TestEngineDoesNotImportTheFrontEnd(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(pkg.Imports, "github.com/sandboxrt/sandbox/gateway/toolspec") {
		t.Fatalf("codemode does not import toolspec: %v; is this test looking at the right package?", pkg.Imports)
	}
	for _, imp := range pkg.Imports {
		if imp == "github.com/sandboxrt/sandbox/gateway/frontend" {
			t.Errorf("codemode imports %s: offer tool specs instead (mcp.go)", imp)
		}
	}
}
