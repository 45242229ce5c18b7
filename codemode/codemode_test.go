package codemode

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/examples/mcpserver"
	"github.com/sandboxrt/sandbox/gateway"
	"github.com/sandboxrt/sandbox/internal/testwait"
	"github.com/sandboxrt/sandbox/runtime"
)

func TestMain(m *testing.M) {
	runtime.ServeWorkerIfChild()
	serveUpstreamIfChild()
	os.Exit(m.Run())
}

// newEngine starts a gateway over in-process servers and an engine over it.
func newEngine(t testing.TB, servers map[string]*server.MCPServer, iso runtime.Isolation) *Engine {
	t.Helper()
	return newEngineWith(t, servers, runtime.Options{Isolation: iso, Workers: 2})
}

func newEngineWith(t testing.TB, servers map[string]*server.MCPServer, rtOpts runtime.Options) *Engine {
	t.Helper()
	return newEngineFull(t, servers, gateway.DefaultSettings(), rtOpts, Options{Limits: runtime.Limits{Timeout: 20 * time.Second}})
}

// newEngineFull starts a gateway with settings over in-process servers, a
// runtime and an engine with opts; all three are closed when the test ends
// (closing the engine earlier, to restart one over the same directories,
// is fine).
func newEngineFull(t testing.TB, servers map[string]*server.MCPServer, settings gateway.Settings, rtOpts runtime.Options, engineOpts Options) *Engine {
	t.Helper()
	cfg := &gateway.Config{Servers: map[string]*gateway.ServerConfig{}, Settings: settings}
	var opts []gateway.Option
	for name, srv := range servers {
		opts = append(opts, gateway.WithInProcessServer(name, srv, nil))
	}
	gw, err := gateway.New(cfg, opts...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := gw.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gw.Close() })
	rt, err := runtime.New(rtOpts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	e, err := New(gw, rt, engineOpts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func demoEngine(t testing.TB) *Engine {
	return newEngine(t, map[string]*server.MCPServer{"demo": mcpserver.New()}, runtime.IsolateWorkers)
}

func execute(t testing.TB, e *Engine, req ExecuteRequest) *ExecuteResult {
	t.Helper()
	res, err := e.Execute(context.Background(), req)
	if err != nil {
		t.Fatalf("Execute: %v", err)
	}
	return res
}

func TestSearchShowsDeclarationsOfTheTopTools(t *testing.T) {
	t.Parallel()
	e := demoEngine(t)
	res, err := e.Search(context.Background(), SearchRequest{Intent: "which tasks are blocked right now", K: 3})
	if err != nil {
		t.Fatal(err)
	}
	if res.Shown != 3 || res.Total != 8 || len(res.Tools) != 3 {
		t.Fatalf("shown %d of %d, tools %+v", res.Shown, res.Total, res.Tools)
	}
	var found bool
	for _, h := range res.Tools {
		found = found || (h.ID == "demo:search_tasks" && h.Call == "demo.searchTasks")
	}
	if !found {
		t.Errorf("top 3 = %+v, want demo:search_tasks among them", res.Tools)
	}
	for _, want := range []string{"declare namespace demo", "function searchTasks(", "declare class MCPToolError", "type ToolResult"} {
		if !strings.Contains(res.Declarations, want) {
			t.Errorf("declarations lack %q", want)
		}
	}
	if !strings.Contains(res.Note, "3 of 8 tools shown") {
		t.Errorf("note = %q", res.Note)
	}
	if _, err := e.Search(context.Background(), SearchRequest{Intent: "   ", K: 3}); err != ErrNoIntent {
		t.Errorf("empty intent: %v", err)
	}
}

func TestExecuteCallsToolsThroughTheGateway(t *testing.T) {
	t.Parallel()
	e := demoEngine(t)
	code := `
const projects = (await demo.listProjects({ status: "active" })) as any[];
const details = await Promise.all(projects.map((p) => demo.getProject({ project_id: p.id })));
let validation: any = null;
try {
  await demo.createTask({ project_id: projects[0].id, title: 123 } as any);
} catch (e) {
  validation = { name: e.name, code: e.code, tool: e.tool, help: e.message };
}
return { names: details.map((d) => d.name), validation };`
	res := execute(t, e, ExecuteRequest{Code: code})
	if !res.OK {
		t.Fatalf("run failed: %v", res.Error)
	}
	var out struct {
		Names      []string
		Validation struct{ Name, Code, Tool, Help string }
	}
	if err := json.Unmarshal(res.Value, &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Names) == 0 {
		t.Fatalf("no projects: %s", res.Value)
	}
	v := out.Validation
	if v.Name != "MCPToolError" || v.Code != "VALIDATION_FAILED" || v.Tool != "demo:create_task" {
		t.Fatalf("validation error = %+v", v)
	}
	for _, want := range []string{"title", "Valid example", "Required"} {
		if !strings.Contains(v.Help, want) {
			t.Errorf("help text lacks %q:\n%s", want, v.Help)
		}
	}
	// The trace has every call; the failed one was never forwarded.
	if len(res.Calls) != len(out.Names)+2 {
		t.Errorf("trace has %d calls: %+v", len(res.Calls), res.Calls)
	}
	last := res.Calls[len(res.Calls)-1]
	if last.Tool != "demo:create_task" || last.OK || last.Code != "VALIDATION_FAILED" {
		t.Errorf("last call = %+v", last)
	}
	for _, b := range []string{"demo.createTask", "demo.getProject", "demo.listProjects"} {
		if !contains(res.Bound, b) {
			t.Errorf("bound %v lacks %s (named in the code)", res.Bound, b)
		}
	}
	if contains(res.Bound, "demo.deleteTask") {
		t.Errorf("bound %v includes a tool the code does not name", res.Bound)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestIntentBindsToolsTheCodeDoesNotName(t *testing.T) {
	t.Parallel()
	e := demoEngine(t)
	// The namespace is reached dynamically: every server is a namespace all
	// the same, and its tools resolve when called, with or without an
	// intent; the intent puts them in the bound list up front.
	code := `const ns = (globalThis as any)["de" + "mo"]; return (await ns.listProjects({})).length > 0`
	res := execute(t, e, ExecuteRequest{Code: code})
	if !res.OK || string(res.Value) != "true" || contains(res.Bound, "demo.listProjects") {
		t.Fatalf("without an intent: ok=%v value=%s error=%v bound=%v", res.OK, res.Value, res.Error, res.Bound)
	}
	res = execute(t, e, ExecuteRequest{Code: code, Intent: "list all projects"})
	if !res.OK || string(res.Value) != "true" || !contains(res.Bound, "demo.listProjects") {
		t.Fatalf("with an intent: ok=%v value=%s error=%v bound=%v", res.OK, res.Value, res.Error, res.Bound)
	}
}

// TestMisspeltToolsAreUnknownTools: a misspelt tool, a misspelt namespace
// and a member reached dynamically that is no tool all fail with a catchable
// UNKNOWN_TOOL naming the closest tools, never a ReferenceError.
func TestMisspeltToolsAreUnknownTools(t *testing.T) {
	t.Parallel()
	e := demoEngine(t)
	for code, want := range map[string]string{
		`return await demo.listProjectz({})`:                      "did you mean demo.listProjects",
		`return await demoo.listProjects({})`:                     "did you mean demo.listProjects",
		`return await (demo as any)["delete" + "Tsk"]({})`:        "did you mean demo.deleteTask",
		`return await nothingLikeIt.atAll({})`:                    "search_tools",
		`try { await demo.nope({}) } catch (e) { return e.code }`: "",
	} {
		res := execute(t, e, ExecuteRequest{Code: code})
		if want == "" {
			if !res.OK || string(res.Value) != `"UNKNOWN_TOOL"` {
				t.Errorf("%s: caught %s %+v", code, res.Value, res.Error)
			}
			continue
		}
		if res.OK || res.Error.Code != "UNKNOWN_TOOL" || !strings.Contains(res.Error.Message, want) {
			t.Errorf("%s: %+v", code, res.Error)
		}
	}
}

func TestExecuteRejectsUnknownToolNames(t *testing.T) {
	t.Parallel()
	e := demoEngine(t)
	for name, want := range map[string]string{"demo:list_projectz": "demo.listProjects", "nope.listProjects": "demo.listProjects", "plain": ""} {
		_, err := e.Execute(context.Background(), ExecuteRequest{Code: "return 1", Tools: []string{name}})
		var ge *gateway.Error
		if !errors.As(err, &ge) || ge.Code != gateway.CodeUnknownTool || !strings.Contains(ge.Message, want) || strings.Contains(ge.Message, "codemode:") {
			t.Errorf("%s: err = %v", name, err)
		}
	}
	res := execute(t, e, ExecuteRequest{Code: "return 1", Tools: []string{"demo.listProjects", "demo:get_project"}})
	if !res.OK || len(res.Bound) != 2 {
		t.Fatalf("both forms of name: %+v %v", res.Error, res.Bound)
	}
}

func TestToolErrorsKeepUpstreamDetail(t *testing.T) {
	t.Parallel()
	e := demoEngine(t)
	// Reopening a done task is a business error of the server (isError).
	code := `
const done = (await demo.searchTasks({ filter: { status: ["done"] } })).tasks[0];
try { await demo.updateTaskStatus({ task_id: done.id, status: "todo" }) } catch (e) { return { code: e.code, msg: e.message, hasData: e.data !== undefined } }
return "no error"`
	res := execute(t, e, ExecuteRequest{Code: code})
	if !res.OK {
		t.Fatal(res.Error)
	}
	var got struct {
		Code, Msg string
		HasData   bool
	}
	_ = json.Unmarshal(res.Value, &got)
	if got.Code != "TOOL_ERROR" || got.Msg == "" || !got.HasData {
		t.Fatalf("got %s", res.Value)
	}
}

// TestCatalogChangesReachSearchAndBindings adds a tool to a running server:
// the gateway hears list_changed, the engine re-indexes, and both search and
// execution see the new tool.
func TestCatalogChangesReachSearchAndBindings(t *testing.T) {
	t.Parallel()
	srv := server.NewMCPServer("dyn", "1.0", server.WithToolCapabilities(true))
	srv.AddTool(mcp.NewTool("ping_service", mcp.WithDescription("Check that the service answers.")),
		func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("pong"), nil
		})
	e := newEngine(t, map[string]*server.MCPServer{"dyn": srv}, runtime.InProcess)
	if e.ToolCount() != 1 {
		t.Fatalf("tool count %d", e.ToolCount())
	}
	srv.AddTool(mcp.NewTool("convert_currency", mcp.WithDescription("Convert an amount of money from one currency to another."),
		mcp.WithNumber("amount", mcp.Required()), mcp.WithString("from", mcp.Required()), mcp.WithString("to", mcp.Required())),
		func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(`{"converted": 42}`), nil
		})
	testwait.Until(t, 10*time.Second, "the engine to index the new tool", func() bool { return e.ToolCount() == 2 })
	found, err := e.Search(context.Background(), SearchRequest{Intent: "exchange euros into dollars", K: 1})
	if err != nil || len(found.Tools) != 1 || found.Tools[0].ID != "dyn:convert_currency" {
		t.Fatalf("search: %v %+v", err, found)
	}
	res := execute(t, e, ExecuteRequest{Code: `return (await dyn.convertCurrency({ amount: 1, from: "EUR", to: "USD" })).converted`})
	if !res.OK || string(res.Value) != "42" {
		t.Fatalf("run: %v %s", res.Error, res.Value)
	}
}

// TestNarrowedSessionSearchesAndCallsOnlyItsServers: code mode applies the
// session's narrowing as the gateway's own tools/list and tools/call do.
func TestNarrowedSessionSearchesAndCallsOnlyItsServers(t *testing.T) {
	t.Parallel()
	e := newEngine(t, map[string]*server.MCPServer{"demo": mcpserver.New(), "other": mcpserver.New()}, runtime.InProcess)
	caller := auth.Caller{Principal: auth.Anonymous(), Session: "narrow-1"}
	sess := e.gw.OpenSession(caller, nil)
	defer sess.Close()
	sess.Narrow([]string{"other"})

	found, err := e.Search(context.Background(), SearchRequest{Intent: "which tasks are blocked right now", K: 5, Caller: caller})
	if err != nil {
		t.Fatal(err)
	}
	if len(found.Tools) == 0 || found.Total != e.ToolCount()/2 {
		t.Fatalf("shown %d of %d (catalog %d)", len(found.Tools), found.Total, e.ToolCount())
	}
	for _, ft := range found.Tools {
		if !strings.HasPrefix(ft.ID, "other:") {
			t.Fatalf("search showed %s to a session narrowed to other", ft.ID)
		}
	}
	if strings.Contains(found.Declarations, "namespace demo") {
		t.Fatal("declarations of a hidden server")
	}

	res := execute(t, e, ExecuteRequest{Caller: caller, Intent: "which tasks are blocked right now",
		Code: `try { await demo.listProjects({}); return "called" } catch (e) { return e.code + ": " + e.message }`})
	if !res.OK || !strings.Contains(string(res.Value), "SERVICE_NOT_FOUND") || !strings.Contains(string(res.Value), "gateway__connect_servers") {
		t.Fatalf("calling a hidden server's tool: %+v %s", res.Error, res.Value)
	}
	for _, b := range res.Bound {
		if strings.HasPrefix(b, "demo.") && b != "demo.listProjects" {
			t.Fatalf("the intent bound a hidden tool: %s", b)
		}
	}
	// Another session is not narrowed.
	found, err = e.Search(context.Background(), SearchRequest{Intent: "which tasks are blocked right now", K: 5, Caller: auth.Caller{Principal: auth.Anonymous(), Session: "wide"}})
	if err != nil || found.Total != e.ToolCount() {
		t.Fatalf("an unnarrowed session: %v %+v", err, found)
	}
}

// TestScopedPrincipalSeesOnlyItsServers: search_tools and execute_code hold a
// principal to the servers its credentials name.
func TestScopedPrincipalSeesOnlyItsServers(t *testing.T) {
	t.Parallel()
	e := newEngine(t, map[string]*server.MCPServer{"demo": mcpserver.New(), "other": mcpserver.New()}, runtime.InProcess)
	caller := auth.Caller{Principal: auth.Principal{ID: "agent", Scopes: []string{auth.ServerScope("other")}}}
	found, err := e.Search(context.Background(), SearchRequest{Intent: "which tasks are blocked right now", K: 50, Caller: caller})
	if err != nil {
		t.Fatal(err)
	}
	for _, ft := range found.Tools {
		if !strings.HasPrefix(ft.ID, "other:") {
			t.Fatalf("search showed %s to a principal scoped to other", ft.ID)
		}
	}
	res := execute(t, e, ExecuteRequest{Caller: caller,
		Code: `try { await demo.listProjects({}); return "called" } catch (e) { return e.code + ": " + e.message }`})
	// A forbidden server is exactly an unknown namespace: the answer does
	// not say it exists, and suggests only what the principal may use.
	if !res.OK || !strings.Contains(string(res.Value), "UNKNOWN_TOOL: there is no tool demo.listProjects; did you mean other.listProjects") || strings.Contains(string(res.Value), "mean demo.") {
		t.Fatalf("calling a forbidden server's tool: %+v %s", res.Error, res.Value)
	}
	unscoped := execute(t, e, ExecuteRequest{Code: `try { await nosuch.listProjects({}); return "called" } catch (e) { return e.code + ": " + e.message }`})
	if !strings.HasPrefix(string(unscoped.Value), `"UNKNOWN_TOOL: there is no tool nosuch.listProjects; did you mean `) {
		t.Fatalf("an unknown namespace reads differently from a forbidden one: %s vs %s", unscoped.Value, res.Value)
	}
	res = execute(t, e, ExecuteRequest{Caller: caller, Code: `return (await other.listProjects({})) !== undefined`})
	if !res.OK || string(res.Value) != "true" {
		t.Fatalf("calling an allowed server's tool: %+v %s", res.Error, res.Value)
	}
}

// TestDownServerIsANamespace: a server that never started has no tools in
// the catalog, yet its namespace exists, and calling any of its tools fails
// with UPSTREAM_UNAVAILABLE naming its state and the class of its failure
// (never its path), not a ReferenceError; once it has failed again and
// again, the message says the operator must act rather than "call again".
func TestDownServerIsANamespace(t *testing.T) {
	t.Parallel()
	settings := gateway.DefaultSettings()
	settings.RestartBackoff, settings.MaxRestartBackoff = 5*time.Millisecond, 10*time.Millisecond
	dir := t.TempDir()
	cfg := &gateway.Config{Servers: map[string]*gateway.ServerConfig{
		"broken": {Name: "broken", Transport: gateway.TransportStdio, Command: filepath.Join(dir, "no-such-server"), CheckPaths: true},
	}, Settings: settings}
	gw, err := gateway.New(cfg, gateway.WithInProcessServer("demo", mcpserver.New(), nil))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gw.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = gw.Start(ctx) // broken does not start; demo does
	rt, err := runtime.New(runtime.Options{Isolation: runtime.InProcess, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	e, err := New(gw, rt, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	res := execute(t, e, ExecuteRequest{Code: `try { await broken.anyTool({}) } catch (e) { return [e.code, e.message] }`})
	var got []string
	_ = json.Unmarshal(res.Value, &got)
	if !res.OK || len(got) != 2 || got[0] != "UPSTREAM_UNAVAILABLE" || !strings.Contains(got[1], `server "broken" is`) ||
		!strings.Contains(got[1], "its command was not found") || strings.Contains(got[1], dir) {
		t.Fatalf("%+v %s", res.Error, res.Value)
	}
	testwait.Until(t, 20*time.Second, "broken to fail again and again", func() bool {
		for _, st := range gw.Servers() {
			if st.Name == "broken" {
				return st.NeedsOperator()
			}
		}
		return false
	})
	res = execute(t, e, ExecuteRequest{Code: `try { await broken.anyTool({}) } catch (e) { return [e.code, e.message] }`})
	_ = json.Unmarshal(res.Value, &got)
	if !strings.Contains(got[1], "retrying will not help until the operator acts") || !strings.Contains(got[1], "tell the user that the operator must fix this server") || strings.Contains(got[1], "call again") {
		t.Fatalf("after repeated failures: %s", res.Value)
	}
}

// TestGuessedNamespacesStayOutOfTheWay: names the code uses as `x.y` are
// opened as namespaces only when they could be one: a local variable
// shadows its namespace, and feature detection of capitalised or host
// globals sees them missing, as in any sandbox without them.
func TestGuessedNamespacesStayOutOfTheWay(t *testing.T) {
	t.Parallel()
	e := demoEngine(t)
	res := execute(t, e, ExecuteRequest{Code: `const res = { data: 1 }; // Deno.env process.env Buffer.from require.resolve
		return [res.data, typeof Deno, typeof process, typeof Buffer, typeof require]`})
	if !res.OK || string(res.Value) != `[1,"undefined","undefined","undefined","undefined"]` {
		t.Fatalf("%+v %s", res.Error, res.Value)
	}
}
