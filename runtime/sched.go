package runtime

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/sandboxrt/sandbox/auth"
)

// ErrBusy is what Run fails with, at once, when every worker is taken and
// the run would wait longer than Options.MaxExpectedWait for one, or
// Options.MaxQueue runs already wait. The error is a *BusyError,
// which says how many runs are ahead and when a retry may get in; test for
// it with errors.Is(err, ErrBusy).
var ErrBusy = errors.New("runtime: busy")

// BusyError is a run refused because the runtime is at capacity.
type BusyError struct {
	// Running is how many runs hold a worker, Waiting how many wait for one.
	Running, Waiting int
	// RetryAfter estimates when a retry may be admitted, from the same
	// estimate as ExpectedWait: the time until the expected wait falls
	// under the bound, or, refused for the queue's length, until the runs
	// ahead have started.
	RetryAfter time.Duration
	// ExpectedWait is how long the run would have waited for a worker,
	// estimated from how long the runs ahead of it (running, and waiting
	// before it in the fair order) usually take for their principal; when
	// it is over MaxWait, that is why the run was refused. Zero when the
	// queue was refused for its length.
	ExpectedWait, MaxWait time.Duration
	// Displaced reports a run that had been waiting and gave its place in
	// the queue to a run of a caller with fewer runs in the runtime.
	Displaced bool
}

func (e *BusyError) Error() string {
	what := "every worker is running a snippet"
	if e.ExpectedWait > 0 {
		if e.Waiting > 0 {
			what = fmt.Sprintf("%s and %d more %s waiting", what, e.Waiting, plural(e.Waiting, "run is", "runs are"))
		}
		return fmt.Sprintf("runtime: busy: %s; this run would wait about %s for a worker, more than the %s a run may wait; retry in about %s",
			what, e.ExpectedWait.Round(10*time.Millisecond), e.MaxWait, e.RetryAfter)
	}
	if e.Waiting > 0 {
		what = fmt.Sprintf("%s and %d more %s waiting (as many as may wait)", what, e.Waiting, plural(e.Waiting, "run is", "runs are"))
	}
	if e.Displaced {
		what = "the queue is full and this run's place went to a caller with fewer runs waiting; " + what
	}
	return fmt.Sprintf("runtime: busy: %s; %d %s ahead; retry in about %s",
		what, e.Running+e.Waiting, plural(e.Running+e.Waiting, "run", "runs"), e.RetryAfter)
}

// Is makes errors.Is(err, ErrBusy) true.
func (e *BusyError) Is(target error) bool { return target == ErrBusy }

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// callerKey is whose share of the workers a run counts against: a session,
// or (for requests that have no session) the principal alone.
type callerKey struct {
	principal string
	session   auth.SessionID
}

func keyOf(c auth.Caller) callerKey {
	return callerKey{principal: c.Principal.Key(), session: c.Session}
}

// scheduler hands out the runtime's workers (slots: one per worker) to runs.
// A run that finds none free waits, if its expected wait for a slot is
// under maxWait and the queue is shorter than maxQueue; otherwise it is
// refused with a *BusyError. The expected wait is the work ahead of the run
// divided among the slots: the rest of each running run and the whole of
// each waiting run that the fair order below puts before it, each at the
// recent duration of its principal's runs. A freed slot goes to the fairest waiting run:
//
//  1. one whose caller holds fewer than perCaller slots (when capped),
//  2. then the one whose principal holds the fewest slots, then whose
//     session holds the fewest,
//  3. then the one whose principal, then session, used the least worker
//     time lately (decayed with a half-life of usageHalfLife), so that
//     callers whose snippets run to their time limit do not take turns as
//     often as those that run for milliseconds,
//  4. then the one that came first.
//
// It is work-conserving: a slot is never left idle while a run waits, even
// when every waiting caller is at its cap. When the queue is full, a run of a
// caller with fewer runs in the runtime (running and waiting) than the
// busiest waiting caller takes the place of that caller's latest waiting
// run, which is refused: one session flooding the queue cannot lock the
// others out of it. Between callers with as many runs, a newcomer whose
// recent worker time is lower by more than a typical run's hold takes the
// place of the waiting run that used the most.
//
// The scheduler itself never blocks; acquire waits on a ticket's channel.
type scheduler struct {
	slots     int
	maxQueue  int           // < 0: none may wait
	maxWait   time.Duration // < 0: no bound on the expected wait
	perCaller int           // 0: no cap

	mu        sync.Mutex
	running   int
	bySession map[callerKey]int
	byPrinc   map[string]int
	waiting   []*ticket // in arrival order
	seq       uint64
	now       func() time.Time
	avgHold   time.Duration // moving average of how long runs hold a slot
	// holdP is the moving average of how long each principal's runs held
	// a slot lately, for the expected wait; an entry goes when its
	// principal's usage decays away.
	holdP map[string]time.Duration
	// runs are the tickets that hold a slot.
	runs map[*ticket]struct{}

	// Recent worker time (seconds, decayed) by session and by principal;
	// entries that decay to nothing are dropped, so the maps hold only
	// callers that ran lately.
	usage      map[callerKey]float64
	usageP     map[string]float64
	usageSince time.Time // when the usage maps were last decayed
}

// usageHalfLife is how fast past worker time stops counting against a
// caller: long enough to span a burst of runs at the time limit, short
// enough that a caller that went quiet is soon treated as new.
const usageHalfLife = 10 * time.Second

// decayUsage brings the usage maps to now; s.mu is held.
func (s *scheduler) decayUsage() {
	now := s.now()
	if s.usageSince.IsZero() {
		s.usageSince = now
		return
	}
	dt := now.Sub(s.usageSince)
	if dt <= 0 {
		return
	}
	s.usageSince = now
	f := math.Exp2(-dt.Seconds() / usageHalfLife.Seconds())
	for k, v := range s.usage {
		if v *= f; v < 1e-3 {
			delete(s.usage, k)
		} else {
			s.usage[k] = v
		}
	}
	for k, v := range s.usageP {
		if v *= f; v < 1e-3 {
			delete(s.usageP, k)
		} else {
			s.usageP[k] = v
		}
	}
	for k := range s.holdP {
		if _, ok := s.usageP[k]; !ok {
			delete(s.holdP, k)
		}
	}
}

type ticketState int

const (
	ticketWaiting ticketState = iota
	ticketRunning
	ticketDone // released, cancelled or refused
)

// ticket is one run's place with the scheduler.
type ticket struct {
	key   callerKey
	seq   uint64
	state ticketState
	// ready is closed when the run gets its slot, or when it is displaced
	// from the queue (err is then set).
	ready chan struct{}
	err   error
	since time.Time
}

// defaultQueuePerWorker sets MaxQueue's default. The expected wait is what
// admits runs; the count only bounds what waiting runs hold (a goroutine,
// a request) when they are short: 64 runs of 1 ms per worker wait 64 ms.
const defaultQueuePerWorker = 64

// DefaultMaxExpectedWait is Options.MaxExpectedWait's default: a run that
// would wait longer for a worker is refused at once with a retry hint, so
// that an agent backs off rather than holds a request open for long.
const DefaultMaxExpectedWait = 3 * time.Second

// unmeasuredHold is how long a run of a principal is expected to hold its
// worker before any run has been measured: a snippet that calls a few tools.
// A larger guess refused the first burst after a start for nothing (16
// runs of 1 ms were told to retry in 4.5 s).
const unmeasuredHold = 250 * time.Millisecond

func newScheduler(slots, maxQueue, perCaller int) *scheduler {
	if maxQueue == 0 {
		maxQueue = defaultQueuePerWorker * slots
	}
	return &scheduler{slots: slots, maxQueue: maxQueue, maxWait: DefaultMaxExpectedWait, perCaller: max(perCaller, 0),
		bySession: map[callerKey]int{}, byPrinc: map[string]int{}, now: time.Now,
		usage: map[callerKey]float64{}, usageP: map[string]float64{},
		holdP: map[string]time.Duration{}, runs: map[*ticket]struct{}{}}
}

// acquire waits for a slot for a run of key. The returned ticket must be
// given back with release.
func (s *scheduler) acquire(ctx context.Context, key callerKey, resumed bool, closed <-chan struct{}) (*ticket, error) {
	select {
	case <-closed:
		return nil, ErrClosed
	default:
	}
	t, err := s.enter(key, resumed)
	if err != nil {
		return nil, err
	}
	select {
	case <-t.ready:
		if t.err != nil {
			return nil, t.err
		}
		return t, nil
	case <-ctx.Done():
		s.release(t)
		return nil, fmt.Errorf("runtime: waiting for a free worker: %w", ctx.Err())
	case <-closed:
		s.release(t)
		return nil, ErrClosed
	}
}

// enter gives a run a slot at once, a place in the queue, or a *BusyError.
// A resumed run (one replaying the journal of a run released while it
// waited for a person) always gets a place: it was admitted once, its
// journal was taken from the store to run it, and refusing it now would
// leave its client nothing to resume but the snippet from its start, whose
// calls made before the pause would then be made twice. Resumed runs are
// few (frontend.MaxPausedRuns per principal), so the queue stays bounded.
func (s *scheduler) enter(key callerKey, resumed bool) (*ticket, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	t := &ticket{key: key, seq: s.seq, ready: make(chan struct{})}
	if s.running < s.slots {
		// Slots are handed on as they free up, so a free slot means nobody waits.
		s.grant(t)
		return t, nil
	}
	s.decayUsage()
	if resumed {
		s.waiting = append(s.waiting, t)
		return t, nil
	}
	if len(s.waiting) >= max(s.maxQueue, 0) {
		if len(s.waiting) == 0 {
			return nil, s.busy(t, false)
		}
		d := s.demand()
		v := s.victim(d)
		if v < 0 || !s.displaces(d, key, s.waiting[v].key) {
			return nil, s.busy(t, false)
		}
		out := s.waiting[v]
		s.waiting = append(s.waiting[:v], s.waiting[v+1:]...)
		out.state = ticketDone
		out.err = s.busy(out, true)
		close(out.ready)
	} else if s.maxWait >= 0 {
		if w := s.expectedWait(t); w > s.maxWait {
			return nil, s.tooLong(w)
		}
	}
	s.waiting = append(s.waiting, t)
	return t, nil
}

// release gives a run's slot back (or its place in the queue) and hands
// freed slots to the fairest waiting runs. Releasing twice does nothing.
func (s *scheduler) release(t *ticket) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch t.state {
	case ticketWaiting:
		for i, w := range s.waiting {
			if w == t {
				s.waiting = append(s.waiting[:i], s.waiting[i+1:]...)
				break
			}
		}
	case ticketRunning:
		s.running--
		delete(s.runs, t)
		decr(s.bySession, t.key)
		decr(s.byPrinc, t.key.principal)
		held := s.now().Sub(t.since)
		s.decayUsage()
		if held > 0 {
			s.usage[t.key] += held.Seconds()
			s.usageP[t.key.principal] += held.Seconds()
		}
		if s.avgHold == 0 {
			s.avgHold = held
		} else {
			s.avgHold += (held - s.avgHold) / 8
		}
		// Per principal, the last few runs count most: a tenant's snippets
		// change from one task to the next.
		if h, ok := s.holdP[t.key.principal]; !ok {
			s.holdP[t.key.principal] = held
		} else {
			s.holdP[t.key.principal] = h + (held-h)/4
		}
	}
	t.state = ticketDone
	for s.running < s.slots && len(s.waiting) > 0 {
		i := s.next()
		w := s.waiting[i]
		s.waiting = append(s.waiting[:i], s.waiting[i+1:]...)
		s.grant(w)
	}
}

func decr[K comparable](m map[K]int, k K) {
	if m[k] <= 1 {
		delete(m, k)
		return
	}
	m[k]--
}

func (s *scheduler) grant(t *ticket) {
	s.running++
	s.runs[t] = struct{}{}
	s.bySession[t.key]++
	s.byPrinc[t.key.principal]++
	t.state = ticketRunning
	t.since = s.now()
	close(t.ready)
}

// next is the index of the waiting run that gets the next free slot.
func (s *scheduler) next() int {
	best := 0
	for i := 1; i < len(s.waiting); i++ {
		if s.fairer(s.waiting[i], s.waiting[best]) {
			best = i
		}
	}
	return best
}

// fairer reports whether waiting run a should get a slot before b.
func (s *scheduler) fairer(a, b *ticket) bool {
	if ca, cb := s.capped(a.key), s.capped(b.key); ca != cb {
		return cb
	}
	if pa, pb := s.byPrinc[a.key.principal], s.byPrinc[b.key.principal]; pa != pb {
		return pa < pb
	}
	if sa, sb := s.bySession[a.key], s.bySession[b.key]; sa != sb {
		return sa < sb
	}
	if a.key.principal != b.key.principal {
		if ua, ub := s.usageP[a.key.principal], s.usageP[b.key.principal]; math.Abs(ua-ub) > usageResolution {
			return ua < ub
		}
	}
	if ua, ub := s.usage[a.key], s.usage[b.key]; math.Abs(ua-ub) > usageResolution {
		return ua < ub
	}
	return a.seq < b.seq
}

// usageResolution is the least difference in recent worker time (seconds)
// that orders two waiting runs; below it, arrival order decides, so that the
// microseconds of bookkeeping do not reorder runs of equal callers.
const usageResolution = 0.01

func (s *scheduler) capped(k callerKey) bool {
	return s.perCaller > 0 && s.bySession[k] >= s.perCaller
}

// demand counts the runs of each principal and session in the runtime,
// running and waiting.
type demand struct {
	principal map[string]int
	session   map[callerKey]int
}

func (s *scheduler) demand() demand {
	d := demand{principal: make(map[string]int, len(s.byPrinc)), session: make(map[callerKey]int, len(s.bySession))}
	for p, n := range s.byPrinc {
		d.principal[p] = n
	}
	for k, n := range s.bySession {
		d.session[k] = n
	}
	for _, w := range s.waiting {
		d.principal[w.key.principal]++
		d.session[w.key]++
	}
	return d
}

func (d demand) of(k callerKey) (principal, session int) {
	return d.principal[k.principal], d.session[k]
}

// victim is the index of the waiting run to refuse if a newcomer is to take
// a place in a full queue: the latest run of the principal, then the session,
// with the most runs in the runtime, and between those with as many, of the
// session that used the most worker time lately. -1 when nobody waits.
func (s *scheduler) victim(d demand) int {
	v, vp, vs, vu := -1, 0, 0, 0.0
	for i, w := range s.waiting {
		p, ss := d.of(w.key)
		u := s.usage[w.key]
		if v < 0 || p > vp || (p == vp && (ss > vs || (ss == vs && u >= vu))) {
			v, vp, vs, vu = i, p, ss, u
		}
	}
	return v
}

// displaces reports whether a newcomer of key should take the place of the
// waiting run of victim: when, even with the newcomer counted, its principal
// (or, between equals, its session) has fewer runs in the runtime than the
// victim's; or, with as many, when the victim's session used more worker
// time lately than the newcomer's by more than a typical run's hold. Equals
// never displace each other, so there is no churn.
func (s *scheduler) displaces(d demand, key, victim callerKey) bool {
	np, ns := d.of(key)
	vp, vs := d.of(victim)
	if key.principal != victim.principal && np+1 != vp {
		return np+1 < vp
	}
	if ns+1 != vs {
		return ns+1 < vs
	}
	return s.usage[victim]-s.usage[key] > max(s.avgHold, 100*time.Millisecond).Seconds()
}

// busy describes the refusal of run t for the queue's length (or its
// displacement from it); s.mu is held. A retry may get in when the runs
// ahead of it have started.
func (s *scheduler) busy(t *ticket, displaced bool) *BusyError {
	return &BusyError{Running: s.running, Waiting: len(s.waiting), RetryAfter: retryHint(s.expectedWait(t)), Displaced: displaced}
}

// tooLong describes the refusal of a run that would wait about w, over
// s.maxWait; s.mu is held. A retry may get in once the work ahead has
// shrunk by the excess (the slots work it off at one second a second each).
func (s *scheduler) tooLong(w time.Duration) *BusyError {
	return &BusyError{Running: s.running, Waiting: len(s.waiting), ExpectedWait: w, MaxWait: s.maxWait,
		RetryAfter: retryHint(w - s.maxWait)}
}

// retryHint rounds a retry's delay up to a tenth of a second, at least one.
func retryHint(d time.Duration) time.Duration {
	return max((d + 99*time.Millisecond).Truncate(100*time.Millisecond), 100*time.Millisecond)
}

// expect is how long a run of principal p is expected to hold a worker:
// its principal's recent runs, else everyone's, else unmeasuredHold.
func (s *scheduler) expect(p string) time.Duration {
	if h, ok := s.holdP[p]; ok {
		return h
	}
	if s.avgHold > 0 {
		return s.avgHold
	}
	return unmeasuredHold
}

// expectedWait is how long run t, not yet in the queue, would wait for a
// slot: the work ahead of it divided among the slots. The work ahead is
// what the running runs have left of their expected duration (none, once
// overdue) and the expected duration of each waiting run that the fair
// order would start before t. So a caller with many runs waiting sees a
// long wait, and one with none a short one, as the slots will be handed
// out; s.mu is held.
func (s *scheduler) expectedWait(t *ticket) time.Duration {
	now := s.now()
	var work time.Duration
	for r := range s.runs {
		if left := s.expect(r.key.principal) - now.Sub(r.since); left > 0 {
			work += left
		}
	}
	for _, w := range s.waiting {
		if !s.fairer(t, w) {
			work += s.expect(w.key.principal)
		}
	}
	return work / time.Duration(s.slots)
}

// queued is how many runs wait, for tests and metrics.
func (s *scheduler) queued() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.waiting)
}
