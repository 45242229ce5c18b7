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
