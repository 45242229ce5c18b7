package frontend

// A built-in tool's run that pauses for a person's approval is released
// from its worker: the run ends once its other calls in flight are
// answered, its journal (runtime/journal.go: what it took from outside its
// snippet) is kept here, and the client gets input_required under a state
// naming it. The retry with the answer takes the journal (once: a second
// copy of the retry finds nothing) and runs the snippet again against it
// in a fresh worker; the approval, asked again at the same call, is
// answered from the retry. With a shared ReleasedRunStore (Redis) the
// retry may land on any replica.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/sandboxrt/sandbox/gateway"
)

// ReleasedRunStore keeps released runs (an opaque, private record: it
// holds tool results) until their client's retry takes them.
type ReleasedRunStore interface {
	// Put keeps run under id, for principal, until ttl passes. It fails
	// with ErrTooManyReleased when principal has MaxPausedRuns kept
	// already or would hold over its share of the store's bytes (a quarter:
	// one principal cannot fill it for the others), and with
	// ErrReleasedStoreFull when the store would hold over its bytes.
	Put(ctx context.Context, id, principal string, run []byte, ttl time.Duration) error
	// Take returns the run principal kept under id and forgets it,
	// atomically: of two takers one gets it, the other nil. nil, nil when
	// there is none (or it is another principal's, which stays).
	Take(ctx context.Context, id, principal string) ([]byte, error)
}

// ErrTooManyReleased is a ReleasedRunStore's refusal of one more run of a
// principal that has its share kept already.
var ErrTooManyReleased = errors.New("too many runs are waiting for their answers")

// ErrReleasedStoreFull is a ReleasedRunStore's refusal of a run when every
// principal's together fill it.
var ErrReleasedStoreFull = errors.New("the store of runs waiting for their answers is full")

// ReleasedShare is the part of a ReleasedRunStore's bytes one principal
// may hold: a quarter, so that one principal's big journals (a snippet
// that read the clock a million times) cannot leave others no room.
func ReleasedShare(maxBytes int64) int64 { return maxBytes / 4 }

// WithReleasedRunStore sets where released runs are kept (default: in
// this process, NewMemoryReleasedRuns). Replicas that share clients must
// share it.
func WithReleasedRunStore(store ReleasedRunStore) Option {
	return func(s *Server) {
		if store != nil {
			s.released = store
		}
	}
}

// MaxReleasedBytes is the default bound of what a ReleasedRunStore holds,
// all principals together (a journal holds up to 8 MB of tool results).
const MaxReleasedBytes = 256 << 20

// MemoryReleasedRuns is a ReleasedRunStore for one process.
type MemoryReleasedRuns struct {
	mu       sync.Mutex
	runs     map[string]memoryReleased
	bytes    int64
	maxBytes int64
	now      func() time.Time
}

type memoryReleased struct {
	principal string
	run       []byte
	expires   time.Time
}

// NewMemoryReleasedRuns returns an empty store that holds up to maxBytes
// (0: MaxReleasedBytes), on the clock now (nil: time.Now).
func NewMemoryReleasedRuns(maxBytes int64, now func() time.Time) *MemoryReleasedRuns {
	if maxBytes <= 0 {
		maxBytes = MaxReleasedBytes
	}
	if now == nil {
		now = time.Now
	}
	return &MemoryReleasedRuns{runs: map[string]memoryReleased{}, maxBytes: maxBytes, now: now}
}

// Put implements ReleasedRunStore.
func (m *MemoryReleasedRuns) Put(_ context.Context, id, principal string, run []byte, ttl time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	n, own := 0, int64(0)
	for k, r := range m.runs {
		if !now.Before(r.expires) {
			m.bytes -= int64(len(r.run))
			delete(m.runs, k)
			continue
		}
		if r.principal == principal && k != id {
			n++
			own += int64(len(r.run))
		}
	}
	held := m.bytes
	if old, ok := m.runs[id]; ok {
		held -= int64(len(old.run))
	}
	switch {
	case n >= MaxPausedRuns || own+int64(len(run)) > ReleasedShare(m.maxBytes):
		return ErrTooManyReleased
	case held+int64(len(run)) > m.maxBytes:
		return ErrReleasedStoreFull
	}
	m.runs[id] = memoryReleased{principal: principal, run: append([]byte(nil), run...), expires: now.Add(ttl)}
	m.bytes = held + int64(len(run))
	return nil
}

// Take implements ReleasedRunStore.
func (m *MemoryReleasedRuns) Take(_ context.Context, id, principal string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.runs[id]
	if !ok || r.principal != principal {
		return nil, nil
	}
	delete(m.runs, id)
	m.bytes -= int64(len(r.run))
	if !m.now().Before(r.expires) {
		return nil, nil
	}
	return r.run, nil
}

// releasedRun is what the store keeps of a released run.
type releasedRun struct {
	Principal string             `json:"p"`
	Journal   json.RawMessage    `json:"j"`
	Questions []releasedQuestion `json:"q"`
}

// releasedQuestion is a question the run was waiting on when it was
// released; the retry's answer to Key answers it when the resumed run asks
// it again (the same method and params).
type releasedQuestion struct {
	Key     string          `json:"k"`
	Method  string          `json:"m"`
	Params  json.RawMessage `json:"params,omitempty"`
	Expires int64           `json:"e"` // unix ms: when the question times out
	Timeout int64           `json:"t"` // ms: how long it had, for the refusal of a late answer
	Answer  json.RawMessage `json:"a,omitempty"`
}

// keepReleased keeps a released run and answers its client with its
// questions, under a state that names it. When the store is full of every
// principal's runs and replay is set, the run goes back to a worker
// instead, by replay of its journal (nothing is called again), and waits
// there for its answer as a run held in its worker does: it was released
// already, and a refusal now would leave its client only the snippet's
// start, whose calls before the pause would then be made twice.
func keepReleased[T any](s *Server, ctx context.Context, id, binding string, rel releasedRun, a answers[T], replay func(context.Context, []byte) (any, error)) (T, error) {
	raw, _ := json.Marshal(rel)
	if err := s.released.Put(ctx, id, rel.Principal, raw, RequestStateTTL); err != nil {
		if errors.Is(err, ErrReleasedStoreFull) && replay != nil {
			s.log.Warn("the store of released runs is full: a run goes back to a worker to wait there", "principal", rel.Principal)
			return startRunWith(s, ctx, binding, func(ctx context.Context) (T, error) {
				res, err := replay(gateway.WithoutRelease(ctx), rel.Journal)
				out, _ := res.(T)
				return out, err
			}, a, nil)
		}
		switch {
		case errors.Is(err, ErrTooManyReleased):
			return a.refuse(fmt.Errorf("your calls paused already, waiting for your answers, are as many (%d) or as large as one principal may have kept; answer them, or wait until they time out, and call again", MaxPausedRuns))
		case errors.Is(err, ErrReleasedStoreFull):
			return a.refuse(errors.New("the gateway keeps as many paused runs as it can hold (every principal's together); the run could not be kept while it waits for your answer: call again in a few minutes, and tell the operator if it persists"))
		}
		return a.refuse(fmt.Errorf("the run paused for your answer but could not be kept (%v); call again", err))
	}
	reqs, err := questionRequests(rel.Questions)
	if err != nil {
		return a.refuse(err)
	}
	return a.input(ctx, reqs, s.states.sealRun(callerOf(ctx).Principal, binding, id))
}

// questionRequests are released questions as the client receives them.
func questionRequests(qs []releasedQuestion) (mcp.InputRequests, error) {
	raw := make(map[string]any, len(qs))
	for _, q := range qs {
		req := map[string]any{"method": q.Method}
		if len(q.Params) > 0 {
			req["params"] = q.Params
		}
		raw[q.Key] = req
	}
	b, _ := json.Marshal(raw)
	var reqs mcp.InputRequests
	if err := json.Unmarshal(b, &reqs); err != nil {
		return nil, fmt.Errorf("the run asked something the client cannot be asked: %w", err)
	}
	return reqs, nil
}

// resumeReleased resumes the released run id with the retry's answers: it
// takes the run from the store (a copy of the retry that comes second
// finds nothing) and, when every question has its answer, runs the
// snippet again against the journal; a retry that answers none is asked
// again.
func resumeReleased[T any](s *Server, ctx context.Context, mrt mcp.MultiRoundTripParams, binding, id string, raw []byte, run func(context.Context) (T, error), a answers[T]) (T, error) {
	var zero T
	var rel releasedRun
	if json.Unmarshal(raw, &rel) != nil || rel.Principal != callerOf(ctx).Principal.Key() {
		return zero, answerError(ctx, rpcError{Code: mcp.INVALID_PARAMS, Message: errBadState.Error()})
	}
	var answers map[string]json.RawMessage
	if len(mrt.InputResponses) > 0 {
		asking, _, err := s.askingFor(ctx, binding, mcp.MultiRoundTripParams{InputResponses: mrt.InputResponses})
		if err != nil {
			_ = s.released.Put(ctx, id, rel.Principal, raw, RequestStateTTL) // the retry was malformed, the run is still the client's
			return zero, answerError(ctx, rpcError{Code: mcp.INVALID_PARAMS, Message: err.Error()})
		}
		_ = json.Unmarshal(asking.InputResponses, &answers)
	}
	for i, q := range rel.Questions {
		rel.Questions[i].Answer = answers[q.Key]
		if answers[q.Key] == nil {
			return keepReleased(s, ctx, id, binding, releasedRun{Principal: rel.Principal, Journal: rel.Journal, Questions: rel.Questions}, a, nil)
		}
	}
	return startRunWith(s, ctx, binding, func(ctx context.Context) (T, error) {
		return run(gateway.WithResume(ctx, rel.Journal))
	}, a, func(p *pausedRun) {
		p.preanswers = rel.Questions
		replayableBy(run)(p)
	})
}

// replayableBy lets a run of handler be replayed into a worker it keeps
// (pausedRun.replay).
func replayableBy[T any](handler func(context.Context) (T, error)) func(*pausedRun) {
	return func(p *pausedRun) {
		p.replay = func(ctx context.Context, journal []byte) (any, error) {
			return handler(gateway.WithResume(ctx, journal))
		}
	}
}

// preanswered answers a question a resumed run asks again from the retry
// that resumed it (each answer once); ok false for a new question.
func (r *pausedRun) preanswered(method string, params json.RawMessage) (answer json.RawMessage, ok bool, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, q := range r.preanswers {
		if q.Answer == nil || q.Method != method || string(q.Params) != string(params) {
			continue
		}
		r.preanswers[i].Answer = nil
		if time.Now().UnixMilli() > q.Expires {
			return nil, true, fmt.Errorf("nobody answered within %v", time.Duration(q.Timeout)*time.Millisecond)
		}
		return q.Answer, true, nil
	}
	return nil, false, nil
}
