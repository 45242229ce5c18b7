package runtime

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/dlclark/regexp2/v2"
	"github.com/dop251/goja"
	"github.com/dop251/goja/parser"

	"github.com/sandboxrt/sandbox/runtime/internal/bindings"
	"github.com/sandboxrt/sandbox/runtime/internal/jsenv"
	"github.com/sandboxrt/sandbox/runtime/internal/lru"
)

// vmSide is what an execution needs from its surroundings: a way to start tool
// calls and a place for console output. In-process it calls the Host directly;
// in a worker it sends messages to the parent.
type vmSide interface {
	// startCall begins a tool call; it must not block. The answer comes back
	// through execution.deliver, from any goroutine.
	startCall(id uint64, target bindings.Target, args json.RawMessage)
	// log receives console output that is within the output limit.
	log(entry LogEntry)
	// idle says the VM has run everything it can and now waits (for an
	// answer or a timer): calls that startCall held back go out now, in one
	// write however many the last turn started (Promise.all).
	idle()
}

// execOutcome is what an execution ends with.
type execOutcome struct {
	Value          json.RawMessage `json:"value,omitempty"`
	Error          *Error          `json:"error,omitempty"`
	LogsTruncated  bool            `json:"logsTruncated,omitempty"`
	DroppedLogs    int             `json:"droppedLogs,omitempty"`
	CallsAbandoned []uint64        `json:"callsAbandoned,omitempty"`
	// Clock is the VM's clock readings not sent yet (a journalled run's).
	Clock []int64 `json:"clock,omitempty"`
}

// execution runs one snippet in a fresh VM. Every method except deliver,
// interrupt and the constructor runs on the VM's goroutine: goja is not
// goroutine-safe, so the VM's goroutine owns it and everything else sends it
// closures through the queue.
type execution struct {
	vm *goja.Runtime
	// compiled, when set, hears that the snippet compiled and is about to
	// run (a worker tells its parent, which then knows a deadline that
	// passes is the snippet's running, not its compiling).
	compiled func()
	// input is the JSON of the global input (Request.Input), if any.
	input json.RawMessage
	// compileOnly stops after the compile (Request.CompileOnly).
	compileOnly bool
	side        vmSide
	limits      Limits
	based       bool // setupBase is done (a prebuilt VM)
	filename    string
	start       time.Time
	tools       *bindings.Installed
	// env is the VM with the built-ins captured before user code ran; the
	// families of globals (globals.go) are installed on it.
	env *jsenv.Env
	// sourceLines is the snippet's line count: frames past it are the wrapper's.
	sourceLines int
	// inputs are a journalled run's clock and randomness (journal.go).
	inputs *vmInputs

	queue        jobQueue
	clockMu      sync.Mutex
	deadline     *deadline // the time limit; it stands while a person is asked (clock.go)
	clockStopped bool
	stopOnce     sync.Once
	stopped      chan struct{} // closed when the run must end (deadline, memory, cancel)
	stopErr      *Error        // why; written once before stopped is closed

	// VM-goroutine state.
	calls       map[uint64]*pendingCall
	nextCallID  uint64
	callsMade   int
	timers      timerHeap
	timerByID   map[int64]*timer
	nextTimerID int64
	timerSeq    uint64
	console     *consoleState
	inVM        goja.Callable // runs inVMJob inside the VM (callInVM)
	inVMJob     func()
	unhandled   []*goja.Promise // rejected promises without a handler, in order of rejection
	// pendingFatal is an error that must end the run, raised while the loop
	// ran a job (an interrupt, a stack overflow, an uncaught timer exception).
	pendingFatal *Error
}

type pendingCall struct {
	target bindings.Target
	stack  []goja.StackFrame // the call site, formatted only if the call fails
	res    func(any) error
	rej    func(any) error
}

// programCache holds compiled programs by the hash of their JavaScript: a
// *goja.Program can be shared between runtimes (design notes), and agents
// re-run the same snippet often. goja compiles regexp literals into the
// program with the regexp match timeout in force at the time, so the timeout
// is part of the key: a program compiled for a 100 ms run must not time out
// regexps of a 20 s run.
var programCache = lru.New[programKey, *goja.Program](64, 32<<20)

type programKey struct {
	hash         [32]byte
	matchTimeout time.Duration
}

// refuseSourceMapFile keeps goja from reading host files named by a
// sourceMappingURL comment; our own maps are inline data: URLs, which goja
// decodes without calling the loader.
func refuseSourceMapFile(string) ([]byte, error) {
	return nil, errors.New("source maps are only read inline")
}

func compileProgram(t *transpiled, filename string) (*goja.Program, error) {
	key := programKey{hash: t.Hash, matchTimeout: regexp2.DefaultMatchTimeout}
	if p, ok := programCache.Get(key); ok {
		return p, nil
	}
	ast, err := goja.Parse(filename+".js", t.JS, parser.WithSourceMapLoader(refuseSourceMapFile))
	if err != nil {
		return nil, err
	}
	if err := checkWrapper(ast); err != nil {
		return nil, err
	}
	if err := rewriteRegExpLiterals(ast, t.JS); err != nil {
		return nil, err
	}
	breakDeepChains(ast, t.JS)
	p, err := goja.CompileAST(ast, true)
	if err != nil {
		return nil, err
	}
	programCache.Put(key, p, 4*len(t.JS))
	return p, nil
}

func newExecution(side vmSide, limits Limits, filename string) *execution {
	return &execution{
		vm:        goja.New(),
		side:      side,
		limits:    limits,
		filename:  filename,
		stopped:   make(chan struct{}),
		calls:     map[uint64]*pendingCall{},
		timerByID: map[int64]*timer{},
		queue:     jobQueue{notify: make(chan struct{}, 1)},
	}
}

// standClock stops the run's time limit (a person is being asked about one
// of its calls) or starts it again. Safe from any goroutine.
func (e *execution) standClock(stopped bool) {
	e.clockMu.Lock()
	defer e.clockMu.Unlock()
	e.clockStopped = stopped
	if e.deadline != nil {
		e.deadline.stand(stopped)
	}
}

// interrupt ends the run with err. Safe from any goroutine; the first reason wins.
func (e *execution) interrupt(err *Error) {
	e.stopOnce.Do(func() {
		e.stopErr = err
		close(e.stopped)
		e.vm.Interrupt(err)
	})
}

// deliver hands a tool call's answer to the VM. Safe from any goroutine.
func (e *execution) deliver(id uint64, result json.RawMessage, toolErr *ToolError) {
	e.queue.post(func() { e.settleCall(id, result, toolErr) })
}

// run executes the snippet and returns its outcome. It runs on the calling
// goroutine, which becomes the VM's goroutine until run returns.
func (e *execution) run(t *transpiled, tools []Tool, services []string) (out execOutcome) {
	e.start = time.Now()
	e.sourceLines = t.Lines
	dl := newDeadline(e.limits.Timeout, func() {
		e.interrupt(&Error{Kind: KindLimit, Limit: LimitTime, Message: fmt.Sprintf(
			"the snippet ran past its %v time limit; do less work per snippet (fewer or smaller tool calls, no busy loops)"+RaiseLimitAdvice, e.limits.Timeout)})
	})
	defer dl.cancel()
	e.clockMu.Lock()
	e.deadline = dl
	dl.stand(e.clockStopped)
	e.clockMu.Unlock()
	defer func() {
		// A host function that panics re-raises through goja (design notes):
		// never let that take the process down.
		if r := recover(); r != nil {
			// An interrupt or stack overflow raised while Go code of ours was
			// reading JS values (a getter that loops while an error is being
			// described) is still the snippet's limit, not our failure.
			var gojaErr error
			switch x := r.(type) {
			case *goja.InterruptedError:
				gojaErr = x
			case *goja.StackOverflowError:
				gojaErr = x
			case *goja.Exception:
				gojaErr = x
			}
			if gojaErr != nil {
				out = execOutcome{Error: e.errorFrom(gojaErr)}
			} else {
				out = execOutcome{Error: &Error{Kind: KindInternal, Message: fmt.Sprintf("the runtime failed: %v", r)}}
			}
		}
		if e.console != nil {
			out.LogsTruncated = e.console.truncated
			out.DroppedLogs = e.console.dropped
		}
		for id := range e.calls {
			out.CallsAbandoned = append(out.CallsAbandoned, id)
		}
		e.stopTimers()
	}()

	e.vm.SetMaxCallStackSize(e.limits.StackDepth)
	if err := e.setup(tools, services, t.JS); err != nil {
		select {
		case <-e.stopped: // cancelled (or out of time) before the snippet started
			return execOutcome{Error: e.stopErr}
		default:
		}
		return execOutcome{Error: &Error{Kind: KindInternal, Message: err.Error()}}
	}
	prog, err := compileProgram(t, e.filename)
	if err != nil {
		return execOutcome{Error: e.compileFailure(t, err)}
	}
	if e.compiled != nil {
		e.compiled()
	}
	if e.compileOnly {
		return execOutcome{}
	}
	v, err := e.vm.RunProgram(prog)
	if err != nil {
		return execOutcome{Error: e.errorFrom(err)}
	}
	main, ok := v.Export().(*goja.Promise)
	if !ok {
		return execOutcome{Error: &Error{Kind: KindInternal, Message: "the wrapped snippet did not produce a promise"}}
	}
	if err := e.loop(main); err != nil {
		return execOutcome{Error: err}
	}
	switch main.State() {
	case goja.PromiseStateRejected:
		return execOutcome{Error: e.errorFromValue(main.Result())}
	case goja.PromiseStateFulfilled:
		e.reportUnhandledRejections(main)
		value, serr := e.serializeResult(main.Result())
		if serr != nil {
			return execOutcome{Error: serr}
		}
		return execOutcome{Value: value}
	}
	return execOutcome{Error: &Error{Kind: KindInternal, Message: "the event loop ended with the snippet still pending"}}
}

// settleCall resolves or rejects the promise of a tool call with its answer.
func (e *execution) settleCall(id uint64, result json.RawMessage, toolErr *ToolError) {
	pc, ok := e.calls[id]
	if !ok {
		return // answered after the run gave up on it
	}
	delete(e.calls, id)
	var err error
	if toolErr == nil {
		v, perr := e.tools.ParseJSON(result)
		if perr != nil {
			toolErr = &ToolError{Code: CodeInvalidResult, Message: "the tool's result is not valid JSON: " + perr.Error()}
		} else {
			err = pc.res(v)
		}
	}
	if toolErr != nil {
		err = pc.rej(e.tools.NewError(bindings.ErrorInfo{Tool: pc.target.String(), Code: toolErr.Code, Message: toolErr.Message, Data: toolErr.Data}, formatStack(pc.stack)))
	}
	if err != nil && e.pendingFatal == nil {
		e.pendingFatal = e.errorFrom(err)
	}
}

// invoke is bindings.Invoke: it starts a tool call and returns its promise.
func (e *execution) invoke(t bindings.Target, args goja.Value) goja.Value {
	if e.callsMade >= e.limits.ToolCalls {
		e.interrupt(&Error{Kind: KindLimit, Limit: LimitToolCalls, Message: fmt.Sprintf(
			"the snippet tried to make more than %d tool calls; batch the work (fewer, larger calls)"+RaiseLimitAdvice, e.limits.ToolCalls)})
		return goja.Undefined()
	}
	stack := e.vm.CaptureCallStack(8, nil)
	argJSON, aerr := e.serializeArgs(args)
	if aerr != nil {
		p, _, rej := e.vm.NewPromise()
		_ = rej(e.tools.NewError(bindings.ErrorInfo{Tool: t.String(), Code: CodeInvalidArguments, Message: t.Written() + ": " + aerr.Message}, formatStack(stack)))
		return e.vm.ToValue(p)
	}
	e.callsMade++
	e.nextCallID++
	id := e.nextCallID
	p, res, rej := e.vm.NewPromise()
	e.calls[id] = &pendingCall{target: t, stack: stack, res: res, rej: rej}
	e.side.startCall(id, t, argJSON)
	return e.vm.ToValue(p)
}
