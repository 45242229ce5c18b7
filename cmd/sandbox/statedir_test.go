package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// stdioServe starts `sandbox serve` over stdio with the per-user state in
// state, as a client would, and initializes it.
func stdioServe(t *testing.T, state, cfg string, args ...string) *client.Client {
	t.Helper()
	c, err := client.NewStdioMCPClient(sandboxBinary(t), []string{"XDG_STATE_HOME=" + state}, append([]string{"serve", "-c", cfg, "--log-level", "warn"}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{ProtocolVersion: mcp.LATEST_PROTOCOL_VERSION, ClientInfo: mcp.Implementation{Name: "t", Version: "1"}}}); err != nil {
		t.Fatal(err)
	}
	return c
}

// stdioCall calls a tool and returns its first text block.
func stdioCall(t *testing.T, c *client.Client, tool string, args map[string]any) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: tool, Arguments: args}})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	if len(res.Content) == 0 {
		t.Fatalf("%s: no content", tool)
	}
	text, _ := res.Content[0].(mcp.TextContent)
	if res.IsError {
		t.Fatalf("%s: %s", tool, text.Text)
	}
	return text.Text
}

func stdioToolNames(t *testing.T, c *client.Client) string {
	t.Helper()
	res, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	return strings.Join(names, ",")
}

// What agents save outlives serve without a "dataDir": it goes to the
// per-user state directory, `sandbox scripts list` finds it there with no
// config, and a stdio serve is a session of its own (its session-scope
// values are not the next process's, its principal-scope ones are). Under
// --expose all, saved scripts are tools over stdio as over HTTP.
func TestStatePersistsInThePerUserDirectory(t *testing.T) {
	state := t.TempDir()
	cfg := writeConfig(t, `{"mcpServers": {}}`)

	first := stdioServe(t, state, cfg, "--expose", "all")
	stdioCall(t, first, "execute_code", map[string]any{"code": `await sandbox.store.set("mine", 1); await sandbox.store.set("ours", 2, {scope: "principal"}); return 0`})
	stdioCall(t, first, "save_script", map[string]any{"name": "say_hi", "description": "Says hi.", "code": `return "hi"`})
	if names := stdioToolNames(t, first); !strings.Contains(names, "scripts__say_hi") {
		t.Fatalf("tools over stdio after save_script: %s", names)
	}
	if out := stdioCall(t, first, "scripts__say_hi", nil); !strings.Contains(out, `"value":"hi"`) {
		t.Fatalf("scripts__say_hi: %s", out)
	}
	first.Close() // serve writes its files as it stops

	dir := filepath.Join(state, "sandbox")
	if st, err := os.Stat(filepath.Join(dir, "scripts.json")); err != nil || st.Mode().Perm()&0o077 != 0 {
		t.Fatalf("scripts.json: %v %v", st, err)
	}
	if st, _ := os.Stat(dir); st == nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("state directory %s: %v", dir, st)
	}

	// `sandbox scripts list` with no config and no --data-dir: the default.
	list := runCLIIn(t, t.TempDir(), []string{"XDG_STATE_HOME=" + state}, "scripts", "list")
	if list.code != 0 || !strings.Contains(list.stdout, "say_hi") || !strings.Contains(list.stdout, "Says hi.") {
		t.Fatalf("scripts list: %+v", list)
	}

	second := stdioServe(t, state, cfg, "--expose", "all")
	out := stdioCall(t, second, "execute_code", map[string]any{"code": `return [await sandbox.store.get("mine") ?? "none", await sandbox.store.get("ours", {scope: "principal"})]`})
	var rep struct {
		OK    bool
		Value json.RawMessage
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || !rep.OK || string(rep.Value) != `["none",2]` {
		t.Fatalf("second process reads %s (want the last one's session values gone, its principal values kept)", out)
	}
	if names := stdioToolNames(t, second); !strings.Contains(names, "scripts__say_hi") {
		t.Fatalf("saved script not a tool at the start of a stdio serve: %s", names)
	}
}

// serve says at start-up where it keeps what agents save; without a usable
// per-user directory it says that it keeps it in memory, and how to fix it.
func TestServeSaysWhereStateIs(t *testing.T) {
	state := t.TempDir()
	cfg := writeConfig(t, `{"mcpServers": {}}`)
	r := serveBriefly(t, []string{"XDG_STATE_HOME=" + state}, cfg)
	if want := "code mode keeps saved scripts and sandbox.store in " + filepath.Join(state, "sandbox") + ` (the per-user default`; !strings.Contains(r, want) {
		t.Fatalf("log lacks %q:\n%s", want, r)
	}
	own := filepath.Join(t.TempDir(), "data")
	cfg2 := writeConfig(t, `{"mcpServers": {}, "codeMode": {"dataDir": "`+own+`"}}`)
	if r := serveBriefly(t, []string{"XDG_STATE_HOME=" + state}, cfg2); !strings.Contains(r, "code mode keeps saved scripts and sandbox.store in "+own) {
		t.Fatalf("an explicit dataDir is not the one said:\n%s", r)
	}
	// No HOME and no XDG_STATE_HOME (some containers): memory, said so.
	if r := serveBriefly(t, []string{"XDG_STATE_HOME=", "HOME="}, cfg); !strings.Contains(r, `stay in memory and end with this process`) || !strings.Contains(r, `set \"dataDir\"`) {
		t.Fatalf("log:\n%s", r)
	}
}

// serveBriefly runs serve over stdio with env added until its stdin ends
// (at once), and returns its log.
func serveBriefly(t *testing.T, env []string, cfg string) string {
	t.Helper()
	r := runCLIIn(t, t.TempDir(), env, "serve", "-c", cfg, "--log-format", "json")
	if r.code != 0 {
		t.Fatalf("serve: %+v", r)
	}
	return r.stderr
}
