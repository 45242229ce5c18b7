package gateway

import (
	"context"
	"encoding/json"
	"strings"
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
