package runtime

import (
	"strings"
	"testing"
	"time"
)

// TestReplayHoldsLateAnswersUntilThePause: a call in flight when the run
// paused is answered after the VM stopped hearing answers; a replay must
// not hand that answer to the VM before the snippet reaches the pause, or
// a race the first run's timer won (Promise.race against a slow call) is
// won by the answer, and the replay takes another path.
func TestReplayHoldsLateAnswersUntilThePause(t *testing.T) {
	const code = `
const slow = demo.echo({slow: true})
const winner = await Promise.race([slow, new Promise(r => setTimeout(() => r("timer"), 5))])
const ok = await demo.ask({winner})
const late = await slow
return {winner, approved: ok.approved, late: late.echo.slow}`
	bothModes(t, func(t *testing.T, rt *Runtime) {
		host := newPausingHost()
		first := run(t, rt, Request{Code: code, Tools: pausingTools, Host: host, Journal: &Journal{}})
		if first.OK || first.Error.Kind != KindSuspended {
			t.Fatalf("the first run should end suspended: %+v", first.Error)
		}
		j := <-host.journal
		if len(j.Calls) != 2 || !j.Calls[0].Answered || j.Calls[1].Answered {
			t.Fatalf("journal calls = %+v", j.Calls)
		}
		host.mu.Lock()
		host.answering = true
		host.mu.Unlock()
		if j.Late == 0 {
			t.Skip("the 50 ms call beat a 5 ms timer under this load: no race to replay")
		}
		if j.Late != 1 {
			t.Fatalf("journal late = %d, want 1 (the slow call's)", j.Late)
		}
		res := run(t, rt, Request{Code: code, Tools: pausingTools, Host: host, Journal: j})
		mustOK(t, res)
		if !strings.Contains(string(res.Value), `"winner":"timer"`) || !strings.Contains(string(res.Value), `"late":true`) ||
			host.count("demo:echo") != 1 || host.count("demo:ask") != 2 {
			t.Fatalf("replay = %s, reached %v", res.Value, host.reached)
		}
	})
}

// TestReplayHoldingALateAnswerForACallNeverMade: a replay that waits for a
// late answer without making the journal's remaining calls (a saved
// script changed since the pause: it now awaits the slow call first) ends
// at its time limit saying which call it never made.
func TestReplayHoldingALateAnswerForACallNeverMade(t *testing.T) {
	bothModes(t, func(t *testing.T, rt *Runtime) {
		host := newPausingHost()
		first := run(t, rt, Request{Code: `const [s, ok] = await Promise.all([demo.echo({slow: true}), demo.ask({})]); return ok`, Tools: pausingTools, Host: host, Journal: &Journal{}})
		if first.OK {
			t.Fatal("the run should have been suspended")
		}
		j := <-host.journal
		res := run(t, rt, Request{Code: `const s = await demo.echo({slow: true}); return await demo.ask({})`, Tools: pausingTools, Host: host, Journal: j,
			Limits: Limits{Timeout: 300 * time.Millisecond}})
		if res.OK || res.Error.Kind != KindReplay || !strings.Contains(res.Error.Message, "never made its tool call 2 (demo:ask)") {
			t.Fatalf("a replay holding a late answer: %+v", res.Error)
		}
		if host.count("demo:echo") != 1 || host.count("demo:ask") != 1 {
			t.Fatalf("the replay reached the host: %v", host.reached)
		}
	})
}
