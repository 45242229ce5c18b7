package statetest

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sandboxrt/sandbox/runs"
)

// TestRunStore is the contract of runs.Store (the runs that outlive their
// request: tasks), exercised through runs.Registry as the front end uses
// it. Two registries on one store are two replicas. newStore makes an
// empty store with a clock.
func TestRunStore(t *testing.T, newStore func(t *testing.T, now func() time.Time) runs.Store) {
	ctx := context.Background()
	start := func(t *testing.T, g *runs.Registry, owner string) *runs.Handle {
		t.Helper()
		h, err := g.Start(ctx, owner, "execute_code", 0)
		if err != nil {
			t.Fatalf("start a run of %s: %v", owner, err)
		}
		return h
	}
	get := func(t *testing.T, g *runs.Registry, owner, id string) runs.Run {
		t.Helper()
		r, err := g.Get(ctx, owner, id)
		if err != nil {
			t.Fatalf("get %s of %s: %v", id, owner, err)
		}
		return r
	}
	// A lease of an hour: no renewal happens during a test on the manual
	// clock, so the test moves the lease's time by hand.
	rig := func(t *testing.T, limits runs.Limits) (*manualClock, runs.Store, func() *runs.Registry) {
		clock := &manualClock{now: time.Date(2026, 7, 28, 9, 0, 0, 0, time.UTC)}
		s := newStore(t, clock.Now)
		return clock, s, func() *runs.Registry {
			return runs.NewRegistry(s, runs.Options{Limits: limits, Lease: time.Hour, Now: clock.Now})
		}
	}

	t.Run("a run is its owner's alone", func(t *testing.T) {
		_, _, replica := rig(t, runs.Limits{})
		a, b := replica(), replica()
		h := start(t, a, "alice")
		if r := get(t, b, "alice", h.ID()); r.State != runs.Working || r.Owner != "alice" || r.Tool != "execute_code" {
			t.Fatalf("the run on another replica: %+v", r)
		}
		if _, err := b.Get(ctx, "bob", h.ID()); !errors.Is(err, runs.ErrNotFound) {
			t.Fatalf("bob got alice's run: %v", err)
		}
		if err := b.Cancel(ctx, "bob", h.ID()); !errors.Is(err, runs.ErrNotFound) {
			t.Fatalf("bob cancelled alice's run: %v", err)
		}
		if err := b.Answer(ctx, "bob", h.ID(), map[string]json.RawMessage{"a": []byte(`{}`)}); !errors.Is(err, runs.ErrNotFound) {
			t.Fatalf("bob answered alice's run: %v", err)
		}
		if _, err := b.Get(ctx, "alice", "task-never-made"); !errors.Is(err, runs.ErrNotFound) {
			t.Fatalf("a run never made: %v", err)
		}
		if get(t, a, "alice", h.ID()).State != runs.Working {
			t.Fatal("bob's attempts changed alice's run")
		}
	})

	t.Run("a finished run keeps its result for its TTL after it ends", func(t *testing.T) {
		clock, s, replica := rig(t, runs.Limits{DefaultTTL: time.Minute, MaxTTL: 10 * time.Minute})
		a, b := replica(), replica()
		h, err := a.Start(ctx, "alice", "execute_code", time.Hour) // over the ceiling
		if err != nil {
			t.Fatal(err)
		}
		if h.Run().TTL != 10*time.Minute {
			t.Fatalf("TTL %v, want the ceiling", h.Run().TTL)
		}
		h.Progress(runs.Progress{Progress: 1, Total: 2, Message: "half"})
		h.Console("first line")
		clock.advance(30 * time.Minute) // running long is no expiry
		if _, err := h.Finish([]byte(`{"content":[{"type":"text","text":"42"}]}`), nil); err != nil {
			t.Fatal(err)
		}
		r := get(t, b, "alice", h.ID())
		if r.State != runs.Completed || string(r.Result) != `{"content":[{"type":"text","text":"42"}]}` || r.Error != nil {
			t.Fatalf("finished: %+v", r)
		}
		if r.Progress == nil || r.Progress.Message != "half" || len(r.Console) != 1 || r.Console[0] != "first line" {
			t.Fatalf("progress and console: %+v %v", r.Progress, r.Console)
		}
		if h.Context().Err() == nil {
			t.Fatal("a finished run's context is not done")
		}
		clock.advance(9 * time.Minute)
		get(t, b, "alice", h.ID())
		clock.advance(2 * time.Minute)
		if _, err := s.Get(ctx, "alice", h.ID()); !errors.Is(err, runs.ErrNotFound) {
			t.Fatalf("kept past its TTL: %v", err)
		}
	})

	t.Run("a failed call keeps its error", func(t *testing.T) {
		_, _, replica := rig(t, runs.Limits{})
		a := replica()
		h := start(t, a, "alice")
		if _, err := h.Finish(nil, []byte(`{"code":-32603,"message":"boom"}`)); err != nil {
			t.Fatal(err)
		}
		if r := get(t, a, "alice", h.ID()); r.State != runs.Failed || string(r.Error) != `{"code":-32603,"message":"boom"}` || r.Result != nil {
			t.Fatalf("failed: %+v", r)
		}
	})

	t.Run("live runs are capped per principal", func(t *testing.T) {
		_, _, replica := rig(t, runs.Limits{LivePerPrincipal: 2})
		a := replica()
		h1, _ := start(t, a, "alice"), start(t, a, "alice")
		_, err := a.Start(ctx, "alice", "execute_code", 0)
		var le *runs.LimitError
		if !errors.As(err, &le) || le.Limit != "live" || !strings.Contains(err.Error(), "tasks/cancel") {
			t.Fatalf("a third live run: %v", err)
		}
		start(t, a, "bob") // others are not held back
		if _, err := h1.Finish([]byte(`{}`), nil); err != nil {
			t.Fatal(err)
		}
		start(t, a, "alice")
	})

	t.Run("a cancel on any replica stops the run; a final run stays as it is", func(t *testing.T) {
		_, _, replica := rig(t, runs.Limits{})
		a, b := replica(), replica()
		h := start(t, a, "alice")
		if err := a.Cancel(ctx, "alice", h.ID()); err != nil {
			t.Fatal(err)
		}
		if h.Context().Err() == nil {
			t.Fatal("the run's context goes on after its cancel")
		}
		if r, _ := h.Finish([]byte(`{"content":[]}`), nil); r.State != runs.Cancelled {
			t.Fatalf("a finish after the cancel: %+v", r)
		}
		if r := get(t, b, "alice", h.ID()); r.State != runs.Cancelled || r.Result != nil {
			t.Fatalf("cancelled: %+v", r)
		}
		done := start(t, a, "alice")
		done.Finish([]byte(`{"content":[]}`), nil)
		if err := b.Cancel(ctx, "alice", done.ID()); err != nil {
			t.Fatalf("cancel a final run: %v", err)
		}
		if r := get(t, a, "alice", done.ID()); r.State != runs.Completed {
			t.Fatalf("a cancel changed a final run: %+v", r)
		}
	})

	t.Run("a run whose replica stopped renewing fails and frees its place", func(t *testing.T) {
		clock, _, replica := rig(t, runs.Limits{LivePerPrincipal: 1})
		a, b := replica(), replica()
		h := start(t, a, "alice")
		clock.advance(90 * time.Minute) // past the lease (an hour): replica a is gone
		r := get(t, b, "alice", h.ID())
		if r.State != runs.Failed || r.Message != runs.ReplicaStopped || !strings.Contains(string(r.Error), runs.ReplicaStopped) {
			t.Fatalf("an orphaned run: %+v", r)
		}
		start(t, b, "alice")
	})

	t.Run("input requests are answered from any replica, one at a time", func(t *testing.T) {
		_, _, replica := rig(t, runs.Limits{})
		a, b := replica(), replica()
		h := start(t, a, "alice")
		type answered struct {
			answers map[string]json.RawMessage
			err     error
		}
		got := make(chan answered, 1)
		go func() {
			ans, err := h.Ask(ctx, map[string]json.RawMessage{
				"one": []byte(`{"method":"elicitation/create","params":{"message":"first?"}}`),
				"two": []byte(`{"method":"elicitation/create","params":{"message":"second?"}}`),
			})
			got <- answered{ans, err}
		}()
		var r runs.Run
		for i := 0; i < 200; i++ {
			if r = get(t, b, "alice", h.ID()); r.State == runs.InputRequired {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		if r.State != runs.InputRequired || len(r.InputRequests) != 2 {
			t.Fatalf("asking: %+v", r)
		}
		if err := b.Answer(ctx, "alice", h.ID(), map[string]json.RawMessage{"one": []byte(`{"action":"accept"}`), "stranger": []byte(`{}`)}); err != nil {
			t.Fatal(err)
		}
		if r = get(t, b, "alice", h.ID()); r.State != runs.InputRequired || len(r.InputRequests) != 1 || r.InputRequests["two"] == nil {
			t.Fatalf("after one answer: %+v", r)
		}
		if err := b.Answer(ctx, "alice", h.ID(), map[string]json.RawMessage{"two": []byte(`{"action":"decline"}`)}); err != nil {
			t.Fatal(err)
		}
		select {
		case a := <-got:
			if a.err != nil || string(a.answers["one"]) != `{"action":"accept"}` || string(a.answers["two"]) != `{"action":"decline"}` || len(a.answers) != 2 {
				t.Fatalf("the run got %v, %v", a.answers, a.err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the run did not get its answers")
		}
		if r = get(t, a, "alice", h.ID()); r.State != runs.Working || len(r.InputRequests) != 0 {
			t.Fatalf("after its answers: %+v", r)
		}
		if err := b.Answer(ctx, "alice", h.ID(), map[string]json.RawMessage{"one": []byte(`{}`)}); !errors.Is(err, runs.ErrNotWaiting) {
			t.Fatalf("an answer to a run that asks nothing: %v", err)
		}
	})

	t.Run("stored result bytes are capped per principal", func(t *testing.T) {
		_, _, replica := rig(t, runs.Limits{ResultBytesPerPrincipal: 100})
		a := replica()
		h1, h2 := start(t, a, "alice"), start(t, a, "alice")
		if r, _ := h1.Finish([]byte(`"`+strings.Repeat("x", 78)+`"`), nil); r.State != runs.Completed {
			t.Fatalf("a result within the cap: %+v", r)
		}
		r, _ := h2.Finish([]byte(`"`+strings.Repeat("y", 38)+`"`), nil)
		if r.State != runs.Failed || r.Result != nil || !strings.Contains(r.Message, "passes the 100 you may keep") {
			t.Fatalf("a result past the cap: %+v", r)
		}
		h3 := start(t, a, "bob")
		if r, _ := h3.Finish([]byte(`"`+strings.Repeat("z", 78)+`"`), nil); r.State != runs.Completed {
			t.Fatalf("another principal's result: %+v", r)
		}
	})

	t.Run("the oldest final runs make room past the kept cap", func(t *testing.T) {
		clock, s, replica := rig(t, runs.Limits{KeptPerPrincipal: 3})
		a := replica()
		var ids []string
		for i := 0; i < 3; i++ {
			h := start(t, a, "alice")
			h.Finish([]byte(`{}`), nil)
			ids = append(ids, h.ID())
			clock.advance(time.Second)
		}
		start(t, a, "alice")
		if _, err := s.Get(ctx, "alice", ids[0]); !errors.Is(err, runs.ErrNotFound) {
			t.Fatalf("the oldest final run is kept past the cap: %v", err)
		}
		for _, id := range ids[1:] {
			get(t, a, "alice", id)
		}
	})

	t.Run("every owner's runs are listed, newest first, from their metas", func(t *testing.T) {
		clock, _, replica := rig(t, runs.Limits{DefaultTTL: time.Hour})
		a, b := replica(), replica()
		old := start(t, a, "alice")
		old.Finish([]byte(`{"secret":"alice-result"}`), nil)
		clock.advance(2 * time.Hour) // alice's old run expires
		done := start(t, a, "alice")
		done.Finish([]byte(`{"secret":"alice-result"}`), nil)
		clock.advance(time.Second)
		live := start(t, b, "bob")
		live.Console("bob's line")
		clock.advance(time.Second)
		gone := start(t, a, "carol")
		if err := b.CancelByOperator(ctx, "carol", gone.ID(), "ops/ops"); err != nil {
			t.Fatal(err)
		}
		list, err := b.List(ctx, 10)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range list {
			got = append(got, r.Owner+" "+r.Tool+" "+string(r.State))
			if r.Result != nil || r.Console != nil || r.Created.IsZero() || r.Updated.Before(r.Created) {
				t.Errorf("%s's run as listed: %+v", r.Owner, r)
			}
		}
		if want := []string{"carol execute_code cancelled", "bob execute_code working", "alice execute_code completed"}; strings.Join(got, ", ") != strings.Join(want, ", ") {
			t.Errorf("listed %q, want %q", got, want)
		}
		if r := get(t, a, "carol", gone.ID()); r.Message != "cancelled by the operator ops/ops" {
			t.Errorf("the operator's cancel says %q", r.Message)
		}
		if list, _ := a.List(ctx, 1); len(list) != 1 || list[0].Owner != "carol" {
			t.Errorf("a listing of one: %+v", list)
		}
		if r := get(t, a, "alice", done.ID()); !strings.Contains(string(r.Result), "alice-result") {
			t.Errorf("the result is gone from the run itself: %+v", r)
		}
	})
}

// TestRunLease: a replica renews its runs' leases on the real clock, and a
// cancel made on another replica reaches the run at its next renewal.
func TestRunLease(t *testing.T, newStore func(t *testing.T, now func() time.Time) runs.Store) {
	ctx := context.Background()
	s := newStore(t, nil)
	// A lease of a second, renewed every third: short enough to pass
	// several times, long enough for a loaded machine.
	a := runs.NewRegistry(s, runs.Options{Lease: time.Second})
	b := runs.NewRegistry(s, runs.Options{Lease: time.Second})
	h, err := a.Start(ctx, "alice", "execute_code", 0)
	if err != nil {
		t.Fatal(err)
	}
	h.Console("working")
	time.Sleep(2500 * time.Millisecond) // past two leases: renewed, not orphaned
	r, err := b.Get(ctx, "alice", h.ID())
	if err != nil || r.State != runs.Working || len(r.Console) != 1 {
		t.Fatalf("a renewed run: %+v %v", r, err)
	}
	if err := b.Cancel(ctx, "alice", h.ID()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-h.Context().Done():
	case <-time.After(5 * time.Second):
		t.Fatal("a cancel on another replica did not reach the run")
	}
}
