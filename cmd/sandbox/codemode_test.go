package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/sandboxrt/sandbox/codemode"
	"github.com/sandboxrt/sandbox/config"
	"github.com/sandboxrt/sandbox/gateway"
	"github.com/sandboxrt/sandbox/gateway/frontend"
	"github.com/sandboxrt/sandbox/internal/testlog"
	"github.com/sandboxrt/sandbox/internal/testpeers"
	"github.com/sandboxrt/sandbox/runtime"
	"github.com/sandboxrt/sandbox/typegen"
	"github.com/sandboxrt/sandbox/vectorindex"
)

var (
	exampleOnce sync.Once
	exampleBin  string
	exampleErr  error
)

// exampleServerBinary builds the example MCP server once per test run.
func exampleServerBinary(t testing.TB) string {
	t.Helper()
	dir := filepath.Dir(sandboxBinary(t))
	exampleOnce.Do(func() {
		exampleBin = filepath.Join(dir, "example-mcpserver")
		out, err := exec.Command("go", "build", "-o", exampleBin, "../../examples/mcpserver/cmd/example-mcpserver").CombinedOutput()
		if err != nil {
			exampleErr = fmt.Errorf("%v: %s", err, out)
		}
	})
	if exampleErr != nil {
		t.Fatal(exampleErr)
	}
	return exampleBin
}

// twoServersConfig: the Go example server and the real server-everything.
func twoServersConfig(t *testing.T) string {
	pkg := testpeers.Package(t, "@modelcontextprotocol/server-everything")
	return fmt.Sprintf(`{"mcpServers": {
  "demo": {"command": %q},
  "everything": {"command": %q, "args": [%q, "stdio"]}
}}`, exampleServerBinary(t), testpeers.Node(t), filepath.Join(pkg, "dist", "index.js"))
}

// acrossServers calls both servers at once, recovers from a validation
// error by reading its help text, and returns only a summary.
const acrossServers = `
const [projects, sum, echo] = await Promise.all([
  demo.listProjects({ status: "active" }),
  everything.getSum({ a: 2, b: 3 }),
  everything.echo({ message: "hello from a snippet" }),
]);
let help = "";
try {
  await everything.getSum({ a: "two", b: 3 } as any);
} catch (e) {
  if (e instanceof MCPToolError && e.code === "VALIDATION_FAILED") help = e.message;
}
console.log("done");
return { projects: (projects as any[]).map((p) => p.id), sum, echo, help };
`

type acrossResult struct {
	Projects []string
	Sum      any
	Echo     any
	Help     string
}

func checkAcross(t *testing.T, value json.RawMessage) {
	t.Helper()
	var got acrossResult
	if err := json.Unmarshal(value, &got); err != nil {
		t.Fatalf("value %s: %v", value, err)
	}
	if len(got.Projects) == 0 || !strings.Contains(fmt.Sprint(got.Sum), "5") || !strings.Contains(fmt.Sprint(got.Echo), "hello from a snippet") {
		t.Errorf("value = %s", value)
	}
	for _, want := range []string{"everything:get-sum", "/a", "Valid example"} {
		if !strings.Contains(got.Help, want) {
			t.Errorf("help text lacks %q:\n%s", want, got.Help)
		}
	}
}

func TestRunSnippetAcrossTwoServers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts npm peers")
	}
	cfg := writeConfig(t, twoServersConfig(t))
	script := writeScript(t, "across.ts", acrossServers)
	r := runCLI(t, "", "run", script, "--config", cfg, "--json")
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	var env struct {
		OK    bool
		Value json.RawMessage
		Calls []struct {
			Tool string
			OK   bool
			Code string
		}
		Bound []string
	}
	if err := json.Unmarshal([]byte(r.stdout), &env); err != nil {
		t.Fatal(err)
	}
	checkAcross(t, env.Value)
	if len(env.Calls) != 4 || env.Calls[3].OK || env.Calls[3].Code != "VALIDATION_FAILED" {
		t.Errorf("calls = %+v", env.Calls)
	}
	var called []string
	for _, c := range env.Calls {
		called = append(called, c.Tool)
	}
	for _, id := range []string{"demo:list_projects", "everything:get-sum", "everything:echo"} {
		if !strings.Contains(strings.Join(called, " "), id) {
			t.Errorf("calls %v lack %s", called, id)
		}
	}
}

// TestServeCodeModeWithInspector drives `sandbox serve` with a real MCP
// client, the Inspector CLI: search_tools, then execute_code of the same
// snippet, over stdio and streamable HTTP.
func TestServeCodeModeWithInspector(t *testing.T) {
	if testing.Short() {
		t.Skip("starts npm peers")
	}
	cfg := twoServersConfig(t)
	path := writeConfig(t, cfg)
	targets := map[string][]string{
		"stdio": {sandboxBinary(t), "serve", "-c", path, "--log-level", "error"},
		"http":  {serveHTTP(t, cfg), "--transport", "http"},
	}
	for name, target := range targets {
		t.Run(name, func(t *testing.T) {
			out, code := inspector(t, append(target, "--method", "tools/call", "--tool-name", "search_tools", "--tool-arg", "intent=add two numbers", "--tool-arg", "k=3")...)
			if code != 0 || !strings.Contains(out, "function getSum(") || !strings.Contains(out, "3 of ") {
				t.Fatalf("search_tools: exit %d\n%s", code, out)
			}
			out, code = inspector(t, append(target, "--method", "tools/call", "--tool-name", "execute_code", "--tool-arg", "code="+acrossServers)...)
			if code != 0 {
				t.Fatalf("execute_code: exit %d\n%s", code, out)
			}
			var res struct {
				Content []struct{ Text string }
				IsError bool
			}
			if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Content) == 0 {
				t.Fatalf("execute_code output: %v\n%s", err, out)
			}
			var rep struct {
				OK    bool
				Value json.RawMessage
				Logs  []string
			}
			if err := json.Unmarshal([]byte(res.Content[0].Text), &rep); err != nil {
				t.Fatalf("report: %v\n%s", err, res.Content[0].Text)
			}
			if !rep.OK || res.IsError || len(rep.Logs) != 1 {
				t.Fatalf("report: %s", res.Content[0].Text)
			}
			checkAcross(t, rep.Value)

			// Code-only exposure: tools/list holds the code-mode and hub tools.
			out, code = inspector(t, append(target, "--method", "tools/list")...)
			if code != 0 || !strings.Contains(out, `"execute_code"`) || strings.Contains(out, `"demo__`) || strings.Contains(out, `"everything__`) {
				t.Fatalf("tools/list under --expose code: exit %d\n%.1500s", code, out)
			}
			// A misspelt tool is a catchable UNKNOWN_TOOL naming the right one.
			out, code = inspector(t, append(target, "--method", "tools/call", "--tool-name", "execute_code", "--tool-arg", "code=return await demo.listProjectz({})")...)
			if code != 5 || !strings.Contains(out, "UNKNOWN_TOOL") || !strings.Contains(out, "did you mean demo.listProjects") {
				t.Fatalf("misspelt tool: exit %d\n%s", code, out)
			}

			// A snippet that fails: the client sees isError (exit 5) and the located error.
			out, code = inspector(t, append(target, "--method", "tools/call", "--tool-name", "execute_code", "--tool-arg", "code=const a = 1;\nthrow new RangeError('out of range');")...)
			if code != 5 || !strings.Contains(out, `\"line\":2`) || !strings.Contains(out, "RangeError") {
				t.Fatalf("failing snippet: exit %d\n%s", code, out)
			}
		})
	}
}

func TestSearchAndTypesFromALiveCatalog(t *testing.T) {
	cfg := writeConfig(t, fmt.Sprintf(`{"mcpServers": {"demo": {"command": %q}}}`, exampleServerBinary(t)))
	r := runCLI(t, "", "search", "table of each person's open tasks", "--config", cfg, "-k", "2", "--json")
	if r.code != 0 || !strings.Contains(r.stdout, `"id": "demo:team_workload"`) {
		t.Fatalf("search: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	// --dts prints the search_tools answer: best first, declared in the same order
	r = runCLI(t, "", "search", "which tasks are blocked", "--config", cfg, "-k", "2", "--dts")
	if r.code != 0 || !strings.Contains(r.stdout, "Best first:\n1. demo.searchTasks: ") || !strings.Contains(r.stdout, "\n\nNot shown, of the same servers") ||
		strings.Index(r.stdout, "\tfunction searchTasks(") != strings.Index(r.stdout, "\tfunction ") {
		t.Fatalf("search --dts: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = runCLI(t, "", "types", "--config", cfg)
	if r.code != 0 || !strings.Contains(r.stdout, "declare namespace demo") || !strings.Contains(r.stdout, "function teamWorkload(") {
		t.Fatalf("types: exit %d\n%s", r.code, r.stderr)
	}
	r = runCLI(t, "", "search", "x", "--config", cfg, "--from", "tools.json")
	if r.code != 2 || !strings.Contains(r.stderr, "--from") {
		t.Fatalf("both sources: exit %d %s", r.code, r.stderr)
	}
	r = runCLI(t, "", "run", writeScript(t, "a.ts", "return 1"), "--intent", "x")
	if r.code != exitUsage || !strings.Contains(r.stderr, "add --config") {
		t.Fatalf("--intent without --config: exit %d %s", r.code, r.stderr)
	}
}

func TestRunWithABrokenServerSaysWhy(t *testing.T) {
	cfg := writeConfig(t, fmt.Sprintf(`{"mcpServers": {"demo": {"command": %q}, "ghost": {"command": "/nonexistent/server"}},
  "gateway": {"startupTimeout": "3s"}}`, exampleServerBinary(t)))
	script := writeScript(t, "a.ts", "try { await (ghost as any).anything({}) } catch (e) { return e.name } ")
	r := runCLI(t, "", "run", script, "--config", cfg)
	if !strings.Contains(r.stderr, `server "ghost"`) {
		t.Fatalf("no warning about the broken server: exit %d\nstderr %s", r.code, r.stderr)
	}
	_ = os.Remove(script)
}

// TestCodeModeBlockOfTheConfig: the "codeMode" block sets execute_code's
// defaults and can turn the code-mode tools off.
func TestCodeModeBlockOfTheConfig(t *testing.T) {
	demo := exampleServerBinary(t)
	cfg := writeConfig(t, fmt.Sprintf(`{"mcpServers": {"demo": {"command": %q}}, "codeMode": {"limits": {"timeout": "300ms"}}}`, demo))
	script := writeScript(t, "loop.ts", "while (true) {}")
	r := runCLI(t, "", "run", script, "--config", cfg)
	if r.code != exitLimit || !strings.Contains(r.stderr, "300ms") {
		t.Fatalf("config limit: exit %d %s", r.code, r.stderr)
	}
	r = runCLI(t, "", "run", script, "--config", cfg, "--timeout", "500ms")
	if r.code != exitLimit || !strings.Contains(r.stderr, "500ms") {
		t.Fatalf("flag over config: exit %d %s", r.code, r.stderr)
	}
	if testing.Short() {
		return
	}
	off := writeConfig(t, fmt.Sprintf(`{"mcpServers": {"demo": {"command": %q}}, "codeMode": {"disabled": true}}`, demo))
	out, code := inspector(t, sandboxBinary(t), "serve", "-c", off, "--log-level", "error", "--method", "tools/list")
	if code != 0 || strings.Contains(out, "execute_code") || !strings.Contains(out, "demo__list_projects") {
		t.Fatalf("codeMode.disabled: exit %d\n%.500s", code, out)
	}
}

// TestCodeModeWarningsReachServeLog: when re-indexing the catalog fails
// (here: the embedding service goes down, then a server adds a tool), the
// engine's warning reaches serve's log at WARN. serve lowers slog's default
// logger to Debug for mcp-go's chatter; the engine used to be handed that
// default logger, so at the default level the warning never showed.
func TestCodeModeWarningsReachServeLog(t *testing.T) {
	defer slog.SetDefault(slog.Default())
	var down atomic.Bool
	embeddings := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down.Load() {
			http.Error(w, "model unloaded", http.StatusServiceUnavailable)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string][]float32{"embedding": {1, 0, 0}})
	}))
	defer embeddings.Close()

	var stderr testlog.Buffer
	f := gatewayFlags{logLevel: "info"}
	log, err := f.logger(&stderr)
	if err != nil {
		t.Fatal(err)
	}
	srv := server.NewMCPServer("dyn", "1.0", server.WithToolCapabilities(true))
	answer := func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("ok"), nil
	}
	srv.AddTool(mcp.NewTool("ping_service", mcp.WithDescription("Check that the service answers.")), answer)
	g, err := gateway.New(nil, gateway.WithInProcessServer("dyn", srv, nil), gateway.WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := g.Start(ctx); err != nil {
		t.Fatal(err)
	}
	front := frontend.New(g, frontend.WithLogger(log))
	defer front.Close()
	cm := config.CodeMode{
		Engine:  codemode.Options{Embedder: vectorindex.Embedder{Provider: "ollama", URL: embeddings.URL, Model: "m"}},
		Runtime: runtime.Options{Isolation: runtime.InProcess, Workers: 1},
	}
	_, closeCodeMode, _, err := addCodeMode(cm, "", g, front, log)
	if err != nil {
		t.Fatal(err)
	}
	defer closeCodeMode()

	down.Store(true)
	srv.AddTool(mcp.NewTool("convert_currency", mcp.WithDescription("Convert money between currencies.")), answer)
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(stderr.String(), "re-indexing the catalog failed") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	for _, line := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(line, "re-indexing the catalog failed") {
			if !strings.Contains(line, `"level":"WARN"`) {
				t.Fatalf("the warning is not at WARN: %s", line)
			}
			return
		}
	}
	t.Fatalf("no warning about the failed re-index on serve's log:\n%s", stderr.String())
}

// TestServeStreamsLogsAndLearnsTypesWithTheSDKClient drives `sandbox serve`
// over streamable HTTP with the official TypeScript SDK client, in front
// of the real server-everything and server-memory: execute_code with a
// progressToken streams the snippet's console lines and tool calls as it
// runs, and afterwards search_tools declares the result type learned from
// those calls for get-sum (which declares no output schema) while
// memory's declared output schema is kept; tsc accepts the declarations.
func TestServeStreamsLogsAndLearnsTypesWithTheSDKClient(t *testing.T) {
	if testing.Short() {
		t.Skip("starts npm peers")
	}
	everything := testpeers.Package(t, "@modelcontextprotocol/server-everything")
	memory := testpeers.Package(t, "@modelcontextprotocol/server-memory")
	sdk := testpeers.Package(t, "@modelcontextprotocol/sdk")
	dir := t.TempDir()
	cfg := fmt.Sprintf(`{"mcpServers": {
  "everything": {"command": %q, "args": [%q, "stdio"]},
  "memory": {"command": %q, "args": [%q], "env": {"MEMORY_FILE_PATH": %q}}
}, "codeMode": {"indexDir": %q}}`, testpeers.Node(t), filepath.Join(everything, "dist", "index.js"),
		testpeers.Node(t), filepath.Join(memory, "dist", "index.js"), filepath.Join(dir, "memory.jsonl"), filepath.Join(dir, "index"))
	url := serveHTTP(t, cfg)

	snippet := `console.log("adding");
const a = await everything.getSum({ a: 2, b: 3 });
const b = await everything.getSum({ a: 4, b: 5 });
await memory.createEntities({ entities: [{ name: "Ada", entityType: "person", observations: ["wrote the first program"] }] });
console.warn("added", a, b);
const g = await memory.readGraph({});
return g.entities.map((e) => e.name);`
	script := `
const [url, sdk, code] = process.argv.slice(2);
const { Client } = await import(sdk + "/dist/esm/client/index.js");
const { StreamableHTTPClientTransport } = await import(sdk + "/dist/esm/client/streamableHttp.js");
const { LoggingMessageNotificationSchema } = await import(sdk + "/dist/esm/types.js");
const client = new Client({ name: "sdk-test", version: "1.0.0" });
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
const logs = [];
client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => { logs.push(n.params.level + " " + n.params.data); });
await client.setLoggingLevel("debug");
const progress = [];
const run = await client.callTool({ name: "execute_code", arguments: { code } }, undefined, { onprogress: (p) => progress.push(p.message) });
const sum = await client.callTool({ name: "search_tools", arguments: { intent: "add two numbers", k: 2 } });
const graph = await client.callTool({ name: "search_tools", arguments: { intent: "read the whole knowledge graph", k: 2 } });
process.stdout.write(JSON.stringify({ progress, logs, run: run.content[0].text, sum: sum.content[0].text, graph: graph.content[0].text }));
await client.close();
`
	out := runNodeScript(t, filepath.Join(dir, "client.mjs"), script, url, "file://"+sdk, snippet)
	var got struct {
		Progress, Logs  []string
		Run, Sum, Graph string
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	progress := strings.Join(got.Progress, "\n")
	for _, want := range []string{"console.log: adding", "calling everything:get-sum", "everything:get-sum answered in", "calling memory:create_entities", "console.warn: added The sum of 2 and 3 is 5."} {
		if !strings.Contains(progress, want) {
			t.Errorf("progress lacks %q:\n%s", want, progress)
		}
	}
	if strings.Index(progress, "console.log: adding") > strings.Index(progress, "calling everything:get-sum") {
		t.Errorf("progress out of order:\n%s", progress)
	}
	if logs := strings.Join(got.Logs, "\n"); !strings.Contains(logs, "info adding") || !strings.Contains(logs, "warning added") {
		t.Errorf("notifications/message: %q", got.Logs)
	}
	if !strings.Contains(got.Run, `"ok":true`) || !strings.Contains(got.Run, `"Ada"`) || !strings.Contains(got.Run, `"adding"`) {
		t.Errorf("the result lacks the value or the logs: %s", got.Run)
	}
	if !strings.Contains(got.Sum, "@inferred from 2 calls") || !strings.Contains(got.Sum, "}): Promise<getSum.Output>") || !strings.Contains(got.Sum, "type Output = string;") {
		t.Errorf("search_tools does not declare get-sum's learned type:\n%s", got.Sum)
	}
	if strings.Contains(got.Graph, "readGraph") && strings.Contains(got.Graph[strings.Index(got.Graph, "function readGraph"):], "@inferred") {
		t.Errorf("memory's declared output schema lost to a learned one:\n%s", got.Graph)
	}
	var files = map[string]string{}
	for name, text := range map[string]string{"sum.d.ts": got.Sum, "graph.d.ts": got.Graph} {
		i := strings.Index(text, "declare namespace")
		if i < 0 {
			t.Fatalf("%s: no declarations:\n%s", name, text)
		}
		files[name] = typegen.Preamble + text[i:]
	}
	compileDeclarations(t, files)
}

// compileDeclarations runs tsc --strict on .d.ts files, each on its own.
func compileDeclarations(t *testing.T, files map[string]string) {
	t.Helper()
	tsc := testpeers.Bin(t, "tsc")
	for name, text := range files {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(tsc, "--noEmit", "--strict", "--pretty", "false", name)
		cmd.Dir = dir
		cmd.Env = testpeers.Env(t)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("tsc %s: %v\n%s\n%s", name, err, out, text)
		}
	}
}

// TestServeAsksForApprovalWithTheSDKClient: with a policy rule that asks,
// a snippet's call of a destructive tool waits for the person behind the
// official TypeScript SDK client, which answers the elicitation with
// accept, decline, or never; the audit log records each. A person who takes
// longer than the snippet's time limit to approve does not make it fail:
// the run's clock stands while the person reads.
func TestServeAsksForApprovalWithTheSDKClient(t *testing.T) {
	if testing.Short() {
		t.Skip("starts npm peers")
	}
	sdk := testpeers.Package(t, "@modelcontextprotocol/sdk")
	dir := t.TempDir()
	audit := filepath.Join(dir, "audit.jsonl")
	cfg := fmt.Sprintf(`{"mcpServers": {"demo": {"command": %q}},
 "gateway": {"policy": {"rules": [{"tools": "demo:delete_*", "action": "approve"}], "approvalTimeout": "2s"},
             "audit": {"path": %q}}}`, exampleServerBinary(t), audit)
	url := serveHTTP(t, cfg)
	script := `
const [url, sdk] = process.argv.slice(2);
const { Client } = await import(sdk + "/dist/esm/client/index.js");
const { StreamableHTTPClientTransport } = await import(sdk + "/dist/esm/client/streamableHttp.js");
const { ElicitRequestSchema } = await import(sdk + "/dist/esm/types.js");
const client = new Client({ name: "approver", version: "1.0.0" }, { capabilities: { elicitation: {} } });
let mode = "accept";
const asked = [];
client.setRequestHandler(ElicitRequestSchema, async (req) => {
  asked.push(req.params.message);
  if (mode === "never") return new Promise(() => {});
  if (mode === "slow") await new Promise((r) => setTimeout(r, 1200));
  if (mode === "decline") return { action: "decline" };
  return { action: "accept", content: { decision: "approve" } };
});
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
const code = 'try { await demo.deleteTask({ task_id: "T-106" }); return "ran" } catch (e) { return e.code === "DENIED" ? "DENIED: " + e.message : "ran" }';
const out = {};
for (const m of ["accept", "decline", "never", "slow"]) {
  mode = m;
  // slow: the person answers after 1.2 s, past the snippet's 0.5 s limit.
  const limits = m === "slow" ? { timeoutMs: 500 } : undefined;
  const r = await client.callTool({ name: "execute_code", arguments: { code, limits } });
  const env = JSON.parse(r.content[0].text);
  out[m] = env.ok ? env.value : "failed: " + JSON.stringify(env.error);
}
out.asked = asked;
process.stdout.write(JSON.stringify(out));
await client.close();
`
	out := runNodeScript(t, filepath.Join(dir, "approver.mjs"), script, url, "file://"+sdk)
	var got struct {
		Accept, Decline, Never, Slow string
		Asked                        []string
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if got.Accept != "ran" || !strings.Contains(got.Decline, "the person declined it") || !strings.Contains(got.Never, "nobody answered within 2s") {
		t.Errorf("accept %q, decline %q, never %q", got.Accept, got.Decline, got.Never)
	}
	if got.Slow != "ran" {
		t.Errorf("an approval slower than the snippet's time limit: %q", got.Slow)
	}
	if len(got.Asked) != 4 || !strings.Contains(got.Asked[0], "\n  task_id: \"T-106\"\n") {
		t.Errorf("the questions: %q", got.Asked)
	}
	data, err := os.ReadFile(audit)
	if err != nil {
		t.Fatal(err)
	}
	log := string(data)
	for _, want := range []string{`"kind":"approval","principal":"anonymous"`, `"decision":"approved"`, `"decision":"not approved: the person declined it"`, `"kind":"run"`, `"tool":"demo:delete_task"`} {
		if !strings.Contains(log, want) {
			t.Errorf("the audit log lacks %s:\n%s", want, log)
		}
	}
	if strings.Contains(log, "T-106") {
		t.Errorf("the audit log holds an argument value:\n%s", log)
	}
}

// runNodeScript runs an ES module (an MCP client on the official SDK) with
// the pinned Node, and returns what it printed; stderr comes with a failure.
func runNodeScript(t *testing.T, path, script string, args ...string) []byte {
	t.Helper()
	if err := os.WriteFile(path, []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(testpeers.Node(t), append([]string{path}, args...)...)
	cmd.Env = testpeers.Env(t)
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("%s: %v\n%s", filepath.Base(path), err, stderr)
	}
	return out
}
