// Package runtime runs agent TypeScript under hard limits and returns a JSON
// result, with the console output, a trace of tool calls and source-mapped
// errors.
//
// A snippet is transpiled by esbuild (cached by hash) and run in a fresh goja
// VM that owns its goroutine; tool calls are messages answered by a Host on
// other goroutines and handed back to the VM's event loop.
//
// goja cannot bound memory, and a native built-in (a sort of millions of
// strings, a catastrophic regexp) ignores interrupts. So untrusted snippets
// run in worker subprocesses of this same binary, from a warm pool, each with a
// hard address-space cap and a heap watchdog; the parent enforces the wall
// clock by killing a worker that does not stop, and replaces any worker that
// dies. See RATIONALE.md. InProcess mode skips the subprocess for trusted code.
//
// A binary that uses IsolateWorkers must call ServeWorkerIfChild first thing
// in main (and in TestMain for tests).
package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	goruntime "runtime"
	"sync"
	"time"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/runtime/internal/bindings"
)

// Isolation chooses where snippets run.
type Isolation int

const (
	// IsolateWorkers runs each snippet in a worker subprocess with a hard
	// memory cap, killed and replaced if it overruns. The default, and the only
	// safe choice for untrusted code.
	IsolateWorkers Isolation = iota
	// InProcess runs snippets on goroutines of the calling process. Faster,
	// but only for trusted code: memory is not bounded (one huge allocation
	// kills the whole process) and a slow native built-in overruns the time
	// limit, holding its goroutine until it finishes.
	InProcess
)

func (i Isolation) String() string {
	if i == InProcess {
		return "in-process"
	}
	return "workers"
}

// Options configure a Runtime.
type Options struct {
	Isolation Isolation
	// Workers is the most snippets that run at once (and the worker pool's
	// size). Default: the number of CPUs.
	Workers int
	// MaxExpectedWait bounds how long a run may expect to wait for a
	// worker: one that would wait longer, by the recent durations of the
	// runs ahead of it (per principal, in the order the workers will be
	// handed out), fails at once with a *BusyError (errors.Is(err,
	// ErrBusy)) whose RetryAfter comes from the same estimate.
	// 0: DefaultMaxExpectedWait; negative: no bound but MaxQueue.
	MaxExpectedWait time.Duration
	// MaxQueue is how many runs may wait for a worker while all are busy,
	// however short; past it Run fails at once with a *BusyError.
	// 0: 64×Workers; negative: no run waits.
	MaxQueue int
	// PerCallerWorkers is the most workers one caller holds while other
	// callers' runs wait: a freed worker goes first to a caller below it. A
	// caller is a session (Request.Caller), or a principal's requests that
	// have no session, together. 0: no cap. Workers are never left idle:
	// when only capped callers wait, one of them still gets the worker.
	PerCallerWorkers int
	// WorkerCommand starts a worker: a binary that calls ServeWorkerIfChild.
	// Default: this executable.
	WorkerCommand []string
	// Defaults fill the zero fields of each Request's Limits (then
	// DefaultLimits fills the rest).
	Defaults Limits
}

// Request is one snippet to run.
type Request struct {
	// Code is the TypeScript (or JavaScript) source. It may use top-level
	// await and a top-level return; the returned value is the result.
	Code string
	// Filename names the snippet in errors and stacks. Default "snippet.ts".
	Filename string
	Limits   Limits
	// Tools are bound into the VM as Namespace.Function(args); calls go to Host.
	Tools []Tool
	Host  Host
	// Caller is who runs the snippet; every ToolCall the Host gets carries it,
	// so the Host never has to remember whose run a call came from.
	Caller auth.Caller
	// Services lists the families of the snippet's `sandbox` global that
	// the Host implements: "store" is sandbox.store.get/set/delete/keys.
	// Their calls reach the Host as ToolCalls with a ServiceMethod Target
	// (traced as "sandbox:store.get"), and are counted as tool calls. Without any, there
	// is no sandbox global.
	Services []string
	// Nested marks a run started by a tool call of another run (a saved
	// script called from a snippet). It takes no scheduler slot, since its
	// caller holds one and waits for it, and gets an idle worker or one
	// started beyond Options.Workers (at most Workers such extras at once, and
	// at least 4);
	// past that it fails at once with ErrBusy rather than wait for a worker
	// that may be waiting on it. Bound the depth of nesting in the Host.
	Nested bool
	// Input, when set, is the JSON value of the snippet's global input (a
	// saved script's arguments).
	Input json.RawMessage
	// CompileOnly checks that the code compiles, in a worker like any run,
	// and runs none of it: the Result is OK with no value, or the compile
	// error with its line (saving a script checks its code so).
	CompileOnly bool
	// Journal, when set, makes the run keep a journal of what it takes from
	// outside the snippet (so that a Host may Suspend it), and replay this
	// one first: its calls answered from it, its clock readings and
	// randomness reused, its console lines not emitted again (journal.go).
	// An empty Journal: keep one, replay nothing.
	Journal *Journal
	// OnEvent, when set, hears the run's console entries and tool calls as
	// they happen (for live logs), from the runtime's goroutines, possibly
	// several at once; it must return quickly and not block. The Result
	// still holds them all.
	OnEvent func(Event)
}

// Event is one thing a run did, delivered to Request.OnEvent as it happens.
type Event struct {
	// Log is a console entry the output limit kept.
	Log *LogEntry
	// Call is a tool call when it starts, and again when it ends (Ended,
	// with its Duration, OK and Code).
	Call  *CallTrace
	Ended bool
}

// Tool is one tool bound to a run, callable in the snippet as
// Namespace.Function(args). A call reaches the Host as a ToolCall for ID.
//
// A Tool with only a Namespace (no ID, no Function) opens that namespace: it
// is installed even when no tool of it is bound, and a member the run has no
// bound tool for is not a NOT_BOUND failure in the VM but a call the Host
// gets with a NamespaceMember Target, to resolve or to fail (with
// UNKNOWN_TOOL and suggestions, say). Binding cost then does not grow with
// the catalog: only the tools the code names, plus one object per namespace.
type Tool struct {
	// ID is the gateway's tool id, "server:tool".
	ID string `json:"id"`
	// Namespace and Function are the TypeScript names (typegen.AssignNames),
	// so the functions a snippet can call are the ones its .d.ts declares.
	Namespace string `json:"namespace"`
	Function  string `json:"function"`
}

// Runtime runs snippets. It is safe for concurrent use; at most
// Options.Workers snippets run at once. The rest wait, up to Options.MaxQueue
// of them (bounded by their context too), and a freed worker goes to the
// waiting run whose caller holds the fewest (see Options.PerCallerWorkers);
// a run past the queue's bound fails at once with ErrBusy.
type Runtime struct {
	opts      Options
	sched     *scheduler
	pool      *pool // nil in-process
	closeOnce sync.Once
	closed    chan struct{}
}

// ErrClosed is returned by Run after Close.
var ErrClosed = errors.New("runtime: closed")

// New creates a Runtime. With IsolateWorkers it starts warming the worker pool
// in the background.
func New(opts Options) (*Runtime, error) {
	if opts.Workers <= 0 {
		opts.Workers = goruntime.NumCPU()
	}
	if opts.PerCallerWorkers < 0 {
		return nil, fmt.Errorf("runtime: PerCallerWorkers must not be negative (0: no cap), got %d", opts.PerCallerWorkers)
	}
	if err := opts.Defaults.Validate(); err != nil {
		return nil, err
	}
	r := &Runtime{
		opts:   opts,
		sched:  newScheduler(opts.Workers, opts.MaxQueue, opts.PerCallerWorkers),
		closed: make(chan struct{}),
	}
	if opts.MaxExpectedWait != 0 {
		r.sched.maxWait = opts.MaxExpectedWait
	}
	if opts.Isolation == IsolateWorkers {
		cmd := opts.WorkerCommand
		if len(cmd) == 0 {
			exe, err := os.Executable()
			if err != nil {
				return nil, fmt.Errorf("runtime: cannot find this executable to start workers: %w; set Options.WorkerCommand", err)
			}
			cmd = []string{exe}
		}
		r.pool = newPool(cmd, opts.Workers)
	}
	return r, nil
}

// Close stops the workers. Runs in progress are killed.
func (r *Runtime) Close() error {
	r.closeOnce.Do(func() {
		close(r.closed)
		if r.pool != nil {
			r.pool.close()
		}
	})
	return nil
}

// Warm reports whether a run could start now without first starting a
// worker: in process always; with workers, once at least one is up.
func (r *Runtime) Warm() bool {
	if r.pool == nil {
		return true
	}
	r.pool.mu.Lock()
	defer r.pool.mu.Unlock()
	return len(r.pool.all) > 0 && !r.pool.closed
}

// Run runs one snippet. The returned error is only for the runtime's own
// failures (closed, busy: a *BusyError, the context ended while waiting for a
// worker); everything about the snippet, its failures included, is in the
// Result.
func (r *Runtime) Run(ctx context.Context, req Request) (*Result, error) {
	limits := req.Limits.Or(r.opts.Defaults).WithDefaults()
	if err := limits.Validate(); err != nil {
		return nil, err
	}
	filename := sanitizeFilename(req.Filename)
	if e := checkCode(req.Code, limits); e != nil {
		e.File = filename
		return failed(e), nil
	}

	// Take a slot before any work on the code: the number of snippets being
	// transpiled or run never exceeds Options.Workers. A nested run's
	// caller already holds one, and waits for it.
	if !req.Nested {
		slot, err := r.sched.acquire(ctx, keyOf(req.Caller), req.Journal.resumes(), r.closed)
		if err != nil {
			return nil, err
		}
		defer r.sched.release(slot)
	}

	hs := newHostSide(ctx, &req, limits)
	if r.pool == nil {
		t, e := transpileCached(filename, req.Code)
		if e != nil {
			return hs.finish(execOutcome{Error: e}), nil
		}
		return r.runInProcess(ctx, hs, t, filename, limits, &req), nil
	}
	// Workers transpile themselves: the parent never parses agent code.
	return r.pool.run(ctx, hs, filename, limits, &req)
}

func failed(e *Error) *Result {
	return &Result{OK: false, Error: e, Logs: []LogEntry{}, Calls: []CallTrace{}}
}

// inProcessSide connects an execution to its hostSide directly.
type inProcessSide struct {
	hs *hostSide
	ex *execution
}

func (s *inProcessSide) startCall(id uint64, target bindings.Target, args json.RawMessage) {
	s.hs.addClock(s.ex.takeClock())
	s.hs.call(id, target, args, func(res json.RawMessage, terr *ToolError) { s.ex.deliver(id, res, terr) })
}

func (s *inProcessSide) log(e LogEntry) {
	s.hs.addClock(s.ex.takeClock())
	s.hs.vmLog(e)
}

func (s *inProcessSide) idle() {}

func (r *Runtime) runInProcess(ctx context.Context, hs *hostSide, t *transpiled, filename string, limits Limits, req *Request) *Result {
	side := &inProcessSide{hs: hs}
	ex := newExecution(side, limits, filename)
	side.ex = ex
	hs.clock.setNotify(ex.standClock)
	stop := context.AfterFunc(ctx, func() {
		ex.interrupt(&Error{Kind: KindCancelled, Message: "the run was cancelled by its caller: " + context.Cause(ctx).Error()})
	})
	defer stop()
	if hs.jr != nil {
		ex.useInputs(hs.jr.rec.Seed, hs.jr.replayedClock())
		done := make(chan struct{})
		defer close(done)
		go func() {
			select {
			case <-hs.stopped():
				ex.interrupt(suspendedError()) // finish reports the abort's own reason
			case <-done:
			}
		}()
	}
	ex.input = req.Input
	ex.compileOnly = req.CompileOnly
	out := ex.run(t, req.Tools, req.Services)
	out.Clock = ex.takeClock()
	return hs.finish(out)
}
