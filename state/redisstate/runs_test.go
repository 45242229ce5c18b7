package redisstate_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/sandboxrt/sandbox/console"
	"github.com/sandboxrt/sandbox/runs"
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
