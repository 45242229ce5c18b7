package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/sandboxrt/sandbox/auth"
)

// annotatedServer has a read-only, a destructive and an unannotated tool.
func annotatedServer() *server.MCPServer {
	s := server.NewMCPServer("a", "1")
	ok := func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("done"), nil
	}
	s.AddTool(mcp.NewTool("read_thing", mcp.WithReadOnlyHintAnnotation(true)), ok)
	s.AddTool(mcp.NewTool("delete_thing", mcp.WithDestructiveHintAnnotation(true)), ok)
	s.AddTool(mcp.NewTool("update_thing", mcp.WithDestructiveHintAnnotation(true)), ok)
	s.AddTool(mcp.NewTool("plain"), ok)
	return s
}

func policyGateway(t *testing.T, settings Settings, readOnly bool) *Gateway {
	t.Helper()
	cfg := &Config{Servers: map[string]*ServerConfig{}, Settings: settings}
	g, err := New(cfg, WithInProcessServer("a", annotatedServer(), nil))
	if err != nil {
		t.Fatal(err)
	}
	if readOnly {
		g.upstreams["a"].sc.ReadOnly = true
	}
	t.Cleanup(func() { g.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := g.Start(ctx); err != nil {
		t.Fatal(err)
	}
	return g
}

// elicitingPeer answers elicitation/create with a decision, or never.
type elicitingPeer struct {
	mu       sync.Mutex
	answer   string // "approve", "deny", "decline", "" for never
	caps     bool
	messages []string
}

func (p *elicitingPeer) Request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	p.mu.Lock()
	p.messages = append(p.messages, string(params))
	answer := p.answer
	p.mu.Unlock()
	switch answer {
	case "":
		<-ctx.Done()
		return nil, ctx.Err()
	case "decline":
		return json.RawMessage(`{"action": "decline"}`), nil
	}
	return json.Marshal(map[string]any{"action": "accept", "content": map[string]any{"decision": answer}})
}
func (p *elicitingPeer) Notify(string, json.RawMessage) {}
func (p *elicitingPeer) Supports(c string) bool         { return p.caps && c == "elicitation" }

func TestPolicyDeniesApprovesAndAudits(t *testing.T) {
	t.Parallel()
	auditPath := filepath.Join(t.TempDir(), "audit.jsonl")
	settings := DefaultSettings()
	settings.Policy = &Policy{ApprovalTimeout: 200 * time.Millisecond, Rules: []PolicyRule{
		{Tools: "a:delete_*", Action: PolicyDeny},
		{Tools: "*:*", Annotations: map[string]bool{"destructiveHint": true}, Action: PolicyApprove},
	}}
	settings.Audit = &AuditConfig{Path: auditPath}
	g := policyGateway(t, settings, false)
	peer := &elicitingPeer{caps: true}
	caller := auth.Caller{Principal: auth.Principal{ID: "alice"}, Session: "s1"}
	g.OpenSession(caller, peer)
	call := func(tool, run string) (string, string) {
		_, err := g.Call(context.Background(), CallRequest{Tool: tool, Caller: caller, Run: run, Arguments: json.RawMessage(`{"id": 7}`)})
		var ge *Error
		if errors.As(err, &ge) {
			return string(ge.Code), ge.Message
		}
		if err != nil {
			t.Fatal(err)
		}
		return "OK", ""
	}
	if code, msg := call("a:delete_thing", ""); code != "DENIED" || !strings.Contains(msg, `policy denies a:delete_thing (rule 1, "a:delete_*")`) {
		t.Errorf("deny: %s %s", code, msg)
	}
	// A misspelling of a denied tool is not pointed at it.
	if code, msg := call("a:delete_thinng", ""); code != "UNKNOWN_TOOL" || strings.Contains(msg, "delete_thing") {
		t.Errorf("a misspelt denied tool: %s %s", code, msg)
	}
	if code, msg := call("a:read_thinng", ""); code != "UNKNOWN_TOOL" || !strings.Contains(msg, "a:read_thing") {
		t.Errorf("a misspelt allowed tool is not suggested: %s %s", code, msg)
	}
	if code, _ := call("a:read_thing", ""); code != "OK" {
		t.Errorf("a read-only tool matches no rule: %s", code)
	}
	for _, c := range []struct{ answer, tool, want, msg string }{
		{"approve", "a:update_thing", "OK", ""},
		{"deny", "a:update_thing", "DENIED", "the person denied it"},
		{"decline", "a:plain", "DENIED", "the person declined it"}, // unannotated: destructive by MCP's default
		{"", "a:plain", "DENIED", "nobody answered within 200ms"},
	} {
		peer.mu.Lock()
		peer.answer = c.answer
		peer.mu.Unlock()
		if code, msg := call(c.tool, ""); code != c.want || !strings.Contains(msg, c.msg) {
			t.Errorf("answer %q: %s %s", c.answer, code, msg)
		}
	}
	if !strings.Contains(peer.messages[0], `\n  id: 7\n`) {
		t.Errorf("the question does not say what is asked: %s", peer.messages[0])
	}
	// "every call of this tool in this run" is asked once per run.
	peer.mu.Lock()
	peer.answer, peer.messages = "approve every call of this tool in this run", nil
	peer.mu.Unlock()
	for range 3 {
		if code, _ := call("a:update_thing", "run-1"); code != "OK" {
			t.Fatalf("approved for the run: %s", code)
		}
	}
	if len(peer.messages) != 1 {
		t.Errorf("asked %d times for one run", len(peer.messages))
	}
	// A client that cannot be asked is denied, saying so.
	other := auth.Caller{Principal: auth.Principal{ID: "bob"}, Session: "s2"}
	g.OpenSession(other, &elicitingPeer{})
	_, err := g.Call(context.Background(), CallRequest{Tool: "a:update_thing", Caller: other})
	if err == nil || !strings.Contains(err.Error(), "does not support MCP elicitation") {
		t.Errorf("no elicitation: %v", err)
	}
	if !g.Denied(g.mustTool(t, "a:delete_thing")) || g.Denied(g.mustTool(t, "a:update_thing")) {
		t.Error("Denied: only tools the policy always denies")
	}
	if !g.NeedsApproval(g.mustTool(t, "a:update_thing")) || g.NeedsApproval(g.mustTool(t, "a:delete_thing")) || g.NeedsApproval(g.mustTool(t, "a:read_thing")) {
		t.Error("NeedsApproval: only tools a rule sends to a person, not denied ones")
	}

	// The audit log has a line per call (the two misspelt ones too) and
	// approval, with no argument values.
	g.Audit(AuditRecord{Kind: AuditKindRun, Principal: caller.Principal.Key(), Tool: "execute_code", Outcome: "OK", ArgBytes: 8, ArgsSHA256: sha256Hex([]byte("return 1"))})
	g.Audit(AuditRecord{Kind: AuditKindAuth, Outcome: "UNAUTHORIZED", Remote: "10.0.0.1", Reason: "invalid_token: credential not accepted"})
	f, err := os.Open(auditPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	kinds := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r map[string]any
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("not JSON: %s", sc.Text())
		}
		kinds[r["kind"].(string)]++
		if strings.Contains(sc.Text(), `"id"`) || strings.Contains(sc.Text(), "return 1") {
			t.Errorf("an audit line holds an argument value: %s", sc.Text())
		}
		if r["kind"] == "call" && r["tool"] == "a:delete_thing" && (r["outcome"] != "DENIED" || r["decision"] != "denied by rule 1" || r["argsSha256"] == "") {
			t.Errorf("the denied call's line: %s", sc.Text())
		}
	}
	// The refused request is counted, for a line in a file of its own
	// (audit_test.go).
	if kinds["call"] != 12 || kinds["approval"] < 5 || kinds["run"] != 1 || kinds["auth"] != 0 {
		t.Errorf("audit lines by kind: %v", kinds)
	}
}

func (g *Gateway) mustTool(t *testing.T, id string) *Tool {
	for _, tool := range g.Tools() {
		if tool.ID == id {
			return &tool
		}
	}
	t.Fatalf("no tool %s", id)
	return nil
}

func TestReadOnlyServer(t *testing.T) {
	t.Parallel()
	g := policyGateway(t, DefaultSettings(), true)
	if _, err := g.Call(context.Background(), CallRequest{Tool: "a:read_thing"}); err != nil {
		t.Errorf("a read-only tool: %v", err)
	}
	_, err := g.Call(context.Background(), CallRequest{Tool: "a:plain"})
	if err == nil || !strings.Contains(err.Error(), `server "a" is read-only here`) {
		t.Errorf("an unannotated tool of a read-only server: %v", err)
	}
}

func TestAuditLogRotates(t *testing.T) {
	dir := t.TempDir()
	a, err := openAudit(AuditConfig{Path: filepath.Join(dir, "a.jsonl"), MaxBytes: 300, Keep: 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.close()
	for range 20 {
		if err := a.write(AuditRecord{Kind: AuditKindCall, Tool: "s:t", Outcome: "OK"}); err != nil {
			t.Fatal(err)
		}
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
		if info, _ := e.Info(); info.Size() > 300 {
			t.Errorf("%s is %d bytes, over 300", e.Name(), info.Size())
		}
	}
	if strings.Join(names, ",") != "a.jsonl,a.jsonl.1,a.jsonl.2,a.refused.jsonl" {
		t.Errorf("files: %v", names)
	}
}

// askingPeer approves every elicitation, noting whether the caller's clock
// was paused while it was asked.
type askingPeer struct {
	paused      *atomic.Int32
	pausedWhile atomic.Bool
}

func (p *askingPeer) Request(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	p.pausedWhile.Store(p.paused.Load() == 1)
	return json.RawMessage(`{"action": "accept", "content": {"decision": "approve"}}`), nil
}
func (p *askingPeer) Notify(string, json.RawMessage) {}
func (p *askingPeer) Supports(c string) bool         { return c == "elicitation" }

// TestApprovalPausesTheCallersClock: a call that waits for a person stops
// its caller's clock (CallRequest.PauseClock) for exactly that wait.
func TestApprovalPausesTheCallersClock(t *testing.T) {
	t.Parallel()
	settings := DefaultSettings()
	settings.Policy = &Policy{Rules: []PolicyRule{{Tools: "a:update_thing", Action: PolicyApprove}}}
	g := policyGateway(t, settings, false)
	var paused, pauses atomic.Int32
	peer := &askingPeer{paused: &paused}
	caller := auth.Caller{Principal: auth.Principal{ID: "alice"}, Session: "s1"}
	g.OpenSession(caller, peer)
	pause := func() func() {
		pauses.Add(1)
		paused.Add(1)
		return func() { paused.Add(-1) }
	}
	if _, err := g.Call(context.Background(), CallRequest{Tool: "a:update_thing", Caller: caller, PauseClock: pause}); err != nil {
		t.Fatal(err)
	}
	if !peer.pausedWhile.Load() || pauses.Load() != 1 || paused.Load() != 0 {
		t.Fatalf("paused while asked %v, pauses %d, still paused %d", peer.pausedWhile.Load(), pauses.Load(), paused.Load())
	}
	if _, err := g.Call(context.Background(), CallRequest{Tool: "a:read_thing", Caller: caller, PauseClock: pause}); err != nil || pauses.Load() != 1 {
		t.Fatalf("a call nobody is asked about paused the clock (%d pauses, %v)", pauses.Load(), err)
	}
}
