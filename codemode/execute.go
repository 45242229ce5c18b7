package codemode

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/errcode"
	"github.com/sandboxrt/sandbox/gateway"
	"github.com/sandboxrt/sandbox/internal/logx"
	"github.com/sandboxrt/sandbox/internal/telemetry"
	"github.com/sandboxrt/sandbox/runtime"
	"github.com/sandboxrt/sandbox/vectorindex"
)

// ExecuteRequest is one snippet to run with tools.
type ExecuteRequest struct {
	// Code is the TypeScript snippet (top-level await and return allowed).
	Code string
	// Filename names it in errors; default "snippet.ts".
	Filename string
	// Intent, when set, binds the top-K tools a search for it finds.
	Intent string
	// Tools binds these tools too, by id ("github:list_commits") or by their
	// TypeScript name ("github.listCommits").
	Tools []string
	// Limits override Options.Limits field by field, up to Options.MaxLimits.
	Limits runtime.Limits
	// FindTools says how this caller finds tools, for error hints (default
	// "search_tools", the MCP tool; the CLI says `sandbox search`).
	FindTools string
	// ServerStatus says where this caller sees the servers' states, for the
	// hint of a call to a server that is down (default "gateway__list_servers",
	// the hub tool; the CLI says `sandbox servers`).
	ServerStatus string
	// Input is the JSON value of the snippet's global input (how a saved
	// script receives its arguments).
	Input json.RawMessage
	// OnEvent hears console entries and tool calls as they happen (see
	// runtime.Request.OnEvent); execute_code streams them as notifications.
	OnEvent func(runtime.Event)
	// Caller is who runs the snippet. Each tool call goes through the gateway
	// as this caller: its tokens, and its session's narrowing (a call to a
	// server the session disconnected from fails with SERVICE_NOT_FOUND).
	// Only servers the caller's principal may use are namespaces in the VM;
	// any other name fails as an unknown tool would (UNKNOWN_TOOL), so a
	// scoped agent never learns what else exists. A server its session
	// disconnected from stays a namespace whose calls say how to reconnect.
	Caller auth.Caller
}

// ExecuteResult is a run's result and which tools were bound to it.
type ExecuteResult struct {
	*runtime.Result
	// Bound lists the tools the snippet could call, as "namespace.function".
	Bound []string `json:"bound"`
	// Limits are the limits the run had, after the ceiling.
	Limits AppliedLimits `json:"limits"`
}

// Execute runs a snippet. The tools bound to it are the union of: those named
// in Tools, the top-K for Intent, and every catalog tool the code itself
// names (`github.listCommits(`), so a snippet never fails just because the
// search did not pick a tool it calls. Each call goes through the gateway's
// router as req.Caller.
//
// The error is for requests that cannot run at all (an unknown tool id, a
// closed runtime, a busy runtime); a snippet's own failures are in the
// result. When the runtime refuses the run because it is at capacity
// (runtime.ErrBusy), the error is a *gateway.Error with code CodeBusy whose
// message says when to retry, and whose data has the figures:
// {"running", "waiting", "retryAfterMs"}.
func (e *Engine) Execute(ctx context.Context, req ExecuteRequest) (*ExecuteResult, error) {
	return e.execute(ctx, req, false, &callCounter{})
}

// execute is Execute, for a top-level run or (nested) a saved script
// called from one, whose tool calls count on the caller's counter.
func (e *Engine) execute(ctx context.Context, req ExecuteRequest, nested bool, calls *callCounter) (out *ExecuteResult, err error) {
	if e.rt == nil {
		return nil, errors.New("codemode: this engine has no runtime; pass one to New to execute code")
	}
	st := e.state.Load()
	// A tool the policy always denies is never bound: a call of it is
	// resolved as a namespace member and refused by the gateway (DENIED,
	// saying why), as everywhere else in code mode.
	ids := map[string]bool{}
	for _, name := range req.Tools {
		id, ok := st.resolve(name)
		if !ok || !req.Caller.Principal.MaySee(st.tools[st.byID[id]].Server) {
			return nil, e.unknownToolError(st, req.Caller, name)
		}
		if !st.denied[id] {
			ids[id] = true
		}
	}
	var intentMemo *searchMemo // the calls of the run are evidence for its intent's words
	if strings.TrimSpace(req.Intent) != "" {
		intentMemo = e.learn.runMemo(req.Intent)
		hits, _, _, err := e.searchVisible(ctx, st, req.Caller, req.Intent, e.opts.K)
		if err != nil && !errors.Is(err, vectorindex.ErrEmptyIntent) {
			return nil, err
		}
		for _, h := range hits {
			ids[h.ID] = true
		}
	}
	for _, id := range st.namedIn(req.Code) {
		if req.Caller.Principal.MaySee(st.tools[st.byID[id]].Server) && !st.denied[id] {
			ids[id] = true
		}
	}

	tools := make([]runtime.Tool, 0, len(ids))
	bound := make([]string, 0, len(ids))
	for id := range ids {
		b, ok := st.names.Lookup(id)
		if !ok {
			continue
		}
		tools = append(tools, runtime.Tool{ID: id, Namespace: b.Namespace, Function: b.Function})
		bound = append(bound, b.Namespace+"."+b.Function)
	}
	sort.Strings(bound)
	sort.Slice(tools, func(i, j int) bool { return tools[i].ID < tools[j].ID })
	tools = append(tools, e.openNamespaces(st, req.Caller, req.Code)...)
	if strings.Contains(req.Code, ScriptNamespace+".") {
		tools = append(tools, runtime.Tool{Namespace: ScriptNamespace})
	}

	limits, clamped := e.applyLimits(req.Limits)
	runID := newRunID()
	root := rootRunOf(ctx, runID)
	journal, resumedRoot, err := runJournal(ctx, nested)
	if err != nil {
		return nil, err
	}
	if resumedRoot != "" {
		root = resumedRoot // what the run held before its release is still its
	}
	owner := resultOwner(req.Caller, root, stateContextOf(ctx)) // of the results held for this run
	ctx, span := startRunSpan(ctx, runID, limits.WithDefaults(), nested)
	defer span.End()
	budget := &runBudget{left: resultBudget(limits.WithDefaults().MemoryBytes)}
	scriptCalls := &scriptRun{limits: limits.WithDefaults(), calls: calls, root: root}
	host := runtime.HostFunc(func(ctx context.Context, call runtime.ToolCall) (_ json.RawMessage, err error) {
		// The runtime recovers a Host's panic (runtime.HostPanicked) but
		// has no log: without this, a bug in the call's
		// handling (the gateway's pipeline, sandbox.store, results, shapes
		// learning) would be told to the agent only.
		defer func() {
			if r := recover(); r != nil {
				logx.Panic(e.log, "code mode: a snippet's call panicked", r, "target", call.Target.String())
				err = runtime.HostPanicked(r)
			}
		}()
		calls.add(1)
		ctx = releasable(ctx, journal != nil, nested, root)
		var id string
		switch t := call.Target; t.Kind {
		case runtime.ServiceMethod:
			return e.callService(ctx, call, budget, owner)
		case runtime.NamespaceMember:
			if t.Namespace == ScriptNamespace { // opened for saved scripts above
				return e.callScript(ctx, call, scriptCalls)
			}
			var terr *runtime.ToolError
			findTools := req.FindTools
			if findTools == "" {
				findTools = defaultFindToolsHint
			}
			serverStatus := req.ServerStatus
			if serverStatus == "" {
				serverStatus = defaultServerStatusHint
			}
			if id, terr = e.resolveMember(st, call.Caller, t, findTools, serverStatus); terr != nil {
				return nil, terr
			}
		case runtime.BoundTool:
			id = t.Tool
		default:
			return nil, fmt.Errorf("codemode: a call to %+v, of a kind the runtime does not make", t)
		}
		// Spill: a result too large for the gateway's memory comes in a
		// file, and becomes a handle below like any result too large for
		// the run.
		res, err := e.gw.Call(ctx, gateway.CallRequest{Tool: id, Arguments: call.Arguments, Caller: call.Caller, Run: runID, PauseClock: call.PauseClock, Spill: true})
		if err != nil {
			var ge *gateway.Error
			if errors.As(err, &ge) && ge.Code == gateway.CodeResultTooLarge {
				return nil, resultTooLarge(id, 0, e.maxToolResult(gatewayCap(ge)))
			}
			if errors.As(err, &ge) {
				msg, data := ge.Message, ge.Data
				if len(data) > 0 && !budget.take(int64(len(data))) {
					// A tool's refusal carries its content as data, which
					// counts as a result does: a refusal too long for what
					// is left of the budget comes without it.
					msg += fmt.Sprintf(" (the error's data, %d bytes, is left out: more than this run may still receive)", len(data))
					data = nil
				}
				return nil, &runtime.ToolError{Code: string(ge.Code), Message: msg, Data: data}
			}
			return nil, err
		}
		if !res.IsError && !nested { // a saved script's calls are its code's, not a choice after a search
			e.learn.called(call.Caller, intentMemo, id)
		}
		if res.Spilled != nil {
			return e.takeSpilled(ctx, owner, id, res.Spilled, budget)
		}
		value, derr := call.DecodeResult(res.Content, res.StructuredContent)
		if derr != nil {
			return nil, &runtime.ToolError{Code: string(gateway.CodeProtocolError), Message: fmt.Sprintf("%s answered with a result that cannot be read: %v", call.Target, derr)}
		}
		if i, ok := st.byID[id]; ok && len(st.tools[i].OutputSchema) == 0 && !res.IsError {
			e.shapes.observe(toolShape(id), st.def(i), value, shapeProducer(call.Caller.Principal))
		}
		if !budget.take(int64(len(value))) {
			// Too large to hand over whole: the snippet gets a handle to
			// read it in parts (results.go), up to the most a call may return.
			if max := e.maxToolResult(0); int64(len(value)) > max {
				return nil, resultTooLarge(id, int64(len(value)), max)
			}
			handle, err := e.results.hold(ctx, owner, id, int64(len(value)), bytes.NewReader(value))
			if err != nil {
				return nil, holdFailed(err)
			}
			return handle, nil
		}
		return value, nil
	})
	onEvent := req.OnEvent
	if !nested { // the watchers hear top-level runs (watch.go)
		onEvent = e.watch.run(RunInfo{ID: runID, Caller: req.Caller, Code: req.Code, Intent: req.Intent, Started: time.Now(), Limits: appliedLimits(limits, clamped)}, req.OnEvent)
		defer func() { e.watch.ended(runID, out, err) }()
	}
	onEvent = e.containEvents(onEvent)
	res, err := e.rt.Run(ctx, runtime.Request{Code: req.Code, Filename: req.Filename, Limits: limits, Tools: tools, Host: host, Caller: req.Caller, OnEvent: onEvent,
		Services: e.servicesFor(req.Code), Nested: nested, Input: req.Input, Journal: journal})
	var busy *runtime.BusyError
	if errors.As(err, &busy) {
		span.SetStatus(codes.Error, string(CodeBusy))
		return nil, busyError(busy)
	}
	if err != nil {
		span.SetStatus(codes.Error, err.Error())
		return nil, err
	}
	outcome := "OK"
	if !res.OK {
		outcome = string(res.Error.Kind)
	}
	endRunSpan(span, res, outcome)
	e.auditRun(req.Caller, outcome, res.Duration, req.Code, len(res.Value))
	return &ExecuteResult{Result: res, Bound: bound, Limits: appliedLimits(limits, clamped)}, nil
}

// takeSpilled hands a run a result the gateway spilled to a file: whole
// when it fits what is left of the run's budget (counted once, as the
// gateway counted it), else as a handle. A spilled text holding JSON
// becomes that JSON, as runtime.DecodeResult makes it. Its learned type
// is not folded in: reading hundreds of megabytes for a type is not worth
// it, and the next smaller result teaches it.
func (e *Engine) takeSpilled(ctx context.Context, owner, id string, sp *gateway.SpilledResult, budget *runBudget) (json.RawMessage, error) {
	defer sp.Remove()
	f, err := sp.Open()
	if err != nil {
		return nil, holdFailed(err)
	}
	defer f.Close()
	if !budget.take(sp.Bytes) {
		if max := e.maxToolResult(0); sp.Bytes > max {
			return nil, resultTooLarge(id, sp.Bytes, max)
		}
		handle, err := e.results.hold(ctx, owner, id, sp.Bytes, f)
		if err != nil {
			return nil, holdFailed(err)
		}
		return handle, nil
	}
	value, err := io.ReadAll(f)
	if err != nil {
		return nil, holdFailed(err)
	}
	var text string
	if len(value) > 0 && value[0] == '"' && json.Unmarshal(value, &text) == nil {
		if t := strings.TrimSpace(text); t != "" && json.Valid([]byte(t)) {
			return json.RawMessage(t), nil
		}
	}
	return value, nil
}

// auditRun records one run: who ran it, how it ended, how long it took,
// and the size and SHA-256 of its code, never the code itself. Its tool is
// "execute_code" whichever way the run came (docs/operations.md).
func (e *Engine) auditRun(caller auth.Caller, outcome string, d time.Duration, code string, resultBytes int) {
	if e.opts.Audit == nil {
		return
	}
	sum := sha256.Sum256([]byte(code))
	e.opts.Audit.Audit(gateway.AuditRecord{Kind: gateway.AuditKindRun, Principal: caller.Principal.Key(), Session: string(caller.Session), Tool: "execute_code",
		Outcome: outcome, DurationMs: float64(d.Microseconds()) / 1000, ArgBytes: len(code), ArgsSHA256: hex.EncodeToString(sum[:]), ResultBytes: resultBytes})
}

// resolve turns a tool reference into its id: "server:tool" or "ns.fn".
func (st *catalogState) resolve(name string) (string, bool) {
	if _, ok := st.byID[name]; ok {
		return name, true
	}
	if ns, fn, ok := strings.Cut(name, "."); ok {
		if b, ok := st.names.Resolve(ns, fn); ok {
			if _, ok := st.byID[b.ID]; ok {
				return b.ID, true
			}
		}
	}
	return "", false
}

// namedIn lists the catalog tools the code names as namespace.function.
// Text in strings and comments counts too: binding a tool that is only
// mentioned costs nothing, missing one that is called fails the run.
func (st *catalogState) namedIn(code string) []string {
	var ids []string
	seen := map[[2]string]bool{}
	for m := range memberAccesses(code) {
		if seen[m] {
			continue
		}
		seen[m] = true
		if b, ok := st.names.Resolve(m[0], m[1]); ok {
			ids = append(ids, b.ID)
		}
	}
	return ids
}

// CodeBusy is Execute's error code when the sandbox is running all the
// snippets it may and as many wait as may wait: the run was refused without
// starting, and the message says when to retry. It is code mode's own,
// beside the gateway's codes in errcode's table; the runtime's error is
// runtime.ErrBusy.
const CodeBusy = errcode.Busy

// The operations of the engine as its spans and the Tool of its errors
// name them. A run is "execute_code" wherever it comes from (the MCP tool
// of that name, `sandbox run`, a Go caller): the name operators and agents
// know runs by. It is the operation's, not the tool's: the MCP face names
// its tools itself (mcp.go).
const (
	runOperation         = "execute_code"
	nestedRunOperation   = "saved_script" // a saved script called from a snippet
	defaultFindToolsHint = "search_tools" // ExecuteRequest.FindTools
	// defaultServerStatusHint is ExecuteRequest.ServerStatus's default.
	defaultServerStatusHint = "gateway__list_servers"
)

// busyError tells the agent that its run was refused for now, and when to
// try again.
func busyError(b *runtime.BusyError) *gateway.Error {
	retry := b.RetryAfter.Round(100 * time.Millisecond)
	why := fmt.Sprintf("the sandbox is running all the snippets it can at once (%d)", b.Running)
	if b.Waiting > 0 {
		why += fmt.Sprintf(" and %d more are waiting, as many as may wait", b.Waiting)
	}
	if b.ExpectedWait > 0 {
		why = fmt.Sprintf("the sandbox is running all the snippets it can at once (%d)", b.Running)
		if b.Waiting > 0 {
			why += fmt.Sprintf(" and %d more are waiting", b.Waiting)
		}
		why += fmt.Sprintf("; this snippet would wait about %s for its turn, longer than the %s a snippet may wait",
			b.ExpectedWait.Round(100*time.Millisecond), b.MaxWait)
	}
	if b.Displaced {
		why = "the queue was full and this snippet gave its place to one of a caller with fewer snippets in the sandbox; " + why
	}
	data, _ := json.Marshal(map[string]int64{"running": int64(b.Running), "waiting": int64(b.Waiting), "retryAfterMs": retry.Milliseconds()})
	return &gateway.Error{Code: CodeBusy, Tool: runOperation,
		Message: fmt.Sprintf("%s. The snippet did not run; run it again in about %s (an agent with fewer snippets running or waiting goes first)", why, retry),
		Data:    data}
}

// newRunID names a run for the gateway (a person may approve every call of
// a tool in one run).
func newRunID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// startRunSpan is the span of one run (a saved script called from a snippet
// is one too, nested in its caller's), with its limits.
func startRunSpan(ctx context.Context, runID string, l runtime.Limits, nested bool) (context.Context, trace.Span) {
	name := runOperation
	if nested {
		name = nestedRunOperation
	}
	ctx, span := telemetry.Tracer().Start(ctx, name)
	if span.IsRecording() {
		span.SetAttributes(
			attribute.String("sandbox.run.id", runID),
			attribute.Int64("sandbox.limits.timeout_ms", l.Timeout.Milliseconds()),
			attribute.Int64("sandbox.limits.memory_bytes", l.MemoryBytes),
			attribute.Int("sandbox.limits.tool_calls", l.ToolCalls),
		)
	}
	return ctx, span
}

// endRunSpan records how the run ended.
func endRunSpan(span trace.Span, res *runtime.Result, outcome string) {
	if !span.IsRecording() {
		return
	}
	span.SetAttributes(attribute.String("sandbox.run.outcome", outcome), attribute.Int("sandbox.run.tool_calls", len(res.Calls)),
		attribute.Int64("sandbox.run.duration_ms", res.Duration.Milliseconds()))
	if !res.OK {
		span.SetStatus(codes.Error, outcome)
	}
}

// containEvents keeps a listener of a run's events (the client's stream,
// the run observers) that panics from ending the process: the runtime
// calls it on goroutines of its own (the one reading the worker's frames,
// the one making a tool call), which nothing else recovers. The event is
// lost to the listeners after the one that panicked; the run goes on.
func (e *Engine) containEvents(onEvent func(runtime.Event)) func(runtime.Event) {
	if onEvent == nil {
		return nil
	}
	return func(ev runtime.Event) {
		defer func() {
			if r := recover(); r != nil {
				logx.Panic(e.log, "code mode: a listener of a run's events panicked; the event was lost", r)
			}
		}()
		onEvent(ev)
	}
}
