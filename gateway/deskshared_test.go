package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sandboxrt/sandbox/auth"
)

// TestApprovalDeskSharedByReplicas: two gateways on one DeskStore stand for
// two replicas on Redis. A call waiting on the first is listed on the
// second, whose watcher hears of it; the second's decision reaches the
// call (polled); a second decision on the first is told who decided; and
// with nobody deciding, the call's own gateway denies it at its timeout.
func TestApprovalDeskSharedByReplicas(t *testing.T) {
	t.Parallel()
	settings := DefaultSettings()
	settings.Policy = &Policy{ApprovalTimeout: 10 * time.Second, OperatorApprovals: true, Rules: []PolicyRule{
		{Tools: "*:*", Annotations: map[string]bool{"destructiveHint": true}, Action: PolicyApprove},
	}}
	store := NewMemoryDeskStore(nil)
	a, b := policyGateway(t, settings, false), policyGateway(t, settings, false)
	for _, g := range []*Gateway{a, b} {
		if err := WithDeskStore(store)(g); err != nil {
			t.Fatal(err)
		}
	}
	defer a.WatchApprovals(func() {})()
	changedOnB := make(chan struct{}, 16)
	defer b.WatchApprovals(func() {
		select {
		case changedOnB <- struct{}{}:
		default:
		}
	})()
	caller := auth.Caller{Principal: auth.Principal{ID: "bob", Tenant: "acme"}, Session: "s1"}
	a.OpenSession(caller, &elicitingPeer{}) // cannot be asked
	call := func() chan error {
		errc := make(chan error, 1)
		go func() {
			_, err := a.Call(context.Background(), CallRequest{Tool: "a:update_thing", Caller: caller, Arguments: json.RawMessage(`{"id": 7}`)})
			errc <- err
		}()
		return errc
	}

	errc := call()
	select {
	case <-changedOnB:
	case <-time.After(5 * time.Second):
		t.Fatal("B's watcher never heard of the call waiting on A")
	}
	var pending []PendingApproval
	for deadline := time.Now().Add(5 * time.Second); len(pending) == 0 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		pending = b.PendingApprovals()
	}
	if len(pending) != 1 || pending[0].Principal != "acme/bob" || pending[0].Tool != "a:update_thing" {
		t.Fatalf("B lists %+v", pending)
	}
	decided := time.Now()
	if err := b.DecideApproval(pending[0].ID, true, "ops/carol"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errc:
		if err != nil {
			t.Fatalf("the call on A after B approved: %v", err)
		}
		if took := time.Since(decided); took > 3*deskPoll {
			t.Errorf("B's decision took %v to reach A", took)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("B's decision never reached the call on A")
	}
	var second *DecidedError
	if err := a.DecideApproval(pending[0].ID, false, "ops/dave"); !errors.As(err, &second) || second.Decision.By != "ops/carol" || !second.Decision.Approve ||
		!strings.Contains(err.Error(), "approved by ops/carol") {
		t.Fatalf("a second decision on A: %v", err)
	}

	// Nobody decides: A's own timer denies the call, and it leaves the
	// shared desk.
	settings.Policy.ApprovalTimeout = 300 * time.Millisecond
	short := policyGateway(t, settings, false)
	_ = WithDeskStore(store)(short)
	defer short.WatchApprovals(func() {})()
	short.OpenSession(caller, &elicitingPeer{})
	_, err := short.Call(context.Background(), CallRequest{Tool: "a:update_thing", Caller: caller, Arguments: json.RawMessage(`{"id": 8}`)})
	if err == nil || !strings.Contains(err.Error(), "no operator answered within 300ms") {
		t.Fatalf("timed out: %v", err)
	}
	if p := b.PendingApprovals(); len(p) != 0 {
		t.Fatalf("left on the shared desk: %+v", p)
	}
}
