package gateway

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"
)

// The approval desk: where a call that needs a person's approval waits for
// an operator when the calling client cannot be asked (it does not support
// MCP elicitation, or the request has no session). It is on when the
// policy's OperatorApprovals says so and someone watches the desk (the
// operator console, through WatchApprovals); otherwise such a call is
// DENIED at once, as before: a call must not wait for a desk nobody reads.
//
// The operator reads the same question an MCP client's person reads
// (approvalQuestion), decides with DecideApproval, and the decision is in
// the audit log with who made it.

// PendingApproval is a call waiting at the desk for an operator's decision.
type PendingApproval struct {
	ID        string `json:"id"`
	Tool      string `json:"tool"` // "server:tool"
	Principal string `json:"principal"`
	Session   string `json:"session,omitempty"`
	Run       string `json:"run,omitempty"` // the execute_code run making the call, if any
	// Question is the text a person decides on: the same rendering of the
	// tool and its arguments as the elicitation message.
	Question string    `json:"question"`
	Since    time.Time `json:"since"`
	Deadline time.Time `json:"deadline"` // past it the call is denied
	// Page is set for a call asked by URL (approval_page.go): its own
	// principal may decide it too, on serve's approval page.
	Page bool `json:"page,omitempty"`
}

// MaxPendingApprovalsPerPrincipal is how many of one principal's calls may
// wait at the desk at once. The desk is every principal's, and a call waits
// there before the concurrency limits apply (the policy comes first), so
// without a cap one principal's flood would bury the others' calls under
// its own and hold a goroutine and a request for each for the whole
// approval timeout. One call more is denied at once, saying why.
const MaxPendingApprovalsPerPrincipal = 16

// ErrNoSuchApproval is DecideApproval's error for an id that is not
// waiting (decided already, timed out, or never was).
var ErrNoSuchApproval = errors.New("no such pending approval: it was decided, timed out or its caller went away")

// deskAnswer is an operator's decision on one pending approval.
type deskAnswer struct {
	approve bool
	by      string
}

func answerOf(d *DeskDecision) deskAnswer { return deskAnswer{approve: d.Approve, by: d.By} }

// deskEntry is a call waiting at this replica's desk.
type deskEntry struct {
	PendingApproval
	answer chan deskAnswer // buffered 1: a decision made here never blocks
}

// approvalDesk is the desk: store holds what waits and the decisions
// (every replica's, when shared); local are the calls waiting in this
// process, which a decision made here reaches at once and one made on
// another replica reaches by polling (shared).
type approvalDesk struct {
	store  DeskStore
	shared bool // store is shared with other replicas (WithDeskStore)

	mu       sync.Mutex
	local    map[string]*deskEntry
	watchers map[int]func()
	next     int
	polling  bool // a goroutine polls store's version for the watchers
}

// deskPoll is how often a call waiting at a shared desk looks for a
// decision made on another replica, and a watched desk for changes made
// there (as runs/ polls for a cancel).
const deskPoll = time.Second

// WithDeskStore shares the approval desk through s (state/redisstate):
// every replica lists every replica's pending approvals, and a decision
// made on any replica reaches the call where it waits.
func WithDeskStore(s DeskStore) Option {
	return func(g *Gateway) error {
		if s != nil {
			g.desk.store, g.desk.shared = s, true
		}
		return nil
	}
}

// watched reports whether anyone reads the desk.
func (d *approvalDesk) watched() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.watchers) > 0
}

// notify tells every watcher that the pending approvals changed; d.mu is
// not held (a watcher may read the desk).
func (d *approvalDesk) notify() {
	d.mu.Lock()
	fns := make([]func(), 0, len(d.watchers))
	for _, fn := range d.watchers {
		fns = append(fns, fn)
	}
	d.mu.Unlock()
	for _, fn := range fns {
		fn()
	}
}

// WatchApprovals calls changed (which must not block) whenever a call
// starts or stops waiting at the approval desk (on another replica too,
// within about a second, with a shared desk). While anyone watches, and
// the policy's OperatorApprovals is on, a call whose client cannot be
// asked waits at the desk instead of being denied.
func (g *Gateway) WatchApprovals(changed func()) (cancel func()) {
	d := &g.desk
	d.mu.Lock()
	if d.watchers == nil {
		d.watchers = map[int]func(){}
	}
	id := d.next
	d.next++
	d.watchers[id] = changed
	if d.shared && !d.polling {
		d.polling = true
		go g.pollDesk()
	}
	d.mu.Unlock()
	return func() {
		d.mu.Lock()
		delete(d.watchers, id)
		d.mu.Unlock()
	}
}

// pollDesk tells the watchers of the changes other replicas make to a
// shared desk, while anyone watches.
func (g *Gateway) pollDesk() {
	d := &g.desk
	t := time.NewTicker(deskPoll)
	defer t.Stop()
	var last uint64
	for {
		select {
		case <-g.ctx.Done():
		case <-t.C:
		}
		d.mu.Lock()
		if len(d.watchers) == 0 || g.ctx.Err() != nil {
			d.polling = false
			d.mu.Unlock()
			return
		}
		d.mu.Unlock()
		ctx, cancel := context.WithTimeout(g.ctx, deskPoll)
		v, err := d.store.Version(ctx)
		cancel()
		if err == nil && v != last {
			last = v
			d.notify()
		}
	}
}

// PendingApprovals lists the calls waiting at the desk, oldest first
// (every replica's, with a shared desk; only this one's while the shared
// store does not answer).
func (g *Gateway) PendingApprovals() []PendingApproval {
	d := &g.desk
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := d.store.Pending(ctx)
	if err != nil {
		g.log.Warn("the approval desk's store does not answer; listing this replica's pending approvals only", "err", err)
		d.mu.Lock()
		out = out[:0]
		for _, e := range d.local {
			out = append(out, e.PendingApproval)
		}
		d.mu.Unlock()
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Since.Before(out[j].Since) })
	return out
}

// PendingApprovalByID is one call waiting at the desk.
func (g *Gateway) PendingApprovalByID(id string) (PendingApproval, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	a, ok, err := g.desk.store.Get(ctx, id)
	if err != nil {
		g.log.Warn("the approval desk's store does not answer", "err", err)
	}
	return a, ok && err == nil
}

// DecideApproval approves or denies a pending approval; by names who
// decided (a principal's key), for the audit log and the agent's error.
// The first decision stands: a later one gets a *DecidedError saying who
// made it (an ErrNoSuchApproval too), one for a call no longer waiting
// ErrNoSuchApproval.
func (g *Gateway) DecideApproval(id string, approve bool, by string) error {
	d := &g.desk
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := d.store.Decide(ctx, id, DeskDecision{Approve: approve, By: by, At: time.Now()}); err != nil {
		return err
	}
	d.mu.Lock()
	e := d.local[id]
	delete(d.local, id)
	d.mu.Unlock()
	if e != nil {
		e.answer <- deskAnswer{approve: approve, by: by}
	}
	d.notify()
	return nil
}

// askOperator is approve's answer for a call whose client cannot be asked:
// with the policy's OperatorApprovals on and someone watching the desk, the
// call waits there for an operator's decision; otherwise it is denied, as
// denied words it.
func (g *Gateway) askOperator(ctx context.Context, c *call, rule int, denied func(why string) *Error) *Error {
	p := g.cfg.Settings.Policy
	if !p.OperatorApprovals || !g.desk.watched() {
		return denied("this client cannot be asked (it does not support MCP elicitation)")
	}
	timeout := p.ApprovalTimeout
	if timeout <= 0 {
		timeout = DefaultApprovalTimeout
	}
	decision, by, ok := g.approveAtDesk(ctx, c, timeout)
	c.decision = decision
	g.observe.audit(AuditRecord{Kind: AuditKindApproval, Tool: c.toolID, Principal: c.req.Caller.Principal.Key(), Session: string(c.req.Caller.Session),
		Decision: c.decision, DecidedBy: by})
	if !ok {
		return newError(CodeDenied, c.toolID, nil, map[string]any{"rule": rule + 1, "tools": p.Rules[rule].Tools},
			"%s needs a person's approval (policy rule %d, %q) and was %s; the call did not run", c.toolID, rule+1, p.Rules[rule].Tools, decision)
	}
	return nil
}

// approveAtDesk waits up to timeout for an operator's decision on c. It
// returns the decision's text for c.decision, who decided, and whether the
// call may run; a call the question cannot show is denied without waiting.
func (g *Gateway) approveAtDesk(ctx context.Context, c *call, timeout time.Duration) (decision, by string, ok bool) {
	e, refusal := g.putOnDesk(c, timeout, false)
	if e == nil {
		return refusal, "", false
	}
	decided := func(a deskAnswer) (string, string, bool) {
		if a.approve {
			return "approved by operator " + a.by, a.by, true
		}
		return "not approved: operator " + a.by + " denied it", a.by, false
	}
	// The caller's time limit stands while the operator reads.
	if pause := c.req.PauseClock; pause != nil {
		defer pause()()
	}
	a, answered, timedOut := g.awaitDesk(ctx, e, timeout)
	switch {
	case answered:
		return decided(a)
	case timedOut:
		return fmt.Sprintf("not approved: no operator answered within %v", timeout), "", false
	}
	return "not approved: the caller went away while it waited", "", false
}

// putOnDesk puts c on the desk, asked until timeout; page marks a call
// asked by URL (its own principal may decide it too, on serve's approval
// page). A nil entry comes with why the call is denied instead.
func (g *Gateway) putOnDesk(c *call, timeout time.Duration, page bool) (*deskEntry, string) {
	question, err := approvalQuestion(c.tool, c.decoded)
	if err != nil {
		return nil, "not approved: " + err.Error()
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	now := time.Now()
	e := &deskEntry{PendingApproval: PendingApproval{ID: hex.EncodeToString(b[:]), Tool: c.toolID, Principal: c.req.Caller.Principal.Key(),
		Session: string(c.req.Caller.Session), Run: c.req.Run, Question: question, Since: now, Deadline: now.Add(timeout), Page: page},
		answer: make(chan deskAnswer, 1)}
	d := &g.desk
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	switch err := d.store.Put(ctx, e.PendingApproval, MaxPendingApprovalsPerPrincipal); {
	case errors.Is(err, ErrDeskFull):
		return nil, fmt.Sprintf("not approved: %d of your calls wait at the approval desk already (the most one principal may have); "+
			"wait for the decisions on them, then call again", MaxPendingApprovalsPerPrincipal)
	case err != nil:
		return nil, "not approved: the approval desk cannot be reached (" + err.Error() + ")"
	}
	d.mu.Lock()
	if d.local == nil {
		d.local = map[string]*deskEntry{}
	}
	d.local[e.ID] = e
	d.mu.Unlock()
	d.notify()
	return e, ""
}

// joinDesk is the entry of a call asked by URL on another replica, for
// the retry that came here (approveOnPageByInput): nil when it no longer
// waits and holds no decision.
func (g *Gateway) joinDesk(ctx context.Context, id string) *deskEntry {
	if a, ok, err := g.desk.store.Get(ctx, id); err == nil && ok {
		return &deskEntry{PendingApproval: a, answer: make(chan deskAnswer, 1)}
	}
	d, err := g.desk.store.Decision(ctx, id)
	if err != nil || d == nil {
		return nil
	}
	e := &deskEntry{PendingApproval: PendingApproval{ID: id, Principal: d.Of, Deadline: time.Now()}, answer: make(chan deskAnswer, 1)}
	e.answer <- answerOf(d)
	return e
}

// withdraw takes e off the desk; a decision that came first (here or on
// another replica) stands and is returned instead.
func (g *Gateway) withdraw(e *deskEntry) (deskAnswer, bool) {
	d := &g.desk
	d.mu.Lock()
	_, local := d.local[e.ID]
	delete(d.local, e.ID)
	d.mu.Unlock()
	if !local {
		// Decided here: the answer is on its way.
		select {
		case a := <-e.answer:
			return a, true
		default:
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	decision, err := d.store.Withdraw(ctx, e.ID)
	if err != nil {
		g.log.Warn("the approval desk's store does not answer; the approval is withdrawn here", "id", e.ID, "err", err)
	}
	d.notify()
	if decision != nil {
		return answerOf(decision), true
	}
	return deskAnswer{}, false
}

// awaitDesk waits for the decision on e, up to timeout or ctx's end, and
// takes e off the desk when none came. A decision made on another replica
// of a shared desk is found by polling.
func (g *Gateway) awaitDesk(ctx context.Context, e *deskEntry, timeout time.Duration) (a deskAnswer, answered, timedOut bool) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var poll <-chan time.Time
	if g.desk.shared {
		t := time.NewTicker(deskPoll)
		defer t.Stop()
		poll = t.C
	}
	for {
		select {
		case a := <-e.answer:
			return a, true, false
		case <-poll:
			if d, err := g.desk.store.Decision(ctx, e.ID); err == nil && d != nil {
				g.desk.forget(e.ID)
				return answerOf(d), true, false
			}
		case <-timer.C:
			if a, decided := g.withdraw(e); decided {
				return a, true, false
			}
			return deskAnswer{}, false, true
		case <-ctx.Done():
			if a, decided := g.withdraw(e); decided {
				return a, true, false
			}
			return deskAnswer{}, false, false
		}
	}
}

// forget drops a decided call from the calls waiting here.
func (d *approvalDesk) forget(id string) {
	d.mu.Lock()
	delete(d.local, id)
	d.mu.Unlock()
}
