// Package toolspec describes a tool that a process answers itself, rather
// than an upstream server: its name, description and input schema, the most
// bytes of arguments it takes, and the handler that answers a call. A
// component offers its tools as specs (code mode's search_tools and
// execute_code); an MCP front end serves them (frontend.Server.AddTool,
// SetCallerTools). Neither knows the other: both know only this package.
package toolspec

import (
	"context"
	"encoding/json"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/gateway"
)

// Spec is one tool.
type Spec struct {
	// Name is the tool's name on the wire, used as is: 1 to 64 characters
	// of [A-Za-z0-9_-].
	Name        string
	Description string
	// InputSchema is the JSON Schema of the arguments, shown to clients as
	// it is. Nothing validates the arguments against it: the handler owns
	// them.
	InputSchema json.RawMessage
	// MaxArgumentBytes caps the JSON arguments the tool takes (0: no cap
	// of its own). A server that can tell a call's size before decoding it
	// refuses a larger one unread: a client must not make the server hold
	// the several copies of a request body that decoding makes for a tool
	// that has no use for them.
	MaxArgumentBytes int
	Handler          Handler
}

// Handler answers a call of a tool. A returned *gateway.Error (or any
// error) becomes an isError result with the error's code and message.
type Handler func(ctx context.Context, req Request) (*gateway.CallResult, error)

// Request is one call of a tool, as its handler gets it.
type Request struct {
	// Caller is who calls (principal and session), as gateway.Call takes it.
	Caller auth.Caller
	// Arguments are the raw JSON arguments (see Spec.InputSchema).
	Arguments json.RawMessage
	// Progress sends notifications/progress for this call when the client
	// asked for progress (a no-op otherwise).
	Progress func(progress, total float64, message string)
	// ProgressRequested says the client sent a progressToken: someone
	// listens to Progress.
	ProgressRequested bool
	// Log sends notifications/message to the calling session at level
	// ("debug" ... "emergency"), if the session's level lets it through.
	Log func(level string, data any)
}
