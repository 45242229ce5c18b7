package statetest

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sandboxrt/sandbox/gateway"
)

// TestQuestionLedger runs the gateway.QuestionLedger contract against the
// ledgers newLedger makes: each call must return a ledger with no question
// taken yet (a fresh key prefix will do for a shared server). Two ledgers
// made by one call of share are two replicas' views of one store: a
// question taken through one is taken for the other. The TTL is checked
// with the real clock (a backend may expire keys by itself), in 200 ms.
func TestQuestionLedger(t *testing.T, newLedger func(t *testing.T) gateway.QuestionLedger, share func(t *testing.T) (gateway.QuestionLedger, gateway.QuestionLedger)) {
	ctx := context.Background()
	take := func(t *testing.T, l gateway.QuestionLedger, id string, ttl time.Duration, want bool) {
		t.Helper()
		got, err := l.Take(ctx, id, ttl)
		if err != nil {
			t.Fatalf("Take(%q): %v", id, err)
		}
		if got != want {
			t.Fatalf("Take(%q) = %v, want %v", id, got, want)
		}
	}
	release := func(t *testing.T, l gateway.QuestionLedger, id string) {
		t.Helper()
		if err := l.Release(ctx, id); err != nil {
			t.Fatalf("Release(%q): %v", id, err)
		}
	}

	t.Run("TakenOnce", func(t *testing.T) {
		l := newLedger(t)
		take(t, l, "q1", time.Minute, true)
		take(t, l, "q1", time.Minute, false)
		take(t, l, "q1", time.Minute, false)
		take(t, l, "q2", time.Minute, true)
	})
	t.Run("ReleaseGivesBack", func(t *testing.T) {
		l := newLedger(t)
		take(t, l, "q", time.Minute, true)
		release(t, l, "q")
		take(t, l, "q", time.Minute, true)
		take(t, l, "q", time.Minute, false)
		// Giving back what is not taken is no error.
		release(t, l, "never-taken")
	})
	t.Run("ExpiresAfterTTL", func(t *testing.T) {
		l := newLedger(t)
		take(t, l, "short", 200*time.Millisecond, true)
		take(t, l, "long", time.Minute, true)
		deadline := time.Now().Add(5 * time.Second)
		for {
			free, err := l.Take(ctx, "short", time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			if free {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("a question taken for 200ms was still taken 5s later")
			}
			time.Sleep(50 * time.Millisecond)
		}
		take(t, l, "long", time.Minute, false)
	})
	t.Run("KeysAreIndependent", func(t *testing.T) {
		l := newLedger(t)
		ids := []string{"a", "ab", "a:b", "a/b", "A", "ünï", "a b", "0123456789abcdef0123456789abcdef"}
		for _, id := range ids {
			take(t, l, id, time.Minute, true)
		}
		for _, id := range ids {
			take(t, l, id, time.Minute, false)
		}
		release(t, l, "a")
		take(t, l, "ab", time.Minute, false)
		take(t, l, "a", time.Minute, true)
	})
	t.Run("ConcurrentTakesOneWins", func(t *testing.T) {
		l := newLedger(t)
		for round := range 5 {
			id := fmt.Sprintf("race-%d", round)
			var won atomic.Int32
			var wg sync.WaitGroup
			start := make(chan struct{})
			for range 20 {
				wg.Go(func() {
					<-start
					ok, err := l.Take(ctx, id, time.Minute)
					if err != nil {
						t.Error(err)
					}
					if ok {
						won.Add(1)
					}
				})
			}
			close(start)
			wg.Wait()
			if n := won.Load(); n != 1 {
				t.Fatalf("%d of 20 concurrent Takes of %q won, want 1", n, id)
			}
		}
	})
	t.Run("SharedAcrossReplicas", func(t *testing.T) {
		a, b := share(t)
		take(t, a, "q", time.Minute, true)
		take(t, b, "q", time.Minute, false)
		release(t, b, "q")
		take(t, a, "q", time.Minute, true)
		take(t, b, "q", time.Minute, false)
	})
}
