package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// pausingHost answers demo:echo with its arguments, after a short while
// for the ones that say slow (so they are in flight when the run pauses),
// and suspends the run on demo:ask (a call waiting for a person) until
// answering is set; it counts the calls that reach it, by tool.
type pausingHost struct {
	mu        sync.Mutex
	reached   map[string]int
	answering bool
	journal   chan *Journal
}

func newPausingHost() *pausingHost {
	return &pausingHost{reached: map[string]int{}, journal: make(chan *Journal, 1)}
}

func (h *pausingHost) CallTool(ctx context.Context, c ToolCall) (json.RawMessage, error) {
	h.mu.Lock()
	h.reached[c.Target.Tool]++
	answering := h.answering
	h.mu.Unlock()
	switch c.Target.Tool {
	case "demo:ask":
		if answering {
			return json.RawMessage(`{"approved":true}`), nil
		}
		if !Suspend(ctx, func(j *Journal) { h.journal <- j }) {
			return nil, &ToolError{Code: "NOT_SUSPENDED", Message: "the run could not be suspended"}
		}
		<-ctx.Done() // the run ends; this answer is never delivered
		return nil, ctx.Err()
	}
	if strings.Contains(string(c.Arguments), "slow") {
		time.Sleep(50 * time.Millisecond)
	}
	return json.RawMessage(fmt.Sprintf(`{"echo":%s}`, c.Arguments)), nil
}

func (h *pausingHost) count(tool string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.reached[tool]
}

var pausingTools = []Tool{
	{ID: "demo:echo", Namespace: "demo", Function: "echo"},
	{ID: "demo:ask", Namespace: "demo", Function: "ask"},
}

// The snippet reads the clock and randomness before and after the pause,
// sends them in its calls' arguments (which the replay checks against the
// journal's digests) and returns them: the replay reads the same values up
// to the pause, so it makes the same calls and ends as one run would.
const pausingSnippet = `
const t0 = Date.now(), r0 = Math.random(), u0 = crypto.randomUUID(), p0 = performance.now()
console.log("before", t0, r0)
const a = await demo.echo({step: 1, t0, r0, u0, p0})
const [b, ok] = await Promise.all([demo.echo({step: 2, slow: true, r: Math.random()}), demo.ask({what: "delete", r0})])
console.log("after", ok.approved)
const c = await demo.echo({step: 3, t: Date.now()})
return {t0, r0, u0, a: a.echo.step, b: b.echo.step, c: c.echo.step, approved: ok.approved}`

func TestSuspendAndReplay(t *testing.T) {
	bothModes(t, func(t *testing.T, rt *Runtime) {
		host := newPausingHost()
		first := run(t, rt, Request{Code: pausingSnippet, Tools: pausingTools, Host: host, Journal: &Journal{}})
		if first.OK || first.Error.Kind != KindSuspended || !strings.Contains(first.Error.Message, "suspended") {
			t.Fatalf("the paused run should end suspended: %+v", first.Error)
		}
		var j *Journal
		select {
		case j = <-host.journal:
		default:
			t.Fatal("Run returned before the journal was handed over")
		}
		// The slow call in flight when the run paused was waited for: its
		// answer is in the journal, the paused call's is not.
		if len(j.Calls) != 3 || !j.Calls[0].Answered || !j.Calls[1].Answered || j.Calls[2].Answered || j.Calls[2].Target != "demo:ask" {
			t.Fatalf("journal calls = %+v", j.Calls)
		}
		if len(j.Clock) == 0 || len(j.Seed) != 32 || j.VMLogs != 1 {
			t.Fatalf("journal = clock %v, seed %d bytes, vmLogs %d", j.Clock, len(j.Seed), j.VMLogs)
		}
		if host.count("demo:echo") != 2 || host.count("demo:ask") != 1 {
			t.Fatalf("first run reached %v", host.reached)
		}
		// Through JSON, as a store keeps it.
		raw, _ := json.Marshal(j)
		var stored Journal
		if err := json.Unmarshal(raw, &stored); err != nil {
			t.Fatal(err)
		}

		host.mu.Lock()
		host.answering = true
		host.mu.Unlock()
		var mu sync.Mutex
		var emitted []string
		res := run(t, rt, Request{Code: pausingSnippet, Tools: pausingTools, Host: host, Journal: &stored, OnEvent: func(e Event) {
			if e.Log != nil {
				mu.Lock()
				emitted = append(emitted, e.Log.Message)
				mu.Unlock()
			}
		}})
		mustOK(t, res)
		// Calls 1 and 2 came from the journal; ask ran live, once; 3 is new.
		if host.count("demo:echo") != 3 || host.count("demo:ask") != 2 {
			t.Fatalf("replay reached %v: journalled calls must not reach the host", host.reached)
		}
		var v struct {
			T0       float64 `json:"t0"`
			R0       float64 `json:"r0"`
			U0       string  `json:"u0"`
			A, B, C  int
			Approved bool
		}
		if err := json.Unmarshal(res.Value, &v); err != nil {
			t.Fatal(err)
		}
		// The first run's console line holds its t0 and r0: the replay read the same.
		before := first.Logs[0].Message
		if want := fmt.Sprintf("before %d %v", int64(v.T0), v.R0); before != want {
			t.Fatalf("first run logged %q, the replay read %q", before, want)
		}
		if v.A != 1 || v.B != 2 || v.C != 3 || !v.Approved || v.U0 == "" {
			t.Fatalf("value = %s", res.Value)
		}
		// "before" is not emitted again; the result has each line once.
		if len(emitted) != 1 || !strings.HasPrefix(emitted[0], "after") {
			t.Fatalf("replay emitted %q", emitted)
		}
		if len(res.Logs) != 2 || res.Logs[0].Message != before {
			t.Fatalf("logs = %+v", res.Logs)
		}
		if len(res.Calls) != 4 {
			t.Fatalf("calls = %+v", res.Calls)
		}
	})
}

func TestReplayThatDivergesCallsNothing(t *testing.T) {
	bothModes(t, func(t *testing.T, rt *Runtime) {
		host := newPausingHost()
		first := run(t, rt, Request{Code: pausingSnippet, Tools: pausingTools, Host: host, Journal: &Journal{}})
		if first.OK {
			t.Fatal("the run should have been suspended")
		}
		j := <-host.journal
		before := host.count("demo:echo")

		// Other arguments at call 1.
		other := strings.Replace(pausingSnippet, "step: 1,", "step: 10,", 1)
		res := run(t, rt, Request{Code: other, Tools: pausingTools, Host: host, Journal: j})
		if res.OK || res.Error.Kind != KindReplay || !strings.Contains(res.Error.Message, "tool call 1 made demo:echo with other arguments") ||
			!strings.Contains(res.Error.Message, "nothing was called twice") {
			t.Fatalf("diverged replay = %+v", res.Error)
		}
		// Another tool at call 1.
		res = run(t, rt, Request{Code: `await demo.ask({}); return 1`, Tools: pausingTools, Host: host, Journal: j})
		if res.OK || res.Error.Kind != KindReplay || !strings.Contains(res.Error.Message, "tool call 1 called demo:ask where") {
			t.Fatalf("diverged replay = %+v", res.Error)
		}
		// A snippet that ends before the journal does.
		res = run(t, rt, Request{Code: `return 1`, Tools: pausingTools, Host: host, Journal: j})
		if res.OK || res.Error.Kind != KindReplay || !strings.Contains(res.Error.Message, "without making its tool call 1") {
			t.Fatalf("short replay = %+v", res.Error)
		}
		if host.count("demo:echo") != before || host.count("demo:ask") != 1 {
			t.Fatalf("a diverged replay reached the host: %v", host.reached)
		}
	})
}

func TestReplayedClockAndRandomness(t *testing.T) {
	bothModes(t, func(t *testing.T, rt *Runtime) {
		host := newPausingHost()
		code := `
const v = {d: Date.now(), n: new Date().toISOString(), r: [Math.random(), Math.random()],
  g: Array.from(crypto.getRandomValues(new Uint8Array(8))), u: crypto.randomUUID()}
await demo.ask({})
return v`
		first := run(t, rt, Request{Code: code, Tools: pausingTools, Host: host, Journal: &Journal{}})
		if first.OK {
			t.Fatal("the run should have been suspended")
		}
		j := <-host.journal
		host.mu.Lock()
		host.answering = true
		host.mu.Unlock()
		a := run(t, rt, Request{Code: code, Tools: pausingTools, Host: host, Journal: j})
		time.Sleep(5 * time.Millisecond)
		b := run(t, rt, Request{Code: code, Tools: pausingTools, Host: host, Journal: j})
		mustOK(t, a)
		mustOK(t, b)
		if string(a.Value) != string(b.Value) {
			t.Fatalf("two replays read other values:\n%s\n%s", a.Value, b.Value)
		}
		// A run without a journal draws fresh values.
		c := run(t, rt, Request{Code: code, Tools: pausingTools, Host: host})
		mustOK(t, c)
		if string(c.Value) == string(a.Value) {
			t.Fatalf("a fresh run read the journal's values: %s", c.Value)
		}
	})
}

func TestSuspendNeedsAJournal(t *testing.T) {
	rt := runtimes(t)[InProcess]
	host := newPausingHost()
	res := run(t, rt, Request{Code: `return await demo.ask({})`, Tools: pausingTools, Host: host})
	if res.OK || res.Error.Code != "NOT_SUSPENDED" {
		t.Fatalf("a run without a journal must not be suspended: %+v", res.Error)
	}
}

// TestClockReadingsAreBounded: a snippet reading the clock in a busy loop
// does not grow its journal without end: past the bound its run is no
// longer suspended (it keeps its worker while it waits), and runs on.
func TestClockReadingsAreBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("reads the clock a million times")
	}
	bothModes(t, func(t *testing.T, rt *Runtime) {
		host := newPausingHost()
		res := run(t, rt, Request{Code: `let x = 0; for (let i = 0; i < ` + fmt.Sprint(maxClockReadings+10) + `; i++) x += Date.now() & 1; return await demo.ask({})`,
			Tools: pausingTools, Host: host, Journal: &Journal{}})
		if res.OK || res.Error.Code != "NOT_SUSPENDED" {
			t.Fatalf("a run past the clock's bound: %+v", res.Error)
		}
	})
}

// TestReplayWaitingForACallNeverMade: a journal whose answers came in an
// order the replay cannot reach (the call answered first is never made)
// ends the run with the replay error, not the time limit's.
func TestReplayWaitingForACallNeverMade(t *testing.T) {
	bothModes(t, func(t *testing.T, rt *Runtime) {
		host := newPausingHost()
		code := `const a = demo.echo({n: 1}); const b = demo.echo({n: 2}); await Promise.all([a, b]); return await demo.ask({})`
		first := run(t, rt, Request{Code: code, Tools: pausingTools, Host: host, Journal: &Journal{}})
		if first.OK {
			t.Fatal("the run should have been suspended")
		}
		j := <-host.journal
		// As if call 2's answer had come first: call 1 waits for it.
		j.Calls[0].Order, j.Calls[1].Order = 2, 1
		res := run(t, rt, Request{Code: `const a = await demo.echo({n: 1}); return a`, Tools: pausingTools, Host: host, Journal: j, Limits: Limits{Timeout: 300 * time.Millisecond}})
		if res.OK || res.Error.Kind != KindReplay || !strings.Contains(res.Error.Message, "never made its tool call 2") {
			t.Fatalf("a replay waiting for a call never made: %+v", res.Error)
		}
		if host.count("demo:echo") != 2 {
			t.Fatalf("the replay reached the host: %v", host.reached)
		}
	})
}
