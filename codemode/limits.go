package codemode

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/sandboxrt/sandbox/runtime"
)

// RequestLimit is one of the limits an execute_code request may set: one
// row of RequestLimits, the one place each is spelled. execute_code's
// input schema and its decoding, the text of its description, the names
// the report gives clamped limits, the "codeMode.limits" and "maxLimits"
// keys of mcp.json (config) and the flags of `sandbox run` and `sandbox
// serve` (cmd/sandbox) are built from the table.
type RequestLimit struct {
	// Key is the limit in execute_code's "limits" argument, in the report's
	// "limits" and in its "clamped" list: "timeoutMs".
	Key string
	// ConfigKey is the limit in "codeMode.limits" and "maxLimits": "timeout".
	ConfigKey string
	// Kind is what the value is: a duration, a size or a count.
	Kind LimitKind
	// Unit is how many of the runtime.Limits field's units one unit of Key
	// is: nanoseconds in a millisecond, bytes in a MiB, 1 for a count.
	// ConfigKey and MaxFlag take Key's unit too, except for durations,
	// which they take as durations ("30s").
	Unit int64
	// Min and Max bound Key in the input schema; Min bounds ConfigKey too.
	// A request over the operator's ceiling gets the ceiling, whatever Max.
	Min, Max int64
	// Shown is how the description writes a value in Key's unit, for
	// sizes and counts ("%d MiB"); a duration is written as Go writes one.
	Shown string
	// RunFlag and RunHelp are `sandbox run`'s flag, which sets the run's
	// limit (a duration, a size with a unit such as 256MiB, or a count).
	RunFlag, RunHelp string
	// MaxFlag and MaxHelp are `sandbox serve`'s flag, which sets the
	// ceiling of every request over "codeMode.maxLimits".
	MaxFlag, MaxHelp string
	// RuntimeLimit is the limit's name in a runtime.Error of KindLimit
	// (runtime.LimitTime); "" for output, which is cut with a note rather
	// than ending the run.
	RuntimeLimit string

	get func(runtime.Limits) int64
	set func(*runtime.Limits, int64)
}

// LimitKind is what a limit's value is.
type LimitKind uint8

const (
	// LimitDuration is a time; runtime.Limits holds it in nanoseconds.
	LimitDuration LimitKind = iota
	// LimitSize is a number of bytes.
	LimitSize
	// LimitCount is a number of things (tool calls).
	LimitCount
)

// RequestLimits are the limits an execute_code request may set, in the
// order the schema, the description and the report list them. The others
// of runtime.Limits (stack depth, code size) are the operator's alone.
var RequestLimits = []RequestLimit{
	{Key: "timeoutMs", ConfigKey: "timeout", Kind: LimitDuration, Unit: int64(time.Millisecond), Min: 1, Max: 600000,
		RuntimeLimit: runtime.LimitTime,
		RunFlag:      "timeout", RunHelp: "wall-clock limit of the whole run",
		MaxFlag: "max-timeout", MaxHelp: "the longest timeout an execute_code request may ask for (overrides codeMode.maxLimits)",
		get: func(l runtime.Limits) int64 { return int64(l.Timeout) }, set: func(l *runtime.Limits, v int64) { l.Timeout = time.Duration(v) }},
	{Key: "memoryMB", ConfigKey: "memoryMB", Kind: LimitSize, Unit: 1 << 20, Min: 16, Max: 8192, Shown: "%d MiB",
		RuntimeLimit: runtime.LimitMemory,
		RunFlag:      "memory", RunHelp: "memory limit of the worker's heap (e.g. 128MiB, 1GiB)",
		MaxFlag: "max-memory-mb", MaxHelp: "the most memory (MiB) an execute_code request may ask for",
		get: func(l runtime.Limits) int64 { return l.MemoryBytes }, set: func(l *runtime.Limits, v int64) { l.MemoryBytes = v }},
	{Key: "toolCalls", ConfigKey: "toolCalls", Kind: LimitCount, Unit: 1, Min: 1, Max: 100000, Shown: "%d tool calls",
		RuntimeLimit: runtime.LimitToolCalls,
		RunFlag:      "tool-calls", RunHelp: "most tool calls one run may make",
		MaxFlag: "max-tool-calls", MaxHelp: "the most tool calls an execute_code request may ask for",
		get: func(l runtime.Limits) int64 { return int64(l.ToolCalls) }, set: func(l *runtime.Limits, v int64) { l.ToolCalls = int(v) }},
	{Key: "outputKB", ConfigKey: "outputKB", Kind: LimitSize, Unit: 1 << 10, Min: 1, Max: 65536, Shown: "%d KiB of console output",
		RunFlag: "output-limit", RunHelp: "console output kept; the rest is dropped with a note",
		MaxFlag: "max-output-kb", MaxHelp: "the most console output (KiB) an execute_code request may ask for",
		get: func(l runtime.Limits) int64 { return int64(l.OutputBytes) }, set: func(l *runtime.Limits, v int64) { l.OutputBytes = int(v) }},
	{Key: "resultKB", ConfigKey: "resultKB", Kind: LimitSize, Unit: 1 << 10, Min: 1, Max: 65536, Shown: "%d KiB of result",
		RuntimeLimit: runtime.LimitResultSize,
		RunFlag:      "result-limit", RunHelp: "largest JSON result",
		MaxFlag: "max-result-kb", MaxHelp: "the largest result (KiB) an execute_code request may ask for",
		get: func(l runtime.Limits) int64 { return int64(l.ResultBytes) }, set: func(l *runtime.Limits, v int64) { l.ResultBytes = int(v) }},
}

// Get is the limit's value in l, in runtime.Limits' unit (nanoseconds,
// bytes, a count).
func (r RequestLimit) Get(l runtime.Limits) int64 { return r.get(l) }

// Set sets the limit in l, in runtime.Limits' unit.
func (r RequestLimit) Set(l *runtime.Limits, v int64) { r.set(l, v) }

// InUnit is the limit's value in l in Key's unit (milliseconds, MiB, KiB,
// a count), rounded down.
func (r RequestLimit) InUnit(l runtime.Limits) int64 { return r.Get(l) / r.Unit }

// show writes a value of the limit as the description does.
func (r RequestLimit) show(l runtime.Limits) string {
	if r.Kind == LimitDuration {
		return time.Duration(r.Get(l)).String()
	}
	return fmt.Sprintf(r.Shown, r.InUnit(l))
}

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
	for _, r := range RequestLimits {
		if max := r.Get(ceil); r.Get(applied) > max {
			r.Set(&applied, max)
			clamped = append(clamped, r.Key)
		}
	}
	// The operator's limits, which no request sets, held to the ceiling
	// all the same (a Go caller's Options may put a default over it).
	for _, o := range []struct {
		name string
		v    *int
		max  int
	}{{"stackDepth", &applied.StackDepth, ceil.StackDepth}, {"codeKB", &applied.CodeBytes, ceil.CodeBytes}} {
		if *o.v > o.max {
			*o.v = o.max
			clamped = append(clamped, o.name)
		}
	}
	return applied, clamped
}

// AppliedLimits is what a run was given, in the units of execute_code's
// "limits" argument: one field per RequestLimits row, in its order, named
// by its Key (TestAppliedLimitsAreTheTable).
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
	a := AppliedLimits{Clamped: clamped}
	// The fields are the table's rows in order (the test holds them to it).
	v := reflect.ValueOf(&a).Elem()
	for i, r := range RequestLimits {
		v.Field(i).SetInt(r.InUnit(l))
	}
	return a
}

// limitsText describes the defaults and the ceiling for execute_code's
// description.
func limitsText(def, max runtime.Limits) string {
	f := func(l runtime.Limits) string {
		shown := make([]string, len(RequestLimits))
		for i, r := range RequestLimits {
			shown[i] = r.show(l)
		}
		last := len(shown) - 1
		return strings.Join(shown[:last], ", ") + " and " + shown[last]
	}
	if def == max {
		return "Limits: " + f(def) + " (a request may ask for less, not more)."
	}
	return "Default limits: " + f(def) + ". At most: " + f(max) + " (a request over that gets the maximum; the result says so)."
}

// limitsSchema is the "limits" property of execute_code's input schema.
func limitsSchema() string {
	props := make([]string, len(RequestLimits))
	for i, r := range RequestLimits {
		props[i] = fmt.Sprintf(`        %q: {"type": "integer", "minimum": %d, "maximum": %d}`, r.Key, r.Min, r.Max)
	}
	return `"limits": {
      "type": "object",
      "description": "Optional: tighter or looser limits for this run.",
      "properties": {
` + strings.Join(props, ",\n") + `
      },
      "additionalProperties": false
    }`
}

// limitsArgType is the Go type execute_code's "limits" argument decodes
// into: a struct with an int field per RequestLimits row, tagged with its
// Key. It is built from the table, so the decoding cannot miss a limit,
// and it is the struct the argument was always decoded into (field names
// and all), so a bad argument gets the same error as before.
var limitsArgType = func() reflect.Type {
	fields := make([]reflect.StructField, len(RequestLimits))
	for i, r := range RequestLimits {
		fields[i] = reflect.StructField{Name: strings.ToUpper(r.Key[:1]) + r.Key[1:], Type: reflect.TypeFor[int](), Tag: reflect.StructTag(`json:"` + r.Key + `"`)}
	}
	return reflect.StructOf(fields)
}()

// requestLimits reads a decoded limitsArgType value into runtime.Limits.
func requestLimits(v reflect.Value) runtime.Limits {
	var l runtime.Limits
	for i, r := range RequestLimits {
		r.Set(&l, v.Field(i).Int()*r.Unit)
	}
	return l
}

// explainLimit rewrites the advice of a run's limit error for an agent
// over MCP, who can change a limit only with execute_code's "limits", and
// only up to the operator's ceiling. The runtime ends the advice with
// "or raise the limit" (runtime.RaiseLimitAdvice), which is wrong at the
// ceiling: there it says so and gives the real maximum (and, when the
// request asked for more and was cut to it, that it was), and below it it
// names the argument and how far it goes. A limit no request sets (the
// code size) loses the advice.
func (e *Engine) explainLimit(rerr *runtime.Error, asked runtime.Limits) {
	if rerr == nil || rerr.Kind != runtime.KindLimit {
		return
	}
	i := slices.IndexFunc(RequestLimits, func(r RequestLimit) bool { return r.RuntimeLimit == rerr.Limit })
	if i < 0 {
		rerr.Message = strings.Replace(rerr.Message, runtime.RaiseLimitAdvice, "", 1)
		return
	}
	r := RequestLimits[i]
	applied, clamped := e.applyLimits(asked)
	ceil := e.ceiling()
	if r.Get(applied) < r.Get(ceil) {
		raise := fmt.Sprintf(" or raise it with execute_code's limits.%s (at most %d here)", r.Key, r.InUnit(ceil))
		if strings.Contains(rerr.Message, runtime.RaiseLimitAdvice) {
			rerr.Message = strings.Replace(rerr.Message, runtime.RaiseLimitAdvice, raise, 1)
		} else {
			rerr.Message += ";" + raise
		}
		return
	}
	rerr.Message = strings.Replace(rerr.Message, runtime.RaiseLimitAdvice, "", 1)
	if slices.Contains(clamped, r.Key) {
		rerr.Message += fmt.Sprintf("; you asked for %s (limits.%s), and the run got %s, the most this server allows, so asking for more will not help", r.show(asked), r.Key, r.show(ceil))
	} else {
		rerr.Message += fmt.Sprintf("; %s is the most this server allows, so a larger limits.%s will not help", r.show(ceil), r.Key)
	}
}
