package frontend

// Built-in tools (execute_code, a saved script) run for a 2026-07-28
// client, which has no session to be asked through: what the run asks (a
// policy's approval, an upstream's elicitation, sampling or roots) pauses
// it, the call answers input_required with the questions, and the retry,
// which finds the paused run by its requestState, hands the answers to the
// waiting run and waits again for its result or its next questions. A
// run nobody answers within the approval timeout goes on as a 2025 run
// would: DENIED.
//
// A policy's approval releases the run from its worker (releasedruns.go:
// the run ends, its journal is kept, the retry replays it in a fresh
// worker, on any replica). An upstream's own elicitation or sampling
// cannot be asked again (the call is live upstream): that run keeps its
// worker while it waits, its clock standing, as a 2025 session's does. It
// is a value of this process found by its id, which only the sealed
// requestState carries (bound to the principal and the request).

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/sandboxrt/sandbox/gateway"
	"github.com/sandboxrt/sandbox/internal/logx"
)

// MaxPausedRuns is how many calls one principal may have paused at once,
// waiting for its answers: each holds a goroutine, maybe a worker, and an
// upstream request. One more is refused rather than paused.
const MaxPausedRuns = 16

// finishedRunKept is how long the result of a run that finished while
// nobody was waiting (its client answered late, or not at all) is kept
// for the retry that may still come.
const finishedRunKept = 2 * time.Minute

// pausedRuns are this process's runs waiting for their client's answers,
// by id.
type pausedRuns struct {
	mu   sync.Mutex
	runs map[string]*pausedRun
}

// put keeps r (again) as paused; false when its principal has
// MaxPausedRuns others paused already.
func (p *pausedRuns) put(r *pausedRun) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.runs == nil {
		p.runs = map[string]*pausedRun{}
	}
	if p.runs[r.id] == nil {
		n := 0
		for _, o := range p.runs {
			if o.principal == r.principal {
				n++
			}
		}
		if n >= MaxPausedRuns {
			return false
		}
	}
	p.runs[r.id] = r
	return true
}

func (p *pausedRuns) get(id string) *pausedRun {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.runs[id]
}

func (p *pausedRuns) remove(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.runs, id)
}

// pausedRun is one run of a built-in tool for a 2026-07-28 client: the
// gateway.Peer its calls ask, and what it ended with.
type pausedRun struct {
	id        string
	principal string // auth.Principal.Key of its caller
	caps      mcp.ClientCapabilities
	cancel    context.CancelFunc

	asked chan struct{} // a new question is pending (buffered 1)
	done  chan struct{} // closed when the run returned
	res   any           // what the handler returned (answers' T)
	err   error

	// forgetting starts the one watcher that forgets the run once it
	// ended (forgetWhenDone), whatever the number of rounds and retries.
	forgetting sync.Once

	mu      sync.Mutex
	seq     int
	pending map[string]*question // asked, not answered, by input request key
	lacking string               // a capability an upstream asked for that the request did not declare
	// released are the questions the run was released on, and journal
	// its journal (releasedruns.go), set before done is closed.
	released []releasedQuestion
	journal  []byte
	// preanswers are a resumed run's questions with the retry's answers.
	preanswers []releasedQuestion
	// replay runs the run's handler again against a journal, in a worker
	// it keeps while it waits (gateway.WithoutRelease): where a released
	// run goes when the store cannot keep it (releasedruns.go). nil for a
	// run that is never released.
	replay func(ctx context.Context, journal []byte) (any, error)
}

// Lacks records that an upstream asked for a capability the request did
// not declare (gateway.Peer).
func (r *pausedRun) Lacks(capability string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.lacking == "" {
		r.lacking = capability
	}
}

type pausedRunKey struct{}

// lackedCapability is the capability an upstream asked of the run in ctx
// that its request did not declare, or "".
func lackedCapability(ctx context.Context) string {
	r, _ := ctx.Value(pausedRunKey{}).(*pausedRun)
	if r == nil {
		return ""
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lacking
}

type question struct {
	method string
	params json.RawMessage
	answer chan json.RawMessage // buffered 1
}

// Supports reports a capability the request declared.
func (r *pausedRun) Supports(capability string) bool {
	switch capability {
	case "elicitation":
		return r.caps.Elicitation != nil
	case gateway.CapabilityURLElicitation:
		return r.caps.Elicitation != nil && r.caps.Elicitation.URL != nil
	case gateway.CapabilityFormElicitation: // {} means form mode alone
		return r.caps.Elicitation != nil && (r.caps.Elicitation.Form != nil || r.caps.Elicitation.URL == nil)
	case "sampling":
		return r.caps.Sampling != nil
	case "roots":
		return r.caps.Roots != nil
	}
	return false
}

// Request asks the client: the question waits among the run's pending
// ones until a retry answers it or ctx ends (the approval timeout, or the
// run's end).
func (r *pausedRun) Request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	if answer, ok, err := r.preanswered(method, params); ok {
		return answer, err
	}
	q := &question{method: method, params: params, answer: make(chan json.RawMessage, 1)}
	r.mu.Lock()
	r.seq++
	key := fmt.Sprintf("sandbox_q%d", r.seq)
	r.mu.Unlock()
	if release := gateway.ReleaseFor(ctx); release != nil {
		// Asked again when the run resumes: let go of the worker.
		expires, ok := ctx.Deadline()
		if !ok { // an approval always has its timeout; this is the state's own
			expires = time.Now().Add(RequestStateTTL)
		}
		rq := releasedQuestion{Key: key, Method: method, Params: params, Expires: expires.UnixMilli(),
			Timeout: time.Until(expires).Round(time.Second).Milliseconds()}
		if release(func(journal []byte) {
			r.mu.Lock()
			r.released, r.journal = append(r.released, rq), journal
			r.mu.Unlock()
		}) {
			<-ctx.Done() // the run ends once its other calls are answered
			return nil, gateway.ErrReleased
		}
	}
	r.mu.Lock()
	r.pending[key] = q
	r.mu.Unlock()
	select {
	case r.asked <- struct{}{}:
	default:
	}
	select {
	case a := <-q.answer:
		return a, nil
	case <-ctx.Done():
		r.mu.Lock()
		delete(r.pending, key)
		r.mu.Unlock()
		return nil, ctx.Err()
	}
}

// Notify drops what an upstream would tell the client: a 2026-07-28 run
// has no stream that outlives its request to carry it.
func (r *pausedRun) Notify(string, json.RawMessage) {}

// inputRequests are the pending questions as the client receives them.
func (r *pausedRun) inputRequests() (mcp.InputRequests, error) {
	r.mu.Lock()
	raw := make(map[string]any, len(r.pending))
	for key, q := range r.pending {
		req := map[string]any{"method": q.method}
		if len(q.params) > 0 {
			req["params"] = q.params
		}
		raw[key] = req
	}
	r.mu.Unlock()
	b, _ := json.Marshal(raw)
	var reqs mcp.InputRequests
	if err := json.Unmarshal(b, &reqs); err != nil {
		return nil, fmt.Errorf("the run asked something the client cannot be asked: %w", err)
	}
	return reqs, nil
}

// answer hands the retry's answers to the questions they answer; a
// question without an answer stays pending (it is asked again).
func (r *pausedRun) answer(responses json.RawMessage) {
	var answers map[string]json.RawMessage
	if json.Unmarshal(responses, &answers) != nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for key, a := range answers {
		if q := r.pending[key]; q != nil {
			delete(r.pending, key)
			q.answer <- a
		}
	}
}

// releasedRun is what is kept of the run when it was released (nil when
// it was not).
func (r *pausedRun) releasedRun() *releasedRun {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.journal == nil {
		return nil
	}
	return &releasedRun{Principal: r.principal, Journal: r.journal, Questions: r.released}
}

func (r *pausedRun) hasPending() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.pending) > 0
}

// answers says how a paused call of one kind of request answers: T is
// what its handler returns (a tool's, a prompt's result, a resource's
// contents).
type answers[T any] struct {
	// input answers with the run's questions as input_required.
	input func(ctx context.Context, reqs mcp.InputRequests, state string) (T, error)
	// refuse answers with a refusal the client reads.
	refuse func(err error) (T, error)
}

// toolAnswers are a tools/call's: input_required results, tool errors.
var toolAnswers = answers[*mcp.CallToolResult]{
	input: func(_ context.Context, reqs mcp.InputRequests, state string) (*mcp.CallToolResult, error) {
		out := &mcp.CallToolResult{Content: []mcp.Content{}}
		out.ResultType = mcp.ResultTypeInputRequired
		out.InputRequests, out.RequestState = reqs, state
		return out, nil
	},
	refuse: func(err error) (*mcp.CallToolResult, error) { return errorResult(err), nil },
}

// runAsking runs a built-in tool's handler for a 2026-07-28 request (a
// retry finds its paused run by the requestState), and answers with its
// result or with input_required while it waits for the client.
func (s *Server) runAsking(ctx context.Context, r mcp.CallToolRequest, binding string, run func(context.Context) (*mcp.CallToolResult, error)) (*mcp.CallToolResult, error) {
	if r.Params.RequestState == "" {
		// The run keeps a journal, to be released if it waits for a person.
		return startRunWith(s, ctx, binding, func(ctx context.Context) (*mcp.CallToolResult, error) {
			return run(gateway.WithResume(ctx, nil))
		}, toolAnswers, replayableBy(run))
	}
	id, ok := s.pausedRunOf(ctx, binding, r.Params.RequestState)
	if !ok {
		return nil, answerError(ctx, rpcError{Code: mcp.INVALID_PARAMS, Message: errBadState.Error()})
	}
	if s.paused.get(id) == nil {
		raw, err := s.released.Take(ctx, id, callerOf(ctx).Principal.Key())
		if err != nil {
			return errorResult(fmt.Errorf("the paused run could not be read back (%v); send the request again", err)), nil
		}
		if raw != nil {
			return resumeReleased(s, ctx, r.Params.MultiRoundTripParams, binding, id, raw, run, toolAnswers)
		}
	}
	return resumeRun(s, ctx, r.Params.MultiRoundTripParams, binding, id, toolAnswers)
}

// pausedRunOf is the id of the paused run a requestState names, when it
// names one (a state the front end issued to this caller for this
// request, for a run rather than an upstream's question).
func (s *Server) pausedRunOf(ctx context.Context, binding, state string) (string, bool) {
	if state == "" {
		return "", false
	}
	st, err := s.states.openState(callerOf(ctx).Principal, binding, state)
	if err != nil || st.Run == "" {
		return "", false
	}
	return st.Run, true
}

// resumeRun hands a retry's answers to the paused run id and waits for it.
func resumeRun[T any](s *Server, ctx context.Context, mrt mcp.MultiRoundTripParams, binding, id string, a answers[T]) (T, error) {
	var zero T
	p := s.paused.get(id)
	if p == nil {
		return zero, answerError(ctx, rpcError{Code: mcp.INVALID_PARAMS, Message: "the run this requestState belongs to is gone (it ended, or paused on another replica of the gateway); send the request again without requestState and inputResponses"})
	}
	if len(mrt.InputResponses) > 0 {
		asking, _, err := s.askingFor(ctx, binding, mcp.MultiRoundTripParams{InputResponses: mrt.InputResponses})
		if err != nil {
			return zero, answerError(ctx, rpcError{Code: mcp.INVALID_PARAMS, Message: err.Error()})
		}
		p.answer(asking.InputResponses)
	}
	return waitRun(s, ctx, p, binding, a)
}

// startRun runs run for a 2026-07-28 request with a gateway.Peer that
// pauses it when it asks.
func startRun[T any](s *Server, ctx context.Context, binding string, run func(context.Context) (T, error), a answers[T]) (T, error) {
	return startRunWith(s, ctx, binding, run, a, nil)
}

// startRunWith is startRun; prepare, when set, sees the run before it
// starts.
func startRunWith[T any](s *Server, ctx context.Context, binding string, run func(context.Context) (T, error), a answers[T], prepare func(*pausedRun)) (T, error) {
	var caps mcp.ClientCapabilities
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.ClientCapabilities != nil {
		caps = *info.ClientCapabilities
	}
	idBytes := make([]byte, 16)
	_, _ = rand.Read(idBytes)
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	p := &pausedRun{id: hex.EncodeToString(idBytes), principal: callerOf(ctx).Principal.Key(), caps: caps, cancel: cancel,
		asked: make(chan struct{}, 1), done: make(chan struct{}), pending: map[string]*question{}}
	if prepare != nil {
		prepare(p)
	}
	go func() {
		defer cancel()
		defer close(p.done)
		// The run is off mcp-go's handler goroutine, where server.WithRecovery
		// would have caught a panic: unrecovered here, it would end the
		// process and every tenant's calls with it.
		defer func() {
			if r := recover(); r != nil {
				logx.Panic(s.log, "a call panicked", r, "binding", binding)
				p.res, p.err = nil, errRunPanicked
			}
		}()
		p.res, p.err = run(context.WithValue(gateway.WithPeer(runCtx, p), pausedRunKey{}, p))
	}()
	return waitRun(s, ctx, p, binding, a)
}

// errRunPanicked is what the client of a run that panicked hears; the
// panic itself is in the log.
var errRunPanicked = errors.New("the call failed inside the server (the gateway's log has the cause); call again, and tell the operator if it persists")

// waitRun waits for the run's result or its questions. The request's end
// (the client left) cancels a run that is not waiting for an answer, as
// it cancels any call of a 2026-07-28 client.
func waitRun[T any](s *Server, ctx context.Context, p *pausedRun, binding string, a answers[T]) (T, error) {
	var zero T
	for {
		if p.hasPending() {
			reqs, err := p.inputRequests()
			if err != nil {
				p.cancel()
				s.paused.remove(p.id)
				return a.refuse(err)
			}
			if !s.paused.put(p) {
				p.cancel()
				return a.refuse(fmt.Errorf("%d of your calls are paused already, waiting for your answers (the most one principal may have); answer them, or wait until they time out, and call again", MaxPausedRuns))
			}
			// Once per run: a client may send the same retry again and
			// again, and each would leave a goroutine until the run ends.
			p.forgetting.Do(func() { go s.forgetWhenDone(p) })
			return a.input(ctx, reqs, s.states.sealRun(callerOf(ctx).Principal, binding, p.id))
		}
		select {
		case <-p.done:
			s.paused.remove(p.id)
			if rel := p.releasedRun(); rel != nil {
				return keepReleased(s, ctx, p.id, binding, *rel, a, p.replay)
			}
			res, _ := p.res.(T)
			return res, p.err
		case <-p.asked:
		case <-ctx.Done():
			p.cancel()
			s.paused.remove(p.id)
			return zero, ctx.Err()
		}
	}
}

// forgetWhenDone drops a paused run once it ended and its result had time
// to be fetched.
func (s *Server) forgetWhenDone(p *pausedRun) {
	<-p.done
	time.Sleep(finishedRunKept)
	s.paused.remove(p.id)
}
