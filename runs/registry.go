package runs

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"
)

// ReplicaStopped is the message of a run whose replica stopped renewing its
// lease (it died, or lost Redis for longer than the lease): the run failed.
const ReplicaStopped = "the replica running it stopped"

// Options configure a Registry.
type Options struct {
	Limits Limits
	// Replica names this process in the runs it runs (default: random).
	Replica string
	// Lease overrides Limits.Lease (for tests).
	Lease time.Duration
	// Now is the clock (nil: time.Now).
	Now func() time.Time
}

// Registry is what one replica does with the runs of a Store.
type Registry struct {
	store   Store
	limits  Limits
	replica string
	lease   time.Duration
	now     func() time.Time

	mu    sync.Mutex
	local map[string]*Handle // the runs running here, by id
}

// NewRegistry returns a registry of the runs in store.
func NewRegistry(store Store, o Options) *Registry {
	if o.Now == nil {
		o.Now = time.Now
	}
	o.Limits = o.Limits.WithDefaults()
	if o.Lease <= 0 {
		o.Lease = o.Limits.Lease
	}
	if o.Replica == "" {
		o.Replica = randomID()
	}
	return &Registry{store: store, limits: o.Limits.WithDefaults(), replica: o.Replica, lease: o.Lease, now: o.Now, local: map[string]*Handle{}}
}

// Limits are the registry's limits, defaults filled.
func (g *Registry) Limits() Limits { return g.limits }

func randomID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Start makes a run of owner's, working here, kept for the TTL asked
// (within the ceiling) once it ends. The run is stored before Start returns,
// so a Get on any replica finds it. ctx is the run's parent: cancel the
// Handle's Context to stop the work, and call Finish when it ends.
func (g *Registry) Start(ctx context.Context, owner, tool string, askedTTL time.Duration) (*Handle, error) {
	now := g.now()
	r := Run{ID: "task-" + randomID(), Owner: owner, Tool: tool, State: Working, Created: now, Updated: now,
		TTL: g.limits.TTL(askedTTL), Replica: g.replica, Lease: now.Add(g.lease)}
	if err := g.store.Create(ctx, r, g.limits); err != nil {
		return nil, err
	}
	rctx, cancel := context.WithCancel(ctx)
	h := &Handle{g: g, run: r, ctx: rctx, cancel: cancel, wake: make(chan struct{}, 1), done: make(chan struct{})}
	g.mu.Lock()
	g.local[r.ID] = h
	g.mu.Unlock()
	go h.renew()
	return h, nil
}

// Get returns the owner's run. A live run whose lease lapsed is failed
// first (ReplicaStopped), so no run stays working after its replica died.
func (g *Registry) Get(ctx context.Context, owner, id string) (Run, error) {
	r, err := g.store.Get(ctx, owner, id)
	if err != nil || !r.Orphaned(g.now()) {
		return r, err
	}
	return g.store.Modify(ctx, owner, id, func(r *Run, _ Held) error {
		if !r.Orphaned(g.now()) {
			return ErrUnchanged
		}
		g.end(r, Failed, nil, rpcError(-32603, ReplicaStopped))
		r.Message = ReplicaStopped
		return nil
	})
}

// List returns the runs of every owner, the most recently changed first,
// at most limit, as Store.List does (their Metas' fields): what an
// operator's console lists. A live run whose lease lapsed is failed first,
// as Get does.
func (g *Registry) List(ctx context.Context, limit int) ([]Run, error) {
	list, err := g.store.List(ctx, limit)
	if err != nil {
		return nil, err
	}
	for i, r := range list {
		if r.Orphaned(g.now()) {
			if failed, err := g.Get(ctx, r.Owner, r.ID); err == nil {
				list[i] = failed.Meta().Listed(r.Owner)
			}
		}
	}
	return list, nil
}

// Cancel cancels the owner's run if it is live, on whichever replica runs
// it (here at once, elsewhere at its next renewal). Cancelling a final run
// does nothing; ErrNotFound for a run not there.
func (g *Registry) Cancel(ctx context.Context, owner, id string) error {
	return g.cancel(ctx, owner, id, "cancelled by its client")
}

// CancelByOperator is Cancel by a person who operates the gateway (the
// console), not the run's client: the run's message names them.
func (g *Registry) CancelByOperator(ctx context.Context, owner, id, operator string) error {
	return g.cancel(ctx, owner, id, "cancelled by the operator "+operator)
}

func (g *Registry) cancel(ctx context.Context, owner, id, message string) error {
	if _, err := g.Get(ctx, owner, id); err != nil {
		return err
	}
	_, err := g.store.Modify(ctx, owner, id, func(r *Run, _ Held) error {
		if !r.State.Live() {
			return ErrUnchanged
		}
		g.end(r, Cancelled, nil, nil)
		r.Message = message
		return nil
	})
	if err != nil {
		return err
	}
	if h := g.localRun(id); h != nil {
		h.cancel()
	}
	return nil
}

// ErrNotWaiting is an answer to a run that asks for nothing.
var ErrNotWaiting = errors.New("runs: the run is not waiting for input")

// Answer delivers answers to the input requests of the owner's run
// (tasks/update): the answered requests leave InputRequests; the run works
// again when none is left. Answers to requests it did not make are
// ignored.
func (g *Registry) Answer(ctx context.Context, owner, id string, answers map[string]json.RawMessage) error {
	if _, err := g.Get(ctx, owner, id); err != nil {
		return err
	}
	_, err := g.store.Modify(ctx, owner, id, func(r *Run, _ Held) error {
		if r.State != InputRequired {
			return ErrNotWaiting
		}
		took := false
		for k, v := range answers {
			if _, asked := r.InputRequests[k]; !asked {
				continue
			}
			if r.Answers == nil {
				r.Answers = map[string]json.RawMessage{}
			}
			r.Answers[k] = v
			delete(r.InputRequests, k)
			took = true
		}
		if !took {
			return ErrUnchanged
		}
		if len(r.InputRequests) == 0 {
			r.State, r.InputRequests = Working, nil
		}
		r.Updated = g.now()
		return nil
	})
	if err == nil {
		if h := g.localRun(id); h != nil {
			h.poke()
		}
	}
	return err
}

// Stop fails every run this replica still runs ("the replica running it
// stopped") and cancels its work: a replica that shuts down says so at once
// instead of leaving its runs to their leases.
func (g *Registry) Stop() {
	g.mu.Lock()
	running := make([]*Handle, 0, len(g.local))
	for _, h := range g.local {
		running = append(running, h)
	}
	g.mu.Unlock()
	for _, h := range running {
		if _, err := h.finish(nil, rpcError(-32603, ReplicaStopped), ReplicaStopped); err != nil {
			h.cancel() // the lease fails it on the other replicas' watch
		}
	}
}

func (g *Registry) localRun(id string) *Handle {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.local[id]
}

// end makes r final.
func (g *Registry) end(r *Run, s State, result, rpcErr json.RawMessage) {
	r.State, r.Result, r.Error = s, result, rpcErr
	r.InputRequests, r.Answers = nil, nil
	r.Updated = g.now()
}

func rpcError(code int, message string) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"code": code, "message": message})
	return b
}

// Handle is a run as the replica running it sees it.
type Handle struct {
	g      *Registry
	ctx    context.Context
	cancel context.CancelFunc
	wake   chan struct{} // an answer came, or it is time to look
	done   chan struct{} // closed by Finish

	mu       sync.Mutex
	run      Run
	progress *Progress
	console  []string
	dirty    bool // progress or console not yet stored
	finished bool
}

// ID is the run's id.
func (h *Handle) ID() string { return h.run.ID }

// Run is the run as it was started.
func (h *Handle) Run() Run { return h.run }

// Context is cancelled when the run is cancelled, from any replica.
func (h *Handle) Context() context.Context { return h.ctx }

func (h *Handle) poke() {
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

// Progress records the run's progress (stored at the next renewal).
func (h *Handle) Progress(p Progress) {
	h.mu.Lock()
	h.progress, h.dirty = &p, true
	h.mu.Unlock()
}

// Console records a console line; the last Limits.ConsoleLines are kept.
func (h *Handle) Console(line string) {
	l := h.g.limits
	if len(line) > l.ConsoleLineBytes {
		line = line[:l.ConsoleLineBytes] + "…"
	}
	h.mu.Lock()
	h.console = append(h.console, line)
	if n := len(h.console) - l.ConsoleLines; n > 0 {
		h.console = append(h.console[:0], h.console[n:]...)
	}
	h.dirty = true
	h.mu.Unlock()
}

// renew keeps the lease, stores progress and console lines, and notices a
// cancellation made on another replica, until Finish: it looks every
// second (or third of a lease, if shorter), and writes when there is news
// or the lease is a quarter gone.
func (h *Handle) renew() {
	t := time.NewTicker(h.every())
	defer t.Stop()
	renewed := h.g.now()
	for {
		select {
		case <-h.done:
			return
		case <-t.C:
		}
		// A quarter of a lease, not a third: a tick a little early must
		// not put the renewal off by a whole tick.
		if h.flush(h.g.now().Sub(renewed) >= h.g.lease/4) {
			renewed = h.g.now()
		}
	}
}

// every is how often a run looks at its stored self.
func (h *Handle) every() time.Duration { return min(h.g.lease/3, time.Second) }

// flush stores the lease (when renew), progress and console (when they
// changed); cancels the work when the run was ended elsewhere. It reports
// whether it renewed the lease.
func (h *Handle) flush(renew bool) bool {
	h.mu.Lock()
	p, c, dirty := h.progress, append([]string(nil), h.console...), h.dirty
	h.dirty = false
	h.mu.Unlock()
	wrote := false
	r, err := h.g.store.Modify(context.WithoutCancel(h.ctx), h.run.Owner, h.run.ID, func(r *Run, _ Held) error {
		if !r.State.Live() || (!renew && !dirty) {
			return ErrUnchanged
		}
		r.Lease = h.g.now().Add(h.g.lease)
		r.Progress, r.Console = p, c
		if p != nil && p.Message != "" && r.State == Working {
			r.Message = p.Message
		}
		wrote = true
		return nil
	})
	if errors.Is(err, ErrNotFound) || (err == nil && !r.State.Live()) {
		h.cancel()
	}
	if err != nil && dirty {
		h.mu.Lock()
		h.dirty = true // stored at the next look
		h.mu.Unlock()
	}
	return wrote
}

// Ask adds requests (key: an id unique in the run) to the run's input
// requests, puts it in input_required, and waits until each of them is
// answered (tasks/update, on any replica), the run is cancelled, or ctx
// ends. Several may ask at once (a snippet's parallel calls): each waits for
// its own keys.
func (h *Handle) Ask(ctx context.Context, requests map[string]json.RawMessage) (map[string]json.RawMessage, error) {
	if len(requests) == 0 {
		return map[string]json.RawMessage{}, nil
	}
	_, err := h.g.store.Modify(ctx, h.run.Owner, h.run.ID, func(r *Run, _ Held) error {
		if !r.State.Live() {
			return fmt.Errorf("the task ended while it asked for input")
		}
		if r.InputRequests == nil {
			r.InputRequests = map[string]json.RawMessage{}
		}
		for k, v := range requests {
			if _, dup := r.InputRequests[k]; dup {
				return fmt.Errorf("runs: input request %q is already pending", k)
			}
			r.InputRequests[k] = v
		}
		r.State = InputRequired
		r.Message = "waiting for input (tasks/update)"
		r.Updated = h.g.now()
		return nil
	})
	if err != nil {
		return nil, err
	}
	// An answer given on this replica wakes the run at once; one given on
	// another is seen at the next look, at most a second later.
	t := time.NewTicker(h.every())
	defer t.Stop()
	for {
		var answers map[string]json.RawMessage
		_, err := h.g.store.Modify(ctx, h.run.Owner, h.run.ID, func(r *Run, _ Held) error {
			if !r.State.Live() {
				return context.Canceled
			}
			for k := range requests {
				if _, ok := r.Answers[k]; !ok {
					return ErrUnchanged
				}
			}
			answers = map[string]json.RawMessage{}
			for k := range requests {
				answers[k] = r.Answers[k]
				delete(r.Answers, k)
			}
			if r.State == Working {
				r.Message = ""
			}
			return nil
		})
		if err != nil {
			h.cancel()
			return nil, err
		}
		if answers != nil {
			return answers, nil
		}
		select {
		case <-h.ctx.Done():
			return nil, h.ctx.Err()
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-h.wake:
		case <-t.C:
		}
	}
}

type handleKey struct{}

// NewContext carries the run's Handle to the code that serves the run, so
// that a handler which needs a person's input while it runs as a task asks
// through Ask (the task's input_required) rather than its client, who may
// be gone.
func NewContext(ctx context.Context, h *Handle) context.Context {
	return context.WithValue(ctx, handleKey{}, h)
}

// FromContext returns the Handle of the run being served, or nil.
func FromContext(ctx context.Context) *Handle {
	h, _ := ctx.Value(handleKey{}).(*Handle)
	return h
}

// Finish ends the run with the call's result (the JSON of its result) or
// its JSON-RPC error object. A run cancelled meanwhile stays cancelled. A
// result past the owner's stored-bytes cap is not kept: the run fails,
// saying so.
func (h *Handle) Finish(result, rpcErr json.RawMessage) (Run, error) {
	return h.finish(result, rpcErr, "")
}

// finish is Finish, with the message of the run's final state.
func (h *Handle) finish(result, rpcErr json.RawMessage, message string) (Run, error) {
	h.mu.Lock()
	if h.finished { // ended already (Stop): the run as it was stored
		h.mu.Unlock()
		return h.g.store.Get(context.WithoutCancel(h.ctx), h.run.Owner, h.run.ID)
	}
	h.finished = true
	p, c := h.progress, append([]string(nil), h.console...)
	h.mu.Unlock()
	defer func() {
		close(h.done)
		h.cancel()
		h.g.mu.Lock()
		delete(h.g.local, h.run.ID)
		h.g.mu.Unlock()
	}()
	ctx := context.WithoutCancel(h.ctx)
	return h.g.store.Modify(ctx, h.run.Owner, h.run.ID, func(r *Run, others Held) error {
		if !r.State.Live() {
			return ErrUnchanged
		}
		r.Progress, r.Console = p, c
		state := Completed
		if rpcErr != nil {
			state = Failed
		}
		if limit := h.g.limits.ResultBytesPerPrincipal; others.ResultBytes+int64(len(result)+len(rpcErr)) > limit {
			msg := fmt.Sprintf("the result is %d bytes, and with the results you keep (%d bytes) it passes the %d you may keep; read or let some expire, or have the snippet return less (a big result can stay in sandbox.results)", len(result)+len(rpcErr), others.ResultBytes, limit)
			g := h.g
			g.end(r, Failed, nil, rpcError(-32603, msg))
			r.Message = msg
			return nil
		}
		h.g.end(r, state, result, rpcErr)
		r.Message = message
		return nil
	})
}
