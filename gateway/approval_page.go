package gateway

// An approval asked by URL-mode elicitation: the call waits at the approval
// desk (desk.go) marked as the caller's own (PendingApproval.Page), and
// the client is asked to open a link to serve's approval page (package
// console), where the caller's principal, signed in with its own
// credential, or an operator reads the same question a form shows
// (approvalQuestion) and approves or denies it (DecideApproval). A client
// that declares URL mode but not form mode is asked so; one that declares
// both is when the policy's ApprovalMode is ApprovalByURL.

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"
)

// CapabilityFormElicitation is what Peer.Supports is asked for form-mode
// elicitation: "elicitation": {"form": {}}, or {} (which means form mode
// alone).
const CapabilityFormElicitation = "elicitation.form"

// approvalPage is where approvals asked by URL point, and the calls of
// 2026-07-28 requests asked so, waiting at the desk for their retry.
type approvalPage struct {
	mu     sync.Mutex
	base   string
	asked  map[string]*deskEntry // by desk id
	expiry map[string]*time.Timer
}

// SetApprovalPage turns on approvals asked by URL: the link of a pending
// approval is base + "/" + its id (PendingApproval.ID).
func (g *Gateway) SetApprovalPage(base string) {
	g.approvalPage.mu.Lock()
	g.approvalPage.base = base
	g.approvalPage.mu.Unlock()
}

func (g *Gateway) approvalPageBase() string {
	g.approvalPage.mu.Lock()
	defer g.approvalPage.mu.Unlock()
	return g.approvalPage.base
}

// asksByURL reports whether a client that declares url and form modes as
// given is asked to approve by URL.
func (g *Gateway) asksByURL(url, form bool) bool {
	if !url || g.approvalPageBase() == "" {
		return false
	}
	return !form || g.cfg.Settings.Policy.ApprovalMode == ApprovalByURL
}

// pageParams is the URL-mode elicitation that sends the person to e's page.
func (g *Gateway) pageParams(e *deskEntry) json.RawMessage {
	params, _ := json.Marshal(map[string]any{
		"mode":          "url",
		"message":       fmt.Sprintf("A call of %s needs your approval. Open the link to read what it would run and approve or deny it (sign in with your sandbox credential).", e.Tool),
		"url":           g.approvalPageBase() + "/" + e.ID,
		"elicitationId": e.ID,
	})
	return params
}

// pageDecision applies the decision made on the page (or at the desk) to
// c: nil when approved, else DENIED; audited with who decided.
func (g *Gateway) pageDecision(c *call, rule int, a deskAnswer, answered, timedOut bool, timeout time.Duration) *Error {
	p := g.cfg.Settings.Policy
	// An operator may decide it on the console's desk as well as on the
	// page; the caller only on the page.
	who, where := "operator "+a.by, ""
	if a.by == c.req.Caller.Principal.Key() {
		who, where = a.by+" (the caller)", " on the approval page"
	}
	switch {
	case answered && a.approve:
		c.decision = "approved by " + who + where
		c.state.Approved = true
	case answered:
		c.decision = "not approved: " + who + " denied it" + where
	case timedOut:
		c.decision = fmt.Sprintf("not approved: nobody answered within %v", timeout)
	default:
		c.decision = "not approved: the caller went away while it waited"
	}
	g.observe.audit(AuditRecord{Kind: AuditKindApproval, Tool: c.toolID, Principal: c.req.Caller.Principal.Key(), Session: string(c.req.Caller.Session),
		Decision: c.decision, DecidedBy: a.by})
	if c.state.Approved {
		return nil
	}
	return newError(CodeDenied, c.toolID, nil, map[string]any{"rule": rule + 1, "tools": p.Rules[rule].Tools},
		"%s needs a person's approval (policy rule %d, %q) and was %s; the call did not run", c.toolID, rule+1, p.Rules[rule].Tools, c.decision)
}

// approveOnPage asks a session's client (or a run's, WithPeer) to open the
// approval page, and waits for the decision made there.
func (g *Gateway) approveOnPage(ctx context.Context, c *call, rule int, timeout time.Duration, peer Peer, denied func(string) *Error) *Error {
	e, refusal := g.putOnDesk(c, timeout, true)
	if e == nil {
		return denied(strings.TrimPrefix(refusal, "not approved: "))
	}
	// The caller's time limit stands while the person reads.
	if pause := c.req.PauseClock; pause != nil {
		defer pause()()
	}
	askCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	raw, err := peer.Request(askCtx, "elicitation/create", g.pageParams(e))
	if err != nil || declined(raw) {
		if a, decided := g.withdraw(e); decided { // decided on the page meanwhile: that stands
			return g.pageDecision(c, rule, a, true, false, timeout)
		}
		if err != nil {
			return denied("asking failed: " + err.Error())
		}
		return denied("the person declined to open the approval page")
	}
	a, answered, timedOut := g.awaitDesk(ctx, e, time.Until(e.Deadline))
	if answered {
		note, _ := json.Marshal(map[string]string{"elicitationId": e.ID})
		peer.Notify("notifications/elicitation/complete", note)
	}
	return g.pageDecision(c, rule, a, answered, timedOut, timeout)
}

// approveOnPageByInput is approveOnPage for a 2026-07-28 request: the first
// round leaves the call at the desk and answers input_required with the
// link; the retry waits for the decision (if it is not made yet) and goes on.
func (g *Gateway) approveOnPageByInput(ctx context.Context, c *call, rule int, timeout time.Duration, denied func(string) *Error) *Error {
	var answers map[string]json.RawMessage
	_ = json.Unmarshal(c.asking.InputResponses, &answers)
	if answer, ok := answers[approvalKey]; ok && c.state.Page != "" {
		e := g.takePageAsk(c.state.Page)
		if e == nil && g.desk.shared {
			// Asked on another replica: its page is on every one, and
			// the decision is found where it is stored.
			e = g.joinDesk(ctx, c.state.Page)
		}
		if e == nil || e.Principal != c.req.Caller.Principal.Key() {
			return denied("this approval was answered already, or nobody answered it within " + timeout.String() + "; call the tool again to be asked anew")
		}
		if declined(answer) {
			if a, decided := g.withdraw(e); decided {
				return g.pageDecision(c, rule, a, true, false, timeout)
			}
			return denied("the person declined to open the approval page")
		}
		a, answered, timedOut := g.awaitDesk(ctx, e, time.Until(e.Deadline))
		if err := g.pageDecision(c, rule, a, answered, timedOut, timeout); err != nil {
			return err
		}
		free, err := g.takeQuestion(ctx, c.state.Question)
		if err != nil {
			return newError(CodeInternal, c.toolID, err, map[string]any{"rule": rule + 1},
				"%s was decided on the approval page, and the gateway could not reach its ledger of approvals (%v); the call did not run: send the same retry again, and tell the operator if it persists", c.toolID, err)
		}
		if !free {
			return denied("this approval was answered already and the call ran on it; call the tool again to be asked anew")
		}
		return nil
	}
	e, refusal := g.putOnDesk(c, timeout, true)
	if e == nil {
		return denied(strings.TrimPrefix(refusal, "not approved: "))
	}
	g.keepPageAsk(e, timeout)
	requests, _ := json.Marshal(map[string]any{approvalKey: map[string]any{"method": "elicitation/create", "params": g.pageParams(e)}})
	st := c.state
	st.AskedAt, st.Question, st.Page = time.Now().UnixMilli(), newQuestionID(), e.ID
	c.ask = &InputRequired{Requests: requests, State: st.encode()}
	return nil
}

// keepPageAsk keeps e for its retry, and takes it off the desk at its
// deadline if no retry came for it.
func (g *Gateway) keepPageAsk(e *deskEntry, timeout time.Duration) {
	p := &g.approvalPage
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.asked == nil {
		p.asked, p.expiry = map[string]*deskEntry{}, map[string]*time.Timer{}
	}
	p.asked[e.ID] = e
	p.expiry[e.ID] = time.AfterFunc(timeout, func() {
		if g.takePageAsk(e.ID) != nil {
			g.withdraw(e)
		}
	})
}

// takePageAsk takes the entry a retry names (once).
func (g *Gateway) takePageAsk(id string) *deskEntry {
	p := &g.approvalPage
	p.mu.Lock()
	defer p.mu.Unlock()
	e := p.asked[id]
	delete(p.asked, id)
	if t := p.expiry[id]; t != nil {
		t.Stop()
		delete(p.expiry, id)
	}
	return e
}
