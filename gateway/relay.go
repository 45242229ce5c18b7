package gateway

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/sandboxrt/sandbox/auth"
)

// --- requests the upstream sends to its client, relayed to the caller's ---

// relayClientRequest answers sampling, elicitation and roots requests from
// an upstream by relaying them to the client of the session whose call is
// being served.
func (g *Gateway) relayClientRequest(ctx context.Context, u *upstream, method string, params json.RawMessage) (json.RawMessage, error) {
	capability := map[string]string{
		string(mcp.MethodSamplingCreateMessage): "sampling",
		string(mcp.MethodElicitationCreate):     "elicitation",
		string(mcp.MethodListRoots):             "roots",
	}[method]
	if capability == "" {
		return nil, &rpcError{Code: mcp.METHOD_NOT_FOUND, Message: fmt.Sprintf("the gateway does not relay %q", method)}
	}
	// The call being served says whose request it is; on transports that
	// lose the call's context (stdio), the one caller with calls in flight.
	var session auth.SessionID
	caller, ok := callCallerFrom(ctx)
	if ok {
		session = caller.Session
	} else {
		session, ok = g.sessions.soleSession(u.name)
	}
	var p Peer
	if ok && session != "" {
		p = g.peer(session)
	}
	if p == nil || !p.Supports(capability) {
		if capability == "roots" {
			return g.configuredRoots(u), nil
		}
		if !ok {
			return nil, &rpcError{Code: mcp.INVALID_REQUEST, Message: fmt.Sprintf("%s: the gateway cannot tell which client session this request belongs to (several sessions have calls in flight on server %q)", method, u.name)}
		}
		return nil, &rpcError{Code: mcp.METHOD_NOT_FOUND, Message: fmt.Sprintf("%s: the client of this session does not support %s", method, capability)}
	}
	g.log.Debug("relaying upstream request", "server", u.name, "method", method, "session", string(session))
	return p.Request(ctx, method, params)
}

// configuredRoots answers roots/list from the server's path roots.
func (g *Gateway) configuredRoots(u *upstream) json.RawMessage {
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
func (g *Gateway) relayLog(u *upstream, params json.RawMessage) {
	session, ok := g.sessions.soleSession(u.name)
	if !ok {
		g.log.Debug("upstream log", "server", u.name, "params", truncate(string(params), 500))
		return
	}
	if p := g.peer(session); p != nil {
		p.Notify(string(mcp.MethodNotificationMessage), params)
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
		if conn := g.upstreams[name].conn.Load(); conn != nil {
			g.applyLogLevel(ctx, conn)
		}
	}
}

var levelRank = map[string]int{"debug": 0, "info": 1, "notice": 2, "warning": 3, "error": 4, "critical": 5, "alert": 6, "emergency": 7}

// applyLogLevel sends logging/setLevel with the most verbose level any
// session asked for (each session's own level filters what it receives).
func (g *Gateway) applyLogLevel(ctx context.Context, c *connection) {
	if c.modern || c.caps.Logging == nil {
		return
	}
	best := g.mostVerboseLogLevel()
	if best == "" {
		return
	}
	if _, err := c.request(c.u.withOperatorToken(ctx), "logging/setLevel", map[string]any{"level": best}, nil); err != nil {
		g.log.Debug("logging/setLevel failed", "server", c.u.name, "error", err)
	}
}
