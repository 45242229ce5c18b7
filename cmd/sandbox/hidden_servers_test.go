package main

import (
	"context"
	"fmt"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// catalogServer is an upstream MCP server (streamable HTTP) named name with
// a tool, a resource of its own, the resource shared://handbook that the
// other one lists too, a resource template, a prompt and completions, each
// saying the server's name in what it answers.
func catalogServer(t *testing.T, name, prefix string) string {
	t.Helper()
	c := completer(name)
	s := server.NewMCPServer(name, "1.0.0", server.WithResourceCapabilities(true, true), server.WithPromptCapabilities(true),
		server.WithCompletions(), server.WithPromptCompletionProvider(c), server.WithResourceCompletionProvider(c))
	s.AddTool(mcp.NewTool("run_"+prefix, mcp.WithDescription("Run the "+prefix+".")), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("ran " + name), nil
	})
	read := func(ctx context.Context, r mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		return []mcp.ResourceContents{mcp.TextResourceContents{URI: r.Params.URI, MIMEType: "text/plain", Text: "read from " + name}}, nil
	}
	s.AddResource(mcp.NewResource(prefix+"://2026/salaries", name+" salaries", mcp.WithMIMEType("text/plain")), read)
	s.AddResource(mcp.NewResource("shared://handbook", name+" handbook", mcp.WithMIMEType("text/plain")), read)
	s.AddResourceTemplate(mcp.NewResourceTemplate(prefix+"://employee/{id}", name+" employee"), read)
	s.AddPrompt(mcp.NewPrompt("payslip", mcp.WithPromptDescription(name+"'s payslip"), mcp.WithArgument("employee")),
		func(context.Context, mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{{Role: mcp.RoleUser, Content: mcp.NewTextContent("payslip of " + name)}}}, nil
		})
	srv := httptest.NewServer(server.NewStreamableHTTPServer(s))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

type completer string

func (c completer) CompletePromptArgument(context.Context, string, mcp.CompleteArgument, mcp.CompleteContext) (*mcp.Completion, error) {
	return &mcp.Completion{Values: []string{"from " + string(c)}}, nil
}

func (c completer) CompleteResourceArgument(context.Context, string, mcp.CompleteArgument, mcp.CompleteContext) (*mcp.Completion, error) {
	return &mcp.Completion{Values: []string{"from " + string(c)}}, nil
}

// TestServeHidesServersOutsideTheScope: for a principal scoped to some
// servers, every other server does not exist. resources/read, prompts/get
// and completion/complete of what only a hidden server offers used to answer
// `FORBIDDEN: your credentials do not allow server "finance_payroll"`; now
// each answer, through the real binary, is byte for byte the answer about a
// name nobody offers, and a resource URI both servers list is the caller's
// own server's.
func TestServeHidesServersOutsideTheScope(t *testing.T) {
	if testing.Short() {
		t.Skip("starts sandbox serve")
	}
	finance, notes := catalogServer(t, "finance_payroll", "payroll"), catalogServer(t, "notes", "notes")
	url := serveHTTP(t, fmt.Sprintf(`{"mcpServers": {"finance_payroll": {"url": %q}, "notes": {"url": %q}},
 "gateway": {"auth": {"apiKeys": [{"name": "alice", "key": %q, "servers": ["notes"]}, {"name": "bob", "key": %q}]}}}`,
		finance, notes, aliceKey, bobKey), "--expose", "all")
	alice, bob := session(t, url, aliceKey), session(t, url, bobKey)
	request := func(key, sid, method string, params any) rpcResult {
		t.Helper()
		return rpc(t, url, key, fmt.Sprintf(`{"jsonrpc":"2.0","id":9,"method":%q,"params":%s}`, method, mustJSON(params)), "Mcp-Session-Id", sid)
	}
	// answer is the JSON-RPC response in a POST's answer (its SSE framing
	// has ids of its own), without the timings a run reports.
	timings := regexp.MustCompile(`\\?"(ms|durationMs)\\?":[0-9.]+`)
	answer := func(r rpcResult) string {
		for _, line := range strings.Split(r.Body, "\n") {
			if line = strings.TrimPrefix(line, "data: "); strings.HasPrefix(line, `{"jsonrpc":"2.0","id":9,`) {
				return timings.ReplaceAllString(line, "")
			}
		}
		return "no answer: " + r.Body
	}
	// same: alice's answer about what only the hidden server offers is the
	// answer about what nobody offers, once the name asked for is swapped.
	same := func(what, method string, hidden, unknown any, hiddenName, unknownName string) {
		t.Helper()
		h, u := answer(request(aliceKey, alice, method, hidden)), answer(request(aliceKey, alice, method, unknown))
		if strings.ReplaceAll(h, hiddenName, unknownName) != u {
			t.Errorf("%s: the hidden server's answer\n%s\ndiffers from an unknown name's\n%s", what, h, u)
		}
		if strings.Contains(u, "finance") || strings.HasPrefix(u, "no answer") {
			t.Errorf("%s: %s", what, u)
		}
	}
	same("resources/read of a listed resource", "resources/read", map[string]any{"uri": "payroll://2026/salaries"}, map[string]any{"uri": "payroll://2026/nothing"}, "salaries", "nothing")
	same("resources/read through a template", "resources/read", map[string]any{"uri": "payroll://employee/7"}, map[string]any{"uri": "payroll://emplo/7"}, "employee", "emplo")
	same("prompts/get", "prompts/get", map[string]any{"name": "finance_payroll__payslip"}, map[string]any{"name": "zz__payslip"}, "finance_payroll", "zz")
	same("completion of a prompt's argument", "completion/complete", map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": "finance_payroll__payslip"}, "argument": map[string]any{"name": "employee", "value": "A"}},
		map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": "zz__payslip"}, "argument": map[string]any{"name": "employee", "value": "A"}}, "finance_payroll", "zz")
	same("completion of a template's argument", "completion/complete", map[string]any{"ref": map[string]any{"type": "ref/resource", "uri": "payroll://employee/{id}"}, "argument": map[string]any{"name": "id", "value": "7"}},
		map[string]any{"ref": map[string]any{"type": "ref/resource", "uri": "payroll://emplo/{id}"}, "argument": map[string]any{"name": "id", "value": "7"}}, "employee", "emplo")
	same("a direct call of a hidden tool", "tools/call", map[string]any{"name": "finance_payroll__run_payroll", "arguments": map[string]any{}},
		map[string]any{"name": "zz__run_payroll", "arguments": map[string]any{}}, "finance_payroll", "zz")
	same("gateway__connect_servers", "tools/call", map[string]any{"name": "gateway__connect_servers", "arguments": map[string]any{"servers": []string{"finance_payroll"}}},
		map[string]any{"name": "gateway__connect_servers", "arguments": map[string]any{"servers": []string{"zz"}}}, "finance_payroll", "zz")
	same("execute_code calling a hidden server", "tools/call", map[string]any{"name": "execute_code", "arguments": map[string]any{"code": "try { return await finance_payroll.runPayroll({}) } catch (e: any) { return e.code + e.message + JSON.stringify(e.data) }"}},
		map[string]any{"name": "execute_code", "arguments": map[string]any{"code": "try { return await zz.runPayroll({}) } catch (e: any) { return e.code + e.message + JSON.stringify(e.data) }"}}, "finance_payroll", "zz")

	// What alice does see is her own server's; bob sees both.
	if r := request(aliceKey, alice, "resources/read", map[string]any{"uri": "shared://handbook"}); !strings.Contains(r.Body, "read from notes") {
		t.Errorf("alice reads the shared URI: %s", r.Body)
	}
	if r := request(bobKey, bob, "resources/read", map[string]any{"uri": "shared://handbook"}); !strings.Contains(r.Body, "read from finance_payroll") {
		t.Errorf("bob reads the shared URI from the first server by name: %s", r.Body)
	}
	if r := request(bobKey, bob, "resources/read", map[string]any{"uri": "payroll://employee/7"}); !strings.Contains(r.Body, "read from finance_payroll") {
		t.Errorf("bob reads through the template: %s", r.Body)
	}
	for _, tc := range []struct{ key, sid, template, want string }{
		{aliceKey, alice, "notes://employee/{id}", "from notes"},
		{bobKey, bob, "payroll://employee/{id}", "from finance_payroll"},
	} {
		r := request(tc.key, tc.sid, "completion/complete", map[string]any{"ref": map[string]any{"type": "ref/resource", "uri": tc.template}, "argument": map[string]any{"name": "id", "value": "7"}})
		if !strings.Contains(r.Body, tc.want) {
			t.Errorf("completing %s: %s", tc.template, r.Body)
		}
	}
	for _, method := range []string{"resources/list", "resources/templates/list", "prompts/list", "tools/list"} {
		r := request(aliceKey, alice, method, map[string]any{})
		if r.Result == nil || strings.Contains(r.Body, "finance") || strings.Contains(r.Body, "payroll") {
			t.Errorf("alice's %s: %s", method, r.Body)
		}
	}
	if r := request(aliceKey, alice, "resources/list", map[string]any{}); !strings.Contains(r.Body, `"notes handbook"`) {
		t.Errorf("alice does not list her server's copy of the shared URI: %s", r.Body)
	}
	if r := request(bobKey, bob, "resources/list", map[string]any{}); !strings.Contains(r.Body, "payroll://2026/salaries") || !strings.Contains(r.Body, `"finance_payroll handbook"`) {
		t.Errorf("bob's resources/list: %s", r.Body)
	}
	if text, _ := callTool(t, url, aliceKey, alice, "gateway__list_servers", map[string]any{}); strings.Contains(text, "finance") || !strings.Contains(text, "notes") {
		t.Errorf("alice's gateway__list_servers: %s", text)
	}
}
