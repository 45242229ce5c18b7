package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/errcode"
	"github.com/sandboxrt/sandbox/runtime/internal/bindings"
)

// Host answers the tool calls a snippet makes. The VM side sends a message
// (the call's Target + JSON arguments) and gets a promise; CallTool runs on a goroutine of
// its own, never the VM's, and its answer is handed back to the VM's event loop.
//
// CallTool returns the JSON value the promise resolves to (for an MCP tool,
// DecodeResult's, through ToolCall.DecodeResult, which spares it a second
// check), or an error, which rejects the promise with an MCPToolError (see
// ToolError). A *ToolError keeps its code, message and data;
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
	// Target is what the snippet called: a bound tool, a member of an open
	// namespace, or a method of the sandbox global. The runtime checked it
	// against the run (the worker is not trusted to).
	Target Target
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

	// checked is where DecodeResult leaves the value it made for this
	// call; nil outside a run.
	checked *checkedResult
}

// DecodeResult is the package's DecodeResult, for this call. A Host that
// answers with the value as it is (not a copy, not changed after) spares
// the runtime a second check that it is JSON: DecodeResult has checked it
// or made it, and the check is a scan of the whole result, which a 12 KB
// list pays on every call. Any other answer is checked as before.
func (c ToolCall) DecodeResult(content []json.RawMessage, structured json.RawMessage) (json.RawMessage, error) {
	v, err := DecodeResult(content, structured)
	if err == nil && c.checked != nil {
		c.checked.keep(v)
	}
	return v, err
}

// checkedResult holds the value DecodeResult made for one call, so that
// the runtime knows an answer that is that very value to be JSON.
type checkedResult struct {
	mu sync.Mutex
	v  json.RawMessage
}

func (c *checkedResult) keep(v json.RawMessage) {
	c.mu.Lock()
	c.v = v
	c.mu.Unlock()
}

// holds reports whether res is the value kept: the same bytes in memory,
// not merely equal ones (a Host may have built another value since).
func (c *checkedResult) holds(res json.RawMessage) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(res) > 0 && len(res) == len(c.v) && &res[0] == &c.v[0]
}

// ToolError is a structured tool failure. A Host returns it to fail a call,
// and in the VM the call's promise rejects with an MCPToolError carrying it.
// This is the one description of MCPToolError (ARCHITECTURE.md contract 3;
// typegen.Preamble declares it for agents):
//
//	class MCPToolError extends Error {
//	  name: "MCPToolError"
//	  tool: string    // Target.String(): the tool's id, "server:tool"; "namespace.function" when it is not bound
//	  code: string    // Code: a code of errcode's table (the gateway's, the runtime's Code constants, code mode's)
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
// MCPToolError.code in the VM and CallTrace.Code; errcode's table says what
// each means and what an agent does about it. The last three are the
// gateway's codes for the same failures, so a snippet handles them alike
// wherever they arose.
const (
	CodeHostError        = string(errcode.HostError)      // the Host returned an error that is not a *ToolError
	CodeNotBound         = bindings.CodeNotBound          // a call to a tool not bound to this run
	CodeNoHost           = string(errcode.NoHost)         // tools bound, but no Host in the Request
	CodeInvalidArguments = bindings.CodeInvalidArguments  // not one JSON object
	CodeInvalidResult    = string(errcode.InvalidResult)  // the Host answered with something that is not JSON
	CodeToolCallLimit    = string(errcode.ToolCallLimit)  // the parent's check of Limits.ToolCalls (the VM stops a snippet before)
	CodeCancelled        = string(errcode.Cancelled)      // the Host's context ended, or (in the trace) the run ended first
	CodeTimeout          = string(errcode.Timeout)        // the Host's context ran out of time
	CodeResultTooLarge   = string(errcode.ResultTooLarge) // the Host's answer is too large to hand to a worker
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

// Target is what a snippet's tool call is addressed to. The stub the
// snippet called knew it when it was made, so the call carries its kind
// and the fields of that kind, and a Host switches on Kind rather than
// parse a name.
type Target struct {
	Kind TargetKind
	// Tool is a bound tool's id, "server:tool" (BoundTool).
	Tool string
	// Namespace and Function are a member of an open namespace (see Tool)
	// that has no bound tool, as the code wrote it (NamespaceMember):
	// `github.listCommitz` is {"github", "listCommitz"}. The Host resolves
	// it for the run's caller; the Host opened the namespace, so it knows
	// what the name stands for (code mode's `scripts` are saved scripts),
	// and the runtime carries no meaning it does not use.
	Namespace string
	Function  string
	// Service and Method are a method of the sandbox global,
	// sandbox.<Service>.<Method> (ServiceMethod), of a family in
	// Request.Services and one the runtime defines: {"store", "get"}.
	Service string
	Method  string
}

// TargetKind is what a call is addressed to.
type TargetKind uint8

// The kinds of Target.
const (
	// BoundTool: a tool of Request.Tools, by its id.
	BoundTool TargetKind = iota + 1
	// NamespaceMember: a member of an open namespace with no bound tool.
	NamespaceMember
	// ServiceMethod: a method of the snippet's sandbox global.
	ServiceMethod
)

// String is the target as the run's trace (CallTrace.Tool), the VM's
// MCPToolError.tool and messages name it: "server:tool" (BoundTool),
// "namespace.function" (NamespaceMember), "sandbox:store.get"
// (ServiceMethod).
func (t Target) String() string { return t.vm().String() }

// vm is t as the VM's stubs make it.
func (t Target) vm() bindings.Target {
	switch t.Kind {
	case BoundTool:
		return bindings.Target{Kind: bindings.KindTool, ID: t.Tool}
	case NamespaceMember:
		return bindings.Target{Kind: bindings.KindMember, Namespace: t.Namespace, Function: t.Function}
	case ServiceMethod:
		return bindings.Target{Kind: bindings.KindService, Namespace: t.Service, Function: t.Method}
	}
	return bindings.Target{}
}

// targetOf is a stub's target as the Host gets it.
func targetOf(t bindings.Target) Target {
	switch t.Kind {
	case bindings.KindTool:
		return Target{Kind: BoundTool, Tool: t.ID}
	case bindings.KindMember:
		return Target{Kind: NamespaceMember, Namespace: t.Namespace, Function: t.Function}
	case bindings.KindService:
		return Target{Kind: ServiceMethod, Service: t.Namespace, Method: t.Function}
	}
	return Target{}
}
