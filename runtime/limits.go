package runtime

import (
	"fmt"
	"time"

	"github.com/sandboxrt/sandbox/internal/bytesize"
)

// Limits bound one snippet run. Zero fields take the defaults (DefaultLimits);
// negative values are rejected by Validate.
type Limits struct {
	// Timeout is the wall-clock budget of the whole run: transpiled program,
	// timers, tool calls and result serialization. A worker whose VM does not stop
	// in time (a native built-in such as a huge sort never checks for interrupts)
	// is killed.
	Timeout time.Duration `json:"timeout,omitempty"`
	// MemoryBytes caps the worker's heap. Gradual growth is stopped with a clean
	// error; a single huge allocation kills the worker, reported the same way.
	// Not enforced in-process (see Isolation).
	MemoryBytes int64 `json:"memoryBytes,omitempty"`
	// OutputBytes caps the console output kept; the rest is dropped with a note.
	OutputBytes int `json:"outputBytes,omitempty"`
	// ResultBytes caps the JSON of the returned value.
	ResultBytes int `json:"resultBytes,omitempty"`
	// StackDepth caps nested JavaScript calls (deep or infinite recursion).
	// The default is 2000: goja unwinds recursion that passes through native
	// built-ins ([x].map(f) calling itself) in time quadratic in the depth
	// (~0.16 s at 2000, ~2.8 s at 8000), and legitimate snippets rarely nest
	// deeper than a few hundred calls.
	StackDepth int `json:"stackDepth,omitempty"`
	// CodeBytes caps the TypeScript source.
	CodeBytes int `json:"codeBytes,omitempty"`
	// ToolCalls caps the number of tool calls a run may start.
	ToolCalls int `json:"toolCalls,omitempty"`
}

// DefaultLimits are the limits a zero Limits stands for.
var DefaultLimits = Limits{
	Timeout:     30 * time.Second,
	MemoryBytes: 256 << 20,
	OutputBytes: 1 << 20,
	ResultBytes: 1 << 20,
	StackDepth:  2000,
	CodeBytes:   256 << 10,
	ToolCalls:   1000,
}

// WithDefaults returns l with every zero field set from DefaultLimits.
func (l Limits) WithDefaults() Limits { return l.Or(DefaultLimits) }

// Or returns l with every zero field set from d: per-request limits over a
// caller's defaults.
func (l Limits) Or(d Limits) Limits {
	if l.Timeout == 0 {
		l.Timeout = d.Timeout
	}
	if l.MemoryBytes == 0 {
		l.MemoryBytes = d.MemoryBytes
	}
	if l.OutputBytes == 0 {
		l.OutputBytes = d.OutputBytes
	}
	if l.ResultBytes == 0 {
		l.ResultBytes = d.ResultBytes
	}
	if l.StackDepth == 0 {
		l.StackDepth = d.StackDepth
	}
	if l.CodeBytes == 0 {
		l.CodeBytes = d.CodeBytes
	}
	if l.ToolCalls == 0 {
		l.ToolCalls = d.ToolCalls
	}
	return l
}

// minMemoryBytes is the least memory a worker can run a snippet in: the VM,
// the compiled program and the runtime's own buffers need about this much.
const minMemoryBytes = 16 << 20

// Validate reports the first limit that is out of range, saying what to use instead.
func (l Limits) Validate() error {
	switch {
	case l.Timeout < 0:
		return fmt.Errorf("limits: timeout %v is negative; use a positive duration such as 30s", l.Timeout)
	case l.Timeout > 0 && l.Timeout < time.Millisecond:
		return fmt.Errorf("limits: timeout %v is below 1ms; use at least 1ms", l.Timeout)
	case l.MemoryBytes < 0:
		return fmt.Errorf("limits: memory %d is negative; use a size such as 256MiB", l.MemoryBytes)
	case l.MemoryBytes > 0 && l.MemoryBytes < minMemoryBytes:
		return fmt.Errorf("limits: memory %s is too small to start a VM; use at least %s", bytesize.Format(l.MemoryBytes), bytesize.Format(minMemoryBytes))
	case l.OutputBytes < 0:
		return fmt.Errorf("limits: output %d is negative", l.OutputBytes)
	case l.ResultBytes < 0:
		return fmt.Errorf("limits: result size %d is negative", l.ResultBytes)
	case l.StackDepth < 0:
		return fmt.Errorf("limits: stack depth %d is negative", l.StackDepth)
	case l.CodeBytes < 0:
		return fmt.Errorf("limits: code size %d is negative", l.CodeBytes)
	case l.ToolCalls < 0:
		return fmt.Errorf("limits: tool calls %d is negative", l.ToolCalls)
	}
	return nil
}
