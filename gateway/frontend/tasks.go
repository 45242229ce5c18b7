package frontend

// The tasks extension (io.modelcontextprotocol/tasks, SEP-2663) over HTTP:
// a tools/call of a tool that may run as a task, from a request that
// declares the extension, is answered at once with the task; the call runs
// on without its client, through the same pipeline as any call (mcp-go's
// Handle, with a writer that keeps the answer), and its run lives in a
// runs.Registry (shared by replicas when its store is). tasks/get,
// tasks/update and tasks/cancel are answered here, before mcp-go, for the
// task's owner only: another principal's task id is not found.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/gateway"
	"github.com/sandboxrt/sandbox/internal/logx"
	"github.com/sandboxrt/sandbox/internal/mcphttp"
	"github.com/sandboxrt/sandbox/runs"
)

// TasksExtension is the extension's identifier, under
// capabilities.extensions and in a request's declared capabilities.
const TasksExtension = "io.modelcontextprotocol/tasks"

// TaskOptions turn on the tasks extension (WithTasks).
type TaskOptions struct {
	// Registry keeps the runs (required).
	Registry *runs.Registry
	// Tools says which built-in and callers' own tools run as tasks (nil:
	// none). An upstream tool runs as one when its definition says
	// execution.taskSupport "optional" or "required".
	Tools func(name string) bool
	// PollInterval is the polling interval suggested to clients (default 1s).
	PollInterval time.Duration
	// InputWait bounds how long a task that asks for input (its call's
	// input_required, or an upstream's request during it) waits for
	// tasks/update (default and most: RequestStateTTL, past which
	// the call's requestState is refused anyway); past it the task fails.
	InputWait time.Duration
}

// WithTasks advertises the tasks extension and serves it over HTTP.
func WithTasks(o TaskOptions) Option {
	return func(s *Server) {
		if o.PollInterval <= 0 {
			o.PollInterval = time.Second
		}
		if o.InputWait <= 0 || o.InputWait > RequestStateTTL {
			o.InputWait = RequestStateTTL
		}
		s.tasks = &taskServer{opts: o, upstream: map[string]mcp.TaskSupport{}}
		s.extra = append(s.extra, server.WithExtensions(map[string]any{TasksExtension: map[string]any{}}),
			server.WithToolFilter(s.presentRequiredTasks))
	}
}

// taskServer is the front end's part of tasks.
type taskServer struct {
	opts TaskOptions

	mu       sync.Mutex
	upstream map[string]mcp.TaskSupport // upstream tools that offer tasks (optional or required), by wire name
}

// offersTasks reports whether a tool runs as a task for a client that asks.
func (s *Server) offersTasks(name string) bool {
	t := s.tasks
	if t == nil {
		return false
	}
	if t.opts.Tools != nil && t.opts.Tools(name) {
		return true
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.upstream[name] != ""
}

// requiresTask reports whether a tool runs only as a task: an upstream
// tool whose definition says taskSupport "required".
func (s *Server) requiresTask(name string) bool {
	t := s.tasks
	if t == nil {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.upstream[name] == mcp.TaskSupportRequired
}

// noteUpstreamTaskSupport records whether an upstream tool offers tasks
// (its definition's execution.taskSupport), as the catalog is synced.
func (s *Server) noteUpstreamTaskSupport(wire string, raw json.RawMessage) {
	t := s.tasks
	if t == nil {
		return
	}
	var def struct {
		Execution struct {
			TaskSupport string `json:"taskSupport"`
		} `json:"execution"`
	}
	_ = json.Unmarshal(raw, &def)
	t.mu.Lock()
	defer t.mu.Unlock()
	switch ts := mcp.TaskSupport(def.Execution.TaskSupport); ts {
	case mcp.TaskSupportOptional, mcp.TaskSupportRequired:
		t.upstream[wire] = ts
	default:
		delete(t.upstream, wire)
	}
}

// serveRequiredAsOptional registers an upstream tool that runs only as a
// task as one that may: the front end makes the task and serves its call
// through mcp-go without one, which mcp-go refuses for a tool registered as
// required. presentRequiredTasks lists it as required again, and a call
// without the extension is refused before mcp-go (serveTasks).
func (s *Server) serveRequiredAsOptional(t *mcp.Tool) {
	if s.tasks != nil && t.Execution != nil && t.Execution.TaskSupport == mcp.TaskSupportRequired {
		t.Execution = &mcp.ToolExecution{TaskSupport: mcp.TaskSupportOptional}
	}
}

// presentRequiredTasks is a tool filter: tools/list says "required" of the
// upstream tools that run only as tasks (serveRequiredAsOptional).
func (s *Server) presentRequiredTasks(_ context.Context, tools []mcp.Tool) []mcp.Tool {
	out := make([]mcp.Tool, len(tools))
	for i, t := range tools {
		if s.requiresTask(t.Name) {
			t.Execution = &mcp.ToolExecution{TaskSupport: mcp.TaskSupportRequired}
		}
		out[i] = t
	}
	return out
}

// taskRequest is what the front end reads of a tools/call or tasks/*
// request's params besides the envelope.
type taskRequest struct {
	Params struct {
		TaskID         string          `json:"taskId"`
		InputResponses json.RawMessage `json:"inputResponses"`
		// Task is the 2025-11-25 hint; its TTL is taken as the TTL asked.
		Task *struct {
			TTL   *float64 `json:"ttl"`
			TTLMs *float64 `json:"ttlMs"`
		} `json:"task"`
		Meta map[string]json.RawMessage `json:"_meta"`
	} `json:"params"`
}

// declaresTasks reports whether a request declares the extension among its
// capabilities (_meta, as 2026-07-28 requests carry them).
func (q taskRequest) declaresTasks() bool {
	var caps struct {
		Extensions map[string]json.RawMessage `json:"extensions"`
	}
	if json.Unmarshal(q.Params.Meta[mcp.MetaKeyClientCapabilities], &caps) != nil {
		return false
	}
	_, ok := caps.Extensions[TasksExtension]
	return ok
}

// askedTTL is the TTL the request asks for, 0 for none.
func (q taskRequest) askedTTL() time.Duration {
	if q.Params.Task == nil {
		return 0
	}
	for _, v := range []*float64{q.Params.Task.TTLMs, q.Params.Task.TTL} {
		if v != nil && *v > 0 {
			return time.Duration(*v) * time.Millisecond
		}
	}
	return 0
}

// serveTasks answers the request when it is the extension's: a task to
// start, or tasks/get, tasks/update, tasks/cancel. It reports whether it
// did.
func (h *httpHandler) serveTasks(w http.ResponseWriter, r *http.Request, body []byte, env rpcEnvelope) bool {
	if h.s.tasks == nil || len(env.ID) == 0 {
		return false
	}
	switch env.Method {
	case string(mcp.MethodToolsCall), "tasks/get", "tasks/update", "tasks/cancel":
	default:
		return false
	}
	var q taskRequest
	_ = json.Unmarshal(body, &q)
	// A request declares the extension in its _meta, or its 2025 session
	// did at initialize (tasksession.go): then a tools/call is a task's
	// when it asks for one (params.task), as a 2025 client asks.
	sessionDeclared := h.sessionDeclaresTasks(r)
	declared := q.declaresTasks() || (sessionDeclared && (env.Method != string(mcp.MethodToolsCall) || q.Params.Task != nil))
	if env.Method == string(mcp.MethodToolsCall) {
		if !declared && !sessionDeclared && h.s.requiresTask(env.Params.Name) {
			writeRPC(w, http.StatusBadRequest, env.ID, nil, missingTasks(env.Params.Name+" runs only as a task"))
			return true
		}
		if !declared && sessionDeclared && h.s.requiresTask(env.Params.Name) {
			writeRPC(w, http.StatusOK, env.ID, nil, &rpcErr{Code: mcp.INVALID_PARAMS, Message: env.Params.Name + " runs only as a task: ask for one with params.task (e.g. {\"ttl\": 60000})"})
			return true
		}
		if !declared || !h.s.offersTasks(env.Params.Name) {
			return false
		}
		if !headersMatch(w, r, body, env.ID, env.Method, "") {
			return true
		}
		h.startTask(w, r, body, env, q)
		return true
	}
	if !headersMatch(w, r, body, env.ID, env.Method, q.Params.TaskID) {
		return true
	}
	if !declared {
		writeRPC(w, http.StatusBadRequest, env.ID, nil, missingTasks(env.Method+" is the tasks extension's"))
		return true
	}
	if q.Params.TaskID == "" {
		writeRPC(w, http.StatusOK, env.ID, nil, &rpcErr{Code: mcp.INVALID_PARAMS, Message: env.Method + " takes params.taskId: the id tools/call answered with"})
		return true
	}
	reg := h.s.tasks.opts.Registry
	owner := auth.PrincipalFrom(r.Context()).Key()
	ctx := r.Context()
	var err error
	switch env.Method {
	case "tasks/get":
		var run runs.Run
		if run, err = reg.Get(ctx, owner, q.Params.TaskID); err == nil {
			writeRPC(w, http.StatusOK, env.ID, h.s.detailedTask(run), nil)
			return true
		}
	case "tasks/cancel":
		if err = reg.Cancel(ctx, owner, q.Params.TaskID); err == nil {
			h.s.auditTask(owner, "", q.Params.TaskID, "cancel asked", "", 0)
		}
	case "tasks/update":
		var answers map[string]json.RawMessage
		if json.Unmarshal(q.Params.InputResponses, &answers) != nil || answers == nil {
			writeRPC(w, http.StatusOK, env.ID, nil, &rpcErr{Code: mcp.INVALID_PARAMS, Message: "tasks/update takes params.inputResponses: an object of answers keyed by the ids of the task's inputRequests (tasks/get lists them)"})
			return true
		}
		for k, v := range answers {
			if len(bytes.TrimSpace(v)) == 0 || bytes.TrimSpace(v)[0] != '{' {
				writeRPC(w, http.StatusOK, env.ID, nil, &rpcErr{Code: mcp.INVALID_PARAMS, Message: fmt.Sprintf("tasks/update: inputResponses[%q] must be an object (an elicitation or sampling result)", k)})
				return true
			}
		}
		err = reg.Answer(ctx, owner, q.Params.TaskID, answers)
		if err == nil {
			h.s.auditTask(owner, "", q.Params.TaskID, fmt.Sprintf("input answered (%d)", len(answers)), "", 0)
		}
		if errors.Is(err, runs.ErrNotWaiting) {
			err = nil // a late or repeated answer: the task's state says what became of it
		}
	}
	switch {
	case err == nil:
		writeRPC(w, http.StatusOK, env.ID, map[string]any{"resultType": mcp.ResultTypeComplete}, nil)
	case errors.Is(err, runs.ErrNotFound):
		writeRPC(w, http.StatusOK, env.ID, nil, &rpcErr{Code: mcp.INVALID_PARAMS, Message: fmt.Sprintf("no task %q: it never existed, it expired, or it is not yours", shortID(q.Params.TaskID))})
	default:
		h.s.log.Warn("tasks", "method", env.Method, "error", err)
		w.Header().Set("Retry-After", "2")
		writeRPC(w, http.StatusServiceUnavailable, env.ID, nil, &rpcErr{Code: mcp.INTERNAL_ERROR, Message: "the task store does not answer right now; send the request again in a moment"})
	}
	return true
}

// shortID is a task id as an error quotes it: a client's id can be of any
// length, and the answer need not repeat a megabyte of it.
func shortID(id string) string {
	const most = 80
	if len(id) <= most {
		return id
	}
	cut := most
	for cut > 0 && !utf8.RuneStart(id[cut]) {
		cut--
	}
	return id[:cut] + "…"
}

// missingTasks is the -32021 answer to a request that needs the extension
// and did not declare it.
func missingTasks(why string) *rpcErr {
	return &rpcErr{Code: mcp.MISSING_REQUIRED_CLIENT_CAPABILITY,
		Message: why + ": declare " + TasksExtension + " under _meta[\"" + mcp.MetaKeyClientCapabilities + "\"].extensions",
		Data:    map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{TasksExtension: map[string]any{}}}}}
}

// headersMatch checks the routing headers (SEP-2243: Mcp-Method and
// Mcp-Name mirror the body; on tasks/* Mcp-Name is the task id, SEP-2663)
// as mcp-go checks them on the requests it serves; on a mismatch it answers
// -32020 (HTTP 400) and reports false.
func headersMatch(w http.ResponseWriter, r *http.Request, body []byte, id json.RawMessage, method, taskID string) bool {
	var msg struct {
		Params json.RawMessage `json:"params"`
	}
	_ = json.Unmarshal(body, &msg)
	err := mcp.ValidateStandardHeaders(r.Header.Get, r.Header.Get(mcp.HeaderProtocolVersion), mcp.MCPMethod(method), msg.Params)
	if err == nil && method != string(mcp.MethodToolsCall) {
		if n := r.Header.Get(mcp.HeaderName); n != "" {
			if v, ok := mcp.DecodeHeaderValue(strings.TrimSpace(n)); !ok || v != taskID {
				err = fmt.Errorf("the %s header says %q but the body's taskId is %q", mcp.HeaderName, n, taskID)
			}
		}
	}
	if err != nil {
		writeRPC(w, http.StatusBadRequest, id, nil, &rpcErr{Code: mcp.HEADER_MISMATCH, Message: "header mismatch: " + err.Error()})
		return false
	}
	return true
}

// startTask makes the run, answers with the task at once, and runs the call
// on without its client.
func (h *httpHandler) startTask(w http.ResponseWriter, r *http.Request, body []byte, env rpcEnvelope, q taskRequest) {
	reg := h.s.tasks.opts.Registry
	owner := auth.PrincipalFrom(r.Context()).Key()
	// The task holds its request (the body, the handed arguments) for as
	// long as it runs: the bytes count against the owner's share of the
	// in-flight budget until it ends, as a request's do until answered.
	held := int64(len(body))
	if a, ok := r.Context().Value(handedArgumentsKey{}).(handedArguments); ok {
		held += int64(len(a.args))
	}
	if !h.bodies.tryTake(owner, held) {
		w.Header().Set("Retry-After", "2")
		writeRPC(w, http.StatusServiceUnavailable, env.ID, nil, &rpcErr{Code: mcp.INTERNAL_ERROR,
			Message: "the server holds as many request bytes as it may for you, your running tasks' included; send the request again when one of them ends"})
		return
	}
	body = withProgressToken(body)
	// A tool that runs only as a task may ask for input first: its round
	// that asks at once is answered in the request, without a task
	// (taskfirst.go).
	var first *firstRound
	if h.s.requiresTask(env.Params.Name) {
		first = h.startFirstRound(r, env.Params.Name, body)
		if asked, ok := first.askedAtOnce(askFirstWindow); ok {
			h.bodies.give(owner, held)
			writeRPC(w, http.StatusOK, env.ID, asked, nil)
			return
		}
	}
	// The run keeps the request's values (the caller, its tokens, the
	// handed arguments) but not its end: the client may leave.
	run, err := reg.Start(context.WithoutCancel(r.Context()), owner, env.Params.Name, q.askedTTL())
	if err != nil {
		h.bodies.give(owner, held)
		var le *runs.LimitError
		if first != nil && errors.As(err, &le) {
			select {
			case <-first.done:
				// The call ran already: its answer is the client's, a
				// task or not.
				result, rpcError := first.outcome()
				if rpcError != nil {
					writeRPCRaw(w, env.ID, nil, rpcError)
				} else {
					writeRPCRaw(w, env.ID, completeResult(result), nil)
				}
				return
			default:
				first.abandon()
			}
		} else if first != nil {
			first.abandon()
		}
		if errors.As(err, &le) {
			res := errorResult(&gateway.Error{Code: gateway.CodeRateLimited, Tool: env.Params.Name, Message: le.Message})
			res.ResultType = mcp.ResultTypeComplete
			writeRPC(w, http.StatusOK, env.ID, res, nil)
			return
		}
		h.s.log.Warn("a task could not be started", "tool", env.Params.Name, "error", err)
		w.Header().Set("Retry-After", "2")
		writeRPC(w, http.StatusServiceUnavailable, env.ID, nil, &rpcErr{Code: mcp.INTERNAL_ERROR, Message: "the task store does not answer right now; send the request again in a moment"})
		return
	}
	h.s.auditTask(owner, env.Params.Name, run.ID(), "started", "", 0)
	go func() {
		defer h.bodies.give(owner, held)
		h.runTask(run, r, body, first)
	}()
	writeRPC(w, http.StatusOK, env.ID, h.s.taskFields(run.Run(), "task"), nil)
}

// taskProgressToken is the progress token a task's call is made with when
// its client gave none: the run's progress is kept for tasks/get.
const taskProgressToken = "sandbox-task"

// withProgressToken gives the call a progress token when it has none, so
// its handler reports progress (for tasks/get) as to any client that asks.
func withProgressToken(body []byte) []byte {
	var msg map[string]json.RawMessage
	if json.Unmarshal(body, &msg) != nil {
		return body
	}
	var params map[string]json.RawMessage
	if json.Unmarshal(msg["params"], &params) != nil || params == nil {
		return body
	}
	meta := map[string]json.RawMessage{}
	_ = json.Unmarshal(params["_meta"], &meta)
	if _, ok := meta["progressToken"]; ok {
		return body
	}
	meta["progressToken"], _ = json.Marshal(taskProgressToken)
	params["_meta"], _ = json.Marshal(meta)
	msg["params"], _ = json.Marshal(params)
	out, err := json.Marshal(msg)
	if err != nil {
		return body
	}
	return out
}

// maxInputRounds bounds the rounds of input one task's call may ask for.
const maxInputRounds = 32

// runTask serves the call as any call is served, keeping its progress, log
// and answer in the run. A call that answers input_required (a multi
// round-trip request, SEP-2322) puts the task in input_required with those
// requests; once tasks/update answered them all, the call is made again
// with the answers and its requestState, as a client would retry it.
//
// first, when not nil, is the call's first round, started before the task
// (taskfirst.go): the task adopts it as its round 0.
func (h *httpHandler) runTask(run *runs.Handle, r *http.Request, body []byte, first *firstRound) {
	// The task runs on a goroutine of its own, which nothing else
	// recovers; its call's rounds recover in serveTaskCall, but asking for
	// input, storing the outcome and auditing happen here. A panic fails
	// the task (when storing its end is not what panicked: then its lease
	// lapses, and it is failed as orphaned) rather than end the process.
	defer func() {
		if p := recover(); p != nil {
			logx.Panic(h.s.log, "a task panicked", p, "task", run.ID(), "tool", run.Run().Tool)
			h.failPanickedTask(run)
		}
	}()
	ctx := context.WithValue(runs.NewContext(run.Context(), run), notifierKey{}, notifier(taskNotifier{run}))
	ctx = context.WithValue(ctx, taskCallKey{}, true)
	asker := h.s.taskAsker(run)
	ctx = gateway.WithInputAsker(ctx, asker)
	var result, rpcError json.RawMessage
	for round := 0; ; round++ {
		if round == 0 && first != nil {
			first.adopt(run, asker)
			result, rpcError = first.outcome()
		} else {
			result, rpcError = h.serveTaskCall(ctx, run.Run().Tool, r, body)
		}
		ask, ok := inputRequired(result)
		if !ok {
			break
		}
		if round == maxInputRounds {
			result, rpcError = nil, mustJSON(rpcErr{Code: mcp.INTERNAL_ERROR, Message: fmt.Sprintf("the call asked for input %d times; a task takes at most %d rounds", round+1, maxInputRounds)})
			break
		}
		answers, err := h.s.askTaskInput(ctx, run, ask.InputRequests)
		if err != nil {
			result, rpcError = nil, mustJSON(rpcErr{Code: mcp.INTERNAL_ERROR, Message: "the task stopped while it waited for input: " + err.Error()})
			break
		}
		body = withInputResponses(body, answers, ask.RequestState)
	}
	end, err := run.Finish(result, rpcError)
	if err != nil {
		h.s.log.Warn("a task's outcome could not be stored", "task", run.ID(), "error", err)
		end = run.Run()
		end.State = runs.Failed
	}
	h.s.auditTask(run.Run().Owner, run.Run().Tool, run.ID(), string(end.State), taskOutcome(end.State, result, rpcError), time.Since(run.Run().Created))
}

// failPanickedTask ends a task whose goroutine panicked as failed, with the
// error that says to call again; a second panic, in the store, is logged
// and left to the lease.
func (h *httpHandler) failPanickedTask(run *runs.Handle) {
	defer func() {
		if p := recover(); p != nil {
			logx.Panic(h.s.log, "a task that panicked could not be failed; its lease will lapse", p, "task", run.ID())
		}
	}()
	if _, err := run.Finish(nil, mustJSON(rpcErr{Code: mcp.INTERNAL_ERROR, Message: errRunPanicked.Error()})); err != nil {
		h.s.log.Warn("a task that panicked could not be failed; its lease will lapse", "task", run.ID(), "error", err)
	}
}

// auditTask writes a task's event to the audit log (kind "task", the task's
// id as Name): what a principal's task did, never its arguments or result.
func (s *Server) auditTask(owner, tool, id, decision, outcome string, d time.Duration) {
	s.g.Audit(gateway.AuditRecord{Kind: gateway.AuditKindTask, Principal: owner, Tool: tool, Name: id,
		Decision: decision, Outcome: outcome, DurationMs: float64(d.Microseconds()) / 1000})
}

// taskOutcome is the audit outcome of a task's end: OK, the code of a tool
// error (isError), or the JSON-RPC error's code.
func taskOutcome(state runs.State, result, rpcError json.RawMessage) string {
	if state == runs.Cancelled {
		return "CANCELLED"
	}
	if len(rpcError) > 0 {
		var e struct {
			Code int `json:"code"`
		}
		_ = json.Unmarshal(rpcError, &e)
		return fmt.Sprintf("RPC_ERROR %d", e.Code)
	}
	var r struct {
		IsError bool `json:"isError"`
	}
	if json.Unmarshal(result, &r) == nil && r.IsError {
		return "TOOL_ERROR"
	}
	return "OK"
}

// askTaskInput puts the task in input_required with requests, audits it,
// and waits for their answers, at most InputWait: the retry carries the
// call's requestState, which is refused once RequestStateTTL has passed, so
// a task nobody answers fails then rather than hold its goroutine, its
// request and its place among the owner's live tasks for ever. Both ways a
// task asks come here: its call's input_required, and an upstream's own
// request during the call (taskAsker).
func (s *Server) askTaskInput(ctx context.Context, run *runs.Handle, requests map[string]json.RawMessage) (map[string]json.RawMessage, error) {
	s.auditTask(run.Run().Owner, run.Run().Tool, run.ID(), fmt.Sprintf("input asked (%d)", len(requests)), "", 0)
	wait := s.tasks.opts.InputWait
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	answers, err := run.Ask(ctx, requests)
	if err != nil && ctx.Err() == context.DeadlineExceeded {
		return nil, fmt.Errorf("nobody answered its input requests (tasks/update) within %v", wait)
	}
	return answers, err
}

// taskAsker asks the task's client, through its input_required, for what
// an upstream requests while it serves the task's call (the gateway relays
// it here instead of to a client session, which a task's client may not
// have). Each request is one input request of its own key.
func (s *Server) taskAsker(run *runs.Handle) gateway.InputAsker {
	var n atomic.Int64
	return func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		key := fmt.Sprintf("upstream-%d", n.Add(1))
		answers, err := s.askTaskInput(ctx, run, map[string]json.RawMessage{key: mustJSON(map[string]any{"method": method, "params": params})})
		if err != nil {
			return nil, fmt.Errorf("%s: the task stopped while it waited for the answer: %w", method, err)
		}
		return answers[key], nil
	}
}

// serveTaskCall makes one round of a task's call.
func (h *httpHandler) serveTaskCall(ctx context.Context, tool string, r *http.Request, body []byte) (result, rpcError json.RawMessage) {
	req := mcphttp.Request(r, body)
	// Each round has a slot of its own, as a request has (answer.go): an
	// answer the handler makes itself (an upstream's -32021, a refused
	// requestState) is the task's outcome, not mcp-go's -32603 around it.
	req.Context = withAnswerSlot(ctx)
	slot := answerSlotFrom(req.Context)
	var answer capture
	defer func() {
		if p := recover(); p != nil {
			logx.Panic(h.s.log, "a task's call panicked", p, "tool", tool)
			result, rpcError = nil, mustJSON(rpcErr{Code: mcp.INTERNAL_ERROR, Message: errRunPanicked.Error()})
		}
	}()
	h.inner.Handle(&answer, req)
	slot.mu.Lock()
	msg := slot.msg
	slot.mu.Unlock()
	if e, ok := msg["error"]; ok {
		return nil, mustJSON(e)
	}
	if res, ok := msg["result"].(json.RawMessage); ok {
		return res, nil
	}
	return answer.outcome()
}

// inputRequired reads an input_required answer: the requests and the state
// to send back.
func inputRequired(result json.RawMessage) (ask struct {
	InputRequests map[string]json.RawMessage `json:"inputRequests"`
	RequestState  json.RawMessage            `json:"requestState"`
}, ok bool) {
	var head struct {
		ResultType string `json:"resultType"`
	}
	if json.Unmarshal(result, &head) != nil || head.ResultType != string(mcp.ResultTypeInputRequired) {
		return ask, false
	}
	if json.Unmarshal(result, &ask) != nil || len(ask.InputRequests) == 0 {
		return ask, false
	}
	return ask, true
}

// withInputResponses is the call again, with the answers and the state its
// last round answered with.
func withInputResponses(body []byte, answers map[string]json.RawMessage, state json.RawMessage) []byte {
	var msg map[string]json.RawMessage
	if json.Unmarshal(body, &msg) != nil {
		return body
	}
	var params map[string]json.RawMessage
	if json.Unmarshal(msg["params"], &params) != nil || params == nil {
		return body
	}
	params["inputResponses"] = mustJSON(answers)
	delete(params, "requestState")
	if len(state) > 0 && string(state) != "null" {
		params["requestState"] = state
	}
	msg["params"] = mustJSON(params)
	return mustJSON(msg)
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only maps of raw JSON and plain structs are marshalled here
	}
	return b
}

// taskProtocolError is what an upstream tool's failure becomes in a task:
// a JSON-RPC error from the upstream (PROTOCOL_ERROR) fails the task (the
// status failed is for protocol errors, SEP-2663), where a direct call
// answers it as a tool error the model can read. nil: answer as ever.
func taskProtocolError(ctx context.Context, err error) error {
	var ge *gateway.Error
	if ctx.Value(taskCallKey{}) == nil || !errors.As(err, &ge) || ge.Code != gateway.CodeProtocolError {
		return nil
	}
	return err
}

// taskNotifier keeps a task's notifications in its run: progress, and
// console lines (code mode's progress messages "console.<level>: ..." and
// log messages).
type taskNotifier struct{ run *runs.Handle }

func (n taskNotifier) send(msg []byte) error {
	var m struct {
		Method string `json:"method"`
		Params struct {
			Progress float64         `json:"progress"`
			Total    float64         `json:"total"`
			Message  string          `json:"message"`
			Level    string          `json:"level"`
			Data     json.RawMessage `json:"data"`
		} `json:"params"`
	}
	if json.Unmarshal(msg, &m) != nil {
		return nil
	}
	switch m.Method {
	case string(mcp.MethodNotificationProgress):
		n.run.Progress(runs.Progress{Progress: m.Params.Progress, Total: m.Params.Total, Message: m.Params.Message})
		if strings.HasPrefix(m.Params.Message, "console.") {
			n.run.Console(m.Params.Message)
		}
	case string(mcp.MethodNotificationMessage):
		var text string
		if json.Unmarshal(m.Params.Data, &text) != nil {
			text = string(m.Params.Data)
		}
		n.run.Console(m.Params.Level + ": " + text)
	}
	return nil
}

// capture is the writer a task's call is answered into: the JSON-RPC
// response, kept whole (a task's answer is bounded by what its tool
// returns, as a direct call's is).
type capture struct {
	header http.Header
	body   bytes.Buffer
}

func (c *capture) Header() http.Header {
	if c.header == nil {
		c.header = http.Header{}
	}
	return c.header
}
func (c *capture) Write(p []byte) (int, error) { return c.body.Write(p) }
func (c *capture) WriteHeader(int)             {}
func (c *capture) Flush()                      {}
func (c *capture) CanStream() bool             { return false }

// outcome is the call's result, or its JSON-RPC error object.
func (c *capture) outcome() (result, rpcError json.RawMessage) {
	raw := c.body.Bytes()
	if strings.HasPrefix(c.Header().Get("Content-Type"), "text/event-stream") {
		// The last data line is the response (notifications come first).
		for _, line := range bytes.Split(raw, []byte("\n")) {
			if d, ok := bytes.CutPrefix(line, []byte("data:")); ok {
				raw = bytes.TrimSpace(d)
			}
		}
	}
	var resp struct {
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if json.Unmarshal(raw, &resp) != nil || (resp.Result == nil && resp.Error == nil) {
		b, _ := json.Marshal(map[string]any{"code": mcp.INTERNAL_ERROR, "message": "the task's call ended without an answer"})
		return nil, b
	}
	if resp.Error != nil {
		return nil, resp.Error
	}
	return resp.Result, nil
}

// taskFields are the Task fields of a run (CreateTaskResult, DetailedTask).
func (s *Server) taskFields(r runs.Run, resultType string) map[string]any {
	out := map[string]any{
		"resultType":     resultType,
		"taskId":         r.ID,
		"status":         string(r.State),
		"createdAt":      r.Created.UTC().Format(time.RFC3339Nano),
		"lastUpdatedAt":  r.Updated.UTC().Format(time.RFC3339Nano),
		"ttlMs":          r.TTL.Milliseconds(),
		"pollIntervalMs": s.tasks.opts.PollInterval.Milliseconds(),
	}
	if r.Message != "" {
		out["statusMessage"] = r.Message
	}
	return out
}

// detailedTask is tasks/get's answer: the task, its input requests while it
// waits, its result or error once it ended, and in _meta what sandbox adds
// (the last progress and console lines).
func (s *Server) detailedTask(r runs.Run) map[string]any {
	out := s.taskFields(r, string(mcp.ResultTypeComplete))
	switch {
	case r.State == runs.InputRequired && len(r.InputRequests) > 0:
		out["inputRequests"] = r.InputRequests
	case r.State == runs.Completed && r.Result != nil:
		out["result"] = completeResult(r.Result)
	case r.State == runs.Failed && r.Error != nil:
		out["error"] = r.Error
	}
	meta := map[string]any{}
	if r.Progress != nil {
		meta["sandbox/progress"] = r.Progress
	}
	if len(r.Console) > 0 {
		meta["sandbox/console"] = r.Console
	}
	if len(meta) > 0 {
		out["_meta"] = meta
	}
	return out
}

// completeResult is the call's result as tasks/get inlines it: a
// CallToolResult with resultType "complete" (the tasks extension's
// clients decode it so), which a result made for a 2025 request lacks.
func completeResult(result json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(result, &m) != nil || string(m["resultType"]) == `"complete"` {
		return result
	}
	m["resultType"] = json.RawMessage(`"complete"`)
	b, err := json.Marshal(m)
	if err != nil {
		return result
	}
	return b
}

type rpcErr struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

// writeRPCRaw writes one JSON-RPC response of a result or error as raw
// JSON.
func writeRPCRaw(w http.ResponseWriter, id json.RawMessage, result, rpcError json.RawMessage) {
	if rpcError != nil {
		writeRPCMember(w, http.StatusOK, id, "error", rpcError)
		return
	}
	writeRPCMember(w, http.StatusOK, id, "result", result)
}

// writeRPC writes one JSON-RPC response.
func writeRPC(w http.ResponseWriter, status int, id json.RawMessage, result any, e *rpcErr) {
	if e != nil {
		writeRPCMember(w, status, id, "error", e)
		return
	}
	writeRPCMember(w, status, id, "result", result)
}

// writeRPCMember writes the JSON-RPC response whose member ("result" or
// "error") is v.
func writeRPCMember(w http.ResponseWriter, status int, id json.RawMessage, member string, v any) {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, member: v})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
