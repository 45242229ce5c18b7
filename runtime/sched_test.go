package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/sandboxrt/sandbox/auth"
)

// The scheduler's decisions, on fake runs: enter and release are
// synchronous, so every test here is exact, with no goroutines and no timing.

func sess(principal, session string) callerKey {
	return callerKey{principal: principal, session: auth.SessionID(session)}
}

// enterOK enters a run that must not be refused.
func enterOK(t *testing.T, s *scheduler, k callerKey) *ticket {
	t.Helper()
	tk, err := s.enter(k, false)
	if err != nil {
		t.Fatalf("enter %v: %v", k, err)
	}
	return tk
}

func running(tk *ticket) bool { return tk.state == ticketRunning }

// only checks that exactly the runs in want hold a slot, among all.
func only(t *testing.T, all []*ticket, want ...*ticket) {
	t.Helper()
	in := map[*ticket]bool{}
	for _, w := range want {
		in[w] = true
	}
	for i, tk := range all {
		if running(tk) != in[tk] {
			t.Fatalf("run %d (%v, arrived %d): running=%v, want %v", i, tk.key, tk.seq, running(tk), in[tk])
		}
	}
}

func TestSchedulerQueuesThenRefuses(t *testing.T) {
	s := newScheduler(2, 3, 0)
	a := sess("a", "1")
	r1, r2 := enterOK(t, s, a), enterOK(t, s, a)
	w1, w2, w3 := enterOK(t, s, a), enterOK(t, s, a), enterOK(t, s, a)
	only(t, []*ticket{r1, r2, w1, w2, w3}, r1, r2)
	_, err := s.enter(a, false)
	var be *BusyError
	if !errors.Is(err, ErrBusy) || !errors.As(err, &be) {
		t.Fatalf("enter past the queue: err = %v, want a *BusyError", err)
	}
	if be.Running != 2 || be.Waiting != 3 || be.RetryAfter <= 0 || be.Displaced {
		t.Fatalf("busy = %+v, want 2 running, 3 waiting, a retry hint", be)
	}
	if s.queued() != 3 {
		t.Fatalf("a refused run must not wait: %d waiting", s.queued())
	}
	// Arrival order within one caller; the refused run left no trace.
	s.release(r1)
	only(t, []*ticket{r1, r2, w1, w2, w3}, r2, w1)
	s.release(w1)
	s.release(r2)
	only(t, []*ticket{w2, w3}, w2, w3)
	s.release(w2)
	s.release(w3)
	if s.running != 0 || len(s.bySession) != 0 || len(s.byPrinc) != 0 {
		t.Fatalf("after every release: running %d, %v, %v", s.running, s.bySession, s.byPrinc)
	}
}

func TestSchedulerQueueBounds(t *testing.T) {
	if s := newScheduler(3, 0, 0); s.maxQueue != 192 || s.maxWait != DefaultMaxExpectedWait {
		t.Errorf("default queue = %d, wait %v; want 64×3 and %v", s.maxQueue, s.maxWait, DefaultMaxExpectedWait)
	}
	s := newScheduler(1, -1, 0) // no waiting at all
	r := enterOK(t, s, sess("a", "1"))
	if _, err := s.enter(sess("b", "1"), false); !errors.Is(err, ErrBusy) {
		t.Fatalf("MaxQueue < 0 with the worker taken: err = %v, want ErrBusy", err)
	}
	s.release(r)
	enterOK(t, s, sess("b", "1"))
}

// TestSchedulerFewestHeldFirst: a freed slot goes to the waiting run whose
// principal holds the fewest slots, then whose session does, then the
// earliest, whatever the order of arrival.
func TestSchedulerFewestHeldFirst(t *testing.T) {
	s := newScheduler(4, 100, 0)
	// a holds 3 slots (2 in session 1, 1 in session 2), b holds 1.
	a1, a1b, a2, b1 := enterOK(t, s, sess("a", "1")), enterOK(t, s, sess("a", "1")), enterOK(t, s, sess("a", "2")), enterOK(t, s, sess("b", "1"))
	wa1 := enterOK(t, s, sess("a", "1")) // first to arrive
	wa2 := enterOK(t, s, sess("a", "2"))
	wb2 := enterOK(t, s, sess("b", "2"))
	wc := enterOK(t, s, sess("c", "")) // no session: its principal alone
	wb1 := enterOK(t, s, sess("b", "1"))
	all := []*ticket{a1, a1b, a2, b1, wa1, wa2, wb2, wc, wb1}

	s.release(b1) // a 3, b 0, c 0; b/2, c and b/1 hold none: the earliest, b/2
	only(t, all, a1, a1b, a2, wb2)
	s.release(a1) // a 2, b 1, c 0: c
	only(t, all, a1b, a2, wb2, wc)
	s.release(wc) // a 2, b 1 (nobody of c waits): b/1
	only(t, all, a1b, a2, wb2, wb1)
	s.release(a2) // only a waits; a/1 holds 1, a/2 none: a/2, though it came later
	only(t, all, a1b, wb2, wb1, wa2)
	s.release(wb1)
	only(t, all, a1b, wb2, wa2, wa1)
}

// TestSchedulerPerCallerCap: a session below its cap goes first, even
// before a session whose principal holds fewer slots in all; when only
// capped sessions wait, they still get the slot (no idle worker).
func TestSchedulerPerCallerCap(t *testing.T) {
	s := newScheduler(5, 100, 2)
	p1 := enterOK(t, s, sess("p", "1"))
	p1b := enterOK(t, s, sess("p", "1")) // p/1 at its cap of 2
	q1, q2, q3 := enterOK(t, s, sess("q", "1")), enterOK(t, s, sess("q", "2")), enterOK(t, s, sess("q", "3"))
	wp := enterOK(t, s, sess("p", "1"))
	wq := enterOK(t, s, sess("q", "1"))
	all := []*ticket{p1, p1b, q1, q2, q3, wp, wq}

	// Without the cap p (2 held) would go before q (3 held); p/1 is capped.
	s.release(q2)
	only(t, all, p1, p1b, q1, q3, wq)
	// Now q/1 is at its cap too; only capped sessions wait: p/1 gets it.
	wq2 := enterOK(t, s, sess("q", "1"))
	all = append(all, wq2)
	s.release(q3)
	only(t, all, p1, p1b, q1, wq, wp)
	if s.bySession[sess("p", "1")] != 3 {
		t.Fatalf("p/1 holds %d, want 3 (over its cap, as nobody else could use the slot)", s.bySession[sess("p", "1")])
	}
}

// TestSchedulerFullQueueDisplacesTheBusiest: a flooding session fills the
// queue; a newcomer of a caller with fewer runs in the runtime takes the
// place of the flooder's latest waiting run, which is refused. Equals do not
// displace each other.
func TestSchedulerFullQueueDisplacesTheBusiest(t *testing.T) {
	s := newScheduler(2, 3, 0)
	a := sess("a", "1")
	enterOK(t, s, a)
	enterOK(t, s, a)
	wa1, wa2, wa3 := enterOK(t, s, a), enterOK(t, s, a), enterOK(t, s, a)

	if _, err := s.enter(a, false); !errors.Is(err, ErrBusy) {
		t.Fatalf("the flooder's own next run: err = %v, want ErrBusy", err)
	}
	b := enterOK(t, s, sess("b", "1"))
	select {
	case <-wa3.ready:
	default:
		t.Fatal("the flooder's latest waiting run was not told")
	}
	var be *BusyError
	if !errors.As(wa3.err, &be) || !be.Displaced || wa3.state != ticketDone {
		t.Fatalf("displaced run: state %v, err %v, want a displaced *BusyError", wa3.state, wa3.err)
	}
	if s.queued() != 3 || wa1.state != ticketWaiting || wa2.state != ticketWaiting || b.state != ticketWaiting {
		t.Fatal("the queue must hold a's two earliest and b's run")
	}
	s.release(wa3) // a refused run's ticket is done: nothing happens
	if s.queued() != 3 || s.running != 2 {
		t.Fatalf("releasing a displaced ticket changed the counts: %d waiting, %d running", s.queued(), s.running)
	}

	// Another session of a: its principal is the victim's, and its session
	// has fewer runs: it displaces a/1's latest.
	a2 := enterOK(t, s, sess("a", "2"))
	if wa2.err == nil || a2.state != ticketWaiting {
		t.Fatalf("a/2 should displace a/1's latest (err %v)", wa2.err)
	}
	// a has 4 runs in the runtime (2 running, a/1 and a/2 waiting), c none:
	// c displaces the run of a's busiest session, a/1.
	c := enterOK(t, s, sess("c", ""))
	if wa1.err == nil || a2.err != nil {
		t.Fatalf("c should displace a/1's waiting run (a/1: %v, a/2: %v)", wa1.err, a2.err)
	}
	// a has 3 runs, b and c one each, d none: d displaces a's last waiting run.
	d := enterOK(t, s, sess("d", "1"))
	if a2.err == nil {
		t.Fatal("d should have displaced a's last waiting run")
	}
	// Now b, c, d wait, one run each: e is their equal and is refused.
	if _, err := s.enter(sess("e", "1"), false); !errors.Is(err, ErrBusy) {
		t.Fatalf("an equal newcomer: err = %v, want ErrBusy", err)
	}
	for _, w := range []*ticket{b, c, d} {
		if w.state != ticketWaiting {
			t.Fatalf("%v no longer waits", w.key)
		}
	}
}

func TestSchedulerCancelWhileWaiting(t *testing.T) {
	s := newScheduler(1, 4, 0)
	r := enterOK(t, s, sess("a", "1"))
	w1, w2 := enterOK(t, s, sess("b", "1")), enterOK(t, s, sess("c", "1"))
	s.release(w1) // cancelled before it got a slot
	s.release(w1) // twice: nothing
	if s.queued() != 1 || s.running != 1 {
		t.Fatalf("after cancelling a waiting run: %d waiting, %d running", s.queued(), s.running)
	}
	s.release(r)
	only(t, []*ticket{r, w1, w2}, w2)
	s.release(r) // a slot given back twice is given back once
	if s.running != 1 {
		t.Fatalf("running = %d after a double release, want 1", s.running)
	}
}

func TestSchedulerAcquire(t *testing.T) {
	s := newScheduler(1, 4, 0)
	closed := make(chan struct{})
	tk, err := s.acquire(context.Background(), sess("a", "1"), false, closed)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.acquire(ctx, sess("b", "1"), false, closed); !errors.Is(err, context.Canceled) {
		t.Fatalf("acquire with an ended context: err = %v", err)
	}
	if s.queued() != 0 {
		t.Fatal("a run whose context ended still waits")
	}
	got := make(chan error, 1)
	go func() {
		tk2, err := s.acquire(context.Background(), sess("b", "1"), false, closed)
		if err == nil {
			s.release(tk2)
		}
		got <- err
	}()
	waitFor(t, func() bool { return s.queued() == 1 })
	s.release(tk)
	if err := <-got; err != nil {
		t.Fatalf("the waiting run: %v", err)
	}
	close(closed)
	if _, err := s.acquire(context.Background(), sess("a", "1"), false, closed); !errors.Is(err, ErrClosed) {
		t.Fatalf("acquire after close: err = %v", err)
	}
}

func TestSchedulerRetryEstimate(t *testing.T) {
	s := newScheduler(2, 2, 0)
	s.maxWait = -1 // the queue's length alone refuses here
	now := time.Unix(0, 0)
	s.now = func() time.Time { return now }
	k := sess("a", "1")
	r1 := enterOK(t, s, k)
	now = now.Add(4 * time.Second)
	s.release(r1) // a's runs hold their slot for 4 s
	enterOK(t, s, k)
	enterOK(t, s, k)
	enterOK(t, s, k)
	enterOK(t, s, k)
	_, err := s.enter(k, false)
	var be *BusyError
	if !errors.As(err, &be) {
		t.Fatalf("err = %v", err)
	}
	// Two runs of 4 s running, two waiting ahead: 16 s of work on 2 slots.
	if be.RetryAfter != 8*time.Second || be.ExpectedWait != 0 {
		t.Fatalf("retry after %v (expected wait %v), want 8s and none", be.RetryAfter, be.ExpectedWait)
	}
	if msg := be.Error(); msg != "runtime: busy: every worker is running a snippet and 2 more runs are waiting (as many as may wait); 4 runs ahead; retry in about 8s" {
		t.Fatalf("message: %s", msg)
	}
}

// clocked is a scheduler of slots workers on a clock the test moves.
func clocked(slots int) (*scheduler, *time.Time) {
	s := newScheduler(slots, 0, 0)
	now := time.Unix(1000, 0)
	s.now = func() time.Time { return now }
	return s, &now
}

// ran records runs of k that held their slot for each of took, one after
// the other (the scheduler must have a free slot).
func ran(t *testing.T, s *scheduler, now *time.Time, k callerKey, took ...time.Duration) {
	t.Helper()
	for _, d := range took {
		tk := enterOK(t, s, k)
		if !running(tk) {
			t.Fatalf("ran %v: no free slot", k)
		}
		*now = now.Add(d)
		s.release(tk)
	}
}

// TestSchedulerAdmitsByExpectedWait: 16 runs of 1 ms on 2 workers all wait
// (a queue bounded by count refused half of them); runs of 2 s are admitted
// while the work ahead, divided among the workers, stays within the bound,
// and the refusal's hint is the time until it would.
func TestSchedulerAdmitsByExpectedWait(t *testing.T) {
	s, now := clocked(2)
	quick, slow := sess("quick", "1"), sess("slow", "1")
	ran(t, s, now, quick, time.Millisecond)
	var all []*ticket
	for range 16 {
		all = append(all, enterOK(t, s, quick))
	}
	if s.queued() != 14 {
		t.Fatalf("%d waiting, want 14", s.queued())
	}
	for _, tk := range all {
		s.release(tk)
	}

	ran(t, s, now, slow, 2*time.Second)
	r1, r2 := enterOK(t, s, slow), enterOK(t, s, slow)
	// 4 s running: 2 s ahead, then 3 s ahead; both at most the bound.
	w1, w2 := enterOK(t, s, slow), enterOK(t, s, slow)
	_, err := s.enter(slow, false)
	var be *BusyError
	if !errors.As(err, &be) || be.ExpectedWait != 4*time.Second || be.MaxWait != 3*time.Second || be.RetryAfter != time.Second {
		t.Fatalf("the third waiting run of 2 s: %v (%+v), want refused: 4s expected, retry in 1s", err, be)
	}
	want := "runtime: busy: every worker is running a snippet and 2 more runs are waiting; this run would wait about 4s for a worker, more than the 3s a run may wait; retry in about 1s"
	if be.Error() != want {
		t.Fatalf("message:\n%s\nwant\n%s", be.Error(), want)
	}
	// A running run's elapsed time comes off the work ahead: 1.5 s later
	// the running two have 1 s left between them, and a run fits again.
	*now = now.Add(1500 * time.Millisecond)
	w3 := enterOK(t, s, slow)
	only(t, []*ticket{r1, r2, w1, w2, w3}, r1, r2)

	// Another principal's run goes before slow's waiting ones in the fair
	// order, so only the running runs are ahead of it: admitted, and first.
	other := enterOK(t, s, sess("other", "1"))
	s.release(r1)
	only(t, []*ticket{r2, w1, w2, w3, other}, r2, other)
}

// TestSchedulerExpectsEachPrincipalsOwnDurations: the work ahead is counted
// at each waiting principal's recent durations; before a principal has
// run, at everyone's; before anything ran, at unmeasuredHold.
func TestSchedulerExpectsEachPrincipalsOwnDurations(t *testing.T) {
	s, now := clocked(1)
	if got := s.expect("a"); got != unmeasuredHold {
		t.Fatalf("nothing measured: %v, want %v", got, unmeasuredHold)
	}
	ran(t, s, now, sess("a", "1"), 100*time.Millisecond)
	ran(t, s, now, sess("b", "1"), 900*time.Millisecond)
	if a, b, c := s.expect("a"), s.expect("b"), s.expect("c"); a != 100*time.Millisecond || b != 900*time.Millisecond || c != 200*time.Millisecond {
		t.Fatalf("expected a %v, b %v, new c %v; want 100ms, 900ms and the average 200ms", a, b, c)
	}
	// The latest runs count most: a's next run of 500 ms moves its
	// expectation a quarter of the way.
	ran(t, s, now, sess("a", "1"), 500*time.Millisecond)
	if a := s.expect("a"); a != 200*time.Millisecond {
		t.Fatalf("a after 100 ms and 500 ms: %v, want 200ms", a)
	}
	r := enterOK(t, s, sess("b", "1"))
	enterOK(t, s, sess("b", "1"))
	enterOK(t, s, sess("a", "1"))
	// For a third b: b's running run (900 ms), then b's waiting one (900
	// ms) and a's (200 ms), since a holds fewer workers.
	if w := s.expectedWait(&ticket{key: sess("b", "1"), seq: s.seq + 1}); w != 2*time.Second {
		t.Fatalf("expected wait %v, want 2s", w)
	}
	// For a second a: b's running run and a's waiting one (a comes before
	// b, and its own earlier run before it), not b's waiting one.
	if w := s.expectedWait(&ticket{key: sess("a", "1"), seq: s.seq + 1}); w != 1100*time.Millisecond {
		t.Fatalf("expected wait %v, want 1.1s", w)
	}
	s.release(r)
	// A principal's expectation goes when its usage has decayed away.
	*now = now.Add(5 * time.Minute)
	s.decayUsage()
	if len(s.holdP) != 0 {
		t.Fatalf("after 5 quiet minutes: %v", s.holdP)
	}
}

// TestSchedulerZeroWaitAdmitsNoWaiting: a bound of 0 admits a run only when
// nothing is ahead of it.
func TestSchedulerZeroWaitAdmitsNoWaiting(t *testing.T) {
	s, _ := clocked(1)
	s.maxWait = 0
	enterOK(t, s, sess("a", "1"))
	if _, err := s.enter(sess("b", "1"), false); !errors.Is(err, ErrBusy) {
		t.Fatalf("a run behind a running one with a bound of 0: %v", err)
	}
}

// waitFor polls cond until it holds, failing the test after a generous
// deadline (the machine may be loaded).
func waitFor(t testing.TB, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in 30s")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestFloodingSessionDoesNotStarveAnother runs real snippets: session a
// takes both workers and queues three more runs; session b's run, arriving
// after them, gets the first worker that frees up. A run past the queue's
// bound is refused at once.
func TestFloodingSessionDoesNotStarveAnother(t *testing.T) {
	t.Parallel()
	rt, err := New(Options{Workers: 2, MaxQueue: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	a := auth.Caller{Principal: auth.Principal{ID: "a"}, Session: "1"}
	b := auth.Caller{Principal: auth.Principal{ID: "b"}, Session: "1"}

	// Each run calls demo.echo({name}); the host reports the run as started
	// and holds it until its release channel is closed.
	names := []string{"a1", "a2", "a3", "a4", "a5", "b1"}
	release := map[string]chan struct{}{}
	for _, n := range names {
		release[n] = make(chan struct{})
	}
	var once sync.Map
	free := func(name string) {
		if _, done := once.LoadOrStore(name, true); !done {
			close(release[name])
		}
	}
	t.Cleanup(func() {
		for _, n := range names {
			free(n)
		}
	})
	started := make(chan string, len(names))
	host := HostFunc(func(ctx context.Context, call ToolCall) (json.RawMessage, error) {
		var args struct{ Name string }
		if err := json.Unmarshal(call.Arguments, &args); err != nil {
			return nil, err
		}
		started <- args.Name
		select {
		case <-release[args.Name]:
			return json.RawMessage(`1`), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	results := make(chan error, len(names))
	start := func(name string, c auth.Caller) {
		go func() {
			res, err := rt.Run(context.Background(), Request{Code: "return await demo.echo({name: '" + name + "'})", Tools: demoTools, Host: host, Caller: c})
			if err == nil && !res.OK {
				err = res.Error
			}
			if err != nil {
				err = fmt.Errorf("%s: %w", name, err)
			}
			results <- err
		}()
	}
	next := func() string {
		t.Helper()
		select {
		case n := <-started:
			return n
		case <-time.After(time.Minute):
			t.Fatal("no run started within a minute")
			return ""
		}
	}

	start("a1", a)
	start("a2", a)
	got := map[string]bool{next(): true, next(): true}
	if !got["a1"] || !got["a2"] {
		t.Fatalf("started %v, want a1 and a2", got)
	}
	for i, n := range []string{"a3", "a4", "a5"} {
		start(n, a)
		waitFor(t, func() bool { return rt.sched.queued() == i+1 })
	}
	start("b1", b)
	waitFor(t, func() bool { return rt.sched.queued() == 4 })

	_, err = rt.Run(context.Background(), Request{Code: "return 1", Caller: a})
	var be *BusyError
	if !errors.Is(err, ErrBusy) || !errors.As(err, &be) || be.Running != 2 || be.Waiting != 4 {
		t.Fatalf("a run past the queue: err = %v, want ErrBusy with 2 running and 4 waiting", err)
	}

	free("b1") // b1 need not wait once it has started
	free("a1")
	if n := next(); n != "b1" {
		t.Fatalf("after a1 ended, %s started; b1 should have got the worker", n)
	}
	for _, n := range names {
		free(n)
	}
	for range names {
		if err := <-results; err != nil {
			t.Error(err)
		}
	}
}

// TestSchedulerRecentWorkTimeFirst: between callers holding as many slots,
// the one that used less worker time lately gets the freed slot first, even
// when it came later; a full queue gives a light newcomer the place of a
// heavy caller's waiting run; and past usage decays, so arrival order rules
// again once the heavy caller has been quiet.
func TestSchedulerRecentWorkTimeFirst(t *testing.T) {
	clock := time.Unix(1000, 0)
	s := newScheduler(1, 2, 0)
	s.now = func() time.Time { return clock }
	heavy, light, late := sess("p", "heavy"), sess("p", "light"), sess("p", "late")

	// heavy runs to a 2 s time limit twice; light runs for 10 ms.
	for range 2 {
		r := enterOK(t, s, heavy)
		clock = clock.Add(2 * time.Second)
		s.release(r)
	}
	r := enterOK(t, s, light)
	clock = clock.Add(10 * time.Millisecond)
	s.release(r)

	blocker := enterOK(t, s, late)
	wh := enterOK(t, s, heavy) // arrives first
	wl := enterOK(t, s, light)
	// The queue (2) is full, heavy and light wait with one run each: a
	// newcomer with no recent work takes the place of heavy's run.
	newcomer := enterOK(t, s, sess("p", "new"))
	if wh.state != ticketDone || !errors.Is(wh.err, ErrBusy) || wl.state != ticketWaiting {
		t.Fatalf("heavy's waiting run was not displaced: heavy %v %v, light %v", wh.state, wh.err, wl.state)
	}
	s.release(blocker)
	only(t, []*ticket{wl, newcomer}, wl)
	// Between equals in recent work, nobody is displaced.
	n2 := enterOK(t, s, sess("p", "new2"))
	if _, err := s.enter(sess("p", "new3"), false); !errors.Is(err, ErrBusy) {
		t.Fatalf("a third newcomer: %v, want BUSY", err)
	}
	s.release(wl)
	only(t, []*ticket{newcomer, n2}, newcomer)
	s.release(newcomer)
	s.release(n2)

	// Heavy came first but used the most: light, arriving later, goes first.
	blocker = enterOK(t, s, late)
	wh = enterOK(t, s, heavy)
	wl = enterOK(t, s, light)
	s.release(blocker)
	only(t, []*ticket{wh, wl}, wl)
	s.release(wl)
	s.release(wh)

	// Three quiet minutes later heavy's past work has decayed away: arrival
	// order again, and nothing is kept for the callers.
	clock = clock.Add(3 * time.Minute)
	blocker = enterOK(t, s, late)
	wh = enterOK(t, s, heavy)
	wl = enterOK(t, s, light)
	s.release(blocker)
	only(t, []*ticket{wh, wl}, wh)
	if len(s.usage) != 0 {
		t.Fatalf("usage still kept after a quiet minute: %v", s.usage)
	}
}

// TestSchedulerQueuesAResumedRunPastItsBounds: a run resuming one released
// while it waited for a person waits for a worker even when a new run
// would be refused (its journal was taken to run it: a refusal would make
// its earlier calls again), and then runs in its turn.
func TestSchedulerQueuesAResumedRunPastItsBounds(t *testing.T) {
	s := newScheduler(1, 1, 0)
	a := sess("a", "1")
	r1, w1 := enterOK(t, s, a), enterOK(t, s, a)
	if _, err := s.enter(a, false); !errors.Is(err, ErrBusy) {
		t.Fatalf("a new run past the queue: err = %v, want BUSY", err)
	}
	resumed, err := s.enter(a, true)
	if err != nil {
		t.Fatalf("a resumed run past the queue: %v, want a place", err)
	}
	s.release(r1)
	only(t, []*ticket{w1, resumed}, w1)
	s.release(w1)
	only(t, []*ticket{resumed}, resumed)
}
