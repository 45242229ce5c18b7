package codemode

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/sandboxrt/sandbox/examples/mcpserver"
	"github.com/sandboxrt/sandbox/runtime"
)

// TestRequestLimitsAreRuntimeLimits: each row reads and writes its own
// field of runtime.Limits, and no two rows share one or a name.
func TestRequestLimitsAreRuntimeLimits(t *testing.T) {
	taken := make([]map[string]bool, 4) // per column: Key, ConfigKey, RunFlag, MaxFlag
	var all runtime.Limits
	for i, r := range RequestLimits {
		for col, name := range []string{r.Key, r.ConfigKey, r.RunFlag, r.MaxFlag} {
			if taken[col] == nil {
				taken[col] = map[string]bool{}
			}
			if name == "" || taken[col][name] {
				t.Errorf("row %d (%s): name %q is empty or another row's", i, r.Key, name)
			}
			taken[col][name] = true
		}
		if r.Unit <= 0 || r.Min < 1 || r.Max <= r.Min || r.RunHelp == "" || r.MaxHelp == "" {
			t.Errorf("%s: unit %d, bounds [%d, %d], help %q / %q", r.Key, r.Unit, r.Min, r.Max, r.RunHelp, r.MaxHelp)
		}
		if (r.Kind == LimitDuration) != (r.Shown == "") {
			t.Errorf("%s: a duration is shown as Go writes it, the others by Shown (%q)", r.Key, r.Shown)
		}
		var l runtime.Limits
		r.Set(&l, int64(i+1)*r.Unit)
		if r.Get(l) != int64(i+1)*r.Unit || r.InUnit(l) != int64(i+1) {
			t.Errorf("%s: set %d units, got %d (%d units)", r.Key, i+1, r.Get(l), r.InUnit(l))
		}
		if r.Get(runtime.DefaultLimits) <= 0 {
			t.Errorf("%s: the runtime has no default for it", r.Key)
		}
		r.Set(&all, int64(i+1))
	}
	// Every field set once: the rows' fields are distinct.
	set := 0
	v := reflect.ValueOf(all)
	for i := 0; i < v.NumField(); i++ {
		if !v.Field(i).IsZero() {
			set++
		}
	}
	if set != len(RequestLimits) {
		t.Errorf("the %d rows set %d fields of runtime.Limits: two rows share a field", len(RequestLimits), set)
	}
}

// TestAppliedLimitsAreTheTable: the report's limits are the table's keys,
// in its order, with the values in each key's unit.
func TestAppliedLimitsAreTheTable(t *testing.T) {
	typ := reflect.TypeFor[AppliedLimits]()
	if typ.NumField() != len(RequestLimits)+1 {
		t.Fatalf("AppliedLimits has %d fields for %d limits and Clamped", typ.NumField(), len(RequestLimits))
	}
	for i, r := range RequestLimits {
		if tag := typ.Field(i).Tag.Get("json"); tag != r.Key {
			t.Errorf("AppliedLimits field %d (%s) is %q in JSON; the table's row %d is %q", i, typ.Field(i).Name, tag, i, r.Key)
		}
	}
	l := runtime.Limits{Timeout: 1500 * time.Millisecond, MemoryBytes: 64 << 20, ToolCalls: 7, OutputBytes: 3 << 10, ResultBytes: 5 << 10}
	b, _ := json.Marshal(appliedLimits(l, []string{"toolCalls"}))
	if want := `{"timeoutMs":1500,"memoryMB":64,"toolCalls":7,"outputKB":3,"resultKB":5,"clamped":["toolCalls"]}`; string(b) != want {
		t.Errorf("applied limits = %s, want %s", b, want)
	}
}

// TestExecuteSchemaLimitsAreTheTable: execute_code's schema offers each
// limit under its key with the table's bounds, and nothing else.
func TestExecuteSchemaLimitsAreTheTable(t *testing.T) {
	var schema struct {
		Properties struct {
			Limits struct {
				Properties           map[string]struct{ Minimum, Maximum int64 }
				AdditionalProperties bool
			}
		}
	}
	if err := json.Unmarshal(executeSchema, &schema); err != nil {
		t.Fatalf("execute_code's schema is not JSON: %v", err)
	}
	props := schema.Properties.Limits.Properties
	if len(props) != len(RequestLimits) || schema.Properties.Limits.AdditionalProperties {
		t.Errorf("limits has %d properties (additional: %v), the table %d rows", len(props), schema.Properties.Limits.AdditionalProperties, len(RequestLimits))
	}
	for _, r := range RequestLimits {
		if p, ok := props[r.Key]; !ok || p.Minimum != r.Min || p.Maximum != r.Max {
			t.Errorf("%s: schema %+v (present: %v), table [%d, %d]", r.Key, p, ok, r.Min, r.Max)
		}
	}
}

// TestExecuteArgsDecodeEveryLimit: each key of "limits" reaches its field
// of runtime.Limits in the runtime's unit, and a bad limits argument is
// refused as the struct it always was refuses it.
func TestExecuteArgsDecodeEveryLimit(t *testing.T) {
	for i, r := range RequestLimits {
		raw, _ := json.Marshal(map[string]any{"code": "return 1", "tools": []string{"a:b"}, "limits": map[string]int{r.Key: i + 16}})
		in, err := decodeExecuteArgs(raw)
		if err != nil {
			t.Fatalf("%s: %v", r.Key, err)
		}
		if got := r.Get(in.Limits); got != int64(i+16)*r.Unit || in.Code != "return 1" || len(in.Tools) != 1 {
			t.Errorf("%s: %d units decoded as %d (args %+v)", r.Key, i+16, got, in)
		}
		var others runtime.Limits = in.Limits
		r.Set(&others, 0)
		if others != (runtime.Limits{}) {
			t.Errorf("%s set other limits too: %+v", r.Key, others)
		}
	}
	for raw, want := range map[string]string{
		`{"code": "x", "limits": {"cpu": 1}}`:         `json: unknown field "cpu"`,
		`{"code": "x", "limits": {"timeoutMs": "1"}}`: `json: cannot unmarshal string into Go struct field .limits.timeoutMs of type int`,
		`{"code": "x", "limits": {"memoryMB": 1.5}}`:  `json: cannot unmarshal number 1.5 into Go struct field .limits.memoryMB of type int`,
	} {
		if _, err := decodeExecuteArgs(json.RawMessage(raw)); err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %s", raw, err, want)
		}
	}
}

// TestLimitsText: the description's sentence of limits names every limit
// of the table, in its order.
func TestLimitsText(t *testing.T) {
	def := runtime.DefaultLimits
	if got, want := limitsText(def, def), "Limits: 30s, 256 MiB, 1000 tool calls, 1024 KiB of console output and 1024 KiB of result (a request may ask for less, not more)."; got != want {
		t.Errorf("limitsText = %q\nwant          %q", got, want)
	}
	max := def
	max.Timeout = 2 * time.Minute
	if got := limitsText(def, max); !strings.Contains(got, "At most: 2m0s, 256 MiB,") || !strings.HasPrefix(got, "Default limits: 30s,") {
		t.Errorf("limitsText with a ceiling = %q", got)
	}
}

// TestLimitErrorsSayWhatCanBeRaised: over MCP, a run stopped by a limit
// says what the agent can do about it: a limit the ceiling cut says so and
// gives the real maximum (not "raise the limit"), a limit at the ceiling
// says it cannot go higher, and one below it names the argument and how far
// it goes.
func TestLimitErrorsSayWhatCanBeRaised(t *testing.T) {
	t.Parallel()
	e := newEngine(t, map[string]*server.MCPServer{"demo": mcpserver.New()}, runtime.InProcess)
	e.opts.Limits = runtime.Limits{Timeout: 100 * time.Millisecond}
	e.opts.MaxLimits = runtime.Limits{Timeout: 300 * time.Millisecond, ResultBytes: 4 << 10}
	e.opts.Limits.ResultBytes = 1 << 10
	c := mcpClient(t, e)
	message := func(args map[string]any) string {
		t.Helper()
		res, text := callTool(t, c, ExecuteToolName, args)
		var rep report
		if err := json.Unmarshal([]byte(text), &rep); err != nil || !res.IsError || rep.Error == nil || rep.Error.Kind != runtime.KindLimit {
			t.Fatalf("%v: %.400s", err, text)
		}
		return rep.Error.Message
	}
	for _, c := range []struct {
		name   string
		args   map[string]any
		want   []string
		unwant []string
	}{
		{"asked over the ceiling", map[string]any{"code": "while (true) {}", "limits": map[string]any{"timeoutMs": 180000}},
			[]string{"300ms time limit", "you asked for 3m0s (limits.timeoutMs), and the run got 300ms, the most this server allows, so asking for more will not help"},
			[]string{"raise"}},
		{"at the ceiling", map[string]any{"code": "while (true) {}", "limits": map[string]any{"timeoutMs": 300}},
			[]string{"300ms is the most this server allows, so a larger limits.timeoutMs will not help"},
			[]string{"raise", "you asked"}},
		{"below the ceiling", map[string]any{"code": "while (true) {}"},
			[]string{"100ms time limit", "no busy loops) or raise it with execute_code's limits.timeoutMs (at most 300 here)"},
			[]string{"raise the limit", "most this server allows"}},
		{"a result below the ceiling", map[string]any{"code": `return "x".repeat(2000)`},
			[]string{"1KiB result limit", "or summarize) or raise it with execute_code's limits.resultKB (at most 4 here)"},
			[]string{"raise the limit"}},
	} {
		msg := message(c.args)
		for _, w := range c.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: %q lacks %q", c.name, msg, w)
			}
		}
		for _, w := range c.unwant {
			if strings.Contains(msg, w) {
				t.Errorf("%s: %q says %q", c.name, msg, w)
			}
		}
	}
}

// TestExplainLimitCoversEveryLimitError: each limit a request sets, and
// one no request sets, gets advice that fits it.
func TestExplainLimitCoversEveryLimitError(t *testing.T) {
	e := &Engine{opts: Options{MaxLimits: runtime.Limits{Timeout: time.Minute, MemoryBytes: 512 << 20, ToolCalls: 2000, ResultBytes: 2 << 20}}}
	for _, r := range RequestLimits {
		if r.RuntimeLimit == "" {
			continue
		}
		rerr := &runtime.Error{Kind: runtime.KindLimit, Limit: r.RuntimeLimit, Message: "stopped; do less" + runtime.RaiseLimitAdvice}
		e.explainLimit(rerr, runtime.Limits{})
		if want := "stopped; do less or raise it with execute_code's limits." + r.Key + " (at most "; !strings.HasPrefix(rerr.Message, want) {
			t.Errorf("%s: %q, want it to start %q", r.Key, rerr.Message, want)
		}
	}
	rerr := &runtime.Error{Kind: runtime.KindLimit, Limit: runtime.LimitCodeSize, Message: "too big; split it" + runtime.RaiseLimitAdvice}
	if e.explainLimit(rerr, runtime.Limits{}); rerr.Message != "too big; split it" {
		t.Errorf("code size: %q", rerr.Message)
	}
}
