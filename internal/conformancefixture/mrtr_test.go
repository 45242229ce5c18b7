package conformancefixture

import (
	"context"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// TestRequestStateIntegrity: the fixture's requestState comes back only as
// it was issued, for the tool it was issued for.
func TestRequestStateIntegrity(t *testing.T) {
	state := signState(ToolInputTamperedState, "confirm")
	if round, err := checkState(ToolInputTamperedState, state); err != nil || round != "confirm" {
		t.Fatalf("its own state: %q, %v", round, err)
	}
	for name, bad := range map[string]string{
		"suffix":     state + "-TAMPERED",
		"flipped":    state[:len(state)-2] + "AA",
		"no dot":     strings.ReplaceAll(state, ".", ""),
		"other tool": signState(ToolInputRequestState, "confirm"),
	} {
		if _, err := checkState(ToolInputTamperedState, bad); err == nil {
			t.Errorf("%s: a state that is not its own was accepted", name)
		}
	}
}

// TestMultiRound walks test_input_required_result_multi_round's three
// rounds: step1, step2 under a new state, then a complete result.
func TestMultiRound(t *testing.T) {
	call := func(state string, responses mcp.InputResponses) *mcp.CallToolResult {
		t.Helper()
		var req mcp.CallToolRequest
		req.Params.Name = ToolInputMultiRound
		req.Params.RequestState, req.Params.InputResponses = state, responses
		res, err := inputMultiRound(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	answer := func(key string, content map[string]any) mcp.InputResponses {
		return mcp.InputResponses{key: mcp.NewElicitationInputResponse(mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionAccept, Content: content}})}
	}
	r1 := call("", nil)
	if !r1.NeedsInput() || r1.InputRequests["step1"].Method != mcp.MethodElicitationCreate {
		t.Fatalf("round 1: %+v", r1)
	}
	r2 := call(r1.RequestState, answer("step1", map[string]any{"name": "Ada"}))
	if !r2.NeedsInput() || r2.InputRequests["step2"].Method != mcp.MethodElicitationCreate || r2.RequestState == r1.RequestState {
		t.Fatalf("round 2: %+v", r2)
	}
	r3 := call(r2.RequestState, answer("step2", map[string]any{"color": "green"}))
	if r3.NeedsInput() || !strings.Contains(r3.Content[0].(mcp.TextContent).Text, "green") {
		t.Fatalf("round 3: %+v", r3)
	}
	// step2's answer under step1's state starts over instead of finishing.
	if again := call(r1.RequestState, answer("step2", map[string]any{"color": "green"})); !again.NeedsInput() {
		t.Fatalf("step2 answered under step1's state finished: %+v", again)
	}
}
