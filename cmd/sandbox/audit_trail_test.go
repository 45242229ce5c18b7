package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// startLibrary is an upstream MCP server over streamable HTTP with a
// resource, a prompt and completions of its argument.
func startLibrary(t *testing.T) string {
	t.Helper()
	s := server.NewMCPServer("library", "1.0.0", server.WithResourceCapabilities(false, false), server.WithPromptCapabilities(false),
		server.WithCompletions(), server.WithPromptCompletionProvider(topics{}))
	s.AddResource(mcp.NewResource("lib://notes/1", "note 1", mcp.WithMIMEType("text/plain")),
		func(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, MIMEType: "text/plain", Text: "the first note"}}, nil
		})
	s.AddPrompt(mcp.NewPrompt("summarize", mcp.WithPromptDescription("Summarize a topic."), mcp.WithArgument("topic")),
		func(_ context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return mcp.NewGetPromptResult("a summary", []mcp.PromptMessage{mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent("Summarize "+req.Params.Arguments["topic"]))}), nil
		})
	srv := httptest.NewServer(server.NewStreamableHTTPServer(s, server.WithStateful(true)))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

type topics struct{}

func (topics) CompletePromptArgument(context.Context, string, mcp.CompleteArgument, mcp.CompleteContext) (*mcp.Completion, error) {
	return &mcp.Completion{Values: []string{"birds", "bees"}}, nil
}

// readAudit reads the JSON lines of the audit files named (absent ones are
// skipped).
func readAudit(t *testing.T, paths ...string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, p := range paths {
		f, err := os.Open(p)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var r map[string]any
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatalf("%s: not JSON: %s", p, sc.Text())
			}
			out = append(out, r)
		}
		f.Close()
	}
	return out
}

// TestAuditTrailNoStrangerCanErase is issue 27's audit attack through
// sandbox serve: 60 refused requests against a small log with keep 1 erased
// every principal's lines. Refused requests are counted per address, reason
// and minute in a file of their own now, so the principal's lines stay; and
// resources/read, prompts/get, completion/complete, save_script and
// delete_script are audit lines too.
func TestAuditTrailNoStrangerCanErase(t *testing.T) {
	if testing.Short() {
		t.Skip("starts sandbox serve")
	}
	dir := t.TempDir()
	audit := filepath.Join(dir, "audit.jsonl")
	config := writeConfig(t, fmt.Sprintf(`{"mcpServers": {"lib": {"url": %q}},
 "codeMode": {"dataDir": %q},
 "gateway": {"auth": {"apiKeys": [{"name": "alice", "key": %q}]},
             "audit": {"path": %q, "maxBytes": 3000, "keep": 1}}}`, startLibrary(t), filepath.Join(dir, "data"), aliceKey, audit))
	cmd := exec.Command(sandboxBinary(t), "serve", "-c", config, "--http", "127.0.0.1:0", "--log-level", "warn")
	url := startLogged(t, cmd, listening)

	// What alice does, each an audit line.
	sid := session(t, url, aliceKey)
	request := func(method, params string) json.RawMessage {
		t.Helper()
		r := rpc(t, url, aliceKey, fmt.Sprintf(`{"jsonrpc":"2.0","id":9,"method":%q,"params":%s}`, method, params), "Mcp-Session-Id", sid)
		if r.Error != nil || r.Result == nil {
			t.Fatalf("%s: %d %s", method, r.Status, r.Body)
		}
		return r.Result
	}
	if res := request("resources/read", `{"uri": "lib://notes/1"}`); !strings.Contains(string(res), "the first note") {
		t.Fatalf("resources/read: %s", res)
	}
	var prompts struct{ Prompts []struct{ Name string } }
	if err := json.Unmarshal(request("prompts/list", `{}`), &prompts); err != nil || len(prompts.Prompts) != 1 {
		t.Fatalf("prompts/list: %v %+v", err, prompts)
	}
	prompt := prompts.Prompts[0].Name
	request("prompts/get", fmt.Sprintf(`{"name": %q, "arguments": {"topic": "birds"}}`, prompt))
	if res := request("completion/complete", fmt.Sprintf(`{"ref": {"type": "ref/prompt", "name": %q}, "argument": {"name": "topic", "value": "b"}}`, prompt)); !strings.Contains(string(res), "bees") {
		t.Fatalf("completion/complete: %s", res)
	}
	if text, isErr := callTool(t, url, aliceKey, sid, "save_script", map[string]any{"name": "twice", "description": "Doubles n.", "code": "return input.n * 2"}); isErr {
		t.Fatalf("save_script: %s", text)
	}
	if text, isErr := callTool(t, url, aliceKey, sid, "delete_script", map[string]any{"name": "twice"}); isErr {
		t.Fatalf("delete_script: %s", text)
	}
	if text, isErr := callTool(t, url, aliceKey, sid, "execute_code", map[string]any{"code": "return 1"}); isErr {
		t.Fatalf("execute_code: %s", text)
	}

	// 60 refused requests of three kinds.
	for i := range 60 {
		key, header := []string{"", "not-a-key-of-ours-000000000000", ""}[i%3], []string{"", "", "Authorization"}[i%3]
		var extra []string
		if header != "" {
			extra = []string{header, "Basic YTpi"}
		}
		if r := rpc(t, url, key, initBody, extra...); r.Status != http.StatusUnauthorized {
			t.Fatalf("a refused request: %d %s", r.Status, r.Body)
		}
	}

	// Every line of alice's is still there, and none of the strangers'.
	kinds := map[string]int{}
	for _, r := range readAudit(t, audit, audit+".1") {
		if r["kind"] == "auth" {
			t.Errorf("a refused request's line among the principals': %v", r)
			continue
		}
		if r["principal"] != "alice/alice" || r["session"] != sid || r["outcome"] != "OK" {
			t.Errorf("a line of alice's: %v", r)
		}
		what := r["kind"].(string)
		if name, _ := r["name"].(string); name != "" {
			what += " " + name
		}
		if tool, _ := r["tool"].(string); tool != "" {
			what += " " + tool
		}
		kinds[what]++
	}
	for _, want := range []string{"resource", "prompt " + prompt, "completion " + prompt, "script twice save_script", "script twice delete_script", "run execute_code"} {
		if kinds[want] != 1 {
			t.Errorf("alice's lines lack %q: %v", want, kinds)
		}
	}
	data, _ := os.ReadFile(audit)
	for _, secret := range []string{"lib://notes/1", "birds", "input.n"} {
		if strings.Contains(string(data), secret) {
			t.Errorf("the audit log holds %q", secret)
		}
	}

	// The refused requests are counted apart, written when serve stops (or
	// their minute ends).
	stopProcess(cmd, 10*time.Second)
	total := 0
	for _, r := range readAudit(t, filepath.Join(dir, "audit.refused.jsonl"), filepath.Join(dir, "audit.refused.jsonl.1")) {
		if r["kind"] != "auth" || r["remote"] != "127.0.0.1" || r["outcome"] != "UNAUTHORIZED" {
			t.Errorf("a refused line: %v", r)
		}
		total += int(r["count"].(float64))
	}
	if total != 60 {
		t.Errorf("the refused lines count %d requests, not 60", total)
	}
}
