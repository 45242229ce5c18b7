package gateway

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// TestForwardAskingKeepsTheApprovalToItself: the answers a call forwards
// upstream are the client's answers to the upstream's questions, never
// its answer to the gateway's approval; the upstream gets its own state
// back, not the gateway's.
func TestForwardAskingKeepsTheApprovalToItself(t *testing.T) {
	st := callState{Upstream: "upstream-own", Approved: true}
	c := &call{asking: &Asking{
		Capabilities:   json.RawMessage(`{"elicitation":{}}`),
		InputResponses: json.RawMessage(`{"sandbox_approval":{"action":"accept","content":{"decision":"approve"}},"step1":{"action":"accept","content":{"name":"Ada"}}}`),
		RequestState:   st.encode(),
	}}
	c.state = decodeCallState(c.asking.RequestState)
	a := c.forwardAsking()
	var answers map[string]json.RawMessage
	if err := json.Unmarshal(a.InputResponses, &answers); err != nil || len(answers) != 1 || answers["step1"] == nil {
		t.Errorf("forwarded answers %s", a.InputResponses)
	}
	if a.RequestState != "upstream-own" || string(a.Capabilities) != `{"elicitation":{}}` {
		t.Errorf("forwarded state %q, capabilities %s", a.RequestState, a.Capabilities)
	}
	// Only the approval's answer: nothing is forwarded.
	c.asking.InputResponses = json.RawMessage(`{"sandbox_approval":{"action":"decline"}}`)
	if a := c.forwardAsking(); a.InputResponses != nil {
		t.Errorf("the approval's answer alone went upstream: %s", a.InputResponses)
	}
}

// TestInputRequestsAreRedacted: what an upstream asks a 2026-07-28 client
// through input_required is its words, redacted like a result's.
func TestInputRequestsAreRedacted(t *testing.T) {
	t.Parallel()
	const secret = "asking-secret-0123456789"
	s := server.NewMCPServer("asker", "1")
	s.AddTool(mcp.NewTool("ask"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return server.NewInputRequestBuilder("upstream-state").
			Elicit("who", mcp.ElicitationParams{Message: "the key is " + secret, RequestedSchema: map[string]any{"type": "object"}}).
			ToolResult(), nil
	})
	settings := DefaultSettings()
	settings.Secrets = []string{secret}
	g, err := New(&Config{Servers: map[string]*ServerConfig{}, Settings: settings}, WithInProcessServer("asker", s, nil))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := g.Start(ctx); err != nil {
		t.Fatal(err)
	}
	res, err := g.Call(WithAsking(ctx, Asking{Capabilities: json.RawMessage(`{"elicitation":{}}`)}), CallRequest{Tool: "asker:ask"})
	if err != nil {
		t.Fatal(err)
	}
	if res.InputRequired == nil {
		t.Fatalf("no input_required: %+v", res)
	}
	if got := string(res.InputRequired.Requests); strings.Contains(got, secret) || !strings.Contains(got, redacted) {
		t.Errorf("input requests as the client gets them: %s", got)
	}
}

// TestAnApprovalRunsTheCallOnce: one approval answered by input_required
// lets the call run to its end once. The states are the client's to send
// again; a copy of a later round's (or of the answer's own) is denied.
func TestAnApprovalRunsTheCallOnce(t *testing.T) {
	t.Parallel()
	var transfers atomic.Int64
	s := server.NewMCPServer("bank", "1")
	s.AddTool(mcp.NewTool("transfer", mcp.WithDestructiveHintAnnotation(true)), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if a := server.ElicitationResponse(req.Params.InputResponses, "sure"); a != nil {
			transfers.Add(1)
			return mcp.NewToolResultText("transferred"), nil
		}
		return server.NewInputRequestBuilder("bank-state").Elicit("sure", mcp.ElicitationParams{Message: "sure?", RequestedSchema: map[string]any{"type": "object"}}).ToolResult(), nil
	})
	settings := DefaultSettings()
	settings.Policy = &Policy{ApprovalTimeout: time.Minute, Rules: []PolicyRule{{Tools: "*:*", Annotations: map[string]bool{"destructiveHint": true}, Action: PolicyApprove}}}
	g, err := New(&Config{Servers: map[string]*ServerConfig{}, Settings: settings}, WithInProcessServer("bank", s, nil))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	ctx := context.Background()
	if err := g.Start(ctx); err != nil {
		t.Fatal(err)
	}
	call := func(state, responses string) (*CallResult, error) {
		a := Asking{Capabilities: json.RawMessage(`{"elicitation":{}}`), RequestState: state}
		if responses != "" {
			a.InputResponses = json.RawMessage(responses)
		}
		return g.Call(WithAsking(ctx, a), CallRequest{Tool: "bank:transfer", Arguments: json.RawMessage(`{"amount":100}`)})
	}
	const approve, sure = `{"sandbox_approval":{"action":"accept","content":{"decision":"approve"}}}`, `{"sure":{"action":"accept","content":{}}}`
	r0, err := call("", "")
	if err != nil || r0.InputRequired == nil {
		t.Fatalf("the approval question: %+v %v", r0, err)
	}
	r1, err := call(r0.InputRequired.State, approve)
	if err != nil || r1.InputRequired == nil {
		t.Fatalf("the bank's own question after the approval: %+v %v", r1, err)
	}
	if r2, err := call(r1.InputRequired.State, sure); err != nil || r2.InputRequired != nil {
		t.Fatalf("the approved call's last round: %+v %v", r2, err)
	}
	for _, replay := range []struct{ state, answers string }{{r1.InputRequired.State, sure}, {r0.InputRequired.State, approve}} {
		if _, err := call(replay.state, replay.answers); err == nil || !strings.Contains(err.Error(), "call the tool again to be asked anew") {
			t.Errorf("a replayed state: %v", err)
		}
	}
	if n := transfers.Load(); n != 1 {
		t.Errorf("one approval ran the call %d times", n)
	}
	// Asked anew, it runs again.
	r0, _ = call("", "")
	r1, _ = call(r0.InputRequired.State, approve)
	if _, err := call(r1.InputRequired.State, sure); err != nil || transfers.Load() != 2 {
		t.Errorf("a new approval: %v, %d transfers", err, transfers.Load())
	}
}
