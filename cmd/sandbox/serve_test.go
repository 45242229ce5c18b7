package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/sandboxrt/sandbox/internal/conformancefixture/suite"
	"github.com/sandboxrt/sandbox/internal/testpeers"
	"github.com/sandboxrt/sandbox/internal/testwait"
)

// startLogged starts cmd and waits for a line on stderr matching re,
// returning its first group. The process is stopped with the test.
func startLogged(t testing.TB, cmd *exec.Cmd, re *regexp.Regexp) string {
	t.Helper()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if cmd.Env == nil {
		cmd.Env = withFreshState(t, nil)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopProcess(cmd, 10*time.Second) })
	found := make(chan string, 1)
	var lines []string
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			} else if len(lines) < 50 {
				lines = append(lines, sc.Text())
			}
		}
		close(found)
	}()
	select {
	case v, ok := <-found:
		if !ok {
			t.Fatalf("%s exited before printing %s; stderr:\n%s", cmd.Path, re, strings.Join(lines, "\n"))
		}
		go func() {
			for range found {
			}
		}()
		return v
	case <-time.After(60 * time.Second):
		t.Fatalf("%s did not print %s within 60 s", cmd.Path, re)
	}
	return ""
}

// stopProcess interrupts a started command, as Ctrl-C would, and waits for
// it; one still running after grace is killed.
func stopProcess(cmd *exec.Cmd, grace time.Duration) {
	_ = cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(grace):
		_ = cmd.Process.Kill()
		<-done
	}
}

var listening = regexp.MustCompile(`listening on (http://[^\s"]+/mcp)`)

// serveHTTP starts `sandbox serve --http 127.0.0.1:0` on a config and
// returns the /mcp URL.
func serveHTTP(t *testing.T, config string, args ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "gateway.json")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(sandboxBinary(t), append([]string{"serve", "-c", path, "--http", "127.0.0.1:0", "--log-level", "warn"}, args...)...)
	return startLogged(t, cmd, listening)
}

func writeConfig(t testing.TB, config string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "gateway.json")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// everythingConfig puts @modelcontextprotocol/server-everything (stdio)
// behind the gateway.
func everythingConfig(t *testing.T) string {
	t.Helper()
	pkg := testpeers.Package(t, "@modelcontextprotocol/server-everything")
	node := testpeers.Node(t)
	return fmt.Sprintf(`{"mcpServers": {"everything": {"command": %q, "args": [%q, "stdio"]}}}`, node, filepath.Join(pkg, "dist", "index.js"))
}

// TestServeConformance runs the official conformance suite, every server
// scenario (pending ones included), against `sandbox serve` in pass-through
// mode in front of the conformance fixture (our own mcp-go upstream that
// serves the scenario tools, over streamable HTTP).
func TestServeConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the npm conformance suite")
	}
	fixture := exec.Command(suite.BuildFixture(t), "-http", "127.0.0.1:0")
	upstream := startLogged(t, fixture, regexp.MustCompile(`serving (http://\S+/mcp)`))
	url := serveHTTP(t, fmt.Sprintf(`{"mcpServers": {"conf": {"url": %q}}, "gateway": {"toolNames": "passthrough"}}`, upstream), "--expose", "all")
	scenarios := suite.List(t)
	results := suite.Run(t, url)
	var passed []string
	for _, name := range scenarios {
		s, ok := results[name]
		switch {
		case !ok:
			t.Errorf("%s: no result", name)
		case !s.Passed():
			t.Errorf("%s", s.Failures())
		case s.Count("SUCCESS") == 0:
			t.Errorf("%s: no check succeeded (only %d INFO/WARNING)", name, len(s.Checks))
		default:
			passed = append(passed, name)
		}
	}
	t.Logf("conformance through sandbox serve: %d of %d server scenarios pass", len(passed), len(scenarios))
}

// TestServeConformanceStdioUpstream is the same with the fixture as a stdio
// upstream (the usual way to run a local server). mcp-go's stdio server
// writes a tool's notifications from another goroutine than its response,
// so the last progress or log notification of a call can reach the gateway
// after the call's response, too late to relay; the two scenarios that
// count notifications are therefore reported, not required.
func TestServeConformanceStdioUpstream(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the npm conformance suite")
	}
	url := serveHTTP(t, fmt.Sprintf(`{"mcpServers": {"conf": {"command": %q}}, "gateway": {"toolNames": "passthrough"}}`, suite.BuildFixture(t)), "--expose", "all")
	results := suite.Run(t, url)
	racy := map[string]bool{"tools-call-with-progress": true, "tools-call-with-logging": true}
	n := 0
	for name, s := range results {
		if s.Passed() {
			n++
			continue
		}
		if racy[name] {
			t.Logf("%s failed (upstream notification ordering over stdio): %s", name, s.Failures())
			continue
		}
		t.Errorf("%s", s.Failures())
	}
	t.Logf("stdio upstream: %d of %d scenarios pass", n, len(results))
}

// inspector runs the MCP Inspector CLI (pinned, on Node 22).
func inspector(t *testing.T, args ...string) (string, int) {
	t.Helper()
	bin := filepath.Join(testpeers.Package(t, "@modelcontextprotocol/inspector"), "..", "..", ".bin", "mcp-inspector")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, testpeers.Node(t), append([]string{bin, "--cli"}, args...)...)
	// The Inspector starts a stdio server with HOME, PATH and a few more
	// of its own variables only (the SDK's default environment), so
	// XDG_STATE_HOME does not reach it: a HOME of the test's own keeps
	// serve's per-user state (statedir.go) out of the real one.
	cmd.Env = append(testpeers.Env(t), "HOME="+t.TempDir())
	out, err := cmd.Output()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("inspector %v: %v", args, err)
	}
	return string(out), code
}

// TestServeWithInspector drives `sandbox serve` with a real MCP client, the
// Inspector CLI, over stdio and over streamable HTTP, in front of
// server-everything: tools/list, tools/call (a result, a structured result,
// a gateway error), resources/read and prompts/get.
func TestServeWithInspector(t *testing.T) {
	if testing.Short() {
		t.Skip("runs npm peers")
	}
	cfg := everythingConfig(t)
	path := writeConfig(t, cfg)
	url := serveHTTP(t, cfg, "--expose", "all")
	targets := map[string][]string{
		"stdio": {sandboxBinary(t), "serve", "-c", path, "--expose", "all"},
		"http":  {url, "--transport", "http"},
	}
	for name, target := range targets {
		t.Run(name, func(t *testing.T) {
			run := func(args ...string) (string, int) {
				return inspector(t, append(append([]string{}, target...), args...)...)
			}
			out, code := run("--method", "tools/list")
			if code != 0 || !strings.Contains(out, `"everything__echo"`) || !strings.Contains(out, `"gateway__list_servers"`) {
				t.Fatalf("tools/list (exit %d):\n%.1500s", code, out)
			}
			out, code = run("--method", "tools/call", "--tool-name", "everything__echo", "--tool-arg", "message=hi there")
			if code != 0 || !strings.Contains(out, "Echo: hi there") {
				t.Fatalf("tools/call echo (exit %d):\n%s", code, out)
			}
			out, code = run("--method", "tools/call", "--tool-name", "everything__get-structured-content", "--tool-arg", "location=New York")
			if code != 0 || !strings.Contains(out, `"structuredContent"`) || !strings.Contains(out, `"temperature"`) {
				t.Fatalf("structured content (exit %d):\n%s", code, out)
			}
			out, code = run("--method", "tools/call", "--tool-name", "everything__echo")
			if code == 0 {
				t.Fatalf("a call without its required argument succeeded:\n%s", out)
			}
			out, code = run("--method", "resources/read", "--uri", "demo://resource/static/document/architecture.md")
			if code != 0 || !strings.Contains(out, "Architecture") {
				t.Fatalf("resources/read (exit %d):\n%.1500s", code, out)
			}
			out, code = run("--method", "prompts/get", "--prompt-name", "everything__args-prompt", "--prompt-args", "city=Paris")
			if code != 0 || !strings.Contains(out, "Paris") {
				t.Fatalf("prompts/get (exit %d):\n%s", code, out)
			}
		})
	}
}

func TestServersCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("runs npm peers")
	}
	cfg := strings.TrimSuffix(everythingConfig(t), "}}") + `, "broken": {"command": "/nonexistent/server"}}, "gateway": {"startupTimeout": "20s"}}`
	path := writeConfig(t, cfg)
	r := runCLI(t, "", "servers", "-c", path, "--log-level", "error")
	if r.code != 1 {
		t.Fatalf("exit %d with a failed server; stdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if !regexp.MustCompile(`everything\s+ready\s+stdio\s+\d+`).MatchString(r.stdout) || !regexp.MustCompile(`broken\s+failed\s+stdio\s+0 .*its command was not found: starting "/nonexistent/server"`).MatchString(r.stdout) {
		t.Fatalf("table:\n%s", r.stdout)
	}
	r = runCLI(t, "", "servers", "-c", path, "--json", "--log-level", "error")
	var rows []struct {
		Name, State string
		Tools       int
	}
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil || len(rows) != 2 || rows[1].Tools < 10 {
		t.Fatalf("json: %v\n%s", err, r.stdout)
	}
	// A running gateway answers through its hub tool.
	url := serveHTTP(t, everythingConfig(t))
	r = runCLI(t, "", "servers", "--url", url)
	if r.code != 0 || !strings.Contains(r.stdout, "everything") || !strings.Contains(r.stdout, "ready") {
		t.Fatalf("--url: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	// Config errors carry positions.
	bad := writeConfig(t, "{\"mcpServers\": {\"x\": {\"comand\": \"y\"}}}")
	r = runCLI(t, "", "servers", "-c", bad)
	if r.code != 2 || !strings.Contains(r.stderr, "gateway.json:1:23: unknown key \"comand\"") {
		t.Fatalf("bad config: exit %d, stderr %s", r.code, r.stderr)
	}
}

// TestServeMetricsAndRebinding: /metrics has per-tool counts after calls,
// and a DNS-rebinding request is refused.
func TestServeMetricsAndRebinding(t *testing.T) {
	if testing.Short() {
		t.Skip("runs npm peers")
	}
	url := serveHTTP(t, everythingConfig(t), "--expose", "all")
	if out, code := inspector(t, url, "--transport", "http", "--method", "tools/call", "--tool-name", "everything__get-sum", "--tool-arg", "a=1", "--tool-arg", "b=2"); code != 0 {
		t.Fatalf("call: %d %s", code, out)
	}
	resp, err := http.Get(strings.TrimSuffix(url, "/mcp") + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`sandbox_gateway_calls_total{outcome="OK",tool="everything:get-sum"} 1`,
		`sandbox_gateway_call_duration_seconds_bucket{tool="everything:get-sum"`,
		`sandbox_gateway_server_state{server="everything",state="ready"} 1`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	req, _ := http.NewRequest("POST", url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`))
	req.Host = "evil.example.com"
	req.Header.Set("Origin", "http://evil.example.com")
	req.Header.Set("Content-Type", "application/json")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("rebinding request got %d", resp.StatusCode)
	}
}

// threeServersConfig puts the three npm reference servers behind the
// gateway: filesystem (on dir), memory (its file in dir) and everything.
func threeServersConfig(t *testing.T, dir string) string {
	t.Helper()
	node := testpeers.Node(t)
	script := func(pkg string) string { return filepath.Join(testpeers.Package(t, pkg), "dist", "index.js") }
	return fmt.Sprintf(`{"mcpServers": {
  "filesystem": {"command": %q, "args": [%q, %q]},
  "memory": {"command": %q, "args": [%q], "env": {"MEMORY_FILE_PATH": %q}},
  "everything": {"command": %q, "args": [%q, "stdio"]}}}`,
		node, script("@modelcontextprotocol/server-filesystem"), dir,
		node, script("@modelcontextprotocol/server-memory"), filepath.Join(dir, "memory.jsonl"),
		node, script("@modelcontextprotocol/server-everything"))
}

// TestServeExposesCodeOnlyByDefault: with code mode on, tools/list holds the
// code-mode and hub tools only (resources and prompts are still served, and
// upstream tools are reached through execute_code); --expose all lists every
// upstream tool too. The sizes are docs/performance.md's token report.
func TestServeExposesCodeOnlyByDefault(t *testing.T) {
	if testing.Short() {
		t.Skip("runs npm peers")
	}
	cfg := threeServersConfig(t, t.TempDir())
	sizes := map[string]int{}
	for _, expose := range []string{"code", "all"} {
		var args []string
		if expose == "all" {
			args = []string{"--expose", "all"}
		}
		url := serveHTTP(t, cfg, args...)
		c := keylessClient(t, url)
		ctx := context.Background()
		tools, err := c.ListTools(ctx, mcp.ListToolsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tl := range tools.Tools {
			names = append(names, tl.Name)
		}
		b, _ := json.Marshal(tools.Tools)
		sizes[expose] = len(b)
		all := strings.Join(names, " ")
		switch expose {
		case "code":
			if len(names) != 7 || !strings.Contains(all, "execute_code") || !strings.Contains(all, "search_tools") || !strings.Contains(all, "save_script") || strings.Contains(all, "everything__") {
				t.Fatalf("--expose code lists %s", all)
			}
			if _, err := c.ListResources(ctx, mcp.ListResourcesRequest{}); err != nil {
				t.Fatalf("resources under --expose code: %v", err)
			}
			res, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "execute_code",
				Arguments: map[string]any{"code": `return (await everything.echo({message: "via code"}))`}}})
			if err != nil || res.IsError || !strings.Contains(toolText(res), "via code") {
				t.Fatalf("execute_code under --expose code: %v %s", err, toolText(res))
			}
			// The search answers' sizes, for docs/performance.md's token report (the
			// session's first answer carries the servers' instructions), and
			// their shape over real servers: the other tools of the servers
			// drawn on, the instructions once, a tool found by its schemas.
			for i, intent := range []string{"read a text file", "remember that Alice works at Acme", "add two numbers", "weather in Chicago"} {
				res, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "search_tools", Arguments: map[string]any{"intent": intent}}})
				if err != nil || res.IsError {
					t.Fatalf("search_tools %q: %v %s", intent, err, toolText(res))
				}
				text := toolText(res)
				t.Logf("search_tools %q (k=5): %d chars", intent, len(text))
				if hasInstructions := strings.Contains(text, "- everything (ready, 17 tools): "); hasInstructions != (i == 0) {
					t.Errorf("answer %d of the session: the servers' instructions shown %v\n%s", i+1, hasInstructions, text)
				}
				if !strings.Contains(text, "\n\nNot shown, of the same servers (search naming one to get its declaration):\n- ") {
					t.Errorf("search_tools %q names no other tools:\n%s", intent, text)
				}
				if intent == "weather in Chicago" && !strings.Contains(text, "Best first:\n1. everything.getStructuredContent: matches weather, chicago in what it accepts or returns\n") {
					t.Errorf("search_tools %q:\n%s", intent, text)
				}
			}
		case "all":
			for _, want := range []string{"everything__echo", "memory__create_entities", "filesystem__read_text_file", "execute_code"} {
				if !strings.Contains(all, want) {
					t.Fatalf("--expose all lacks %s: %s", want, all)
				}
			}
		}
	}
	t.Logf("tools/list for filesystem, memory and everything: --expose code %d chars, --expose all %d chars", sizes["code"], sizes["all"])
	if sizes["code"]*4 > sizes["all"] {
		t.Fatalf("--expose code (%d chars) saves too little against all (%d)", sizes["code"], sizes["all"])
	}
}

// keylessClient connects to a loopback serve without credentials.
func keylessClient(t *testing.T, url string) *client.Client { return httpClient(t, url, nil) }

// httpClient is a 2025-11-25 session with serve at url, sending headers
// with every request; it is closed when the test ends.
func httpClient(t testing.TB, url string, headers map[string]string) *client.Client {
	t.Helper()
	c, err := client.NewStreamableHttpClient(url, transport.WithHTTPHeaders(headers))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	initialize(t, c)
	return c
}

// initialize opens the client's session (protocol 2025-11-25).
func initialize(t testing.TB, c *client.Client) {
	t.Helper()
	if _, err := c.Initialize(context.Background(), mcp.InitializeRequest{Params: mcp.InitializeParams{ProtocolVersion: mcp.ProtocolVersion20251125,
		ClientInfo: mcp.Implementation{Name: "t", Version: "1"}}}); err != nil {
		t.Fatal(err)
	}
}

// TestServeReadiness: /readyz is 200 once the servers have connected and
// the workers are up; /healthz always answers.
func TestServeReadiness(t *testing.T) {
	if testing.Short() {
		t.Skip("starts sandbox serve")
	}
	url := serveHTTP(t, fmt.Sprintf(`{"mcpServers": {"demo": {"command": %q}}}`, exampleServerBinary(t)))
	base := strings.TrimSuffix(url, "/mcp")
	get := func(path string) (int, string) {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("/healthz"); code != 200 || strings.TrimSpace(body) != "ok" {
		t.Errorf("/healthz: %d %q", code, body)
	}
	testwait.Until(t, 30*time.Second, "/readyz to say ready", func() bool {
		code, body := get("/readyz")
		return code == 200 && strings.TrimSpace(body) == "ready"
	})
}
