package upstream

// Requests an upstream sends to its client while the gateway serves a call
// (sampling, elicitation, roots): framed here, answered by Host.ClientRequest.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/sandboxrt/sandbox/internal/logx"
	"github.com/sandboxrt/sandbox/internal/telemetry"
)

func (c *Conn) onRequest(ctx context.Context, req transport.JSONRPCRequest) (resp *transport.JSONRPCResponse, err error) {
	// The relay runs on a goroutine of the transport's (ours for stdio,
	// mcp-go's for HTTP), which nothing else recovers: a panic in it
	// answers the upstream's request an error rather than end the process.
	defer func() {
		if r := recover(); r != nil {
			logx.Panic(c.s.log, "relaying an upstream's request panicked", r, "server", c.s.spec.Name, "method", telemetry.Clip(req.Method))
			resp, err = transport.NewJSONRPCErrorResponse(req.ID, mcp.INTERNAL_ERROR, "the gateway failed relaying this request to its client", nil), nil
		}
	}()
	var params json.RawMessage
	if req.Params != nil {
		params, _ = json.Marshal(req.Params)
	}
	if req.Method == string(mcp.MethodPing) {
		return transport.NewJSONRPCResultResponse(req.ID, json.RawMessage(`{}`)), nil
	}
	res, err := c.s.host.ClientRequest(ctx, req.Method, params)
	if err != nil {
		var re *RPCError
		if errors.As(err, &re) {
			return transport.NewJSONRPCErrorResponse(req.ID, re.Code, re.Message, nil), nil
		}
		return transport.NewJSONRPCErrorResponse(req.ID, mcp.INTERNAL_ERROR, err.Error(), nil), nil
	}
	return transport.NewJSONRPCResultResponse(req.ID, res), nil
}

// In-process upstreams call typed handlers instead of sending requests.
type inprocSampling struct{ c *Conn }
type inprocElicitation struct{ c *Conn }
type inprocRoots struct{ c *Conn }

func relayTyped[Req, Res any](ctx context.Context, c *Conn, method string, params Req) (*Res, error) {
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	out, err := c.s.host.ClientRequest(ctx, method, raw)
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
