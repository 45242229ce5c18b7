package upstream

import (
	"context"
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"
)

// Asking is what a caller on protocol 2026-07-28 brings to a request that
// may need input (tools/call, prompts/get, resources/read): the client
// capabilities it declared, forwarded to a 2026-07-28 server in place of
// the gateway's own, and on a retry its answers (inputResponses) with the
// server's own requestState. A request with Asking that the server answers
// input_required returns that answer as it is, for the caller to answer
// (multi round-trip requests, SEP-2322), rather than the gateway asking
// its Host.
type Asking struct {
	Capabilities   json.RawMessage
	InputResponses json.RawMessage
	RequestState   string
}

type askingKey struct{}

// WithAsking returns a context for a request made for a caller that is
// asked by input_required.
func WithAsking(ctx context.Context, a *Asking) context.Context {
	return context.WithValue(ctx, askingKey{}, a)
}

// AskingFrom is the Asking WithAsking put in ctx, or nil.
func AskingFrom(ctx context.Context) *Asking {
	a, _ := ctx.Value(askingKey{}).(*Asking)
	return a
}

// askingMeta puts the caller's declared capabilities in a 2026-07-28
// request's _meta (a 2025-era server learnt the gateway's at initialize).
func (c *Conn) askingMeta(meta map[string]any, a *Asking) map[string]any {
	if a == nil || !c.modern || len(a.Capabilities) == 0 {
		return meta
	}
	if meta == nil {
		meta = map[string]any{}
	}
	meta[mcp.MetaKeyClientCapabilities] = a.Capabilities
	return meta
}
