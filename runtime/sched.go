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
// Options.MaxQueue runs already wait for one. The error is a *BusyError,
// which says how many runs are ahead and when a retry may get in; test for
// it with errors.Is(err, ErrBusy).
var ErrBusy = errors.New("runtime: busy")

// BusyError is a run refused because the runtime is at capacity.
type BusyError struct {
	// Running is how many runs hold a worker, Waiting how many wait for one.
	Running, Waiting int
	// RetryAfter estimates when a retry may be admitted: the time the runs
	// ahead need to start, from how long recent runs held their worker.
	RetryAfter time.Duration
	// Displaced reports a run that had been waiting and gave its place in
	// the queue to a run of a caller with fewer runs in the runtime.
	Displaced bool
}

func (e *BusyError) Error() string {
	what := "every worker is running a snippet"
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
// A run that finds none free waits in a bounded queue; past the bound it is
// refused with a *BusyError. A freed slot goes to the fairest waiting run:
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
	maxQueue  int // < 0: none may wait
	perCaller int // 0: no cap

	mu        sync.Mutex
	running   int
	bySession map[callerKey]int
	byPrinc   map[string]int
	waiting   []*ticket // in arrival order
	seq       uint64
	now       func() time.Time
	avgHold   time.Duration // moving average of how long runs hold a slot

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

// defaultQueuePerWorker sets MaxQueue's default: enough to absorb a burst,
// few enough that a run does not wait for minutes behind a backlog.
const defaultQueuePerWorker = 4

func newScheduler(slots, maxQueue, perCaller int) *scheduler {
	if maxQueue == 0 {
		maxQueue = defaultQueuePerWorker * slots
	}
	return &scheduler{slots: slots, maxQueue: maxQueue, perCaller: max(perCaller, 0),
		bySession: map[callerKey]int{}, byPrinc: map[string]int{}, now: time.Now,
		usage: map[callerKey]float64{}, usageP: map[string]float64{}}
}

// acquire waits for a slot for a run of key. The returned ticket must be
// given back with release.
func (s *scheduler) acquire(ctx context.Context, key callerKey, closed <-chan struct{}) (*ticket, error) {
	select {
	case <-closed:
		return nil, ErrClosed
	default:
	}
	t, err := s.enter(key)
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
func (s *scheduler) enter(key callerKey) (*ticket, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	t := &ticket{key: key, seq: s.seq, ready: make(chan struct{})}
	if s.running < s.slots {
		// Slots are handed on as they free up, so a free slot means nobody waits.
		s.grant(t)
		return t, nil
	}
	if len(s.waiting) >= max(s.maxQueue, 0) {
		if len(s.waiting) == 0 {
			return nil, s.busy(false)
		}
		s.decayUsage()
		d := s.demand()
		v := s.victim(d)
		if v < 0 || !s.displaces(d, key, s.waiting[v].key) {
			return nil, s.busy(false)
		}
		out := s.waiting[v]
		s.waiting = append(s.waiting[:v], s.waiting[v+1:]...)
		out.state = ticketDone
		out.err = s.busy(true)
		close(out.ready)
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

// busy describes the refusal of a run; s.mu is held.
func (s *scheduler) busy(displaced bool) *BusyError {
	waiting := len(s.waiting)
	return &BusyError{Running: s.running, Waiting: waiting, RetryAfter: s.estimate(waiting), Displaced: displaced}
}

// estimate is how long until the runs ahead of a run that arrives behind
// `waiting` others have started: slots free up at about slots/avgHold.
func (s *scheduler) estimate(waiting int) time.Duration {
	hold := s.avgHold
	if hold <= 0 {
		hold = time.Second // nothing measured yet
	}
	d := hold * time.Duration(waiting+1) / time.Duration(s.slots)
	return max(d.Round(100*time.Millisecond), 100*time.Millisecond)
}

// queued is how many runs wait, for tests and metrics.
func (s *scheduler) queued() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.waiting)
}
