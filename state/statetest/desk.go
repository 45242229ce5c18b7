package statetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/sandboxrt/sandbox/gateway"
)

// TestDeskStore is the contract of gateway.DeskStore (the approval desk).
// newStore makes an empty store; two stores it makes in one subtest share
// nothing, but a store used from many goroutines stands for many replicas.
func TestDeskStore(t *testing.T, newStore func(t *testing.T) gateway.DeskStore) {
	ctx := context.Background()
	n := 0
	pending := func(principal string, life time.Duration) gateway.PendingApproval {
		n++
		now := time.Now()
		return gateway.PendingApproval{ID: fmt.Sprintf("a%d", n), Tool: "gh:delete_repo", Principal: principal,
			Question: fmt.Sprintf("delete repo %d?", n), Since: now, Deadline: now.Add(life), Page: n%2 == 0}
	}
	put := func(t *testing.T, s gateway.DeskStore, a gateway.PendingApproval) {
		t.Helper()
		if err := s.Put(ctx, a, 4); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("what is put is listed and got whole", func(t *testing.T) {
		s := newStore(t)
		if l, err := s.Pending(ctx); err != nil || len(l) != 0 {
			t.Fatalf("an empty desk: %v %v", l, err)
		}
		a, b := pending("acme/bob", time.Minute), pending("acme/alice", time.Minute)
		put(t, s, a)
		put(t, s, b)
		l, err := s.Pending(ctx)
		if err != nil || len(l) != 2 {
			t.Fatalf("pending: %+v %v", l, err)
		}
		got, ok, err := s.Get(ctx, a.ID)
		if err != nil || !ok || got.Question != a.Question || got.Principal != a.Principal || got.Tool != a.Tool ||
			got.Page != a.Page || !got.Deadline.Equal(a.Deadline) || !got.Since.Equal(a.Since) {
			t.Fatalf("got %+v %v %v, want %+v", got, ok, err, a)
		}
		if _, ok, _ := s.Get(ctx, "nope"); ok {
			t.Fatal("an unknown id is pending")
		}
		if err := s.Put(ctx, a, 4); err == nil {
			t.Fatal("the same id was put twice")
		}
	})
	t.Run("the first decision stands; a second is told by whom", func(t *testing.T) {
		s := newStore(t)
		a := pending("acme/bob", time.Minute)
		put(t, s, a)
		if d, err := s.Decision(ctx, a.ID); d != nil || err != nil {
			t.Fatalf("an undecided approval has a decision: %+v %v", d, err)
		}
		if err := s.Decide(ctx, a.ID, gateway.DeskDecision{Approve: true, By: "ops/carol", At: time.Now()}); err != nil {
			t.Fatal(err)
		}
		err := s.Decide(ctx, a.ID, gateway.DeskDecision{Approve: false, By: "ops/dave", At: time.Now()})
		var decided *gateway.DecidedError
		if !errors.As(err, &decided) || !decided.Decision.Approve || decided.Decision.By != "ops/carol" || !errors.Is(err, gateway.ErrNoSuchApproval) {
			t.Fatalf("a second decision: %v", err)
		}
		d, err := s.Decision(ctx, a.ID)
		if err != nil || d == nil || !d.Approve || d.By != "ops/carol" || d.Of != "acme/bob" {
			t.Fatalf("decision: %+v %v", d, err)
		}
		if _, ok, _ := s.Get(ctx, a.ID); ok {
			t.Fatal("a decided approval is still pending")
		}
		if l, _ := s.Pending(ctx); len(l) != 0 {
			t.Fatalf("a decided approval is listed: %+v", l)
		}
		// The call's withdrawal comes too late: the decision stands.
		if d, err := s.Withdraw(ctx, a.ID); err != nil || d == nil || d.By != "ops/carol" {
			t.Fatalf("withdrawing a decided approval: %+v %v", d, err)
		}
		if err := s.Decide(ctx, "nope", gateway.DeskDecision{By: "ops/carol"}); !errors.Is(err, gateway.ErrNoSuchApproval) || errors.As(err, &decided) {
			t.Fatalf("deciding an unknown id: %v", err)
		}
	})
	t.Run("a withdrawn approval cannot be decided", func(t *testing.T) {
		s := newStore(t)
		a := pending("acme/bob", time.Minute)
		put(t, s, a)
		if d, err := s.Withdraw(ctx, a.ID); d != nil || err != nil {
			t.Fatalf("withdraw: %+v %v", d, err)
		}
		var decided *gateway.DecidedError
		if err := s.Decide(ctx, a.ID, gateway.DeskDecision{Approve: true, By: "ops/carol"}); !errors.Is(err, gateway.ErrNoSuchApproval) || errors.As(err, &decided) {
			t.Fatalf("deciding a withdrawn approval: %v", err)
		}
		if l, _ := s.Pending(ctx); len(l) != 0 {
			t.Fatalf("a withdrawn approval is listed: %+v", l)
		}
	})
	t.Run("past its deadline an approval is gone", func(t *testing.T) {
		s := newStore(t)
		a := pending("acme/bob", 150*time.Millisecond)
		put(t, s, a)
		time.Sleep(300 * time.Millisecond)
		if _, ok, _ := s.Get(ctx, a.ID); ok {
			t.Fatal("an approval past its deadline is pending")
		}
		if l, _ := s.Pending(ctx); len(l) != 0 {
			t.Fatalf("an approval past its deadline is listed: %+v", l)
		}
		if err := s.Decide(ctx, a.ID, gateway.DeskDecision{Approve: true, By: "ops/carol"}); !errors.Is(err, gateway.ErrNoSuchApproval) {
			t.Fatalf("deciding an approval past its deadline: %v", err)
		}
	})
	t.Run("the cap is per principal and counts what waits", func(t *testing.T) {
		s := newStore(t)
		var bobs []gateway.PendingApproval
		for range 4 {
			a := pending("acme/bob", time.Minute)
			put(t, s, a)
			bobs = append(bobs, a)
		}
		if err := s.Put(ctx, pending("acme/bob", time.Minute), 4); !errors.Is(err, gateway.ErrDeskFull) {
			t.Fatalf("a fifth of bob's: %v", err)
		}
		put(t, s, pending("acme/alice", time.Minute)) // alice is not bob
		// A decided one and a withdrawn one make room for two.
		if err := s.Decide(ctx, bobs[0].ID, gateway.DeskDecision{By: "ops/carol"}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Withdraw(ctx, bobs[1].ID); err != nil {
			t.Fatal(err)
		}
		put(t, s, pending("acme/bob", time.Minute))
		put(t, s, pending("acme/bob", time.Minute))
		if err := s.Put(ctx, pending("acme/bob", time.Minute), 4); !errors.Is(err, gateway.ErrDeskFull) {
			t.Fatalf("bob over the cap again: %v", err)
		}
	})
	t.Run("concurrent puts hold the cap; concurrent decisions, one wins", func(t *testing.T) {
		s := newStore(t)
		var wg sync.WaitGroup
		var mu sync.Mutex
		var put []gateway.PendingApproval
		for range 12 {
			a := pending("acme/bob", time.Minute)
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := s.Put(ctx, a, 4); err == nil {
					mu.Lock()
					put = append(put, a)
					mu.Unlock()
				} else if !errors.Is(err, gateway.ErrDeskFull) {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		if len(put) != 4 {
			t.Fatalf("%d of 12 concurrent puts were taken, want the cap, 4", len(put))
		}
		id := put[0].ID
		wins := make(chan string, 8)
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				by := fmt.Sprintf("ops/o%d", i)
				err := s.Decide(ctx, id, gateway.DeskDecision{Approve: i%2 == 0, By: by})
				if err == nil {
					wins <- by
				} else if !errors.Is(err, gateway.ErrNoSuchApproval) {
					t.Error(err)
				}
			}()
		}
		wg.Add(1)
		go func() { defer wg.Done(); _, _ = s.Withdraw(ctx, id) }()
		wg.Wait()
		close(wins)
		var won []string
		for by := range wins {
			won = append(won, by)
		}
		d, _ := s.Decision(ctx, id)
		switch {
		case len(won) > 1:
			t.Fatalf("%d decisions won: %v", len(won), won)
		case len(won) == 1 && (d == nil || d.By != won[0]):
			t.Fatalf("%s won but the decision is %+v", won[0], d)
		case len(won) == 0 && d != nil:
			t.Fatalf("the withdrawal won but the decision is %+v", d)
		}
	})
	t.Run("the version changes with every change", func(t *testing.T) {
		s := newStore(t)
		v0, err := s.Version(ctx)
		if err != nil {
			t.Fatal(err)
		}
		a, b := pending("acme/bob", time.Minute), pending("acme/bob", time.Minute)
		put(t, s, a)
		v1, _ := s.Version(ctx)
		put(t, s, b)
		v2, _ := s.Version(ctx)
		_ = s.Decide(ctx, a.ID, gateway.DeskDecision{By: "ops/carol"})
		v3, _ := s.Version(ctx)
		_, _ = s.Withdraw(ctx, b.ID)
		v4, _ := s.Version(ctx)
		if v1 == v0 || v2 == v1 || v3 == v2 || v4 == v3 {
			t.Fatalf("versions %d %d %d %d %d", v0, v1, v2, v3, v4)
		}
		if v, _ := s.Version(ctx); v != v4 {
			t.Fatal("the version changed with nothing done")
		}
	})
}
