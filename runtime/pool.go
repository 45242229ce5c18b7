package runtime

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/sandboxrt/sandbox/internal/bytesize"
	"github.com/sandboxrt/sandbox/internal/prestart"
	"github.com/sandboxrt/sandbox/runtime/internal/bindings"
)

const (
	// killGrace is how long past its deadline (or its cancellation) a worker
	// has to report before it is killed: enough for an interrupted VM to send
	// its result, short against a native built-in that ignores interrupts.
	killGrace = 200 * time.Millisecond
	// startTimeout bounds a worker's start-up.
	startTimeout = 10 * time.Second
	// maxRunsPerWorker recycles workers now and then, so that nothing a long
	// series of snippets leaves behind in a process (fragmentation, caches)
	// accumulates.
	maxRunsPerWorker = 1000
)

// pool keeps up to size warm workers. A worker runs one snippet at a time;
// one that dies, overruns or is cancelled is killed and replaced in the
// background.
type pool struct {
	cmd  []string
	size int

	mu     sync.Mutex
	cond   *sync.Cond // signalled when idle, live or closed change
	idle   []*worker
	live   int
	all    map[*worker]struct{}
	closed bool
	// extra counts the workers started beyond size for nested runs.
	extra int
}

type worker struct {
	cmd    *exec.Cmd
	fw     *frameWriter
	frames chan *message // closed when the worker's stdout ends
	exited chan struct{} // closed when the process has been reaped
	stderr *prestart.HeadBuffer
	pid    int
	runs   int
	runID  uint64      // the id of the latest run sent to it
	killed atomic.Bool // by us
	extra  bool        // started for a nested run, beyond the pool's size
	// current is the run being awaited: the frame reader hands that run's
	// calls and logs to its hostSide itself rather than through frames and
	// await's goroutine, one goroutine wake-up fewer on every tool call
	// (await sees them in the same order all the same, as nothing else),
	// and notes its started and compiled frames rather than wake await
	// for them (two wake-ups a run).
	current atomic.Pointer[runRelay]
}

// runRelay is the run whose frames the reader relays.
type runRelay struct {
	id uint64
	hs *hostSide
	// started: a frame of the run came back (the run reached the worker);
	// compiled: its compiled frame did. Set by the reader before it reads
	// on, so await sees them once it has seen w.frames close or expire.
	started, compiled atomic.Bool
}

func newPool(cmd []string, size int) *pool {
	p := &pool{cmd: cmd, size: size, all: map[*worker]struct{}{}}
	p.cond = sync.NewCond(&p.mu)
	for i := 0; i < size; i++ {
		p.live++
		go p.replenish()
	}
	return p
}

// replenish starts one worker for the idle list; p.live already counts it.
func (p *pool) replenish() {
	w, err := p.spawn()
	p.mu.Lock()
	defer p.mu.Unlock()
	defer p.cond.Broadcast()
	if err != nil || p.closed {
		p.live--
		if w != nil {
			w.kill()
		}
		return
	}
	p.idle = append(p.idle, w)
}

// get takes an idle worker; when none is idle it waits for one being
// started, or starts one itself if the pool is below its size. The pool never
// holds more than size workers.
func (p *pool) get() (*worker, error) {
	p.mu.Lock()
	for {
		if p.closed {
			p.mu.Unlock()
			return nil, ErrClosed
		}
		if w := p.takeIdle(); w != nil {
			p.mu.Unlock()
			return w, nil
		}
		if p.live < p.size {
			break
		}
		p.cond.Wait()
	}
	p.live++
	p.mu.Unlock()
	w, err := p.spawn()
	if err != nil {
		p.mu.Lock()
		p.live--
		p.cond.Broadcast()
		p.mu.Unlock()
	}
	return w, err
}

// minNestedExtras lets a chain of nested runs as deep as code mode allows
// (a script that calls a script that calls a script) run on a one-worker
// pool.
const minNestedExtras = 4

// takeIdle takes a live idle worker, or returns nil; p.mu is held. One
// that died while idle (killed from outside, the OOM killer) is replaced,
// and p.live keeps counting its slot.
func (p *pool) takeIdle() *worker {
	for n := len(p.idle); n > 0; n = len(p.idle) {
		w := p.idle[n-1]
		p.idle = p.idle[:n-1]
		if !w.dead() {
			return w
		}
		delete(p.all, w)
		go p.replenish()
	}
	return nil
}

// getNested takes a worker for a nested run (Request.Nested), whose caller
// holds a worker and waits for this one: an idle worker, or an extra one
// beyond the pool's size, at most max(size, minNestedExtras) extras at once. It never waits for a
// worker, which could be waiting on it: past the extras it fails with ErrBusy.
func (p *pool) getNested() (*worker, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, ErrClosed
	}
	if w := p.takeIdle(); w != nil {
		p.mu.Unlock()
		return w, nil
	}
	if p.extra >= max(p.size, minNestedExtras) {
		p.mu.Unlock()
		return nil, &BusyError{Running: p.live + p.extra, RetryAfter: 100 * time.Millisecond}
	}
	p.extra++
	p.mu.Unlock()
	w, err := p.spawn()
	if err != nil {
		p.mu.Lock()
		p.extra--
		p.mu.Unlock()
		return nil, err
	}
	w.extra = true
	return w, nil
}

// put returns a healthy worker to the idle list, or discards a used-up one
// and starts its replacement. An extra worker is discarded, not replaced.
func (p *pool) put(w *worker, healthy bool) {
	p.mu.Lock()
	if w.extra {
		delete(p.all, w)
		p.extra--
		p.mu.Unlock()
		w.kill()
		return
	}
	if healthy && !p.closed && w.runs < maxRunsPerWorker {
		p.idle = append(p.idle, w)
		p.cond.Broadcast()
		p.mu.Unlock()
		return
	}
	delete(p.all, w)
	closed := p.closed
	p.mu.Unlock()
	w.kill()
	if !closed {
		// p.live keeps counting the slot: the replacement takes it over.
		go p.replenish()
	} else {
		p.mu.Lock()
		p.live--
		p.cond.Broadcast()
		p.mu.Unlock()
	}
}

func (p *pool) close() {
	p.mu.Lock()
	p.closed = true
	workers := make([]*worker, 0, len(p.all))
	for w := range p.all {
		workers = append(workers, w)
	}
	p.idle = nil
	p.cond.Broadcast()
	p.mu.Unlock()
	for _, w := range workers {
		w.kill()
	}
	// Wait for them to be reaped, briefly: a caller that exits right after
	// Close (serve on SIGTERM) leaves no worker running behind it.
	deadline := time.After(2 * time.Second)
	for _, w := range workers {
		select {
		case <-w.exited:
		case <-deadline:
			return
		}
	}
}

func (p *pool) spawn() (*worker, error) {
	proc := prestart.Take(p.cmd) // `sandbox run`'s, started while it initialised
	if proc == nil {
		var err error
		if proc, err = prestart.Start(p.cmd); err != nil {
			return nil, fmt.Errorf("runtime: starting a worker (%s): %w", p.cmd[0], err)
		}
	}
	cmd, stdout := proc.Cmd, proc.Stdout
	w := &worker{cmd: cmd, fw: newFrameWriter(proc.Stdin), frames: make(chan *message, 64), exited: make(chan struct{}), stderr: proc.Stderr}
	w.pid = cmd.Process.Pid
	go func() {
		r := bufio.NewReaderSize(stdout, 64<<10)
		for {
			m, err := readFrame(r)
			if err != nil {
				close(w.frames)
				return
			}
			if w.relayed(m) {
				continue
			}
			w.frames <- m
		}
	}()
	go func() {
		_ = cmd.Wait()
		close(w.exited)
	}()

	timer := time.NewTimer(startTimeout)
	defer timer.Stop()
	select {
	case m, ok := <-w.frames:
		if ok && m.T == msgReady {
			p.mu.Lock()
			p.all[w] = struct{}{}
			closed := p.closed
			p.mu.Unlock()
			if closed {
				w.kill()
				return nil, ErrClosed
			}
			return w, nil
		}
	case <-timer.C:
	}
	w.kill()
	<-w.exited
	return nil, fmt.Errorf("runtime: the worker (%s) did not start: it must call runtime.ServeWorkerIfChild() first thing in main (or TestMain); its stderr: %s",
		p.cmd[0], firstLine(w.stderr.String()))
}

func (w *worker) kill() {
	w.killed.Store(true)
	if w.cmd.Process != nil {
		// The whole group: nothing a worker started outlives it.
		_ = syscall.Kill(-w.pid, syscall.SIGKILL)
		_ = w.cmd.Process.Kill()
	}
}

// run executes one snippet in a worker: it takes a worker, sends it the
// snippet, relays the run's frames until it ends, and returns the worker to
// the pool (or replaces it) before assembling the result. A worker that
// turns out to have died before the run reached it (the run frame could not
// be written, or its stdout ended before it acknowledged the run) is
// replaced and the run is tried once more on another: nothing of the
// snippet ran, and the agent should not pay for a worker it never had.
func (p *pool) run(ctx context.Context, hs *hostSide, filename string, limits Limits, req *Request) (*Result, error) {
	msg := &runMessage{Code: req.Code, Filename: filename, Limits: limits, Tools: req.Tools, Services: req.Services, Input: req.Input, CompileOnly: req.CompileOnly}
	if hs.jr != nil {
		msg.Seed, msg.Clock = hs.jr.rec.Seed, hs.jr.replayedClock()
	}
	for attempt := 1; ; attempt++ {
		get := p.get
		if req.Nested {
			get = p.getNested
		}
		w, err := get()
		if err != nil {
			if errors.Is(err, ErrClosed) || errors.Is(err, ErrBusy) {
				return nil, err
			}
			return hs.finish(internalFailure(err.Error())), nil
		}
		out, reusable, lost := p.attempt(ctx, hs, w, msg, limits)
		p.put(w, reusable)
		if lost && attempt == 1 && ctx.Err() == nil {
			continue
		}
		if lost {
			out = internalFailure(workerLost)
		}
		return hs.finish(out), nil
	}
}

// workerLost is the message of a run whose worker died before the run
// reached it, twice. Never the Go error (a write to a closed pipe, an EOF):
// the agent can do nothing with that.
const workerLost = "the sandbox worker stopped unexpectedly before the snippet started; run the snippet again"

// attempt runs the snippet on w. lost reports that w was dead before the
// run reached it: nothing of the snippet ran, and out is meaningless.
func (p *pool) attempt(ctx context.Context, hs *hostSide, w *worker, msg *runMessage, limits Limits) (out execOutcome, reusable, lost bool) {
	runID, err := w.start(msg, hs)
	if err != nil {
		w.current.Store(nil)
		var big *frameTooLargeError
		if errors.As(err, &big) {
			// Nothing was written: the worker is fine, the run is not.
			return internalFailure("the snippet and its tools are too large to send to a worker (" + bytesize.Format(int64(big.size)) + ")"), true, false
		}
		return execOutcome{}, false, true
	}
	return w.await(ctx, hs, runID, limits, len(msg.Code))
}

// dead reports whether the worker's process has exited (and been reaped).
func (w *worker) dead() bool {
	select {
	case <-w.exited:
		return true
	default:
		return false
	}
}

// start sends a worker its next run and returns the run's id. The run's
// calls and logs go to hs from the first (current is set before the run
// frame is sent, so none of them can overtake an earlier one in w.frames).
func (w *worker) start(run *runMessage, hs *hostSide) (uint64, error) {
	w.runs++
	w.runID++
	w.current.Store(&runRelay{id: w.runID, hs: hs})
	return w.runID, w.fw.send(&message{T: msgRun, RunID: w.runID, Run: run})
}

// await relays one run's frames to its hostSide until the run ends: with the
// worker's result, a crash, a protocol error, the caller's cancellation or
// the deadline. It returns how the run ended and whether the worker may run
// another snippet; lost reports a worker whose stdout ended before it
// acknowledged the run (it died before the run reached it).
func (w *worker) await(ctx context.Context, hs *hostSide, runID uint64, limits Limits, codeBytes int) (out execOutcome, reusable, lost bool) {
	expired := make(chan struct{})
	deadline := newDeadline(limits.Timeout+killGrace, func() { close(expired) })
	defer deadline.cancel()
	// While a person is asked about a call, both the worker's time limit
	// and this one stand.
	hs.clock.setNotify(func(stopped bool) {
		deadline.stand(stopped)
		_ = w.fw.send(&message{T: msgClock, RunID: runID, Stopped: stopped})
	})
	defer hs.clock.setNotify(nil)
	relay := w.current.Load() // start set it
	defer w.current.Store(nil)
	var grace <-chan time.Time
	cancelled, aborted := ctx.Done(), hs.stopped()
	for {
		select {
		case m, ok := <-w.frames:
			if !ok {
				if !relay.started.Load() {
					return execOutcome{}, false, true
				}
				return w.crashOutcome(limits), false, false
			}
			if m.RunID != runID {
				continue // a frame of an earlier run, already given up
			}
			if out, ended, reusable := w.handle(hs, runID, m); ended {
				return out, reusable, false
			}
		case <-cancelled:
			cancelled = nil
			_ = w.fw.send(&message{T: msgCancel, RunID: runID})
			grace = time.After(killGrace)
		case <-aborted:
			// Suspended, or another path on replay: finish says which.
			aborted = nil
			_ = w.fw.send(&message{T: msgCancel, RunID: runID})
			grace = time.After(killGrace)
		case <-grace:
			if ctx.Err() == nil { // aborted: finish reports why
				return execOutcome{Error: suspendedError()}, false, false
			}
			return execOutcome{Error: &Error{Kind: KindCancelled, Message: "the run was cancelled by its caller: " + context.Cause(ctx).Error()}}, false, false
		case <-expired:
			if !relay.compiled.Load() {
				// Transpiling and compiling see no interrupts either.
				return execOutcome{Error: &Error{Kind: KindLimit, Limit: LimitTime, Message: fmt.Sprintf(
					"the snippet (%s of code) took longer than its %v time limit to compile, before any of it ran, and its worker was stopped; send less code (data belongs in tool calls or sandbox.store, not in the source)"+RaiseLimitAdvice,
					fmt.Sprintf("%d KB", (codeBytes+1023)>>10), limits.Timeout)}}, false, false
			}
			// The VM did not stop at its deadline: a native built-in (a huge
			// sort, a regexp, a giant string operation) does not see interrupts.
			return execOutcome{Error: &Error{Kind: KindLimit, Limit: LimitTime, Message: fmt.Sprintf(
				"the snippet ran past its %v time limit inside a built-in operation (a huge sort, regular expression or string operation) and its worker was stopped; work on smaller inputs"+RaiseLimitAdvice,
				limits.Timeout)}}, false, false
		}
	}
}

// handle acts on one frame of the current run; ended reports that the run is
// over, with out and whether the worker may be reused.
func (w *worker) handle(hs *hostSide, runID uint64, m *message) (out execOutcome, ended, reusable bool) {
	switch m.T {
	case msgStarted, msgCompiled: // noted by the reader (relayed)
	case msgCall:
		hs.addClock(m.Clock)
		w.relayCall(hs, runID, m)
	case msgLog:
		hs.addClock(m.Clock)
		if m.Log != nil {
			hs.vmLog(*m.Log)
		}
	case msgDone:
		if m.Outcome == nil {
			return internalFailure("the worker sent an empty result"), true, false
		}
		return *m.Outcome, true, !m.Retire
	default:
		return internalFailure(fmt.Sprintf("the worker broke the protocol (%q message)", m.T)), true, false
	}
	return execOutcome{}, false, false
}

// relayed hands a call or log frame of the awaited run to its hostSide, on
// the reader's goroutine, and reports whether it did. Every other frame (and
// any frame before await took the run) goes through w.frames. Frames are
// handled in the order they arrive either way: the reader handles them one
// at a time, and a run's done frame, which ends await, comes after them.
func (w *worker) relayed(m *message) bool {
	cur := w.current.Load()
	if cur == nil || m.RunID != cur.id {
		return false
	}
	cur.started.Store(true)
	switch m.T {
	case msgStarted:
	case msgCompiled:
		cur.compiled.Store(true)
	case msgCall, msgLog:
		w.handle(cur.hs, cur.id, m) // the same as when await takes them
	default:
		return false
	}
	return true
}

// relayCall has the hostSide answer a tool call of the worker's run and sends
// the answer back.
func (w *worker) relayCall(hs *hostSide, runID uint64, m *message) {
	id := m.ID
	var target bindings.Target // none: refused as not bound, like any target the run was not given
	if m.Target != nil {
		target = *m.Target
	}
	hs.call(id, target, m.Args, func(res json.RawMessage, terr *ToolError) {
		err := w.fw.sendReply(runID, id, terr, res)
		if err == nil {
			return
		}
		var big *frameTooLargeError
		if errors.As(err, &big) {
			// The answer does not fit in a frame: say so rather
			// than leave the call hanging until the deadline.
			_ = w.fw.send(&message{T: msgReply, RunID: runID, ID: id, Err: &ToolError{Code: CodeResultTooLarge,
				Message: fmt.Sprintf("the tool's result (%s) is too large to hand to the snippet; ask for less (a page, a filter, fewer fields)", bytesize.Format(int64(len(res))))}})
		}
	})
}

func internalFailure(msg string) execOutcome {
	return execOutcome{Error: &Error{Kind: KindInternal, Message: msg}}
}

// crashOutcome explains a worker that ended without a result.
func (w *worker) crashOutcome(limits Limits) execOutcome {
	select {
	case <-w.exited:
	case <-time.After(time.Second):
		w.kill()
		<-w.exited
	}
	stderr := w.stderr.String()
	state := w.cmd.ProcessState
	switch {
	case strings.Contains(stderr, "out of memory") || strings.Contains(stderr, "cannot allocate memory"):
		return execOutcome{Error: memoryLimitError(limits.MemoryBytes, "a single allocation was too large and the worker was stopped")}
	case strings.Contains(stderr, "stack overflow") || strings.Contains(stderr, "stack exceeds"):
		return execOutcome{Error: &Error{Kind: KindLimit, Limit: LimitStackDepth, Message: "the snippet is recursive or nested too deeply for the worker's stack (deep recursion, or code nested thousands of levels deep); rewrite deep recursion as a loop and flatten deeply nested expressions"}}
	}
	how := "it exited"
	if state != nil {
		if ws, ok := state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			how = "it was killed: " + ws.Signal().String()
			if ws.Signal() == syscall.SIGKILL && !w.killed.Load() {
				// The kernel's OOM killer sends SIGKILL.
				return execOutcome{Error: memoryLimitError(limits.MemoryBytes, "the worker was killed by the system")}
			}
		} else {
			how = fmt.Sprintf("it exited with status %d", state.ExitCode())
		}
	}
	// Not the worker's stderr: a Go panic or runtime error says nothing the
	// agent can act on, and the host's internals are not the agent's.
	return internalFailure("the sandbox worker stopped unexpectedly while running the snippet (" + how + "); run the snippet again")
}

func firstLine(s string) string {
	for _, line := range strings.Split(s, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			return line
		}
	}
	return ""
}
