package gateway

import (
	"encoding/json"
	"testing"
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
