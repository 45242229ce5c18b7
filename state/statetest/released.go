package statetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/sandboxrt/sandbox/gateway/frontend"
)

// TestReleasedRunStore is the contract of frontend.ReleasedRunStore (the
// runs released from their workers while they wait for an answer). Two
// stores made by one newStore call's backend are not assumed: each
// subtest gets an empty store holding up to maxBytes, on a clock it moves.
func TestReleasedRunStore(t *testing.T, newStore func(t *testing.T, maxBytes int64, now func() time.Time) frontend.ReleasedRunStore) {
	ctx := context.Background()
	rig := func(t *testing.T, maxBytes int64) (*manualClock, frontend.ReleasedRunStore) {
		clock := &manualClock{now: time.Date(2026, 7, 28, 9, 0, 0, 0, time.UTC)}
		return clock, newStore(t, maxBytes, clock.Now)
	}
	put := func(t *testing.T, s frontend.ReleasedRunStore, id, principal, run string) {
		t.Helper()
		if err := s.Put(ctx, id, principal, []byte(run), time.Minute); err != nil {
			t.Fatalf("put %s of %s: %v", id, principal, err)
		}
	}
	take := func(t *testing.T, s frontend.ReleasedRunStore, id, principal string) []byte {
		t.Helper()
		run, err := s.Take(ctx, id, principal)
		if err != nil {
			t.Fatalf("take %s of %s: %v", id, principal, err)
		}
		return run
	}

	t.Run("a run is taken once, by its principal", func(t *testing.T) {
		_, s := rig(t, 0)
		put(t, s, "r1", "alice", `{"journal":1}`)
		if got := take(t, s, "r1", "bob"); got != nil {
			t.Fatalf("bob took alice's run: %s", got)
		}
		if got := take(t, s, "r1", "alice"); !bytes.Equal(got, []byte(`{"journal":1}`)) {
			t.Fatalf("alice's run = %q", got)
		}
		if got := take(t, s, "r1", "alice"); got != nil {
			t.Fatalf("a run was taken twice: %s", got)
		}
		if got := take(t, s, "never", "alice"); got != nil {
			t.Fatalf("a run never kept: %s", got)
		}
	})

	t.Run("of takers at once one gets it", func(t *testing.T) {
		_, s := rig(t, 0)
		put(t, s, "r1", "alice", "run")
		var wg sync.WaitGroup
		var mu sync.Mutex
		got := 0
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if run, err := s.Take(ctx, "r1", "alice"); err == nil && run != nil {
					mu.Lock()
					got++
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if got != 1 {
			t.Fatalf("%d takers got the run; want 1", got)
		}
	})

	t.Run("it expires", func(t *testing.T) {
		clock, s := rig(t, 0)
		put(t, s, "r1", "alice", "run")
		clock.advance(time.Minute + time.Second)
		if got := take(t, s, "r1", "alice"); got != nil {
			t.Fatalf("an expired run was taken: %s", got)
		}
	})

	t.Run("each principal keeps at most MaxPausedRuns", func(t *testing.T) {
		clock, s := rig(t, 0)
		for i := range frontend.MaxPausedRuns {
			put(t, s, fmt.Sprint("a", i), "alice", "run")
		}
		if err := s.Put(ctx, "a-extra", "alice", []byte("run"), time.Minute); !errors.Is(err, frontend.ErrTooManyReleased) {
			t.Fatalf("one run over the cap: %v", err)
		}
		put(t, s, "a0", "alice", "run again") // kept again: counts once
		put(t, s, "b0", "bob", "run")
		take(t, s, "a1", "alice")
		put(t, s, "a-extra", "alice", "run")
		clock.advance(2 * time.Minute)
		put(t, s, "a-later", "alice", "run") // the expired ones count no more
	})

	t.Run("it holds at most maxBytes, a quarter of them a principal's", func(t *testing.T) {
		_, s := rig(t, 100)
		put(t, s, "a1", "alice", string(make([]byte, 20)))
		if err := s.Put(ctx, "a2", "alice", make([]byte, 10), time.Minute); !errors.Is(err, frontend.ErrTooManyReleased) {
			t.Fatalf("a run over the principal's share: %v, want ErrTooManyReleased", err)
		}
		put(t, s, "a1", "alice", string(make([]byte, 25))) // kept again: its old bytes count no more
		put(t, s, "b1", "bob", string(make([]byte, 25)))
		put(t, s, "c1", "carol", string(make([]byte, 25)))
		put(t, s, "d1", "dave", string(make([]byte, 20)))
		if err := s.Put(ctx, "e1", "erin", make([]byte, 10), time.Minute); !errors.Is(err, frontend.ErrReleasedStoreFull) {
			t.Fatalf("a run over the store's bytes: %v, want ErrReleasedStoreFull", err)
		}
		take(t, s, "a1", "alice")
		put(t, s, "e1", "erin", string(make([]byte, 10)))
	})
}
