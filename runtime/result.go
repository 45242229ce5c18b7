package runtime

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Result is what a run produces. A snippet that fails still has a Result:
// OK is false and Error says why; the logs and the calls made so far are kept.
type Result struct {
	OK bool `json:"ok"`
	// Value is the JSON of what the snippet returned (or its top-level promise
	// resolved to). Absent when the snippet returned undefined or failed.
	Value json.RawMessage `json:"value,omitempty"`
	// Error is set when OK is false.
	Error *Error `json:"error,omitempty"`
	// Logs is the console output, in order, with levels.
	Logs []LogEntry `json:"logs"`
	// LogsTruncated reports that console output went over Limits.OutputBytes
	// and the rest was dropped.
	LogsTruncated bool `json:"logsTruncated,omitempty"`
	// Calls traces every tool call the snippet started, in start order.
	Calls []CallTrace `json:"calls"`
	// Duration is the wall time of the run, from start of execution to result.
	Duration time.Duration `json:"durationNs"`
}

// ErrorKind classifies why a run failed.
type ErrorKind string

const (
	// KindCompile: the TypeScript did not transpile (syntax error, import, ...).
	KindCompile ErrorKind = "compile"
	// KindRuntime: the snippet threw, or its top-level promise rejected, with
	// an exception of its own (a tool's MCPToolError included).
	KindRuntime ErrorKind = "runtime"
	// KindLimit: a limit was hit; Error.Limit names which.
	KindLimit ErrorKind = "limit"
	// KindDeadlock: the snippet awaits something that can never settle: no timer
	// and no tool call is pending.
	KindDeadlock ErrorKind = "deadlock"
	// KindResult: the returned value cannot be turned into JSON (a cycle, a BigInt).
	KindResult ErrorKind = "result"
	// KindCancelled: the caller cancelled the run.
	KindCancelled ErrorKind = "cancelled"
	// KindInternal: the runtime itself failed (a worker crashed for a reason
	// other than a limit, a protocol error). Not the snippet's fault.
	KindInternal ErrorKind = "internal"
)

// Limit names, as in Error.Limit.
const (
	LimitTime       = "time"
	LimitMemory     = "memory"
	LimitStackDepth = "stack_depth"
	LimitCodeSize   = "code_size"
	LimitToolCalls  = "tool_calls"
	LimitResultSize = "result_size"
)

// RaiseLimitAdvice ends the advice of a limit error whose limit the
// caller of Run sets: " or raise the limit" (time, memory, tool calls,
// result and code size), after what the snippet can do instead. A caller
// that knows better what can be raised (code mode, whose agents raise a
// limit only up to the operator's ceiling) replaces it.
const RaiseLimitAdvice = " or raise the limit"

// Error is a failed run, located in the agent's own TypeScript where possible.
type Error struct {
	Kind ErrorKind `json:"kind"`
	// Limit names the limit that was hit when Kind is KindLimit.
	Limit string `json:"limit,omitempty"`
	// Name is the JavaScript error's name (TypeError, MCPToolError, ...) for
	// KindRuntime, else empty.
	Name    string `json:"name,omitempty"`
	Message string `json:"message"`
	// File, Line and Column locate the error in the snippet's TypeScript
	// (1-based line and column); zero when unknown.
	File   string `json:"file,omitempty"`
	Line   int    `json:"line,omitempty"`
	Column int    `json:"column,omitempty"`
	// Stack is a short stack of the snippet's own frames, innermost first.
	Stack string `json:"stack,omitempty"`
	// Tool, Code and Data are set when the error is an MCPToolError.
	Tool string          `json:"tool,omitempty"`
	Code string          `json:"code,omitempty"`
	Data json.RawMessage `json:"data,omitempty"`
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" && e.Line > 0 {
		fmt.Fprintf(&b, "%s:%d:%d: ", e.File, e.Line, e.Column)
	}
	switch {
	case e.Kind == KindLimit:
		fmt.Fprintf(&b, "limit exceeded (%s): ", e.Limit)
	case e.Name != "":
		b.WriteString(e.Name)
		if e.Code != "" {
			fmt.Fprintf(&b, " [%s]", e.Code)
		}
		b.WriteString(": ")
	case e.Kind != KindRuntime:
		fmt.Fprintf(&b, "%s error: ", e.Kind)
	}
	b.WriteString(e.Message)
	return b.String()
}

// LogLevel is a console method's level.
type LogLevel string

const (
	LevelDebug LogLevel = "debug"
	LevelInfo  LogLevel = "info"
	LevelLog   LogLevel = "log"
	LevelWarn  LogLevel = "warn"
	LevelError LogLevel = "error"
)

// LogEntry is one console call.
type LogEntry struct {
	Level   LogLevel `json:"level"`
	Message string   `json:"message"`
}

// CallTrace records one tool call.
type CallTrace struct {
	Tool string `json:"tool"`
	// Start is the offset from the start of the run.
	Start    time.Duration `json:"startNs"`
	Duration time.Duration `json:"durationNs"`
	OK       bool          `json:"ok"`
	// Code is the error code when the call failed.
	Code string `json:"code,omitempty"`
	// ArgBytes and ResultBytes are the sizes of the JSON exchanged.
	ArgBytes    int `json:"argBytes"`
	ResultBytes int `json:"resultBytes,omitempty"`
}
