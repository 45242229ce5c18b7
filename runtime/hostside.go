package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sandboxrt/sandbox/internal/bytesize"
	"github.com/sandboxrt/sandbox/internal/growstack"
	"github.com/sandboxrt/sandbox/runtime/internal/bindings"
)

// hostSide is the trusted half of a run: it answers the VM's tool calls
// through the Host, keeps the trace and the console output, and enforces the
// call limits again. In worker mode it lives in the parent, so a worker that
// is killed (timeout, memory) or misbehaves loses none of what was already
// logged or called, and cannot call tools it was not given.
type hostSide struct {
	ctx     context.Context
	cancel  context.CancelFunc
	host    Host
	onEvent func(Event)
	bound   map[string]bool
	open    map[string]bool // namespaces whose unbound members go to the Host
	// services are the sandbox.* families of this run (Request.Services).
	services map[string]bool
	limits   Limits
	start    time.Time
	clock    runClock // stands while a person is asked (ToolCall.PauseClock)
	// toolCall is what every ToolCall of the run shares (its caller, and
	// the method values Log, Charge and PauseClock, made once rather than
	// allocated again for every call).
	toolCall ToolCall

	mu         sync.Mutex
	finished   bool
	calls      []CallTrace
	callIndex  map[uint64]int
	inFlight   map[uint64]bool
	charged    int // tool calls a Host made on the run's behalf (ToolCall.Charge)
	logs       []LogEntry
	logBytes   int
	truncated  bool
	droppedLog int

	// jr is the run's journal (journal.go); nil unless the run keeps one.
	jr       *journalState
	stop     chan struct{} // closed by abort
	stopOnce sync.Once
	abortErr *Error // why the run was aborted (h.mu)
}

func newHostSide(ctx context.Context, req *Request, limits Limits) *hostSide {
	ctx, cancel := context.WithCancel(ctx)
	h := &hostSide{
		ctx: ctx, cancel: cancel, host: req.Host, onEvent: req.OnEvent, limits: limits, start: time.Now(),
		bound: make(map[string]bool, len(req.Tools)), callIndex: map[uint64]int{}, inFlight: map[uint64]bool{},
	}
	h.toolCall = ToolCall{Caller: req.Caller, Log: h.log, Charge: h.charge, PauseClock: h.clock.pause}
	if req.Journal != nil {
		h.jr, h.stop = newJournalState(req.Journal), make(chan struct{})
		h.logs = append(h.logs, h.jr.rec.Logs...)
		for _, e := range h.logs {
			h.logBytes += len(e.Message) + logEntryOverhead
		}
	}
	for _, s := range req.Services {
		if h.services == nil {
			h.services = map[string]bool{}
		}
		h.services[s] = true
	}
	for _, t := range req.Tools {
		if t.ID == "" && t.Function == "" {
			if h.open == nil {
				h.open = map[string]bool{}
			}
			h.open[t.Namespace] = true
			continue
		}
		h.bound[t.ID] = true
	}
	return h
}

// mayCall reports whether the VM may call target, by its kind: a bound
// tool's id; a member of an open namespace (the Host resolves it for the
// run's caller, so a worker naming any member reaches only what the caller
// may use); a method of one of the run's sandbox families. A worker can
// send any target, of any kind: each is checked against what the run was
// given, never against what the worker says it is.
func (h *hostSide) mayCall(target bindings.Target) bool {
	switch target.Kind {
	case bindings.KindTool:
		return h.bound[target.ID]
	case bindings.KindMember:
		fn := target.Function
		return h.open[target.Namespace] && fn != "" && !strings.ContainsAny(fn, ".:")
	case bindings.KindService:
		return h.services[target.Namespace] && bindings.IsServiceMethod(target.Namespace, target.Function)
	}
	return false
}

// call answers one tool call from the VM; reply is called exactly once, from
// another goroutine or before call returns.
func (h *hostSide) call(id uint64, target bindings.Target, args json.RawMessage, reply func(json.RawMessage, *ToolError)) {
	h.mu.Lock()
	if h.finished {
		h.mu.Unlock()
		return
	}
	_, dup := h.callIndex[id]
	started := len(h.calls)
	var refuse *ToolError
	switch {
	case dup:
		refuse = &ToolError{Code: CodeHostError, Message: "duplicate call id from the VM"}
	case !h.mayCall(target):
		refuse = &ToolError{Code: CodeNotBound, Message: fmt.Sprintf("tool %q is not bound to this run", target)}
	case started+h.charged >= h.limits.ToolCalls:
		refuse = &ToolError{Code: CodeToolCallLimit, Message: fmt.Sprintf("more than %d tool calls", h.limits.ToolCalls)}
	case h.host == nil:
		refuse = &ToolError{Code: CodeNoHost, Message: "this run has tools bound but no host to call them; pass a Host in the Request"}
	case !json.Valid(args):
		refuse = &ToolError{Code: CodeInvalidArguments, Message: "the arguments are not valid JSON"}
	}
	if refuse != nil {
		h.mu.Unlock()
		reply(nil, refuse)
		return
	}
	callCtx := h.ctx
	if h.jr != nil {
		if h.journalCall(started, id, target, args, reply) {
			return
		}
		callCtx = context.WithValue(h.ctx, callKey{}, &callRef{h: h, index: started})
	}
	h.callIndex[id] = started
	h.inFlight[id] = true
	h.calls = append(h.calls, CallTrace{Tool: target.String(), Start: time.Since(h.start), ArgBytes: len(args)})
	var begun *CallTrace // a copy, made under h.mu, only for OnEvent
	if h.onEvent != nil {
		tr := h.calls[started]
		begun = &tr
	}
	h.mu.Unlock()
	if begun != nil {
		h.onEvent(Event{Call: begun})
	}

	go func() {
		// The call goes deep (the Host, the gateway's steps, the upstream):
		// grow the stack once now rather than twice on the way (16 µs a call).
		growstack.To16K()
		t0 := time.Now()
		var checked checkedResult
		call := h.toolCall
		call.Target, call.Arguments, call.checked = targetOf(target), args, &checked
		res, err := safeCall(callCtx, h.host, call)
		var terr *ToolError
		if err != nil {
			terr = toToolError(err)
			res = nil
		} else if !checked.holds(res) && !json.Valid(res) {
			terr = &ToolError{Code: CodeInvalidResult, Message: "the host answered with invalid JSON"}
			res = nil
		}
		h.mu.Lock()
		// A run whose context ended (the caller cancelled, or the run is
		// over) hears no more answers: the CANCELLED answer of a call cut
		// short by the caller's cancellation must not race the cancellation
		// itself and end the run as a tool error instead.
		finished := h.finished || h.ctx.Err() != nil
		var ended *CallTrace
		if !h.finished {
			tr := &h.calls[h.callIndex[id]]
			tr.Duration = time.Since(t0)
			tr.OK = terr == nil
			if terr != nil {
				tr.Code = terr.Code
			}
			tr.ResultBytes = len(res)
			delete(h.inFlight, id)
			if h.onEvent != nil {
				copied := *tr
				ended = &copied
			}
		}
		if h.jr != nil && !finished {
			h.journalAnswer(h.callIndex[id], res, terr, reply)
			finished = true // answered (or held back) under h.mu
		}
		h.mu.Unlock()
		if ended != nil && h.onEvent != nil {
			h.onEvent(Event{Call: ended, Ended: true})
		}
		if !finished { // a run that ended must not hear answers any more
			reply(res, terr)
		}
	}()
}

// safeCall keeps a panicking Host from taking the process down.
func safeCall(ctx context.Context, host Host, call ToolCall) (res json.RawMessage, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = HostPanicked(r)
		}
	}()
	return host.CallTool(ctx, call)
}

// HostPanicked is the error a snippet's call fails with when its Host
// panicked with r: the runtime recovers such a panic itself, and a Host
// that recovers its own first (to log it) answers the same.
func HostPanicked(r any) error {
	return &ToolError{Code: CodeHostError, Message: fmt.Sprintf("the host panicked: %v", r)}
}

// waitingFor says which tool calls a run that ran out of time was still
// waiting for, and for how long: a call whose server never answers would
// otherwise look like a snippet that did too much. The earliest three, in
// the order they were made; h.mu is held.
func (h *hostSide) waitingFor(now time.Duration) string {
	var idx []int
	for id := range h.inFlight {
		idx = append(idx, h.callIndex[id])
	}
	slices.Sort(idx)
	var b strings.Builder
	b.WriteString("; when it was stopped, it was still waiting for the answer of ")
	for n, i := range idx[:min(len(idx), 3)] {
		if n > 0 {
			b.WriteString(", ")
		}
		tr := h.calls[i]
		fmt.Fprintf(&b, "%s (tool call %d of the run, made %s before, never answered)", tr.Tool, i+1, (now - tr.Start).Round(time.Millisecond))
	}
	if len(idx) > 3 {
		fmt.Fprintf(&b, " and %d more %s", len(idx)-3, plural(len(idx)-3, "call", "calls"))
	}
	return b.String()
}

// charge counts tool calls made on the run's behalf (ToolCall.Charge).
func (h *hostSide) charge(n int) {
	h.mu.Lock()
	h.charged += n
	h.mu.Unlock()
}

// vmLog is log for the snippet's own console lines: a replay does not
// emit again the ones its journal holds.
func (h *hostSide) vmLog(e LogEntry) {
	if h.jr != nil {
		h.mu.Lock()
		fresh := h.finished || h.journalLog()
		h.mu.Unlock()
		if !fresh {
			return
		}
	}
	h.log(e)
}

// log keeps one console entry within the output limit, and passes it on
// to OnEvent when it was kept.
func (h *hostSide) log(e LogEntry) {
	if h.keepLog(&e) && h.onEvent != nil {
		h.onEvent(Event{Log: &e})
	}
}

func (h *hostSide) keepLog(e *LogEntry) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.finished {
		return false
	}
	cost := len(e.Message) + logEntryOverhead
	if h.truncated || h.logBytes+cost > h.limits.OutputBytes {
		room := h.limits.OutputBytes - h.logBytes - logEntryOverhead
		kept := false
		if !h.truncated && room > 0 {
			e.Message = truncateUTF8(e.Message, room)
			h.logs = append(h.logs, *e)
			h.logBytes += len(e.Message) + logEntryOverhead
			kept = true
		} else {
			h.droppedLog++
		}
		h.truncated = true
		return kept
	}
	h.logBytes += cost
	h.logs = append(h.logs, *e)
	return true
}

// finish ends the run: in-flight calls are cancelled and marked so, and the
// result is assembled. Answers that arrive later are ignored.
func (h *hostSide) finish(out execOutcome) *Result {
	h.cancel()
	h.mu.Lock()
	h.finished = true
	if h.abortErr != nil {
		out.Error, out.Value = h.abortErr, nil
	}
	var handOver func()
	if h.jr != nil {
		h.addClockLocked(out.Clock)
		handOver = h.finishJournal(&out)
	}
	res := h.result(out)
	h.mu.Unlock()
	if handOver != nil {
		handOver()
	}
	return res
}

// result assembles the run's Result; h.mu is held.
func (h *hostSide) result(out execOutcome) *Result {
	now := time.Since(h.start)
	outErr := out.Error
	if outErr != nil && outErr.Kind == KindLimit && outErr.Limit == LimitTime && len(h.inFlight) > 0 {
		e := *outErr
		e.Message += h.waitingFor(now)
		outErr = &e
	}
	for id := range h.inFlight {
		tr := &h.calls[h.callIndex[id]]
		tr.Duration = now - tr.Start
		tr.Code = CodeCancelled
	}
	res := &Result{
		OK:       out.Error == nil,
		Value:    out.Value,
		Error:    capError(outErr),
		Logs:     h.logs,
		Calls:    h.calls,
		Duration: now,
	}
	if out.LogsTruncated || h.truncated {
		res.LogsTruncated = true
		dropped := max(out.DroppedLogs, h.droppedLog)
		res.Logs = append(res.Logs, LogEntry{Level: LevelWarn, Message: fmt.Sprintf(
			"[console output truncated: over the %s output limit; %d later console calls were dropped]",
			bytesize.Format(int64(h.limits.OutputBytes)), dropped)})
	}
	if res.Logs == nil {
		res.Logs = []LogEntry{}
	}
	if res.Calls == nil {
		res.Calls = []CallTrace{}
	}
	return res
}
