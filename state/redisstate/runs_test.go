package redisstate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/sandboxrt/sandbox/console"
	"github.com/sandboxrt/sandbox/internal/redistest"
	"github.com/sandboxrt/sandbox/runs"
	"github.com/sandboxrt/sandbox/state/redisstate"
	"github.com/sandboxrt/sandbox/state/statetest"
)

func TestRedisRunStore(t *testing.T) {
	_, open := clients(t)
	statetest.TestRunStore(t, func(t *testing.T, now func() time.Time) runs.Store { return open(t).RunStore(now) })
	statetest.TestRunLease(t, func(t *testing.T, now func() time.Time) runs.Store { return open(t).RunStore(now) })
}

// TestRunsAreSealed: a task's result, console lines and input requests are
// nowhere in Redis in clear; its run read back whole.
func TestRunsAreSealed(t *testing.T) {
	srv, open := clients(t)
	ctx := context.Background()
	g := runs.NewRegistry(open(t).RunStore(nil), runs.Options{})
	const (
		result  = "alice-task-result-4471"
		console = "alice-console-line-9012"
		ask     = "alice-question-3318"
	)
	h, err := g.Start(ctx, "acme/alice", "execute_code", 0)
	if err != nil {
		t.Fatal(err)
	}
	h.Console(console)
	asked := make(chan error, 1)
	go func() {
		_, err := h.Ask(ctx, map[string]json.RawMessage{"q": json.RawMessage(`{"method":"elicitation/create","params":{"message":"` + ask + `"}}`)})
		asked <- err
	}()
	for i := 0; ; i++ {
		r, err := g.Get(ctx, "acme/alice", h.ID())
		if err != nil {
			t.Fatal(err)
		}
		if r.State == runs.InputRequired {
			break
		}
		if i > 200 {
			t.Fatal("the run never asked")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if found := holding(srv.Contents(t), ask); len(found) > 0 {
		t.Fatalf("an input request in clear in %v", found)
	}
	if err := g.Answer(ctx, "acme/alice", h.ID(), map[string]json.RawMessage{"q": json.RawMessage(`{"action":"accept"}`)}); err != nil {
		t.Fatal(err)
	}
	if err := <-asked; err != nil {
		t.Fatal(err)
	}
	if _, err := h.Finish(json.RawMessage(`{"content":[{"type":"text","text":"`+result+`"}]}`), nil); err != nil {
		t.Fatal(err)
	}
	if found := holding(srv.Contents(t), result, console); len(found) > 0 {
		t.Fatalf("a task's data in clear in %v", found)
	}
	r, err := g.Get(ctx, "acme/alice", h.ID())
	if err != nil || r.State != runs.Completed || len(r.Console) != 1 || r.Console[0] != console {
		t.Fatalf("read back: %+v %v", r, err)
	}
}

func TestRedisConsoleRevocations(t *testing.T) {
	_, open := clients(t)
	statetest.TestConsoleRevocations(t, func(t *testing.T) console.Revocations { return open(t).ConsoleRevocations() })
}

// TestEarlierTasksAreListedAfterIndexOwners: runs an earlier version kept
// (no owners' set) are not listed until IndexOwners, which adds their
// owners once and then finds nothing to do.
func TestEarlierTasksAreListedAfterIndexOwners(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	c, err := redisstate.Open(redisstate.Config{URL: srv.URL(), KeyPrefix: "old:", EncryptionKey: newKey()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	raw := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", srv.Port)})
	defer raw.Close()
	s := c.RunStore(nil)
	g := runs.NewRegistry(s, runs.Options{})
	h, err := g.Start(ctx, "acme/alice", "execute_code", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Finish(nil, nil)
	raw.Del(ctx, "old:runs:owners") // as an earlier version left it
	if list, _ := s.List(ctx, 10); len(list) != 0 {
		t.Fatalf("listed without the owners' set: %+v", list)
	}
	if n, err := s.IndexOwners(ctx); n != 1 || err != nil {
		t.Fatalf("IndexOwners: %d %v", n, err)
	}
	if list, _ := s.List(ctx, 10); len(list) != 1 || list[0].ID != h.ID() || list[0].Owner != "acme/alice" {
		t.Fatalf("after IndexOwners: %+v", list)
	}
	raw.Del(ctx, "old:runs:owners")
	if n, err := s.IndexOwners(ctx); n != 0 || err != nil {
		t.Fatalf("IndexOwners the second time: %d %v", n, err)
	}
}

// TestListForgetsOwnersWithNothingKept: an owner whose runs all expired
// leaves the owners' set at the next List, so the set stays as small as
// the principals with tasks.
func TestListForgetsOwnersWithNothingKept(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	c, err := redisstate.Open(redisstate.Config{URL: srv.URL(), KeyPrefix: "p:", EncryptionKey: newKey()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	raw := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", srv.Port)})
	defer raw.Close()
	now := time.Date(2026, 7, 28, 9, 0, 0, 0, time.UTC)
	s := c.RunStore(func() time.Time { return now })
	g := runs.NewRegistry(s, runs.Options{Lease: time.Hour, Now: func() time.Time { return now }})
	h, err := g.Start(ctx, "acme/alice", "execute_code", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	h.Finish([]byte(`{}`), nil)
	if list, _ := s.List(ctx, 10); len(list) != 1 || raw.ZScore(ctx, "p:runs:owners", "acme/alice").Err() != nil {
		t.Fatalf("alice's run is not listed: %+v", list)
	}
	now = now.Add(5 * time.Minute) // the run expired
	if list, _ := s.List(ctx, 10); len(list) != 0 {
		t.Fatalf("an expired run is listed: %+v", list)
	}
	if err := raw.ZScore(ctx, "p:runs:owners", "acme/alice").Err(); err != redis.Nil {
		t.Errorf("alice stays in the owners' set with nothing kept: %v", err)
	}
}
