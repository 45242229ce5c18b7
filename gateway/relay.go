package gateway

// What upstreams ask of their client while the gateway serves a call
// (sampling, elicitation, roots, log messages), relayed to the client of
// the caller whose call it is, and the log level sessions asked for.

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/gateway/internal/upstream"
)

// --- requests the upstream sends to its client, relayed to the caller's ---

// relayClientRequest answers sampling, elicitation and roots requests from
// an upstream by relaying them to the client of the session whose call is
// being served.
func (g *Gateway) relayClientRequest(ctx context.Context, u *route, method string, params json.RawMessage) (json.RawMessage, error) {
	capability := map[string]string{
		string(mcp.MethodSamplingCreateMessage): "sampling",
		string(mcp.MethodElicitationCreate):     "elicitation",
		string(mcp.MethodListRoots):             "roots",
	}[method]
	if capability == "" {
		return nil, &upstream.RPCError{Code: mcp.METHOD_NOT_FOUND, Message: fmt.Sprintf("the gateway does not relay %q", method)}
	}
	// The call being served says whose request it is (the in-process
	// transport keeps the call's context beside its caller). A transport
	// that loses it (stdio) leaves the one caller with calls in flight,
	// and, when it has one call, that call's context.
	var session auth.SessionID
	caller, ok := upstream.CallerFrom(ctx)
	callCtx := upstream.CallContext(ctx)
	if ok {
		session = caller.Session
	} else {
		session, callCtx, ok = g.sessions.soleCaller(u.name)
		if callCtx == nil {
			callCtx = ctx
		}
	}
	// A call with someone else to ask (a task's run: WithInputAsker) asks
	// there, redacted as a session's client is asked (the question reaches
	// the task's client in tasks/get); roots are the gateway's to answer.
	ask, p := g.answerers(callCtx, session)
	if ask != nil && capability != "roots" {
		return ask(callCtx, method, g.serverSecrets(u.name).json(params))
	}
	if !ok {
		p = nil // no call to say whose client this is
	}
	if p != nil && !p.Supports(capability) {
		if l, ok := p.(interface{ Lacks(capability string) }); ok {
			l.Lacks(capability) // the front end may refuse the call with -32021
		}
	}
	if p == nil || !p.Supports(capability) {
		if capability == "roots" {
			return g.configuredRoots(u), nil
		}
		if !ok {
			return nil, &upstream.RPCError{Code: mcp.INVALID_REQUEST, Message: fmt.Sprintf("%s: the gateway cannot tell which client session this request belongs to (several sessions have calls in flight on server %q)", method, u.name)}
		}
		return nil, &upstream.RPCError{Code: mcp.METHOD_NOT_FOUND, Message: fmt.Sprintf("%s: the client of this session does not support %s", method, capability)}
	}
	g.log.Debug("relaying upstream request", "server", u.name, "method", method, "session", string(session))
	return p.Request(ctx, method, g.serverSecrets(u.name).json(params))
}

// answerers are who answer an upstream's sampling and elicitation
// requests during a call made under callCtx for session: the call's input
// asker (a task's run: WithInputAsker) first, then the client of the
// caller's session, or of a session-less caller that waits for its run
// (WithPeer). Either may be nil. The relay asks them, and a 2026-07-28
// request declares what they can answer (answering): one resolution, so
// that what the gateway declares and what it answers never disagree.
func (g *Gateway) answerers(callCtx context.Context, session auth.SessionID) (InputAsker, Peer) {
	ask := inputAskerFrom(callCtx)
	if session != "" {
		return ask, g.peer(session)
	}
	return ask, peerFrom(callCtx)
}

// answering says which of an upstream's questions during a call made
// under callCtx for caller can be answered: the capabilities the upstream
// request declares (roots are always answered: configuredRoots).
func (g *Gateway) answering(callCtx context.Context, caller auth.Caller) upstream.Answers {
	ask, p := g.answerers(callCtx, caller.Session)
	if ask != nil {
		return upstream.AnswersAll
	}
	var a upstream.Answers
	if p != nil && p.Supports("sampling") {
		a |= upstream.AnswersSampling
	}
	if p != nil && p.Supports("elicitation") {
		a |= upstream.AnswersElicitation
	}
	return a
}

// configuredRoots answers roots/list from the server's path roots.
func (g *Gateway) configuredRoots(u *route) json.RawMessage {
	type root struct {
		URI  string `json:"uri"`
		Name string `json:"name,omitempty"`
	}
	roots := []root{}
	for _, r := range u.roots {
		roots = append(roots, root{URI: "file://" + r})
	}
	b, _ := json.Marshal(map[string]any{"roots": roots})
	return b
}

// relayLog forwards an upstream log message to the one session whose calls
// are in flight on that server; with none or several it is only logged here
// (sessions never see each other's upstream logs).
func (g *Gateway) relayLog(u *route, params json.RawMessage) {
	session, ok := g.sessions.soleSession(u.name)
	if !ok {
		g.log.Debug("upstream log", "server", u.name, "params", truncate(string(params), 500))
		return
	}
	if p := g.peer(session); p != nil {
		p.Notify(string(mcp.MethodNotificationMessage), g.serverSecrets(u.name).json(params))
	}
}

// SetLogLevel records a session's minimum log level and asks the upstreams
// that log (2025 protocol) to send at least that level. On the 2026-07-28
// protocol the level travels with each request instead.
func (g *Gateway) SetLogLevel(ctx context.Context, c auth.Caller, level string) {
	if !g.setSessionLogLevel(c, level) {
		return
	}
	for _, name := range g.names {
		if conn := g.upstreams[name].sup.Conn(); conn != nil {
			conn.SetLogLevel(ctx, g.mostVerboseLogLevel())
		}
	}
}

var levelRank = map[string]int{"debug": 0, "info": 1, "notice": 2, "warning": 3, "error": 4, "critical": 5, "alert": 6, "emergency": 7}
