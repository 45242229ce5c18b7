package gateway

// Callers on protocol 2026-07-28 are asked by input_required (multi
// round-trip requests, SEP-2322): what they declared and answered goes
// upstream with their request, and an upstream's input requests come back
// to them in the result instead of being relayed as requests of the
// gateway's own (which a request without a session has no channel for).

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/sandboxrt/sandbox/gateway/internal/upstream"
)

// Asking is what a 2026-07-28 request brings to a call, a prompt or a
// resource read: Capabilities, the client capabilities it declared (its
// _meta's), forwarded to a 2026-07-28 upstream in place of the gateway's
// own, so the upstream asks only what the client can answer and refuses
// (-32021) what needs more; and on a retry, InputResponses, the client's
// answers, with RequestState, the upstream's own state as it issued it
// (the front end keeps it sealed in a state of its own between the two).
type Asking struct {
	Capabilities   json.RawMessage
	InputResponses json.RawMessage
	RequestState   string
}

// InputRequired is an upstream's answer that it needs input first: its
// input requests, raw, keyed as it keyed them, and its own requestState.
type InputRequired struct {
	Requests json.RawMessage
	State    string
}

type askingKey struct{}

// WithAsking returns a context whose calls, prompts and reads are made for
// a caller asked by input_required (Call's result then carries an
// upstream's InputRequired; GetPrompt's and ReadResource's raw result is
// the upstream's input_required answer). Without it, what an upstream asks
// is relayed to the caller's session, as 2025 sessions are asked.
func WithAsking(ctx context.Context, a Asking) context.Context {
	return context.WithValue(ctx, askingKey{}, &a)
}

// askingContext passes the caller's Asking to the upstream connection.
func askingContext(ctx context.Context) context.Context {
	a, _ := ctx.Value(askingKey{}).(*Asking)
	if a == nil {
		return ctx
	}
	return upstream.WithAsking(ctx, &upstream.Asking{Capabilities: a.Capabilities, InputResponses: a.InputResponses, RequestState: a.RequestState})
}

// ParseInputRequired reads an upstream's input_required answer (a raw
// result of GetPrompt or ReadResource made WithAsking), or nil for any
// other result.
func ParseInputRequired(raw json.RawMessage) *InputRequired {
	var r struct {
		ResultType    string          `json:"resultType"`
		InputRequests json.RawMessage `json:"inputRequests"`
		RequestState  string          `json:"requestState"`
	}
	if json.Unmarshal(raw, &r) != nil || r.ResultType != "input_required" {
		return nil
	}
	return &InputRequired{Requests: r.InputRequests, State: r.RequestState}
}

// approvalKey is the key of the input request that asks a person to
// approve a call (the policy's approve rule); the gateway keeps it to
// itself: the answer under it never goes upstream.
const approvalKey = "sandbox_approval"

// callState is what the gateway keeps between the rounds of one call made
// WithAsking, as InputRequired.State: the upstream's own state, whether a
// person approved the call already, and when the gateway asked (an answer
// after the approval timeout is DENIED as a 2025 session's is). The front
// end seals it (integrity, principal, request, expiry), so the gateway
// reads it back as it wrote it.
type callState struct {
	Upstream string `json:"u,omitempty"`
	Approved bool   `json:"a,omitempty"`
	AskedAt  int64  `json:"t,omitempty"` // unix ms of the approval question
	// Question names the approval question, so that one answer lets the
	// call run to its end once (QuestionLedger), not once per retry.
	Question string `json:"q,omitempty"`
	// SignIn names the sign-in link the call asked its client to open
	// (oauth_signin.go).
	SignIn string `json:"s,omitempty"`
	// Page names the approval asked by URL (approval_page.go).
	Page string `json:"p,omitempty"`
}

func decodeCallState(s string) callState {
	var st callState
	if s != "" && json.Unmarshal([]byte(s), &st) != nil {
		return callState{}
	}
	return st
}

func (st callState) encode() string {
	b, _ := json.Marshal(st)
	return string(b)
}

// startAsking gives a call the Asking of its context and the state its
// earlier rounds left.
func startAsking(ctx context.Context, c *call) {
	a, _ := ctx.Value(askingKey{}).(*Asking)
	if a == nil {
		return
	}
	c.asking = a
	c.state = decodeCallState(a.RequestState)
}

// forwardAsking is the Asking a call's upstream request carries: the
// caller's capabilities, its answers but the approval's, the upstream's
// own state.
func (c *call) forwardAsking() *upstream.Asking {
	a := c.asking
	out := &upstream.Asking{Capabilities: a.Capabilities, RequestState: c.state.Upstream}
	var answers map[string]json.RawMessage
	if len(a.InputResponses) > 0 && json.Unmarshal(a.InputResponses, &answers) == nil {
		delete(answers, approvalKey)
		delete(answers, signInKey)
		if len(answers) > 0 {
			out.InputResponses, _ = json.Marshal(answers)
		}
	}
	return out
}

// approvalByInput is the approval of a call made WithAsking: the person's
// answer (raw) when this round brings it, nil when the call must ask first
// (c.ask is set, and the call answers input_required), or why it is
// denied: an answer that came after timeout. A client that declared no
// elicitation is not asked here (approve sends it to the desk).
func (g *Gateway) approvalByInput(ctx context.Context, c *call, params json.RawMessage, timeout time.Duration) (json.RawMessage, string, error) {
	var answers map[string]json.RawMessage
	_ = json.Unmarshal(c.asking.InputResponses, &answers)
	if answer, ok := answers[approvalKey]; ok && c.state.AskedAt > 0 {
		if time.Since(time.UnixMilli(c.state.AskedAt)) > timeout {
			return nil, fmt.Sprintf("nobody answered within %v", timeout), nil
		}
		free, err := g.takeQuestion(ctx, c.state.Question)
		if err != nil {
			return nil, "", err
		}
		if !free {
			return nil, "this approval was answered already and the call ran on it; call the tool again to be asked anew", nil
		}
		return answer, "", nil
	}
	requests, _ := json.Marshal(map[string]any{approvalKey: map[string]any{"method": "elicitation/create", "params": params}})
	st := c.state
	st.AskedAt, st.Question = time.Now().UnixMilli(), newQuestionID()
	c.ask = &InputRequired{Requests: requests, State: st.encode()}
	return nil, "", nil
}

// declares reports whether the request declares a client capability.
func (a *Asking) declares(capability string) bool {
	var caps map[string]json.RawMessage
	return json.Unmarshal(a.Capabilities, &caps) == nil && caps[capability] != nil
}

// declaresFormElicitation reports whether the request declares form-mode
// elicitation ("form": {}, or an "elicitation" of neither mode).
func (a *Asking) declaresFormElicitation() bool {
	var caps struct {
		Elicitation *struct {
			Form json.RawMessage `json:"form"`
			URL  json.RawMessage `json:"url"`
		} `json:"elicitation"`
	}
	if json.Unmarshal(a.Capabilities, &caps) != nil || caps.Elicitation == nil {
		return false
	}
	return len(caps.Elicitation.Form) > 0 || len(caps.Elicitation.URL) == 0
}

// declaresURLElicitation reports whether the request declares URL-mode
// elicitation ("elicitation": {"url": {}}).
func (a *Asking) declaresURLElicitation() bool {
	var caps struct {
		Elicitation *struct {
			URL json.RawMessage `json:"url"`
		} `json:"elicitation"`
	}
	return json.Unmarshal(a.Capabilities, &caps) == nil && caps.Elicitation != nil && len(caps.Elicitation.URL) > 0 && string(caps.Elicitation.URL) != "null"
}

type peerKey struct{}

// WithPeer returns a context whose calls, made for a caller without a
// session, may ask p what a session's client would be asked: a person's
// approval, an upstream's elicitation, sampling or roots. The front end
// gives one to a built-in tool (execute_code) run for a 2026-07-28 client,
// whose questions it turns into input_required answers while the run
// waits (gateway/frontend/pausedrun.go).
func WithPeer(ctx context.Context, p Peer) context.Context {
	return context.WithValue(ctx, peerKey{}, p)
}

func peerFrom(ctx context.Context) Peer {
	p, _ := ctx.Value(peerKey{}).(Peer)
	return p
}
