package codemode

import (
	"fmt"
	"time"

	"github.com/sandboxrt/sandbox/runtime"
)

// ceiling is the most any request may ask for: Options.MaxLimits, whose
// zero fields are the engine's default limits (so by default a request can
// only ask for less than the defaults, never more).
func (e *Engine) ceiling() runtime.Limits {
	return e.opts.MaxLimits.Or(e.opts.Limits).WithDefaults()
}

// applyLimits is the limits a run gets: the request's, over the engine's
// defaults, each held to the ceiling. clamped names the limits that asked
// for more than the ceiling and got the ceiling.
func (e *Engine) applyLimits(req runtime.Limits) (applied runtime.Limits, clamped []string) {
	applied = req.Or(e.opts.Limits).WithDefaults()
	ceil := e.ceiling()
	clamp := func(name string, v *int64, max int64) {
		if *v > max {
			*v = max
			clamped = append(clamped, name)
		}
	}
	clampInt := func(name string, v *int, max int) {
		if *v > max {
			*v = max
			clamped = append(clamped, name)
		}
	}
	t := int64(applied.Timeout)
	clamp("timeoutMs", &t, int64(ceil.Timeout))
	applied.Timeout = time.Duration(t)
	clamp("memoryMB", &applied.MemoryBytes, ceil.MemoryBytes)
	clampInt("toolCalls", &applied.ToolCalls, ceil.ToolCalls)
	clampInt("outputKB", &applied.OutputBytes, ceil.OutputBytes)
	clampInt("resultKB", &applied.ResultBytes, ceil.ResultBytes)
	clampInt("stackDepth", &applied.StackDepth, ceil.StackDepth)
	clampInt("codeKB", &applied.CodeBytes, ceil.CodeBytes)
	return applied, clamped
}

// AppliedLimits is what a run was given, in the units of execute_code's
// "limits" argument.
type AppliedLimits struct {
	TimeoutMs int64 `json:"timeoutMs"`
	MemoryMB  int64 `json:"memoryMB"`
	ToolCalls int   `json:"toolCalls"`
	OutputKB  int   `json:"outputKB"`
	ResultKB  int   `json:"resultKB"`
	// Clamped names the limits the request asked more of than the ceiling
	// allows; they got the ceiling.
	Clamped []string `json:"clamped,omitempty"`
}

func appliedLimits(l runtime.Limits, clamped []string) AppliedLimits {
	return AppliedLimits{TimeoutMs: l.Timeout.Milliseconds(), MemoryMB: l.MemoryBytes >> 20, ToolCalls: l.ToolCalls,
		OutputKB: l.OutputBytes >> 10, ResultKB: l.ResultBytes >> 10, Clamped: clamped}
}

// limitsText describes the defaults and the ceiling for execute_code's
// description.
func limitsText(def, max runtime.Limits) string {
	f := func(l runtime.Limits) string {
		return fmt.Sprintf("%s, %d MiB, %d tool calls, %d KiB of console output and %d KiB of result",
			l.Timeout, l.MemoryBytes>>20, l.ToolCalls, l.OutputBytes>>10, l.ResultBytes>>10)
	}
	if def == max {
		return "Limits: " + f(def) + " (a request may ask for less, not more)."
	}
	return "Default limits: " + f(def) + ". At most: " + f(max) + " (a request over that gets the maximum; the result says so)."
}
