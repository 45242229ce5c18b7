package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	neturl "net/url"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

const (
	agentKey = "agent-a-secret-0123456789abcdef"
	adminKey = "admin-secret-0123456789abcdef00"
)

// authConfig: two copies of the example server; agent-a may use only demo.
func authConfig(t *testing.T) string {
	bin := exampleServerBinary(t)
	return fmt.Sprintf(`{"mcpServers": {"demo": {"command": %q}, "other": {"command": %q}},
  "gateway": {"auth": {"apiKeys": [
    {"name": "agent-a", "key": "${SANDBOX_TEST_AGENT_KEY}", "servers": ["demo"]},
    {"name": "admin", "key": %q}]}}}`, bin, bin, adminKey)
}

func keyClient(t *testing.T, url, key string) *client.Client {
	t.Helper()
	return httpClient(t, url, map[string]string{"Authorization": "Bearer " + key})
}

// TestServeAuthenticatesAndScopesPrincipals drives `sandbox serve --http`
// with "gateway.auth": no credential or a wrong one gets 401 with the
// WWW-Authenticate challenge; an API key scoped to one server sees and calls
// only that server, directly and from execute_code.
func TestServeAuthenticatesAndScopesPrincipals(t *testing.T) {
	if testing.Short() {
		t.Skip("starts sandbox serve")
	}
	t.Setenv("SANDBOX_TEST_AGENT_KEY", agentKey)
	url := serveHTTP(t, authConfig(t), "--expose", "all")

	for name, header := range map[string]string{"no credential": "", "wrong key": "Bearer not-a-key-of-ours-000000", "basic": "Basic YTpi"} {
		req, _ := http.NewRequest("POST", url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if header != "" {
			req.Header.Set("Authorization", header)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusBadRequest {
			t.Fatalf("%s: %d %s", name, resp.StatusCode, body)
		}
		if resp.StatusCode == http.StatusUnauthorized && !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
			t.Fatalf("%s: no Bearer challenge: %q", name, resp.Header.Get("WWW-Authenticate"))
		}
		if strings.Contains(string(body), "demo__") {
			t.Fatalf("%s: the tools leaked: %s", name, body)
		}
	}

	agent := keyClient(t, url, agentKey)
	tools, err := agent.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	all := strings.Join(names, " ")
	if strings.Contains(all, "other__") || !strings.Contains(all, "demo__") {
		t.Fatalf("agent-a lists %s", all)
	}
	res, err := agent.CallTool(context.Background(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "execute_code",
		Arguments: map[string]any{"code": `try { await other.listProjects({}); return "called" } catch (e) { return e.code }`}}})
	if err != nil || !strings.Contains(toolText(res), `"value":"UNKNOWN_TOOL"`) {
		t.Fatalf("execute_code reaching a forbidden server: %v %s", err, toolText(res))
	}
	res, err = agent.CallTool(context.Background(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "search_tools", Arguments: map[string]any{"intent": "list projects", "k": 50}}})
	if err != nil || strings.Contains(toolText(res), "other.") || strings.Contains(toolText(res), "other:") {
		t.Fatalf("search_tools shows a forbidden server: %v %.400s", err, toolText(res))
	}

	metrics := strings.TrimSuffix(url, "/mcp") + "/metrics"
	for key, want := range map[string]int{"": http.StatusUnauthorized, agentKey: http.StatusForbidden, adminKey: http.StatusOK} {
		req, _ := http.NewRequest("GET", metrics, nil)
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("/metrics with key %.5q: %d, want %d", key, resp.StatusCode, want)
		}
	}

	admin := keyClient(t, url, adminKey)
	tools, err = admin.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	names = names[:0]
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	if all := strings.Join(names, " "); !strings.Contains(all, "other__") || !strings.Contains(all, "demo__") {
		t.Fatalf("admin lists %s", all)
	}
}

// TestServeRefusesOpenExposure: --http beyond loopback with nobody
// authenticated does not start, and says how to fix it.
func TestServeRefusesOpenExposure(t *testing.T) {
	path := writeConfig(t, `{"mcpServers": {}}`)
	out, err := exec.Command(sandboxBinary(t), "serve", "-c", path, "--http", "0.0.0.0:0", "--code-mode=false").CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), `"auth"`) || !strings.Contains(string(out), "--allow-unauthenticated") {
		t.Fatalf("serve on 0.0.0.0 without auth: %v\n%s", err, out)
	}
}

func toolText(r *mcp.CallToolResult) string {
	if r == nil {
		return ""
	}
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// TestServeSavedScripts: over streamable HTTP, an agent saves a script with
// save_script, calls it from execute_code and finds it with search_tools;
// another principal does not see it until the operator shares it with
// `sandbox scripts share`; the scripts are kept in codeMode.dataDir.
func TestServeSavedScripts(t *testing.T) {
	if testing.Short() {
		t.Skip("starts sandbox serve")
	}
	t.Setenv("SANDBOX_TEST_AGENT_KEY", agentKey)
	dataDir := t.TempDir()
	cfg := strings.Replace(authConfig(t), `"gateway": {`, fmt.Sprintf(`"codeMode": {"dataDir": %q}, "gateway": {`, dataDir), 1)
	cfgPath := writeConfig(t, cfg)
	cmd := exec.Command(sandboxBinary(t), "serve", "-c", cfgPath, "--http", "127.0.0.1:0", "--log-level", "warn", "--expose", "all")
	url := startLogged(t, cmd, listening)
	agent, admin := keyClient(t, url, agentKey), keyClient(t, url, adminKey)
	toolNames := func(c *client.Client) string {
		t.Helper()
		list, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tl := range list.Tools {
			names = append(names, tl.Name)
		}
		return strings.Join(names, " ")
	}
	call := func(c *client.Client, tool string, args map[string]any) (string, bool) {
		t.Helper()
		res, err := c.CallTool(context.Background(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: tool, Arguments: args}})
		if err != nil {
			t.Fatal(err)
		}
		return toolText(res), res.IsError
	}
	text, isErr := call(agent, "save_script", map[string]any{"name": "active_ids", "description": "The ids of the active projects.",
		"code":        `const p: any = await demo.listProjects({ status: "active" }); return p.map((x: any) => x.id).slice(0, input.max ?? 10)`,
		"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"max": map[string]any{"type": "integer"}}}})
	if isErr || !strings.Contains(text, "scripts.activeIds") {
		t.Fatalf("save_script: %s", text)
	}
	if text, isErr := call(agent, "save_script", map[string]any{"name": "broken", "description": "x", "code": "return (1 +"}); !isErr || !strings.Contains(text, "does not compile") {
		t.Errorf("a script that does not compile was saved: %s", text)
	}
	text, isErr = call(agent, "execute_code", map[string]any{"code": `return await scripts.activeIds({ max: 1 })`})
	if isErr || !strings.Contains(text, `"ok":true`) || !strings.Contains(text, `"value":["`) {
		t.Errorf("execute_code: %s", text)
	}
	if text, _ := call(agent, "search_tools", map[string]any{"intent": "ids of the active projects"}); !strings.Contains(text, "scripts.activeIds: saved script") {
		t.Errorf("search_tools does not find the script:\n%s", text)
	}
	if text, _ := call(admin, "execute_code", map[string]any{"code": `try { return await scripts.activeIds({}) } catch (e: any) { return e.code }`}); !strings.Contains(text, "UNKNOWN_TOOL") {
		t.Errorf("another principal calls the agent's script: %s", text)
	}
	// Under --expose all the script is a tool of its owner's sessions only.
	if names := toolNames(agent); !strings.Contains(names, "scripts__active_ids") {
		t.Errorf("the owner's tools/list lacks the script: %s", names)
	}
	if names := toolNames(admin); strings.Contains(names, "scripts__") {
		t.Errorf("another principal lists the agent's script: %s", names)
	}
	if text, isErr := call(agent, "scripts__active_ids", map[string]any{"max": 1}); isErr || !strings.Contains(text, `"ok":true`) {
		t.Errorf("calling the script as a tool: %s", text)
	}
	if text, isErr := call(agent, "scripts__active_ids", map[string]any{"max": "one"}); !isErr || !strings.Contains(text, "do not match the script's inputSchema") {
		t.Errorf("a script tool with bad arguments: %s", text)
	}

	r := runCLI(t, "", "scripts", "list", "--data-dir", dataDir)
	if r.code != 0 || !strings.Contains(r.stdout, "active_ids") || !strings.Contains(r.stdout, "agent-a") {
		t.Fatalf("scripts list: %d %s %s", r.code, r.stdout, r.stderr)
	}
	// The operator shares it (serve reads scripts when it starts).
	if r := runCLI(t, "", "scripts", "share", "active_ids", "--data-dir", dataDir); r.code != 0 {
		t.Fatalf("scripts share: %d %s", r.code, r.stderr)
	}
	if r := runCLI(t, "", "scripts", "show", "active_ids", "--data-dir", dataDir); r.code != 0 || !strings.Contains(r.stdout, "shared") || !strings.Contains(r.stdout, "listProjects") {
		t.Errorf("scripts show: %d %s", r.code, r.stdout)
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	_ = cmd.Wait()
	cmd = exec.Command(sandboxBinary(t), "serve", "-c", cfgPath, "--http", "127.0.0.1:0", "--log-level", "warn", "--expose", "all")
	url = startLogged(t, cmd, listening)
	admin = keyClient(t, url, adminKey)
	if names := toolNames(admin); !strings.Contains(names, "scripts__active_ids") {
		t.Errorf("a shared script is not listed for another principal: %s", names)
	}
	if text, isErr := call(admin, "execute_code", map[string]any{"code": `return (await scripts.activeIds({ max: 2 })).length`}); isErr || !strings.Contains(text, `"value":2`) {
		t.Errorf("the shared script after a restart: %s", text)
	}
}

// TestServeRefusesAStalledBodyAtOnce: a client without a credential that
// announces a body and sends only its first byte gets its 401 at once and
// its connection closed. net/http would otherwise wait for the rest of the
// body before writing any answer (serve has no read timeout, for its long
// streams), and anyone could hold a connection and a goroutine for good.
func TestServeRefusesAStalledBodyAtOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("starts sandbox serve")
	}
	t.Setenv("SANDBOX_TEST_AGENT_KEY", agentKey)
	endpoint := serveHTTP(t, authConfig(t))
	u, err := neturl.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 4096\r\n\r\n{", u.Path, u.Host)
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a stalled body within 10 s: %v", err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !resp.Close {
		t.Fatalf("got %d (Connection: close %v), want 401 and the connection closed", resp.StatusCode, resp.Close)
	}
	if _, err := conn.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("the connection is still open after the refusal: %v", err)
	}
}
