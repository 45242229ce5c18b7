package gateway

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// TestModernCallsDeclareWhatTheirCallerAnswers: a call to a 2026-07-28
// upstream declares, as its client capabilities, what the relay would
// answer for it: roots always, sampling and elicitation only for a caller
// whose session client, session-less peer (WithPeer) or task asker
// (WithInputAsker) can answer them. And the declaration holds: a session
// declared to sample is relayed the upstream's question.
func TestModernCallsDeclareWhatTheirCallerAnswers(t *testing.T) {
	t.Parallel()
	g, _ := startGateway(t, `{"mcpServers": {"t": `+testServerConfig(t, "stdio", "")+`}}`)
	if !strings.HasPrefix(g.Servers()[0].ProtocolVersion, "2026") {
		t.Fatalf("expected the stateless protocol, got %q", g.Servers()[0].ProtocolVersion)
	}
	sampler := &fakePeer{caps: map[string]bool{"sampling": true}}
	defer g.OpenSession(testCaller("sampler"), sampler).Close()
	defer g.OpenSession(testCaller("mute"), &fakePeer{}).Close()
	asker := InputAsker(func(context.Context, string, json.RawMessage) (json.RawMessage, error) { return nil, nil })
	const (
		rootsOnly = `{"roots":{"listChanged":true}}`
		all       = `{"roots":{"listChanged":true},"sampling":{},"elicitation":{"form":{},"url":{}}}` // mcp.ClientCapabilities' order
	)
	for _, tc := range []struct {
		name    string
		ctx     context.Context
		session string
		want    string
	}{
		{"a session whose client samples", context.Background(), "sampler", `{"roots":{"listChanged":true},"sampling":{}}`},
		{"a session whose client answers nothing", context.Background(), "mute", rootsOnly},
		{"a session the gateway does not know", context.Background(), "gone", rootsOnly},
		{"no session and no peer", context.Background(), "", rootsOnly},
		{"no session, a peer that elicits", WithPeer(context.Background(), &fakePeer{caps: map[string]bool{"elicitation": true}}), "",
			`{"roots":{"listChanged":true},"elicitation":{"form":{},"url":{}}}`},
		{"a task's run (an input asker)", WithInputAsker(context.Background(), asker), "mute", all},
	} {
		res, err := g.Call(tc.ctx, CallRequest{Tool: "t:client_caps", Caller: testCaller(tc.session)})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := callText(t, res); got != tc.want {
			t.Errorf("%s: the upstream saw %s, want %s", tc.name, got, tc.want)
		}
	}
	res, err := g.Call(context.Background(), CallRequest{Tool: "t:ask_llm", Caller: testCaller("sampler"), Arguments: json.RawMessage(`{"prompt":"why?"}`)})
	if err != nil || callText(t, res) != "LLM said: 42" {
		t.Fatalf("a declared sampler's question: %v %+v", err, res)
	}
}
