package runs

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestStopFailsTheRunsRunningHere: a replica that stops fails the runs it
// still runs at once, saying why, and cancels their work; a later Finish
// of the work changes nothing.
func TestStopFailsTheRunsRunningHere(t *testing.T) {
	store := NewMemoryStore(nil)
	g := NewRegistry(store, Options{})
	h, err := g.Start(context.Background(), "alice", "execute_code", 0)
	if err != nil {
		t.Fatal(err)
	}
	other := NewRegistry(store, Options{}) // another replica's run is not this one's to stop
	o, err := other.Start(context.Background(), "alice", "execute_code", 0)
	if err != nil {
		t.Fatal(err)
	}
	g.Stop()
	if h.Context().Err() == nil {
		t.Fatal("a stopped replica's run goes on")
	}
	r, err := other.Get(context.Background(), "alice", h.ID())
	if err != nil || r.State != Failed || r.Message != ReplicaStopped {
		t.Fatalf("after Stop: %+v %v", r, err)
	}
	if r, _ := h.Finish([]byte(`{"content":[]}`), nil); r.State != Failed {
		t.Fatalf("a Finish after Stop: %+v", r)
	}
	if r, _ := g.Get(context.Background(), "alice", o.ID()); r.State != Working {
		t.Fatalf("another replica's run: %+v", r)
	}
}

// TestMemoryStoreCapsAllResults: the in-process store keeps at most its
// total of results for every principal together; a result past it is not
// kept and its run fails saying so; one that expired frees its room.
func TestMemoryStoreCapsAllResults(t *testing.T) {
	// The clock is read by each run's renewal goroutine too.
	var clockNs atomic.Int64
	clockNs.Store(time.Date(2026, 7, 28, 0, 0, 0, 0, time.UTC).UnixNano())
	now := func() time.Time { return time.Unix(0, clockNs.Load()).UTC() }
	advance := func(d time.Duration) { clockNs.Add(int64(d)) }
	g := NewRegistry(NewMemoryStore(now).LimitResultBytes(100), Options{Limits: Limits{DefaultTTL: time.Minute}, Now: now})
	ctx := context.Background()
	finish := func(owner string, n int) Run {
		t.Helper()
		h, err := g.Start(ctx, owner, "execute_code", 0)
		if err != nil {
			t.Fatal(err)
		}
		r, err := h.Finish([]byte(`"`+strings.Repeat("x", n-2)+`"`), nil)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := finish("alice", 60); r.State != Completed {
		t.Fatalf("within the total: %+v", r)
	}
	if r := finish("bob", 60); r.State != Failed || !strings.Contains(r.Message, "more than this server keeps for tasks right now") {
		t.Fatalf("another principal past the total: %+v", r)
	}
	if r := finish("bob", 30); r.State != Completed {
		t.Fatalf("within what is left: %+v", r)
	}
	advance(2 * time.Minute) // alice's result expires; her next run prunes it
	if r := finish("alice", 10); r.State != Completed {
		t.Fatalf("after expiry: %+v", r)
	}
	if r := finish("carol", 60); r.State != Completed {
		t.Fatalf("the room alice's expired result left: %+v", r)
	}
	// Carol never comes back; the sweep drops her expired result for dave.
	advance(2 * time.Minute)
	if r := finish("dave", 90); r.State != Completed {
		t.Fatalf("the room an absent principal's expired result left: %+v", r)
	}
}
