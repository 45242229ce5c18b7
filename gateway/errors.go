package gateway

import (
	"encoding/json"
	"fmt"

	"github.com/sandboxrt/sandbox/errcode"
)

// Code is the stable, machine-readable kind of a gateway error
// (ARCHITECTURE.md contract 3). The codes, their meanings and what an agent
// does about each are one table, in package errcode; Code is its type, so
// gateway.Code and errcode.Code are the same.
type Code = errcode.Code

// The error codes a routed call can fail with, in the order of the routing
// pipeline that produces them (Call's doc comment says which step raises
// which). errcode says what each means.
const (
	CodeServiceNotFound     = errcode.ServiceNotFound
	CodeUnknownTool         = errcode.UnknownTool
	CodeValidationFailed    = errcode.ValidationFailed
	CodePathTraversal       = errcode.PathTraversal
	CodeDenied              = errcode.Denied
	CodeAuthRequired        = errcode.AuthRequired
	CodeRateLimited         = errcode.RateLimited
	CodeTimeout             = errcode.Timeout
	CodeCancelled           = errcode.Cancelled
	CodeUpstreamUnavailable = errcode.UpstreamUnavailable
	CodeToolError           = errcode.ToolError // isError: Message is the tool's own text, Data its content blocks
	CodeUpstreamError       = errcode.UpstreamError
	CodeProtocolError       = errcode.ProtocolError // Data keeps the JSON-RPC code, message and data
	CodeResultTooLarge      = errcode.ResultTooLarge
	CodeInternal            = errcode.Internal
	CodeNotFound            = errcode.NotFound // resources and prompts (passthrough.go)
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
