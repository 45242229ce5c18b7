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

type deskEntry struct {
	PendingApproval
	answer chan deskAnswer // buffered 1: DecideApproval never blocks
}

type approvalDesk struct {
	mu       sync.Mutex
	pending  map[string]*deskEntry
	watchers map[int]func()
	next     int
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
// starts or stops waiting at the approval desk. While anyone watches, and
// the policy's OperatorApprovals is on, a call whose client cannot be asked
// waits at the desk instead of being denied.
func (g *Gateway) WatchApprovals(changed func()) (cancel func()) {
	d := &g.desk
	d.mu.Lock()
	if d.watchers == nil {
		d.watchers = map[int]func(){}
	}
	id := d.next
	d.next++
	d.watchers[id] = changed
	d.mu.Unlock()
	return func() {
		d.mu.Lock()
		delete(d.watchers, id)
		d.mu.Unlock()
	}
}

// PendingApprovals lists the calls waiting at the desk, oldest first.
func (g *Gateway) PendingApprovals() []PendingApproval {
	d := &g.desk
	d.mu.Lock()
	out := make([]PendingApproval, 0, len(d.pending))
	for _, e := range d.pending {
		out = append(out, e.PendingApproval)
	}
	d.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Since.Before(out[j].Since) })
	return out
}

// DecideApproval approves or denies a pending approval; by names who
// decided (a principal's key), for the audit log and the agent's error.
func (g *Gateway) DecideApproval(id string, approve bool, by string) error {
	d := &g.desk
	d.mu.Lock()
	e, ok := d.pending[id]
	if ok {
		delete(d.pending, id)
	}
	d.mu.Unlock()
	if !ok {
		return ErrNoSuchApproval
	}
	e.answer <- deskAnswer{approve: approve, by: by}
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
	d.mu.Lock()
	if d.pending == nil {
		d.pending = map[string]*deskEntry{}
	}
	waiting := 0
	for _, o := range d.pending {
		if o.Principal == e.Principal {
			waiting++
		}
	}
	if waiting >= MaxPendingApprovalsPerPrincipal {
		d.mu.Unlock()
		return nil, fmt.Sprintf("not approved: %d of your calls wait at the approval desk already (the most one principal may have); "+
			"wait for the operator's decisions on them, then call again", waiting)
	}
	d.pending[e.ID] = e
	d.mu.Unlock()
	d.notify()
	return e, ""
}

// withdraw takes e off the desk; false when a decision took it first (its
// answer is then on its way: it stands).
func (g *Gateway) withdraw(e *deskEntry) bool {
	d := &g.desk
	d.mu.Lock()
	_, still := d.pending[e.ID]
	delete(d.pending, e.ID)
	d.mu.Unlock()
	if still {
		d.notify()
	}
	return still
}

// awaitDesk waits for the decision on e, up to timeout or ctx's end, and
// takes e off the desk when none came.
func (g *Gateway) awaitDesk(ctx context.Context, e *deskEntry, timeout time.Duration) (a deskAnswer, answered, timedOut bool) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case a := <-e.answer:
		return a, true, false
	case <-timer.C:
		if !g.withdraw(e) {
			return <-e.answer, true, false
		}
		return deskAnswer{}, false, true
	case <-ctx.Done():
		if !g.withdraw(e) {
			return <-e.answer, true, false
		}
		return deskAnswer{}, false, false
	}
}
