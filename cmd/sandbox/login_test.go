package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/sandboxrt/sandbox/internal/oauthtest"
)

// login runs `sandbox login` as a person would: it browses to the URL the
// command prints, and returns what the command said once it exits.
func login(t *testing.T, args ...string) cliResult {
	t.Helper()
	cmd := exec.Command(sandboxBinary(t), append([]string{"login", "--no-browser", "--wait", "60s"}, args...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var said strings.Builder
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		line := sc.Text()
		said.WriteString(line + "\n")
		if u, ok := strings.CutPrefix(line, "  http"); ok {
			oauthtest.Browse(t, "http"+u)
		}
	}
	err = cmd.Wait()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	return cliResult{stderr: said.String(), code: code}
}

// TestLoginThroughTheCLI: `sandbox login` against a real authorization
// server (oidc-provider) and an MCP server that requires its tokens; then
// `sandbox servers` shows the login, `sandbox run` calls with it, and
// `sandbox serve` gives each principal its own login: one logged in calls,
// one not is told what to run, and never gets the operator's.
func TestLoginThroughTheCLI(t *testing.T) {
	issuer := oauthtest.StartAuthServer(t)
	secure := oauthtest.StartProtectedServer(t, issuer)
	tokens := filepath.Join(t.TempDir(), "tokens.json")
	cfg := writeConfig(t, fmt.Sprintf(`{"mcpServers": {"secure": {"url": %q}},
  "gateway": {"oauthTokens": %q, "startupTimeout": "5s", "restartBackoff": "100ms", "maxRestartBackoff": "200ms",
    "auth": {"apiKeys": [{"name": "agent-a", "key": %q}, {"name": "admin", "key": %q}]}}}`, secure, tokens, agentKey, adminKey))

	r := runCLI(t, "", "servers", "-c", cfg, "--wait", "3s")
	if r.code != 1 || !strings.Contains(r.stdout, "not logged in") || !strings.Contains(r.stdout, "sandbox login secure") {
		t.Fatalf("servers before login: %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	r = login(t, "secure", "-c", cfg)
	if r.code != 0 || !strings.Contains(r.stderr, "logged in to secure as operator") || !strings.Contains(r.stderr, "renewed automatically") {
		t.Fatalf("login: %d\n%s", r.code, r.stderr)
	}
	if st, err := os.Stat(tokens); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v %v", st, err)
	}
	r = runCLI(t, "", "servers", "-c", cfg)
	if r.code != 0 || !strings.Contains(r.stdout, "logged in (token valid") {
		t.Fatalf("servers after login: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	snippet := filepath.Join(t.TempDir(), "who.ts")
	if err := os.WriteFile(snippet, []byte(`return await secure.whoami({})`), 0o600); err != nil {
		t.Fatal(err)
	}
	r = runCLI(t, "", "run", snippet, "-c", cfg)
	if r.code != 0 || !strings.Contains(r.stdout, "alice") {
		t.Fatalf("run: %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// serve: agent-a has its own login; admin has none.
	if r := login(t, "secure", "-c", cfg, "--principal", "agent-a"); r.code != 0 || !strings.Contains(r.stderr, "as agent-a/agent-a") {
		t.Fatalf("login for agent-a: %d\n%s", r.code, r.stderr)
	}
	url := serveHTTP(t, mustRead(t, cfg))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	call := func(key string) string {
		res, err := keyClient(t, url, key).CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "execute_code",
			Arguments: map[string]any{"code": `try { return await secure.whoami({}) } catch (e) { return e.code + ": " + e.message }`}}})
		if err != nil {
			t.Fatal(err)
		}
		return toolText(res)
	}
	if out := call(agentKey); !strings.Contains(out, `"value":"alice"`) {
		t.Fatalf("agent-a: %s", out)
	}
	if out := call(adminKey); !strings.Contains(out, "AUTH_REQUIRED") || !strings.Contains(out, "--principal admin/admin") {
		t.Fatalf("admin without a login: %s", out)
	}

	r = runCLI(t, "", "logout", "secure", "-c", cfg)
	if r.code != 0 || !strings.Contains(r.stderr, "logged operator out of secure") {
		t.Fatalf("logout: %d %s", r.code, r.stderr)
	}
	r = runCLI(t, "", "servers", "-c", cfg, "--wait", "3s")
	if !strings.Contains(r.stdout, "not logged in") {
		t.Fatalf("servers after logout:\n%s", r.stdout)
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
