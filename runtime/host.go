package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/runtime/internal/bindings"
)

// Host answers the tool calls a snippet makes. The VM side sends a message
// (tool id + JSON arguments) and gets a promise; CallTool runs on a goroutine of
// its own, never the VM's, and its answer is handed back to the VM's event loop.
//
// CallTool returns the JSON value the promise resolves to (for an MCP tool,
// DecodeResult's), or an error, which rejects the promise with an
// MCPToolError (see ToolError). A *ToolError keeps its code, message and data;
// any other error becomes code HOST_ERROR.
//
// ctx is cancelled when the run ends (result, limit, cancellation) while the
// call is still in flight. Implementations must be safe for concurrent use:
// Promise.all in a snippet runs calls at the same time.
type Host interface {
	CallTool(ctx context.Context, call ToolCall) (json.RawMessage, error)
}

// HostFunc adapts a function to Host.
type HostFunc func(ctx context.Context, call ToolCall) (json.RawMessage, error)

// CallTool calls f.
func (f HostFunc) CallTool(ctx context.Context, call ToolCall) (json.RawMessage, error) {
	return f(ctx, call)
}

// ToolCall is one call from the VM.
type ToolCall struct {
	// Tool is the tool id, "server:tool"; or "namespace.function", as the
	// code wrote it, for a member of an open namespace (see Tool) that has
	// no bound tool.
	Tool string
	// Arguments is the JSON object the snippet passed (always an object).
	Arguments json.RawMessage
	// Caller is the run's caller (Request.Caller).
	Caller auth.Caller
	// Log adds an entry to the run's console output (within its output
	// limit), for a Host whose work has output of its own: a saved
	// script's console lines. Charge counts n more tool calls against the
	// run's limit: the calls a saved script made. Both may be nil.
	Log    func(LogEntry)
	Charge func(n int)
	// PauseClock stops the run's time limit until resume is called: for a
	// Host that waits on a person (an approval), whose reading time is not
	// the snippet's. Nil outside a run.
	PauseClock func() (resume func())
}

// ToolError is a structured tool failure. A Host returns it to fail a call,
// and in the VM the call's promise rejects with an MCPToolError carrying it.
// This is the one description of MCPToolError (ARCHITECTURE.md contract 3;
// typegen.Preamble declares it for agents):
//
//	class MCPToolError extends Error {
//	  name: "MCPToolError"
//	  tool: string    // the tool's id, "server:tool"; "namespace.function" when it is not bound
//	  code: string    // Code: one of the gateway's codes, or one the runtime adds (the Code constants)
//	  message: string // Message: what went wrong and what to do next
//	  data?: unknown  // Data, parsed, when present
//	}
//
// Its stack is the snippet's line that made the call. Snippets may construct
// it too (`new MCPToolError(message, {code, tool, data})`; code defaults to
// "ERROR"). One that nothing catches ends the run with a KindRuntime Error
// whose Tool, Code and Data are the MCPToolError's.
type ToolError struct {
	Code    string          `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *ToolError) Error() string { return e.Code + ": " + e.Message }

// Error codes the runtime itself produces for tool calls, as ToolError.Code,
// MCPToolError.code in the VM and CallTrace.Code. The last three are the
// gateway's codes for the same failures (gateway.CodeCancelled, CodeTimeout,
// CodeResultTooLarge), so a snippet handles them alike wherever they arose.
const (
	// CodeHostError: the Host returned an error that is not a *ToolError.
	CodeHostError = "HOST_ERROR"
	// CodeNotBound ("NOT_BOUND"): the snippet called a tool that is not bound
	// to this run.
	CodeNotBound = bindings.CodeNotBound
	// CodeNoHost: the run has bound tools but no Host to call them.
	CodeNoHost = "NO_HOST"
	// CodeInvalidArguments ("INVALID_ARGUMENTS"): the arguments could not be
	// turned into a JSON object, or a tool function got more than one.
	CodeInvalidArguments = bindings.CodeInvalidArguments
	// CodeInvalidResult: the host answered with something that is not JSON.
	CodeInvalidResult = "INVALID_RESULT"
	// CodeToolCallLimit: a worker asked for more tool calls than the run's
	// Limits.ToolCalls (the VM stops a snippet before that; this is the
	// parent's own check).
	CodeToolCallLimit = "LIMIT_TOOL_CALLS"
	// CodeCancelled: the call was cancelled: the Host's context ended, or
	// (in the trace) the run ended while the call was in flight.
	CodeCancelled = "CANCELLED"
	// CodeTimeout: the Host's context ran out of time.
	CodeTimeout = "TIMEOUT"
	// CodeResultTooLarge: the Host's answer is too large to hand to a worker.
	CodeResultTooLarge = "RESULT_TOO_LARGE"
)

// toToolError turns whatever a Host returned into a ToolError.
func toToolError(err error) *ToolError {
	var te *ToolError
	if errors.As(err, &te) {
		return te
	}
	if errors.Is(err, context.Canceled) {
		return &ToolError{Code: CodeCancelled, Message: "the tool call was cancelled"}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return &ToolError{Code: CodeTimeout, Message: "the tool call ran out of time"}
	}
	return &ToolError{Code: CodeHostError, Message: fmt.Sprint(err)}
}

// ServicePrefix starts the ToolCall.Tool of a call to the snippet's sandbox
// global (Request.Services): "sandbox:store.get".
const ServicePrefix = bindings.ServicePrefix
