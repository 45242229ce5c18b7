package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"
	"sync"
	"time"
)

// Policy decides which calls may run, for direct calls and calls from
// snippets alike: the first rule that matches a call decides; a call no
// rule matches is allowed. It is the "policy" block of the gateway config.
type Policy struct {
	Rules []PolicyRule
	// ApprovalTimeout bounds how long an "approve" call waits for a
	// person's answer (default 2 minutes); past it the call is denied.
	ApprovalTimeout time.Duration
	// OperatorApprovals lets a call whose client cannot be asked (no MCP
	// elicitation) wait up to ApprovalTimeout for an operator's decision
	// at the approval desk (desk.go: the operator console), instead of
	// being denied at once. Off, or with nobody watching the desk, such a
	// call is denied.
	OperatorApprovals bool
	// ApprovalMode is how a client that can be asked both ways is asked:
	// ApprovalByForm (the default: an elicitation form in the client) or
	// ApprovalByURL (a link to serve's approval page, approval_page.go).
	// A client that declares URL-mode elicitation but not form mode is
	// asked by URL either way.
	ApprovalMode string
}

// The approval modes of Policy.ApprovalMode.
const (
	ApprovalByForm = "form"
	ApprovalByURL  = "url"
)

// PolicyRule matches calls by tool and annotations.
type PolicyRule struct {
	// Tools is a pattern over "server:tool" ids: * matches any run of
	// characters, ? one ("github:delete_*", "*:*").
	Tools string
	// Annotations the tool must have, as MCP defines their defaults (a
	// tool that says nothing is not read-only, is destructive, is not
	// idempotent and is open-world; a read-only tool is not destructive):
	// {"destructiveHint": true}.
	Annotations map[string]bool
	Action      PolicyAction
}

// PolicyAction is what a matching rule does with a call.
type PolicyAction string

// The actions of a policy rule.
const (
	PolicyAllow   PolicyAction = "allow"
	PolicyDeny    PolicyAction = "deny"
	PolicyApprove PolicyAction = "approve" // ask the calling client's person, by MCP elicitation
)

// DefaultApprovalTimeout is how long an approval waits by default.
const DefaultApprovalTimeout = 2 * time.Minute

// match reports whether the rule matches a tool.
func (r PolicyRule) match(t *Tool) bool {
	if ok, _ := path.Match(r.Tools, t.ID); !ok {
		return false
	}
	if len(r.Annotations) == 0 {
		return true
	}
	hints := toolHints(t)
	for k, want := range r.Annotations {
		if hints[k] != want {
			return false
		}
	}
	return true
}

// toolHints are a tool's annotation hints with MCP's defaults applied.
func toolHints(t *Tool) map[string]bool {
	hints := map[string]bool{"readOnlyHint": false, "destructiveHint": true, "idempotentHint": false, "openWorldHint": true}
	var a map[string]any
	if len(t.Annotations) > 0 && json.Unmarshal(t.Annotations, &a) == nil {
		for k, v := range a {
			if b, ok := v.(bool); ok {
				hints[k] = b
			}
		}
	}
	if hints["readOnlyHint"] {
		hints["destructiveHint"] = false // MCP: meaningful only for a tool that writes
	}
	return hints
}

// Decide returns what the policy does with a call of tool: its action and
// the rule that decided (-1 when none did).
func (p *Policy) Decide(t *Tool) (PolicyAction, int) {
	if p != nil {
		for i, r := range p.Rules {
			if r.match(t) {
				return r.Action, i
			}
		}
	}
	return PolicyAllow, -1
}

// Denied reports whether the policy denies every call of the tool (so it
// is not worth showing to an agent). A read-only server's tools that are
// not annotated read-only are denied too.
func (g *Gateway) Denied(t *Tool) bool {
	if u := g.upstreams[t.Server]; u != nil && u.sc.ReadOnly && !toolHints(t)["readOnlyHint"] {
		return true
	}
	action, _ := g.cfg.Settings.Policy.Decide(t)
	return action == PolicyDeny
}

// NeedsApproval reports whether every call of the tool waits for a
// person's approval (a policy rule "approve" decides it), so that code
// mode can say so in the tool's declaration before an agent calls it.
func (g *Gateway) NeedsApproval(t *Tool) bool {
	if g.Denied(t) {
		return false
	}
	action, _ := g.cfg.Settings.Policy.Decide(t)
	return action == PolicyApprove
}

// policyStep applies the server's read-only flag and the policy: it denies,
// or waits for a person's approval.
func (g *Gateway) policyStep(ctx context.Context, c *call) *Error {
	if c.u.sc.ReadOnly && !toolHints(c.tool)["readOnlyHint"] {
		c.decision = "denied: read-only server"
		return newError(CodeDenied, c.toolID, nil, map[string]any{"server": c.u.name},
			"server %q is read-only here: only its tools annotated readOnlyHint may be called, and %s is not", c.u.name, c.toolID)
	}
	p := g.cfg.Settings.Policy
	action, rule := p.Decide(c.tool)
	switch action {
	case PolicyDeny:
		c.decision = fmt.Sprintf("denied by rule %d", rule+1)
		return newError(CodeDenied, c.toolID, nil, map[string]any{"rule": rule + 1, "tools": p.Rules[rule].Tools},
			"the gateway's policy denies %s (rule %d, %q); it cannot be called here", c.toolID, rule+1, p.Rules[rule].Tools)
	case PolicyApprove:
		return g.approve(ctx, c, rule)
	}
	if rule >= 0 {
		c.decision = fmt.Sprintf("allowed by rule %d", rule+1)
	}
	return nil
}

// approvals remembers "approve every call of this tool in this run".
type approvals struct {
	mu sync.Mutex
	m  map[string]bool
}

const maxApprovalMemo = 4096

func (a *approvals) has(key string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.m[key]
}

func (a *approvals) add(key string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.m == nil || len(a.m) >= maxApprovalMemo {
		a.m = map[string]bool{}
	}
	a.m[key] = true
}

// approve asks the person behind the calling client, with MCP elicitation,
// whether the call may run. Declined, timed out, or a client that cannot
// be asked: DENIED, naming the rule.
func (g *Gateway) approve(ctx context.Context, c *call, rule int) *Error {
	p := g.cfg.Settings.Policy
	memo := ""
	if c.req.Run != "" {
		memo = string(c.req.Caller.Session) + "\x00" + c.req.Run + "\x00" + c.toolID
		if g.approved.has(memo) {
			c.decision = "approved for the run"
			return nil
		}
	}
	denied := func(why string) *Error {
		c.decision = "not approved: " + why
		g.auditApproval(c)
		return newError(CodeDenied, c.toolID, nil, map[string]any{"rule": rule + 1, "tools": p.Rules[rule].Tools},
			"%s needs a person's approval (policy rule %d, %q) and %s; the call did not run", c.toolID, rule+1, p.Rules[rule].Tools, why)
	}
	// The question shows what will run: the arguments as validated and
	// forwarded (c.decoded), every key of them (approval.go).
	question, qerr := approvalQuestion(c.tool, c.decoded)
	options := []string{"approve", "deny"}
	if c.req.Run != "" {
		options = []string{"approve", "approve every call of this tool in this run", "deny"}
	}
	params, _ := json.Marshal(map[string]any{
		"message": question,
		"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{
			"decision": map[string]any{"type": "string", "title": "Decision", "enum": options},
		}, "required": []string{"decision"}},
	})
	timeout := p.ApprovalTimeout
	if timeout <= 0 {
		timeout = DefaultApprovalTimeout
	}
	if c.asking != nil {
		// A 2026-07-28 caller is asked by input_required (asking.go).
		ledgerDown := func(err error) *Error {
			c.decision = "not approved: the ledger of approvals could not answer"
			g.auditApproval(c)
			return newError(CodeInternal, c.toolID, err, map[string]any{"rule": rule + 1, "tools": p.Rules[rule].Tools},
				"%s needs a person's approval (policy rule %d, %q) and the gateway could not reach its ledger of approvals (%v); the call did not run: send the same retry again, and tell the operator if it persists", c.toolID, rule+1, p.Rules[rule].Tools, err)
		}
		if c.state.Approved {
			free, err := g.takeQuestion(ctx, c.state.Question)
			if err != nil {
				return ledgerDown(err)
			}
			if !free {
				return denied("its approval was used already: the call ran on it (or runs on it now); call the tool again to be asked anew")
			}
			c.decision = "approved" // in an earlier round of this call, audited then
			return nil
		}
		if qerr != nil {
			return denied(qerr.Error())
		}
		if g.asksByURL(c.asking.declaresURLElicitation(), c.asking.declaresFormElicitation()) {
			return g.approveOnPageByInput(ctx, c, rule, timeout, denied) // approval_page.go
		}
		if !c.asking.declares("elicitation") {
			// The approval desk, when an operator watches it (desk.go).
			return g.askOperator(ctx, c, rule, func(string) *Error {
				return denied("this client cannot be asked (its request declares no elicitation capability)")
			})
		}
		raw, why, err := g.approvalByInput(ctx, c, params, timeout)
		if err != nil {
			return ledgerDown(err)
		}
		if why != "" {
			return denied(why)
		}
		if raw == nil {
			return nil // asked: the call answers input_required
		}
		return g.approvalAnswer(c, raw, memo, denied)
	}
	var peer Peer
	if c.req.Caller.Session != "" {
		peer = g.peer(c.req.Caller.Session)
	} else {
		peer = peerFrom(ctx) // a session-less client that waits for its run (WithPeer)
	}
	if peer == nil || !peer.Supports("elicitation") {
		return g.askOperator(ctx, c, rule, denied) // the approval desk, or denied (desk.go)
	}
	if qerr != nil {
		return denied(qerr.Error())
	}
	if g.asksByURL(peer.Supports(CapabilityURLElicitation), peer.Supports(CapabilityFormElicitation)) {
		return g.approveOnPage(ctx, c, rule, timeout, peer, denied) // approval_page.go
	}
	askCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// The caller's time limit stands while the person reads.
	if pause := c.req.PauseClock; pause != nil {
		defer pause()()
	}
	raw, err := peer.Request(asApprovalAsk(askCtx), "elicitation/create", params)
	if errors.Is(err, ErrReleased) {
		// Not a decision: the question is asked again when the run resumes.
		// The call's audit line (outcome CANCELLED) says so.
		c.decision = "released: the run gave its worker back and asks again when it resumes"
		return newError(CodeCancelled, c.toolID, nil, nil, "%s waits for a person's approval; its run was released and asks again when it resumes", c.toolID)
	}
	if err != nil {
		if askCtx.Err() != nil && ctx.Err() == nil {
			return denied(fmt.Sprintf("nobody answered within %v", timeout))
		}
		return denied("asking failed: " + err.Error())
	}
	return g.approvalAnswer(c, raw, memo, denied)
}

// approvalAnswer applies a person's answer (an elicitation result) to an
// approval.
func (g *Gateway) approvalAnswer(c *call, raw json.RawMessage, memo string, denied func(string) *Error) *Error {
	var answer struct {
		Action  string `json:"action"`
		Content struct {
			Decision string `json:"decision"`
		} `json:"content"`
	}
	if err := json.Unmarshal(raw, &answer); err != nil {
		return denied("the client's answer could not be read")
	}
	switch {
	case answer.Action == "decline":
		return denied("the person declined it")
	case answer.Action != "accept":
		return denied("the person dismissed the question")
	case answer.Content.Decision == "approve":
		c.decision = "approved"
	case strings.HasPrefix(answer.Content.Decision, "approve every"):
		c.decision = "approved for the run"
		if memo != "" {
			g.approved.add(memo)
		}
	default:
		return denied("the person denied it")
	}
	c.state.Approved = true
	g.auditApproval(c)
	return nil
}

// auditApproval records a person's (or the client's) answer to an approval.
func (g *Gateway) auditApproval(c *call) {
	g.observe.audit(AuditRecord{Kind: AuditKindApproval, Tool: c.toolID, Principal: c.req.Caller.Principal.Key(), Session: string(c.req.Caller.Session), Decision: c.decision})
}
