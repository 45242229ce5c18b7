package runs

import (
	"context"
	"testing"
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
