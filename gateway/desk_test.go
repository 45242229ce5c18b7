package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sandboxrt/sandbox/auth"
)

// TestApprovalDesk: with operatorApprovals on and someone watching the
// desk, a call whose client cannot be asked waits there with the same
// question an elicitation shows; an operator's decision lets it run or
// denies it, and the audit log says who decided. Nobody watching, or
// nobody answering in time, it is denied.
func TestApprovalDesk(t *testing.T) {
	t.Parallel()
	auditPath := filepath.Join(t.TempDir(), "audit.jsonl")
	settings := DefaultSettings()
	settings.Policy = &Policy{ApprovalTimeout: 300 * time.Millisecond, OperatorApprovals: true, Rules: []PolicyRule{
		{Tools: "*:*", Annotations: map[string]bool{"destructiveHint": true}, Action: PolicyApprove},
	}}
	settings.Audit = &AuditConfig{Path: auditPath}
	g := policyGateway(t, settings, false)
	caller := auth.Caller{Principal: auth.Principal{ID: "bob", Tenant: "acme"}, Session: "s2"}
	g.OpenSession(caller, &elicitingPeer{}) // cannot be asked
	call := func() error {
		_, err := g.Call(context.Background(), CallRequest{Tool: "a:update_thing", Caller: caller, Arguments: json.RawMessage(`{"id": 7}`)})
		return err
	}

	// Nobody watches the desk: denied at once, as without it.
	if err := call(); err == nil || !strings.Contains(err.Error(), "does not support MCP elicitation") {
		t.Fatalf("nobody watching: %v", err)
	}

	changed := make(chan struct{}, 16)
	stop := g.WatchApprovals(func() { changed <- struct{}{} })
	defer stop()
	decide := func(approve bool) error {
		errc := make(chan error, 1)
		go func() { errc <- call() }()
		var pending []PendingApproval
		for len(pending) == 0 { // a watcher hears removals too
			select {
			case <-changed:
			case <-time.After(5 * time.Second):
				t.Fatal("the desk told no watcher of the call")
			}
			pending = g.PendingApprovals()
		}
		if len(pending) != 1 {
			t.Fatalf("pending: %+v", pending)
		}
		p := pending[0]
		want, _ := approvalQuestion(g.mustTool(t, "a:update_thing"), map[string]any{"id": json.Number("7")})
		if p.Tool != "a:update_thing" || p.Principal != "acme/bob" || p.Question != want || !p.Deadline.After(p.Since) {
			t.Errorf("pending approval: %+v\nwant the question:\n%s", p, want)
		}
		if err := g.DecideApproval(p.ID, approve, "ops"); err != nil {
			t.Fatal(err)
		}
		if err := g.DecideApproval(p.ID, approve, "ops"); !errors.Is(err, ErrNoSuchApproval) {
			t.Errorf("deciding twice: %v", err)
		}
		return <-errc
	}
	if err := decide(true); err != nil {
		t.Fatalf("approved at the desk: %v", err)
	}
	if err := decide(false); err == nil || !strings.Contains(err.Error(), "operator ops denied it") {
		t.Fatalf("denied at the desk: %v", err)
	}
	// A 2026-07-28 request that declares no elicitation waits at the desk
	// too, and goes on when an operator approves.
	call = func() error {
		ctx := WithAsking(context.Background(), Asking{Capabilities: json.RawMessage(`{}`)})
		_, err := g.Call(ctx, CallRequest{Tool: "a:update_thing", Caller: auth.Caller{Principal: caller.Principal}, Arguments: json.RawMessage(`{"id": 7}`)})
		return err
	}
	if err := decide(true); err != nil {
		t.Fatalf("a 2026-07-28 request approved at the desk: %v", err)
	}
	// Nobody answers in time: denied, and the desk is empty again.
	if err := call(); err == nil || !strings.Contains(err.Error(), "no operator answered within 300ms") {
		t.Fatalf("timed out: %v", err)
	}
	if p := g.PendingApprovals(); len(p) != 0 {
		t.Errorf("left on the desk: %+v", p)
	}

	data, err := os.ReadFile(auditPath)
	if err != nil {
		t.Fatal(err)
	}
	var decidedBy []string
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var r AuditRecord
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		if r.Kind == AuditKindApproval {
			decidedBy = append(decidedBy, r.DecidedBy+"|"+r.Decision)
		}
	}
	want := []string{"|not approved: this client cannot be asked (it does not support MCP elicitation)", "ops|approved by operator ops",
		"ops|not approved: operator ops denied it", "ops|approved by operator ops", "|not approved: no operator answered within 300ms"}
	if strings.Join(decidedBy, "\n") != strings.Join(want, "\n") {
		t.Errorf("approval audit lines:\n%s\nwant:\n%s", strings.Join(decidedBy, "\n"), strings.Join(want, "\n"))
	}
}

// TestApprovalDeskCapsEachPrincipal: the desk is shared by every principal
// and a call waits there before any concurrency limit applies, so one
// principal's flood of calls must not fill it: past
// MaxPendingApprovalsPerPrincipal its calls are denied at once, saying why,
// and another principal's call still waits for an operator.
func TestApprovalDeskCapsEachPrincipal(t *testing.T) {
	t.Parallel()
	settings := DefaultSettings()
	settings.Policy = &Policy{ApprovalTimeout: time.Minute, OperatorApprovals: true, Rules: []PolicyRule{
		{Tools: "*:*", Annotations: map[string]bool{"destructiveHint": true}, Action: PolicyApprove},
	}}
	g := policyGateway(t, settings, false)
	stop := g.WatchApprovals(func() {})
	defer stop()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	asking := WithAsking(ctx, Asking{Capabilities: json.RawMessage(`{}`)}) // declares no elicitation
	call := func(p auth.Principal) error {
		_, err := g.Call(asking, CallRequest{Tool: "a:update_thing", Caller: auth.Caller{Principal: p}, Arguments: json.RawMessage(`{"id": 7}`)})
		return err
	}
	mallory := auth.Principal{ID: "mallory", Tenant: "evil"}
	flood := MaxPendingApprovalsPerPrincipal + 8
	errc := make(chan error, flood)
	for range flood {
		go func() { errc <- call(mallory) }()
	}
	// The calls over the cap are denied at once; the others wait.
	for range flood - MaxPendingApprovalsPerPrincipal {
		select {
		case err := <-errc:
			if err == nil || !strings.Contains(err.Error(), "wait at the approval desk already") {
				t.Fatalf("a call over the cap: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("calls over the cap were not denied at once; the desk holds %d", len(g.PendingApprovals()))
		}
	}
	if n := len(g.PendingApprovals()); n != MaxPendingApprovalsPerPrincipal {
		t.Fatalf("the desk holds %d of one principal's calls, want %d", n, MaxPendingApprovalsPerPrincipal)
	}
	// Another principal is not crowded out.
	alice := auth.Principal{ID: "alice", Tenant: "acme"}
	done := make(chan error, 1)
	go func() { done <- call(alice) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var id string
		for _, p := range g.PendingApprovals() {
			if p.Principal == alice.Key() {
				id = p.ID
			}
		}
		if id != "" {
			if err := g.DecideApproval(id, true, "ops"); err != nil {
				t.Fatal(err)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("another principal's call never reached the desk")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := <-done; err != nil {
		t.Fatalf("another principal's approved call: %v", err)
	}
}
