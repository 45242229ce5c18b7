package main

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/sandboxrt/sandbox/internal/testwait"
)

// TestServeSearchAnswer drives search_tools and save_script of `sandbox
// serve --http` over the example tracker, as an agent meets them: the
// answer names the other tools of the servers it draws on, the servers'
// instructions come once per session, the declarations follow the ranking,
// a tool the policy sends to a person says so and a denied one is nowhere;
// a script can be checked before it is saved; and what one principal's
// session called after a search ranks that tool for another principal.
func TestServeSearchAnswer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts sandbox serve")
	}
	t.Setenv("SANDBOX_TEST_AGENT_KEY", agentKey)
	cfg := fmt.Sprintf(`{"mcpServers": {"demo": {"command": %q}},
  "codeMode": {"dataDir": %q},
  "gateway": {"policy": {"rules": [{"tools": "demo:delete_*", "action": "deny"}, {"tools": "demo:create_task", "action": "approve"}]},
    "auth": {"apiKeys": [{"name": "agent-a", "key": "${SANDBOX_TEST_AGENT_KEY}"}, {"name": "admin", "key": %q}]}}}`,
		exampleServerBinary(t), t.TempDir(), adminKey)
	url := serveHTTP(t, cfg)
	agent, admin := keyClient(t, url, agentKey), keyClient(t, url, adminKey)
	call := func(c *client.Client, tool string, args map[string]any) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		res, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: tool, Arguments: args}})
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %s", tool, err, toolText(res))
		}
		return toolText(res)
	}

	first := call(agent, "search_tools", map[string]any{"intent": "add a task to a project | which tasks are blocked", "k": 2})
	for _, want := range []string{
		"- demo (ready, 7 tools): Acme's project tracker",
		"Best first:\n1. demo.",
		"\n\nNot shown, of the same servers (search naming one to get its declaration):\n- demo: ",
		"@approval each call waits for a person to approve it",
	} {
		if !strings.Contains(first, want) {
			t.Errorf("the first answer lacks %q:\n%s", want, first)
		}
	}
	if strings.Contains(first, "deleteTask") {
		t.Errorf("the answer names the denied tool:\n%s", first)
	}
	listed := regexp.MustCompile(`(?m)^\d+\. demo\.(\w+):`).FindAllStringSubmatch(first, -1)
	declared := regexp.MustCompile(`(?m)^\tfunction (\w+)\(`).FindAllStringSubmatch(first, -1)
	if len(listed) != 2 || len(declared) != 2 || listed[0][1] != declared[0][1] || listed[1][1] != declared[1][1] {
		t.Errorf("declarations %v are not in the list's order %v", declared, listed)
	}
	if again := call(agent, "search_tools", map[string]any{"intent": "read a document"}); strings.Contains(again, "Acme's project tracker") {
		t.Errorf("the session's second answer repeats the instructions:\n%s", again)
	}

	check := call(agent, "save_script", map[string]any{"name": "open_count", "description": "How many open tasks a project has.", "check": true,
		"code":        `const p: any = await demo.getProject({ project_id: input.project }); return p.task_counts.todo + p.task_counts.in_progress`,
		"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"project": map[string]any{"type": "string"}}, "required": []string{"project"}}})
	if !strings.Contains(check, "Checked; nothing was saved.") || !strings.Contains(check, "function openCount(input: {") {
		t.Errorf("save_script check: %s", check)
	}
	if out := call(agent, "execute_code", map[string]any{"code": `try { return await scripts.openCount({ project: "PRJ-1" }) } catch (e: any) { return e.code }`}); !strings.Contains(out, "UNKNOWN_TOOL") {
		t.Errorf("a checked script was saved: %s", out)
	}

	// Learning from use: the agent's session searches words no tool has,
	// then calls the tool it meant; the admin's search with those words
	// shows it, saying why.
	const words = "who is swamped in the zymurgy ledger"
	call(agent, "search_tools", map[string]any{"intent": words})
	if out := call(agent, "execute_code", map[string]any{"code": `return typeof (await demo.teamWorkload({}))`}); !strings.Contains(out, `"value":"string"`) {
		t.Fatalf("execute_code: %s", out)
	}
	testwait.Until(t, 10*time.Second, "the admin's search to show what the agent called", func() bool {
		return regexp.MustCompile(`\n\d\. demo\.teamWorkload: [^\n]*; called after searches with these words \(1 caller\)\n`).
			MatchString(call(admin, "search_tools", map[string]any{"intent": words}))
	})
}
