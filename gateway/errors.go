package gateway

import (
	"encoding/json"
	"fmt"
)

// Code is the stable, machine-readable kind of a gateway error
// (ARCHITECTURE.md contract 3). Codes never change meaning; new ones may be added.
type Code string

// The error codes a routed call can fail with, in the order of the routing
// pipeline that produces them.
const (
	// CodeServiceNotFound: the server part of "server:tool" names no configured server.
	CodeServiceNotFound Code = "SERVICE_NOT_FOUND"
	// CodeForbidden: the caller's principal may not use this server (its API
	// key or token names other servers); Data lists the servers it may use.
	CodeForbidden Code = "FORBIDDEN"
	// CodeUnknownTool: the server exists but has no such tool (Data lists the closest names).
	CodeUnknownTool Code = "UNKNOWN_TOOL"
	// CodeValidationFailed: the arguments do not match the tool's input schema;
	// nothing was sent upstream.
	CodeValidationFailed Code = "VALIDATION_FAILED"
	// CodePathTraversal: a string argument escapes the configured path roots.
	CodePathTraversal Code = "PATH_TRAVERSAL"
	// CodeAuthRequired: the server needs a session token and the calling session has none.
	CodeAuthRequired Code = "AUTH_REQUIRED"
	// CodeRateLimited: the server's rate limit or concurrency cap was hit and
	// the bounded wait ran out.
	CodeRateLimited Code = "RATE_LIMITED"
	// CodeTimeout: the call's deadline (per tool, per server or the caller's) passed.
	CodeTimeout Code = "TIMEOUT"
	// CodeCancelled: the caller cancelled the call; the upstream was told to stop.
	CodeCancelled Code = "CANCELLED"
	// CodeUpstreamUnavailable: the server is not connected (starting, crashed,
	// restarting, stopped) or its connection broke during the call.
	CodeUpstreamUnavailable Code = "UPSTREAM_UNAVAILABLE"
	// CodeUpstreamError: the tool ran and reported failure (isError: true).
	// Message is the tool's own text, Data its content blocks.
	CodeUpstreamError Code = "UPSTREAM_ERROR"
	// CodeProtocolError: the upstream answered with a JSON-RPC error or with
	// something that is not a valid MCP result. Data keeps the JSON-RPC code,
	// message and data.
	CodeProtocolError Code = "PROTOCOL_ERROR"
	// CodeResultTooLarge: the upstream's answer exceeded the result size cap.
	CodeResultTooLarge Code = "RESULT_TOO_LARGE"
	// CodeInternal: a bug in the gateway; the message says what happened.
	CodeInternal Code = "INTERNAL"
)

// Error is the one error type every routed call fails with. errors.As(err,
// &*gateway.Error) always works on errors returned by [Gateway.Call].
//
// Message is written for the agent that made the call: it names the tool and
// says what to do next. Data is JSON (never nil once returned by the
// gateway) with details that depend on Code.
type Error struct {
	Code    Code            `json:"code"`
	Tool    string          `json:"tool,omitempty"` // "server:tool", or "" when no tool was named
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`

	cause error // the underlying Go error, for errors.Is/As and logs; never shown to agents
}

func (e *Error) Error() string {
	if e.Tool == "" {
		return fmt.Sprintf("%s: %s", e.Code, e.Message)
	}
	return fmt.Sprintf("%s (%s): %s", e.Tool, e.Code, e.Message)
}

// Unwrap returns the underlying cause (a context error, a transport error, ...).
func (e *Error) Unwrap() error { return e.cause }

// newError builds an *Error; data is marshalled (nil becomes {}).
func newError(code Code, tool string, cause error, data any, format string, args ...any) *Error {
	raw := json.RawMessage(`{}`)
	switch d := data.(type) {
	case nil:
	case json.RawMessage:
		if len(d) > 0 {
			raw = d
		}
	default:
		if b, err := json.Marshal(d); err == nil {
			raw = b
		}
	}
	return &Error{Code: code, Tool: tool, Message: fmt.Sprintf(format, args...), Data: raw, cause: cause}
}
