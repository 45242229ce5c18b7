// Package errcode is the one table of the error codes a tool call, a
// snippet's call or a code-mode tool fails with (ARCHITECTURE.md contract
// 3): each code, who raises it, whether a snippet can catch it, what it
// means and what an agent should do next.
//
// The packages that raise codes (gateway, runtime, codemode) name them
// with constants defined from this table, and what agents and operators
// read is built from it or tested against it: the MCPToolError
// declaration in every .d.ts and in execute_code's description
// (typegen.Preamble), docs/errors.md, ARCHITECTURE.md contract 3 and the
// gateway's list in docs/gateway.md. A new code is a row here first.
//
// It is a leaf: it imports nothing of the project, so every producer can
// import it.
package errcode

// Code is the stable, machine-readable kind of a failed call. Codes never
// change meaning; new ones may be added.
type Code string

// The codes, in the order of the table (All).
const (
	ServiceNotFound     Code = "SERVICE_NOT_FOUND"
	UnknownTool         Code = "UNKNOWN_TOOL"
	ValidationFailed    Code = "VALIDATION_FAILED"
	PathTraversal       Code = "PATH_TRAVERSAL"
	Denied              Code = "DENIED"
	AuthRequired        Code = "AUTH_REQUIRED"
	RateLimited         Code = "RATE_LIMITED"
	Timeout             Code = "TIMEOUT"
	Cancelled           Code = "CANCELLED"
	UpstreamUnavailable Code = "UPSTREAM_UNAVAILABLE"
	ToolError           Code = "TOOL_ERROR"
	UpstreamError       Code = "UPSTREAM_ERROR"
	ProtocolError       Code = "PROTOCOL_ERROR"
	ResultTooLarge      Code = "RESULT_TOO_LARGE"
	Internal            Code = "INTERNAL"
	NotFound            Code = "NOT_FOUND"
	NotBound            Code = "NOT_BOUND"
	InvalidArguments    Code = "INVALID_ARGUMENTS"
	HostError           Code = "HOST_ERROR"
	InvalidResult       Code = "INVALID_RESULT"
	NoHost              Code = "NO_HOST"
	ToolCallLimit       Code = "LIMIT_TOOL_CALLS"
	Unspecified         Code = "ERROR"
	Busy                Code = "BUSY"
	StoreLimit          Code = "STORE_LIMIT"
	ScriptFailed        Code = "SCRIPT_FAILED"
)

// Source is who raises a code (a code may have several).
type Source uint8

const (
	// Gateway: the call pipeline (gateway.Gateway.Call and the front end's
	// pass-through of resources and prompts).
	Gateway Source = 1 << iota
	// Runtime: the runtime, for a call a snippet makes.
	Runtime
	// CodeMode: code mode, for its own services (sandbox.store, saved
	// scripts, big results) and its MCP tools.
	CodeMode
	// Snippet: agent code, constructing an MCPToolError itself.
	Snippet
)

// String names the sources, "gateway, code mode".
func (s Source) String() string {
	var out string
	for _, n := range []struct {
		s    Source
		name string
	}{{Gateway, "gateway"}, {Runtime, "runtime"}, {CodeMode, "code mode"}, {Snippet, "snippet"}} {
		if s&n.s != 0 {
			if out != "" {
				out += ", "
			}
			out += n.name
		}
	}
	return out
}

// Advice is what an agent should do about a code, in the few kinds the
// agent-facing list groups codes by.
type Advice uint8

const (
	FixCall    Advice = iota // the call itself is wrong
	NotAllowed               // refused for this caller; a person must act
	RetryLater               // a passing condition
	DoLess                   // a limit was reached
	ToolFailed               // the tool (or saved script) ran and failed
	Stopped                  // the call was cancelled
	Fault                    // a fault in a server or in sandbox
	Yours                    // the snippet's own error
)

// String is the advice as the agent-facing list says it.
func (a Advice) String() string {
	switch a {
	case FixCall:
		return "fix the call"
	case NotAllowed:
		return "not allowed: the user or the operator must act"
	case RetryLater:
		return "try again later"
	case DoLess:
		return "do less at a time"
	case ToolFailed:
		return "the tool or saved script failed: read message and data"
	case Stopped:
		return "the call was stopped"
	case Fault:
		return "a fault in a server or in sandbox"
	case Yours:
		return "your code's own MCPToolError, made without a code"
	}
	return "unknown advice"
}

// Info is one row of the table.
type Info struct {
	Code     Code
	RaisedBy Source
	// InSnippet: a snippet can catch it (MCPToolError.code); otherwise it
	// only answers an MCP request (a tools/call, a code-mode tool, a
	// resource read) or a Go caller.
	InSnippet bool
	Advice    Advice
	// Meaning is what happened, for an agent, and what Data holds.
	Meaning string
}

var table = []Info{
	{ServiceNotFound, Gateway, true, FixCall, "The server part of the tool's id names no configured server the caller may use (one outside its credentials' scope reads the same: it does not exist for it), or one this session disconnected (`gateway__connect_servers` brings it back); data lists the servers it may use, or those it is connected to."},
	{UnknownTool, Gateway | CodeMode, true, FixCall, "The server, namespace or saved script has no such tool; data lists the closest names."},
	{ValidationFailed, Gateway | CodeMode, true, FixCall, "The arguments do not match the tool's input schema, or a code-mode tool's or service's input is wrong; nothing was sent. The message lists what is wrong, the required fields and a valid example call."},
	{PathTraversal, Gateway, true, FixCall, "A string argument escapes the configured path roots; nothing was sent."},
	{Denied, Gateway, true, NotAllowed, "A policy rule refused the call, or the person asked to approve it did not."},
	{AuthRequired, Gateway | CodeMode, true, NotAllowed, "The server needs credentials this caller does not have, or refused the ones it has; the message says who must log in or set a token. From code mode: saved scripts or `sandbox.store`'s principal scope, asked of a serve that authenticates no one (no `gateway.auth`)."},
	{RateLimited, Gateway, true, RetryLater, "The server's rate limit or concurrency cap was reached and the bounded wait ran out; data has `retryAfterMs`."},
	{Timeout, Gateway | Runtime, true, DoLess, "The call's deadline (per tool, per server or the caller's) passed; the upstream was told to stop."},
	{Cancelled, Gateway | Runtime, true, Stopped, "The caller cancelled the call, or the run ended while it was in flight; the upstream was told to stop."},
	{UpstreamUnavailable, Gateway | CodeMode, true, RetryLater, "The server is not connected (starting, crashed, restarting, disabled) or its connection broke during the call; the message gives its state."},
	{ToolError, Gateway, true, ToolFailed, "The tool ran and refused or failed (its result has `isError`): the message is the tool's own text, data its content blocks (`{content, structuredContent}`). It is the tool's answer, not sandbox's: read it. It used to be `UPSTREAM_ERROR`."},
	{UpstreamError, Gateway, true, Fault, "The request broke on its way to or from a server that is still connected (a transport failure that is neither a lost connection, `UPSTREAM_UNAVAILABLE`, nor a JSON-RPC error, `PROTOCOL_ERROR`); the tool may or may not have run."},
	{ProtocolError, Gateway | CodeMode, true, Fault, "The server answered with a JSON-RPC error, or with something that is not a valid MCP result; data keeps the JSON-RPC code, message and data."},
	{ResultTooLarge, Gateway | Runtime | CodeMode, true, DoLess, "The result is larger than a cap (the gateway's, or what one run may receive); ask for less."},
	{Internal, Gateway | CodeMode, true, Fault, "A fault in sandbox (a bug, or a store it cannot reach); the message says what happened."},
	{NotFound, Gateway, false, FixCall, "A resource URI or prompt name that no server the caller may use listed (resources and prompts only)."},
	{NotBound, Runtime, true, FixCall, "The snippet called a tool that is not bound to the run; name it in the code or in `tools`."},
	{InvalidArguments, Runtime, true, FixCall, "The arguments cannot be sent: not one JSON object, or more than one argument."},
	{HostError, Runtime, true, Fault, "What runs the tools failed without a tool error (the call could not be sent, or the host failed)."},
	{InvalidResult, Runtime, true, Fault, "The host answered a call with something that is not JSON."},
	{NoHost, Runtime, false, Fault, "A Go program ran a snippet with tools bound but no Host to call them (never in code mode)."},
	{ToolCallLimit, Runtime, false, DoLess, "A worker asked for more tool calls than the run's limit; the runtime's own check behind the VM's, which stops the snippet first."},
	{Unspecified, Snippet, true, Yours, "The code of an MCPToolError a snippet constructed without one (`new MCPToolError(\"message\")`)."},
	{Busy, CodeMode, false, RetryLater, "`execute_code` (or a saved script's tool) was refused: every worker is busy and the run would wait longer than the operator allows (or the queue is full); the message says how long and when to retry."},
	{StoreLimit, CodeMode, true, DoLess, "`sandbox.store.set` would pass a store limit (value size, keys, total bytes); nothing changed, the message says what to delete or shrink."},
	{ScriptFailed, CodeMode, true, ToolFailed, "A saved script threw, could not run, or called scripts too deep; data has the script's error (message, line, stack)."},
}

// All returns the table, one row per code, in a fixed order: the
// gateway's in the order of its call pipeline, then the runtime's, then
// code mode's.
func All() []Info {
	return append([]Info(nil), table...)
}

// Lookup returns the row of a code.
func Lookup(c Code) (Info, bool) {
	for _, i := range table {
		if i.Code == c {
			return i, true
		}
	}
	return Info{}, false
}
