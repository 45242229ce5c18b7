package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/sandboxrt/sandbox/gateway/internal/jsonscan"
	"github.com/sandboxrt/sandbox/gateway/internal/upstream"
)

// parseCallResult decodes a tools/call result, keeping blocks raw (slices
// of raw, which the result owns from here on). checked says raw is known
// to be JSON already (upstream.Conn.ResultsChecked): it is not scanned a
// second time to check it.
func parseCallResult(raw json.RawMessage, checked bool) (*CallResult, error) {
	res, ok := splitCallResult(raw, checked)
	if !ok {
		var r struct {
			Content           *[]json.RawMessage `json:"content"`
			StructuredContent json.RawMessage    `json:"structuredContent"`
			IsError           bool               `json:"isError"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, fmt.Errorf("result is not a JSON object: %w", err)
		}
		res = &CallResult{IsError: r.IsError, Content: []json.RawMessage{}}
		if r.Content != nil {
			res.Content = *r.Content
		}
		if len(r.StructuredContent) > 0 && string(r.StructuredContent) != "null" {
			res.StructuredContent = r.StructuredContent
		}
	}
	for i, b := range res.Content {
		if len(b) == 0 || b[0] != '{' {
			return nil, fmt.Errorf("content block %d is not a JSON object", i)
		}
		res.Content[i] = stripMeta(b)
	}
	return res, nil
}

// splitCallResult reads a result as parseCallResult's json.Unmarshal does,
// in one pass that checks it and one that finds its members and blocks
// (jsonscan), rather than a scan to check, one to decode and a copy of
// every block. ok is false for anything but the plain case (a key with
// escapes, in another case or twice; a member of another type), which
// json.Unmarshal then reads, errors and all. checked skips the first
// pass for raw known to be JSON (jsonscan reads only valid JSON).
func splitCallResult(raw []byte, checked bool) (_ *CallResult, ok bool) {
	if !checked && !json.Valid(raw) {
		return nil, false
	}
	res := &CallResult{Content: []json.RawMessage{}}
	var seen jsonscan.Fields
	ok = jsonscan.Members(raw, func(key, value []byte) bool {
		switch string(key) {
		case "content":
			if string(value) == "null" {
				return seen.First(0)
			}
			return seen.First(0) && jsonscan.Elements(value, func(block []byte) bool {
				res.Content = append(res.Content, block)
				return true
			})
		case "structuredContent":
			if string(value) != "null" {
				res.StructuredContent = value
			}
			return seen.First(1)
		case "isError":
			switch string(value) {
			case "true":
				res.IsError = true
			case "false", "null":
			default:
				return false
			}
			return seen.First(2)
		}
		return jsonscan.OtherKey(key, "content", "structuredContent", "isError")
	})
	return res, ok
}

// toolRefusal turns an isError result into TOOL_ERROR: the tool's own
// text as the message, its content blocks as data. It has a code of its
// own, apart from the gateway's failures, because what to do differs: the
// tool answered, and its text says why.
func toolRefusal(id string, res *CallResult) *Error {
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
	return &Error{Code: CodeToolError, Tool: id, Message: msg, Data: data}
}

// tooLarge is RESULT_TOO_LARGE, in one wording wherever an answer is
// refused for its size: what was refused (size, when known; 0 when the
// answer was cut off unread), the real maximum this call could receive,
// and, when a code-mode run would receive more (handleLimit, above limit),
// that it arrives there as a handle.
func tooLarge(id string, size, limit, handleLimit int64) *Error {
	data := map[string]any{"limitBytes": limit}
	what := "larger than"
	if size > 0 {
		data["bytes"] = size
		what = formatSize(size) + ", more than"
	}
	hint := "ask for less (a page, a range, a filter) and call again"
	if handleLimit > limit {
		data["handleLimitBytes"] = handleLimit
		hint = fmt.Sprintf("call it from execute_code, where a result of up to %s reaches the snippet as a handle to read in parts (sandbox.results), or %s", formatSize(handleLimit), hint)
	}
	return newError(CodeResultTooLarge, id, upstream.ErrResultTooLarge, data,
		"the result of %s is %s %s, the most the gateway hands over; %s", id, what, formatSize(limit), hint)
}

// resultTooLarge is tooLarge for a tool call: a call that takes a spilled
// result could receive up to the spill ceiling from a server whose answers
// are spilled, any other up to MaxResultBytes.
func (g *Gateway) resultTooLarge(c *call, size int64) *Error {
	ceiling := g.spillCeiling()
	if !c.u.spills() {
		ceiling = 0
	}
	if c.req.Spill && ceiling > 0 {
		return tooLarge(c.toolID, size, ceiling, 0)
	}
	return tooLarge(c.toolID, size, g.cfg.Settings.MaxResultBytes, ceiling)
}

// forwardError maps what went wrong while forwarding.
func (g *Gateway) forwardError(ctx context.Context, u *route, id string, err error, timeout time.Duration) *Error {
	var re *upstream.RPCError
	var lost *upstream.ConnLostError
	switch {
	case errors.Is(err, upstream.ErrResultTooLarge):
		return tooLarge(id, 0, g.cfg.Settings.MaxResultBytes, 0)
	case ctx.Err() != nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return g.contextError(ctx, id, err, timeout)
	case errors.As(err, &re) && re.Code == mcp.MISSING_REQUIRED_CLIENT_CAPABILITY:
		// A 2026-07-28 server is told per request only what the caller can
		// answer (Gateway.answering), and may refuse for want of the rest.
		// The code and data stay, for a client that can declare it.
		data, _ := json.Marshal(re)
		return &Error{Code: CodeProtocolError, Tool: id, Data: data, cause: err,
			Message: fmt.Sprintf("%s needs its caller's client to support %s, which the client this call is made for does not (the server said: %s); "+
				"call it from an MCP client that supports %[2]s, or try another tool", id, missingCapability(re), truncate(re.Message, 300))}
	case errors.As(err, &re):
		data, _ := json.Marshal(re)
		return &Error{Code: CodeProtocolError, Tool: id, Data: data, cause: err,
			Message: fmt.Sprintf("%s failed with JSON-RPC error %d: %s (check the arguments against the tool's schema, or try another tool)", id, re.Code, truncate(re.Message, 500))}
	case errors.As(err, &lost):
		return g.unavailable(u, id, err)
	case errors.Is(err, transport.ErrAuthorizationRequired):
		return g.refusedCredentials(u, id, err)
	case u.status().State == StateReady:
		return brokenRequest(u, id, err)
	}
	return g.unavailable(u, id, err)
}

// missingCapability names the capability a -32021 answer says is missing:
// its data's "capability" (mcp-go's) or the keys of "requiredCapabilities"
// (SEP-2575's), "a client capability" when it names none.
func missingCapability(re *upstream.RPCError) string {
	var data struct {
		Capability string         `json:"capability"`
		Required   map[string]any `json:"requiredCapabilities"`
	}
	_ = json.Unmarshal(re.Data, &data)
	if data.Capability != "" {
		return truncate(data.Capability, 40)
	}
	if len(data.Required) > 0 {
		names := slices.Sorted(maps.Keys(data.Required))
		return truncate(strings.Join(names, ", "), 80)
	}
	return "a client capability"
}

// brokenRequest is UPSTREAM_ERROR: the request failed on a connection that
// is still up (a write that failed, an answer that could not be read), so
// "not available, being reconnected" would be wrong. The Go error stays in
// the cause for the log: it names pipes and buffers, nothing an agent can use.
func brokenRequest(u *route, id string, cause error) *Error {
	return newError(CodeUpstreamError, id, cause, map[string]any{"server": u.name},
		"the request to %s broke on its way to or from server %q, which is still connected; the tool may or may not have run: check before you call it again if it changes anything, and if it keeps failing tell the operator (the gateway's log has the cause)", id, u.name)
}

// refusedCredentials is AUTH_REQUIRED for a request the server answered
// with 401, saying whose credentials it refused.
func (g *Gateway) refusedCredentials(u *route, id string, err error) *Error {
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
func (g *Gateway) unavailable(u *route, id string, cause error) *Error {
	st := u.status()
	reason := st.Reason
	var lost *upstream.ConnLostError
	if errors.As(cause, &lost) {
		reason = lost.Reason
	}
	hint := "it is being reconnected; call again in a few seconds"
	switch {
	case st.NeedsOperator():
		hint = "use other tools, or tell the user that the operator must fix this server"
	case st.State == StateDisabled:
		hint = "it is disabled in the gateway config"
	case st.State == StateStopped:
		hint = "the gateway is shutting down"
	}
	msg := fmt.Sprintf("server %q is not available (%s", u.name, st.State)
	if reason != "" {
		msg += ": " + truncate(reason, 300)
	}
	msg += "); " + hint
	return newError(CodeUpstreamUnavailable, id, cause, map[string]any{"server": u.name, "state": st.State, "reason": reason, "restarts": st.Restarts}, "%s", msg)
}
