package runtime

// A run's journal and its replay. A run that may wait minutes for a person
// (a policy's approval) should not hold a worker meanwhile: it is ended
// (Suspend) once its other calls in flight are answered, and resumed later
// by running the snippet again, from the start, in a fresh worker, against
// the journal of what the first run took from outside the snippet:
//
//   - each tool call's target, a digest of its arguments and its answer, in
//     the order the calls were made, and the order the answers reached the
//     VM;
//   - every value the VM read from the clock (Date.now, new Date(),
//     performance.now, Intl's default dates), in order: a worker sends the
//     readings with its next frame (a call, a log, the end), so the parent
//     has them before anything they may have influenced;
//   - the seed of the run's randomness: Math.random, crypto.getRandomValues
//     and crypto.randomUUID draw from one ChaCha8 stream seeded per run, so
//     a replay draws the same values without any of them being journalled;
//   - the console lines already emitted, which a replay does not emit again.
//
// A replay answers the journal's calls from it (never reaching the Host),
// in the order the answers first arrived; a call the journal holds no
// answer for (the call that paused the run), and every call past the
// journal's end, runs live. A call whose target or arguments differ from
// the journal's at the same position fails the run (KindReplay) before
// anything is called: the snippet took another path.
//
// Answers that reached the run after it began to suspend (its calls in
// flight) were never heard by its VM: a replay holds them until the
// snippet has made every call of the journal (Journal.Late).
//
// What is not journalled: the order in which timers fire against tool
// answers (setTimeout racing a call), and console.time's durations; a
// snippet whose calls depend on them may take another path on resume, and
// then fails with KindReplay rather than call anything twice.

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	mathrand "math/rand/v2"
	"time"

	"github.com/sandboxrt/sandbox/runtime/internal/bindings"
)

const (
	// KindReplay: a resumed run's snippet made another call than the run
	// it resumes made at the same position (Journal); nothing was called.
	KindReplay ErrorKind = "replay"
	// KindSuspended: a Host suspended the run (Suspend) to resume it later
	// by replaying its journal.
	KindSuspended ErrorKind = "suspended"
)

// Journal is what a run took from outside its snippet, enough to run the
// snippet again to the same point (see the package's journal.go). It holds
// tool results: whoever stores it keeps it as private as the results.
type Journal struct {
	// Seed seeds the run's randomness (32 bytes).
	Seed []byte `json:"seed"`
	// Calls are the run's tool calls in the order they were made.
	Calls []JournalCall `json:"calls,omitempty"`
	// Clock is every reading of the clock the VM made, in order (Unix
	// nanoseconds).
	Clock []int64 `json:"clock,omitempty"`
	// Logs is the run's console output so far; VMLogs of its entries came
	// from the snippet (the rest from its Host: a saved script's lines).
	Logs   []LogEntry `json:"logs,omitempty"`
	VMLogs int        `json:"vmLogs,omitempty"`
	// Late is how many of the answers, the last by Order, reached the run
	// after it began to suspend: its VM never had them, so a replay hands
	// them over only once the snippet has made every call of the journal
	// (else a race a timer won, Promise.race against a slow call, is won by
	// the answer on resume, and the replay takes another path).
	Late int `json:"late,omitempty"`
}

// resumes says whether a run of j replays one that ran before (it has
// calls or output), rather than starting afresh.
func (j *Journal) resumes() bool {
	return j != nil && (len(j.Calls) > 0 || len(j.Logs) > 0 || len(j.Clock) > 0)
}

// JournalCall is one tool call of a Journal.
type JournalCall struct {
	Target string `json:"to"`
	// Args is the SHA-256 of the arguments as the VM sent them, in hex.
	Args string `json:"args"`
	// Answered is set when the call's answer (Result, or Err) is known;
	// Order is its place among the answers the run received (1 first).
	Answered bool            `json:"answered,omitempty"`
	Result   json.RawMessage `json:"result,omitempty"`
	Err      *ToolError      `json:"err,omitempty"`
	Order    int             `json:"order,omitempty"`
}

// maxJournalBytes bounds the results (and clock readings, 8 bytes each) a
// journal holds: a run whose journal grows past it cannot be suspended (it
// keeps its worker while it waits), and records nothing more.
const maxJournalBytes = 8 << 20

// maxClockReadings bounds the readings a worker keeps for the parent; a
// snippet that reads the clock more (in a busy loop) sends clockOverflow
// in their place once, and its run cannot be suspended.
const (
	maxClockReadings       = 1 << 20
	clockOverflow    int64 = -1
)

type callKey struct{}

// callRef names one tool call of a journalled run, in the call's context.
type callRef struct {
	h     *hostSide
	index int
}

// Suspend ends the journalled run whose tool call ctx belongs to (the
// Host's context of a call), in place of answering that call: once its
// other calls in flight are answered or suspended too (their answers join
// the journal, so that none is made twice), the run stops, then gets the
// journal, and the run's Result fails with KindSuspended. The call's own
// answer is never delivered; a replay makes the call again, live. false
// (and nothing happens) when the run keeps no journal, its journal is over
// maxJournalBytes, or it is ending already.
func Suspend(ctx context.Context, then func(*Journal)) bool {
	ref, _ := ctx.Value(callKey{}).(*callRef)
	if ref == nil {
		return false
	}
	return ref.h.suspend(ref.index, then)
}

// argsDigest is a JournalCall's Args.
func argsDigest(args json.RawMessage) string {
	sum := sha256.Sum256(args)
	return hex.EncodeToString(sum[:])
}

// journalState is a journalled run's journal as it is made, on the
// hostSide (under its mu).
type journalState struct {
	replay *Journal // what the run replays; nil for a fresh run
	rec    Journal  // what the run took: the replayed entries, then its own
	bytes  int
	// delivered counts the answers handed to the VM (Order of the last).
	delivered int
	// nextReplayed is the Order (in replay) of the next replayed answer to
	// hand to the VM; held are replayed answers waiting for their turn.
	nextReplayed int
	held         map[int]heldAnswer
	// lateFrom is the Order of the replay's first late answer (Journal.Late;
	// 0: none), made is how many calls the snippet has made.
	lateFrom, made int
	vmLogs         int // the VM's console lines seen in this run

	suspending bool
	paused     map[int]bool // the calls that suspended the run, by index
	then       []func(*Journal)
	late       []int // calls answered after suspension began, in arrival order
}

// heldAnswer is a replayed answer waiting for its turn.
type heldAnswer struct {
	index   int
	deliver func()
}

func newJournalState(replay *Journal) *journalState {
	js := &journalState{nextReplayed: 1, held: map[int]heldAnswer{}}
	if replay != nil && len(replay.Seed) == 32 {
		js.replay = replay
		js.rec = Journal{Seed: replay.Seed, Calls: append([]JournalCall(nil), replay.Calls...),
			Clock: append([]int64(nil), replay.Clock...), Logs: append([]LogEntry(nil), replay.Logs...), VMLogs: replay.VMLogs}
		answered := 0
		for _, c := range replay.Calls {
			js.bytes += len(c.Result)
			if c.Answered {
				answered++
			}
		}
		if replay.Late > 0 && replay.Late <= answered {
			js.lateFrom = answered - replay.Late + 1
		}
		return js
	}
	js.rec.Seed = make([]byte, 32)
	_, _ = rand.Read(js.rec.Seed)
	return js
}

// replayedClock is what the worker reads its clock from before it reads
// the real one.
func (js *journalState) replayedClock() []int64 {
	if js.replay == nil {
		return nil
	}
	return js.replay.Clock
}

// diverged is the error of a replayed call that is not the journal's.
func diverged(index int, target bindings.Target, want JournalCall, sameTarget bool) *Error {
	what := fmt.Sprintf("made %s with other arguments than", target)
	if !sameTarget {
		what = fmt.Sprintf("called %s where", target)
	}
	return &Error{Kind: KindReplay, Tool: target.String(), Message: fmt.Sprintf(
		"the snippet took another path on resume: its tool call %d %s the run it resumes (which called %s); a resumed run must make the same calls in the same order up to where it paused (no timers racing tool calls, no other inputs); nothing was called twice: run the snippet again without resuming",
		index+1, what, want.Target)}
}

// ended is the error of a replay that ended with journalled calls it
// never made.
func endedEarly(index int, want JournalCall) *Error {
	return &Error{Kind: KindReplay, Message: fmt.Sprintf(
		"the snippet took another path on resume: it ended without making its tool call %d (%s), which the run it resumes made; nothing was called twice: run the snippet again without resuming",
		index+1, want.Target)}
}

// neverMade is the error of a replay whose answers waited for a call the
// snippet never made.
func neverMade(index int, want JournalCall) *Error {
	return &Error{Kind: KindReplay, Message: fmt.Sprintf(
		"the snippet took another path on resume: it never made its tool call %d (%s), whose answer came before others it waited for in the run it resumes (a timer racing tool calls?); nothing was called twice: run the snippet again without resuming",
		index+1, want.Target)}
}

// suspend starts ending the run for a call that cannot be answered now;
// see Suspend.
func (h *hostSide) suspend(index int, then func(*Journal)) bool {
	h.mu.Lock()
	js := h.jr
	if js == nil || h.finished || h.abortErr != nil || js.bytes > maxJournalBytes {
		h.mu.Unlock()
		return false
	}
	if js.paused == nil {
		js.paused = map[int]bool{}
	}
	js.suspending, js.paused[index] = true, true
	js.then = append(js.then, then)
	idle := h.othersInFlight() == 0
	h.mu.Unlock()
	if idle {
		h.abort(suspendedError())
	}
	return true
}

func suspendedError() *Error {
	return &Error{Kind: KindSuspended, Message: "the run was suspended while it waits for an answer; it resumes by replaying its journal"}
}

// othersInFlight counts the calls in flight but the ones that suspended
// the run; h.mu is held.
func (h *hostSide) othersInFlight() int {
	n := 0
	for id := range h.inFlight {
		if !h.jr.paused[h.callIndex[id]] {
			n++
		}
	}
	return n
}

// abort ends the run with err (the first reason wins): the parent stops
// its worker, and finish reports err whatever the worker says.
func (h *hostSide) abort(err *Error) {
	h.stopOnce.Do(func() {
		h.mu.Lock()
		h.abortErr = err
		h.mu.Unlock()
		close(h.stop)
	})
}

// stopped is closed when the run must end (abort); nil for a run that
// keeps no journal (nothing aborts it but its caller and its limits).
func (h *hostSide) stopped() <-chan struct{} {
	if h.jr == nil {
		return nil
	}
	return h.stop
}

// addClock journals the VM's clock readings, while the journal may grow.
func (h *hostSide) addClock(readings []int64) {
	if len(readings) == 0 || h.jr == nil {
		return
	}
	h.mu.Lock()
	if !h.finished {
		h.addClockLocked(readings)
	}
	h.mu.Unlock()
}

// addClockLocked is addClock with h.mu held.
func (h *hostSide) addClockLocked(readings []int64) {
	js := h.jr
	if len(readings) == 0 || js.bytes > maxJournalBytes {
		return
	}
	js.bytes += 8 * len(readings)
	switch {
	case readings[len(readings)-1] == clockOverflow:
		js.bytes = maxJournalBytes + 1 // the journal misses readings: no release
	case js.bytes <= maxJournalBytes:
		js.rec.Clock = append(js.rec.Clock, readings...)
	}
}

// journalCall is hostSide.call's part for a journalled run, h.mu held and
// the call accepted at index: handled reports that the call needs no Host
// (replayed from the journal, refused as another path, or dropped because
// the run is being suspended); h.mu is released when handled.
func (h *hostSide) journalCall(index int, id uint64, target bindings.Target, args json.RawMessage, reply func(json.RawMessage, *ToolError)) (handled bool) {
	js := h.jr
	if js.suspending {
		// The run ends as soon as its calls in flight are answered; this
		// one is made again, live, on resume.
		h.mu.Unlock()
		return true
	}
	js.made = index + 1
	digest := argsDigest(args)
	if js.replay == nil || index >= len(js.replay.Calls) {
		js.rec.Calls = append(js.rec.Calls, JournalCall{Target: target.String(), Args: digest})
		return false
	}
	want := js.replay.Calls[index]
	if want.Target != target.String() || want.Args != digest {
		h.mu.Unlock()
		h.abort(diverged(index, target, want, want.Target == target.String()))
		return true
	}
	if !want.Answered {
		h.deliverHeld() // the late answers, when this was the journal's last call
		return false    // the call that paused the run: live now
	}
	// Answered from the journal, in the order the answers first came.
	h.callIndex[id] = index
	h.calls = append(h.calls, CallTrace{Tool: target.String(), Start: time.Since(h.start), OK: want.Err == nil, ArgBytes: len(args), ResultBytes: len(want.Result)})
	if want.Err != nil {
		h.calls[len(h.calls)-1].Code = want.Err.Code
	}
	js.held[want.Order] = heldAnswer{index: index, deliver: func() { reply(want.Result, want.Err) }}
	h.deliverHeld()
	h.mu.Unlock()
	return true
}

// deliverHeld hands the VM the replayed answers whose turn it is (h.mu
// held): in the order they first arrived, a late one (Journal.Late) only
// once the snippet has made every call of the journal.
func (h *hostSide) deliverHeld() {
	js := h.jr
	for {
		a, ok := js.held[js.nextReplayed]
		if !ok || js.lateFrom > 0 && js.nextReplayed >= js.lateFrom && js.made < len(js.replay.Calls) {
			return
		}
		delete(js.held, js.nextReplayed)
		js.nextReplayed++
		js.delivered++
		js.rec.Calls[a.index].Order = js.delivered
		a.deliver()
	}
}

// journalAnswer records a live call's answer and hands it to the VM, in
// one step under h.mu, so the journal's order is the VM's; h.mu is held.
func (h *hostSide) journalAnswer(index int, res json.RawMessage, terr *ToolError, reply func(json.RawMessage, *ToolError)) {
	js := h.jr
	if js.paused[index] {
		return // answered after all: the replay makes it again, live
	}
	c := &js.rec.Calls[index]
	c.Answered, c.Result, c.Err = true, res, terr
	js.bytes += len(res)
	if js.suspending {
		// Not delivered: the run is ending; the answer is replayed.
		js.late = append(js.late, index)
		if h.othersInFlight() == 0 {
			go h.abort(suspendedError())
		}
		return
	}
	js.delivered++
	c.Order = js.delivered
	reply(res, terr)
}

// journalLog reports whether a console line of the VM is new: a replay
// does not emit again the lines its journal holds.
func (h *hostSide) journalLog() bool {
	js := h.jr
	js.vmLogs++
	if js.replay != nil && js.vmLogs <= js.replay.VMLogs {
		return false
	}
	js.rec.VMLogs = js.vmLogs
	return true
}

// finishJournal completes the journal when the run ends (h.mu held): a
// replay that ended before making all of its journal's calls took another
// path; a suspended run's journal goes to its taker, returned to be called
// once h.mu is released.
func (h *hostSide) finishJournal(out *execOutcome) func() {
	js := h.jr
	if js.suspending && h.abortErr != nil && h.abortErr.Kind == KindSuspended {
		for _, i := range js.late {
			js.delivered++
			js.rec.Calls[i].Order = js.delivered
		}
		js.rec.Late = len(js.late)
		// The paused call's entry stays, unanswered: the replay makes it live.
		js.rec.Logs = append([]LogEntry(nil), h.logs...)
		j, thens := js.rec, js.then
		return func() {
			for _, then := range thens {
				then(&j)
			}
		}
	}
	if js.replay != nil && out.Error == nil {
		for i, c := range js.replay.Calls {
			if i >= len(h.calls) {
				out.Error = endedEarly(i, c)
				break
			}
		}
	}
	if len(js.held) > 0 && h.abortErr == nil {
		// Answers held for their turn behind one whose call was never made:
		// the run waited for them until it ended (its time limit, say).
		// Or a late answer (Journal.Late) held until the snippet made the
		// journal's calls, which it did not.
		var never *Error
		for i, c := range js.replay.Calls {
			if c.Answered && c.Order == js.nextReplayed && i >= js.made {
				never = neverMade(i, c)
				break
			}
		}
		if never == nil && js.made < len(js.replay.Calls) {
			never = neverMade(js.made, js.replay.Calls[js.made])
		}
		if never != nil {
			out.Error = never
		}
	}
	return nil
}

// vmInputs are the clock and randomness of a journalled run's VM: the
// clock's readings come from the journal first (replay), then from the
// wall clock, and the new ones go to the parent with the worker's next
// frame (takeClock).
type vmInputs struct {
	replay []int64
	next   int
	fresh  []int64
	kept   int // readings put in fresh so far
	rng    *mathrand.ChaCha8
}

// useInputs makes the run's clock and randomness replayable; without a
// seed (a run that keeps no journal) the VM keeps goja's and the wall
// clock.
func (e *execution) useInputs(seed []byte, clock []int64) {
	if len(seed) != 32 {
		return
	}
	var s [32]byte
	copy(s[:], seed)
	e.inputs = &vmInputs{replay: clock, rng: mathrand.NewChaCha8(s)}
}

func (in *vmInputs) now() time.Time {
	if in.next < len(in.replay) {
		in.next++
		return time.Unix(0, in.replay[in.next-1])
	}
	// Without its monotonic reading: a difference of two readings
	// (performance.now) must be the same when they come from the journal.
	t := time.Now().Round(0)
	switch {
	case in.kept < maxClockReadings:
		in.kept++
		in.fresh = append(in.fresh, t.UnixNano())
	case in.kept == maxClockReadings:
		in.kept++
		in.fresh = append(in.fresh, clockOverflow)
	}
	return t
}

// installInputs gives the VM and the families the run's inputs.
func (e *execution) installInputs() {
	in := e.inputs
	if in == nil {
		return
	}
	e.vm.SetTimeSource(in.now)
	e.vm.SetRandSource(func() float64 { return float64(in.rng.Uint64()>>11) / (1 << 53) })
	e.env.Now = in.now
	e.env.Random = func(b []byte) { _, _ = in.rng.Read(b) }
}

// takeClock returns the clock readings not yet sent to the parent (VM
// goroutine).
func (e *execution) takeClock() []int64 {
	if e.inputs == nil || len(e.inputs.fresh) == 0 {
		return nil
	}
	f := e.inputs.fresh
	e.inputs.fresh = nil
	return f
}
