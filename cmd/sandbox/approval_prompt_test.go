package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// carefulPerson answers the gateway's approval questions as a person who
// reads them would: it approves a call unless what it reads names the
// production database. It keeps every question it was asked.
type carefulPerson struct {
	mu        sync.Mutex
	questions []string
}

func (p *carefulPerson) Elicit(_ context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	p.mu.Lock()
	p.questions = append(p.questions, req.Params.Message)
	p.mu.Unlock()
	decision := "approve"
	if strings.Contains(req.Params.Message, "PRODUCTION") {
		decision = "deny"
	}
	return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{
		Action: mcp.ElicitationResponseActionAccept, Content: map[string]any{"decision": decision}}}, nil
}

func (p *carefulPerson) last() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.questions) == 0 {
		return ""
	}
	return p.questions[len(p.questions)-1]
}

// TestApprovalPromptShowsWhatWillRun is issue 27's approval attacks through
// sandbox serve, with an mcp-go client whose person answers the elicitation:
// padding sent first once pushed `target` past the 600 bytes the person
// read, and the call was approved and ran; a U+202E in an argument
// reordered the text the person read. Now every key is in the question,
// each long value cut by itself, and the override is shown escaped; the
// upstream receives only what the person approved knowing it.
func TestApprovalPromptShowsWhatWillRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts sandbox serve")
	}
	files, filesURL := startRecorder(t)
	url := serveHTTP(t, fmt.Sprintf(`{"mcpServers": {"files": {"url": %q}},
 "gateway": {"auth": {"apiKeys": [{"name": "bob", "key": %q}]},
             "policy": {"rules": [{"tools": "files:read_file", "action": "approve"}], "approvalTimeout": "10s"}}}`, filesURL, bobKey), "--expose", "all")
	person := &carefulPerson{}
	tr, err := transport.NewStreamableHTTP(url, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + bobKey}))
	if err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(tr, client.WithElicitationHandler(person))
	t.Cleanup(func() { c.Close() })
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	initialize(t, c)
	call := func(name string, args map[string]any) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		res, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: name, Arguments: args}})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return toolText(res)
	}

	// A harmless call is asked about and, approved, runs.
	if text := call("files__read_file", map[string]any{"path": "/srv/data/report.txt"}); text != "read /srv/data/report.txt" {
		t.Fatalf("an approved call: %s", text)
	}
	if q := person.last(); !strings.Contains(q, "\n  path: \"/srv/data/report.txt\"\n") || !strings.Contains(q, `Tool: "Read a file under /srv/data."`) {
		t.Errorf("the question of a harmless call:\n%s", q)
	}

	// Padding first: the person sees the target, and denies it.
	padding := strings.Repeat("A", 2000)
	for _, name := range []string{"aaa_padding", "padding", "zzz_padding"} {
		text := call("files__read_file", map[string]any{name: padding, "path": "/srv/data/x", "target": "DROP-PRODUCTION-DATABASE"})
		if !strings.Contains(text, "the person denied it") {
			t.Errorf("padding %s: the call was not denied: %s", name, text)
		}
		q := person.last()
		if !strings.Contains(q, "\n  target: \"DROP-PRODUCTION-DATABASE\"\n") || !strings.Contains(q, "… (1800 more characters cut)") {
			t.Errorf("padding %s: the question:\n%s", name, q)
		}
	}
	// From a snippet too.
	text := call("execute_code", map[string]any{"code": fmt.Sprintf(
		`try { return await files.readFile({padding: %q, path: "/srv/data/x", target: "DROP-PRODUCTION-DATABASE"}) } catch (e) { return e.code + ": " + e.message }`, padding)})
	if !strings.Contains(text, "DENIED") || !strings.Contains(person.last(), "\n  target: \"DROP-PRODUCTION-DATABASE\"\n") {
		t.Errorf("from a snippet: %s\n%s", text, person.last())
	}
	if got := files.called("DROP"); len(got) != 0 {
		t.Errorf("%d calls the person denied reached the upstream", len(got))
	}

	// U+202E: shown escaped, never as the character that reorders the line.
	call("files__read_file", map[string]any{"path": "/srv/data/\u202Etxt.exe"})
	if q := person.last(); strings.ContainsRune(q, '\u202E') || !strings.Contains(q, `path: "/srv/data/\u202Etxt.exe"`) {
		t.Errorf("the question with a U+202E:\n%q", q)
	}
}
