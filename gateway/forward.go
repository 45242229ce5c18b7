package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// callParams is the tools/call params the gateway sends.
type callParams struct {
	Name           string          `json:"name"`
	Arguments      json.RawMessage `json:"arguments"`
	Meta           map[string]any  `json:"_meta,omitempty"`
	InputResponses json.RawMessage `json:"inputResponses,omitempty"`
	RequestState   string          `json:"requestState,omitempty"`
}

// maxInputRoundTrips bounds the 2026-07-28 multi round-trip exchange.
const maxInputRoundTrips = 10

// callTool sends tools/call and, when a 2026-07-28 server answers that it
// needs input first (resultType "input_required"), relays each embedded
// request to the calling session's client and retries with the answers.
func (c *connection) callTool(ctx context.Context, tool *Tool, args json.RawMessage, progress func(Progress), logLevel string) (json.RawMessage, error) {
	token := ""
	if progress != nil {
		token = "sbx-p-" + strconv.FormatUint(c.nextID.Add(1), 10)
		defer c.watchProgress(token, progress)()
	}
	p := callParams{Name: tool.UpstreamName, Arguments: args, Meta: c.requestMeta(token, logLevel)}
	var header http.Header
	if c.modern && c.isHTTP && hasParamHeaders(tool.Raw) {
		var mt mcp.Tool
		if json.Unmarshal(tool.Raw, &mt) == nil {
			enc, _ := json.Marshal(map[string]any{"name": tool.UpstreamName, "arguments": args})
			header = http.Header{}
			for k, v := range mcp.GenerateParamHeaders(&mt, enc) {
				header.Set(k, v)
			}
		}
	}
	for round := 0; ; round++ {
		raw, err := c.request(ctx, "tools/call", p, header)
		if err != nil {
			return nil, err
		}
		if !bytes.Contains(raw, []byte(`"input_required"`)) {
			return raw, nil
		}
		var ir struct {
			ResultType    string                     `json:"resultType"`
			InputRequests map[string]json.RawMessage `json:"inputRequests"`
			RequestState  string                     `json:"requestState"`
		}
		if json.Unmarshal(raw, &ir) != nil || ir.ResultType != "input_required" {
			return raw, nil
		}
		if round >= maxInputRoundTrips {
			return nil, &rpcError{Code: mcp.INTERNAL_ERROR, Message: fmt.Sprintf("the server asked for input more than %d times", maxInputRoundTrips)}
		}
		answers := make(map[string]json.RawMessage, len(ir.InputRequests))
		for key, rawReq := range ir.InputRequests {
			var r struct {
				Method string          `json:"method"`
				Params json.RawMessage `json:"params"`
			}
			if err := json.Unmarshal(rawReq, &r); err != nil {
				return nil, &rpcError{Code: mcp.INVALID_PARAMS, Message: "malformed input request: " + err.Error()}
			}
			ans, err := c.u.g.relayClientRequest(ctx, c.u, r.Method, r.Params)
			if err != nil {
				return nil, err
			}
			answers[key] = ans
		}
		p.InputResponses, _ = json.Marshal(answers)
		p.RequestState = ir.RequestState
	}
}

// parseCallResult decodes a tools/call result, keeping blocks raw.
func parseCallResult(raw json.RawMessage) (*CallResult, error) {
	var r struct {
		Content           *[]json.RawMessage `json:"content"`
		StructuredContent json.RawMessage    `json:"structuredContent"`
		IsError           bool               `json:"isError"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("result is not a JSON object: %w", err)
	}
	res := &CallResult{IsError: r.IsError, Content: []json.RawMessage{}}
	if r.Content != nil {
		res.Content = *r.Content
	}
	if len(r.StructuredContent) > 0 && string(r.StructuredContent) != "null" {
		res.StructuredContent = r.StructuredContent
	}
	for i, b := range res.Content {
		if len(b) == 0 || b[0] != '{' {
			return nil, fmt.Errorf("content block %d is not a JSON object", i)
		}
		res.Content[i] = stripMeta(b)
	}
	return res, nil
}

// upstreamToolError turns an isError result into UPSTREAM_ERROR: the tool's
// own text as the message, its content blocks as data.
func upstreamToolError(id string, res *CallResult) *Error {
	var texts []string
	for _, b := range res.Content {
		var t struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if json.Unmarshal(b, &t) == nil && t.Type == "text" && t.Text != "" {
			texts = append(texts, t.Text)
		}
	}
	msg := truncate(strings.Join(texts, "\n"), 2000)
	if msg == "" {
		msg = "the tool reported an error without a message"
	}
	data, _ := json.Marshal(map[string]any{"content": res.Content, "structuredContent": res.StructuredContent})
	return &Error{Code: CodeUpstreamError, Tool: id, Message: msg, Data: data}
}

func tooLarge(id string, limit int64) *Error {
	return newError(CodeResultTooLarge, id, errResultTooLarge, map[string]any{"limitBytes": limit},
		"the result of %s is larger than the gateway's cap of %d bytes and was refused; ask for less (a page, a range, a filter) and call again", id, limit)
}

// forwardError maps what went wrong while forwarding.
func (g *Gateway) forwardError(ctx context.Context, u *upstream, id string, err error, timeout time.Duration) *Error {
	var re *rpcError
	var lost *connLostError
	switch {
	case errors.Is(err, errResultTooLarge):
		return tooLarge(id, g.cfg.Settings.MaxResultBytes)
	case ctx.Err() != nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return g.contextError(ctx, id, err, timeout)
	case errors.As(err, &re):
		data, _ := json.Marshal(re)
		return &Error{Code: CodeProtocolError, Tool: id, Data: data, cause: err,
			Message: fmt.Sprintf("%s failed with JSON-RPC error %d: %s (check the arguments against the tool's schema, or try another tool)", id, re.Code, truncate(re.Message, 500))}
	case errors.As(err, &lost):
		return g.unavailable(u, id, err)
	case errors.Is(err, transport.ErrAuthorizationRequired):
		return g.refusedCredentials(u, id, err)
	}
	return g.unavailable(u, id, err)
}

// refusedCredentials is AUTH_REQUIRED for a request the server answered
// with 401, saying whose credentials it refused.
func (g *Gateway) refusedCredentials(u *upstream, id string, err error) *Error {
	data := map[string]any{"server": u.name}
	switch {
	case u.sc.SessionToken:
		return newError(CodeAuthRequired, id, err, data,
			"server %q refused this session's token (HTTP 401); set a valid token for %q (for `sandbox serve` over HTTP, the header \"Sandbox-Token-%s: <token>\") and call again", u.name, u.name, u.name)
	case usesOAuth(u.sc):
		return newError(CodeAuthRequired, id, err, data,
			"server %q asks for an OAuth login (HTTP 401); run `sandbox login %s --config <your mcp.json>`, then call again", u.name, u.name)
	}
	return newError(CodeAuthRequired, id, err, data,
		"server %q refused the Authorization header the gateway config gives it (HTTP 401); tell the operator to renew it", u.name)
}

// contextError distinguishes the caller's cancellation from a deadline.
func (g *Gateway) contextError(ctx context.Context, id string, err error, timeout time.Duration) *Error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) || (ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded)) {
		return newError(CodeTimeout, id, err, map[string]any{"timeoutMs": timeout.Milliseconds()},
			"%s did not finish before the caller's deadline and was cancelled; call it again with more time or less work", id)
	}
	return newError(CodeCancelled, id, err, nil, "the call to %s was cancelled by its caller; the upstream was told to stop", id)
}

// unavailable is UPSTREAM_UNAVAILABLE with the server's state and the reason
// agents may see (never what the server printed: that is in the operator's
// log).
func (g *Gateway) unavailable(u *upstream, id string, cause error) *Error {
	st := u.status()
	reason := st.Reason
	var lost *connLostError
	if errors.As(cause, &lost) {
		reason = lost.reason
	}
	hint := "it is being reconnected; call again in a few seconds"
	switch st.State {
	case StateDisabled:
		hint = "it is disabled in the gateway config"
	case StateStopped:
		hint = "the gateway is shutting down"
	}
	msg := fmt.Sprintf("server %q is not available (%s", u.name, st.State)
	if reason != "" {
		msg += ": " + truncate(reason, 300)
	}
	msg += "); " + hint
	return newError(CodeUpstreamUnavailable, id, cause, map[string]any{"server": u.name, "state": st.State, "reason": reason, "restarts": st.Restarts}, "%s", msg)
}
