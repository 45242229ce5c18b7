package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sandboxrt/sandbox/gateway/internal/testserver"
)

// The token bucket's own contract is checked by state/statetest
// (TestMemoryRateLimiter); these tests are about how the pipeline uses it.

// failingRates is a RateLimiter whose store is down; it records the keys
// it was asked for.
type failingRates struct {
	mu   sync.Mutex
	keys []string
}

func (f *failingRates) Reserve(_ context.Context, key string, _ RateLimit, _ time.Duration) (time.Duration, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.keys = append(f.keys, key)
	return 0, false, errors.New("connection refused")
}

func TestRateLimiterStoreErrors(t *testing.T) {
	t.Parallel()
	rates := &failingRates{}
	g, _ := startGateway(t, `{"mcpServers": {}}`, WithRateLimiter(rates),
		WithInProcessServer("limited", testserver.New(), &ServerConfig{RateLimit: &RateLimit{PerSecond: 1}, CheckPaths: true}),
		WithInProcessServer("free", testserver.New(), nil))
	ctx := context.Background()
	_, err := g.Call(ctx, CallRequest{Tool: "limited:echo", Arguments: json.RawMessage(`{"text":"x"}`)})
	if e := wantCode(t, err, CodeInternal); !strings.Contains(e.Message, "rate limiter") || !strings.Contains(e.Message, "connection refused") {
		t.Fatalf("message = %s", e.Message)
	}
	// A server without a rate limit never asks the store.
	if _, err := g.Call(ctx, CallRequest{Tool: "free:echo", Arguments: json.RawMessage(`{"text":"x"}`)}); err != nil {
		t.Fatal(err)
	}
	rates.mu.Lock()
	defer rates.mu.Unlock()
	if len(rates.keys) != 1 || rates.keys[0] != "limited/anonymous" {
		t.Fatalf("buckets asked for: %q, want the server's and the caller's bucket once", rates.keys)
	}
}

// The limiter's waits run on fake time in a synctest bubble: exact, and
// instant however loaded the machine is.

func TestLimiterBooksTokensWithinMaxWait(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		l := newLimiter("srv", &RateLimit{PerSecond: 10, Burst: 1}, 0)
		rates := NewMemoryRateLimiter(nil) // time.Now is the bubble's clock
		start := time.Now()
		type outcome struct {
			waited, retryAfter time.Duration
			err                error
		}
		out := make(chan outcome, 4)
		for range 4 {
			go func() {
				release, _, retryAfter, err := l.acquire(context.Background(), rates, "p", 250*time.Millisecond)
				if err == nil {
					release()
				}
				out <- outcome{time.Since(start), retryAfter, err}
			}()
		}
		var waited []time.Duration
		var refused []outcome
		for range 4 {
			o := <-out
			if o.err != nil {
				refused = append(refused, o)
			} else {
				waited = append(waited, o.waited)
			}
		}
		slices.Sort(waited)
		if !slices.Equal(waited, []time.Duration{0, 100 * time.Millisecond, 200 * time.Millisecond}) {
			t.Fatalf("callers went on after %v, want 0, 100ms, 200ms", waited)
		}
		if len(refused) != 1 || !errors.Is(refused[0].err, errLimited) || refused[0].waited != 0 || refused[0].retryAfter != 300*time.Millisecond {
			t.Fatalf("refused = %+v, want one at once with retry after 300ms", refused)
		}
	})
}

func TestLimiterConcurrencyCapWaitsForTheRestOfMaxWait(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		l := newLimiter("srv", &RateLimit{PerSecond: 10, Burst: 1}, 1)
		rates := NewMemoryRateLimiter(nil)
		ctx := context.Background()
		start := time.Now()
		hold, _, _, err := l.acquire(ctx, rates, "p", 0)
		if err != nil {
			t.Fatal(err)
		}
		// The next call books the token of t=100ms, then waits for the slot
		// until maxWait (250ms from its start) is spent, and gives up.
		_, kind, _, err := l.acquire(ctx, rates, "p", 250*time.Millisecond)
		if !errors.Is(err, errLimited) || kind != limitConcurrency || time.Since(start) != 250*time.Millisecond {
			t.Fatalf("err %v, kind %q after %v; want the concurrency cap after 250ms", err, kind, time.Since(start))
		}
		// The bucket has refilled by now; a slot freed within the wait is
		// taken at once.
		time.AfterFunc(30*time.Millisecond, hold)
		start = time.Now()
		release, _, _, err := l.acquire(ctx, rates, "p", time.Second)
		if err != nil {
			t.Fatal(err)
		}
		release()
		if d := time.Since(start); d != 30*time.Millisecond {
			t.Fatalf("went on after %v, want 30ms, when the slot was freed", d)
		}
	})
}

func TestLimiterWaitEndsWithTheCaller(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		l := newLimiter("srv", &RateLimit{PerSecond: 1, Burst: 1}, 0)
		rates := NewMemoryRateLimiter(nil)
		if _, _, _, err := l.acquire(context.Background(), rates, "p", 0); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, _, _, err := l.acquire(ctx, rates, "p", 5*time.Second)
		if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) != 200*time.Millisecond {
			t.Fatalf("err %v after %v; want the caller's deadline at 200ms", err, time.Since(start))
		}
	})
}
