package gateway

// What upstreams ask of their client while the gateway serves a call
// (sampling, elicitation, roots, log messages), relayed to the client of
// the caller whose call it is, and the log level sessions asked for.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
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

// --- requests from the upstream to its client ---

func (c *connection) onRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	var params json.RawMessage
	if req.Params != nil {
		params, _ = json.Marshal(req.Params)
	}
	if req.Method == string(mcp.MethodPing) {
		return transport.NewJSONRPCResultResponse(req.ID, json.RawMessage(`{}`)), nil
	}
	res, err := c.u.g.relayClientRequest(ctx, c.u, req.Method, params)
	if err != nil {
		var re *rpcError
		if errors.As(err, &re) {
			return transport.NewJSONRPCErrorResponse(req.ID, re.Code, re.Message, nil), nil
		}
		return transport.NewJSONRPCErrorResponse(req.ID, mcp.INTERNAL_ERROR, err.Error(), nil), nil
	}
	return transport.NewJSONRPCResultResponse(req.ID, res), nil
}

// In-process upstreams call typed handlers instead of sending requests.
type inprocSampling struct{ c *connection }
type inprocElicitation struct{ c *connection }
type inprocRoots struct{ c *connection }

func relayTyped[Req, Res any](ctx context.Context, c *connection, method string, params Req) (*Res, error) {
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	out, err := c.u.g.relayClientRequest(ctx, c.u, method, raw)
	if err != nil {
		return nil, err
	}
	var res Res
	if err := json.Unmarshal(out, &res); err != nil {
		return nil, fmt.Errorf("the client's %s result: %w", method, err)
	}
	return &res, nil
}

func (s inprocSampling) CreateMessage(ctx context.Context, r mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	return relayTyped[mcp.CreateMessageParams, mcp.CreateMessageResult](ctx, s.c, string(mcp.MethodSamplingCreateMessage), r.CreateMessageParams)
}

func (s inprocElicitation) Elicit(ctx context.Context, r mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	return relayTyped[mcp.ElicitationParams, mcp.ElicitationResult](ctx, s.c, string(mcp.MethodElicitationCreate), r.Params)
}

func (s inprocRoots) ListRoots(ctx context.Context, r mcp.ListRootsRequest) (*mcp.ListRootsResult, error) {
	return relayTyped[struct{}, mcp.ListRootsResult](ctx, s.c, string(mcp.MethodListRoots), struct{}{})
}

// ensure the in-process handler types satisfy mcp-go's interfaces.
var (
	_ server.SamplingHandler    = inprocSampling{}
	_ server.ElicitationHandler = inprocElicitation{}
	_ server.RootsHandler       = inprocRoots{}
)
