package statetest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sandboxrt/sandbox/gateway"
)

// TestRateLimiter runs the gateway.RateLimiter contract against the limiters
// newLimiter makes: each call must return a limiter with no buckets yet (a
// fresh key prefix will do for a shared server) that reads the time from now,
// a clock the suite moves by hand, so that refills are checked exactly and
// without sleeping. Waits are compared to within a millisecond, so a backend
// may keep time in milliseconds.
func TestRateLimiter(t *testing.T, newLimiter func(t *testing.T, now func() time.Time) gateway.RateLimiter) {
	tenPerSecond := func(burst int) gateway.RateLimit { return gateway.RateLimit{PerSecond: 10, Burst: burst} }

	t.Run("BurstThenRefusal", func(t *testing.T) {
		r := newRig(t, newLimiter)
		for range 3 {
			r.want("srv", tenPerSecond(3), 0, 0, true)
		}
		r.want("srv", tenPerSecond(3), 0, 100*time.Millisecond, false)
		// A refusal books nothing: the retry time stays the same.
		r.want("srv", tenPerSecond(3), 0, 100*time.Millisecond, false)
	})
	t.Run("BurstBelowOneIsOne", func(t *testing.T) {
		r := newRig(t, newLimiter)
		r.want("srv", tenPerSecond(0), 0, 0, true)
		r.want("srv", tenPerSecond(0), 0, 100*time.Millisecond, false)
	})
	t.Run("Refill", func(t *testing.T) {
		r := newRig(t, newLimiter)
		for range 3 {
			r.want("srv", tenPerSecond(3), 0, 0, true)
		}
		r.clock.advance(100 * time.Millisecond)
		r.want("srv", tenPerSecond(3), 0, 0, true)
		r.want("srv", tenPerSecond(3), 0, 100*time.Millisecond, false)
		// Tokens come continuously, not in whole steps: 250 ms bring 2.5.
		r.clock.advance(250 * time.Millisecond)
		r.want("srv", tenPerSecond(3), 0, 0, true)
		r.want("srv", tenPerSecond(3), 0, 0, true)
		r.want("srv", tenPerSecond(3), 0, 50*time.Millisecond, false)
	})
	t.Run("RefillStopsAtBurst", func(t *testing.T) {
		r := newRig(t, newLimiter)
		r.want("srv", tenPerSecond(2), 0, 0, true)
		r.clock.advance(time.Hour)
		r.want("srv", tenPerSecond(2), 0, 0, true)
		r.want("srv", tenPerSecond(2), 0, 0, true)
		r.want("srv", tenPerSecond(2), 0, 100*time.Millisecond, false)
	})
	t.Run("SlowRate", func(t *testing.T) {
		r := newRig(t, newLimiter)
		slow := gateway.RateLimit{PerSecond: 0.5, Burst: 1}
		r.want("srv", slow, 0, 0, true)
		r.want("srv", slow, time.Second, 2*time.Second, false)
		r.clock.advance(1500 * time.Millisecond)
		r.want("srv", slow, time.Second, 500*time.Millisecond, true)
	})
	t.Run("BookingWithinMaxWait", func(t *testing.T) {
		r := newRig(t, newLimiter)
		maxWait := 250 * time.Millisecond
		r.want("srv", tenPerSecond(1), maxWait, 0, true)
		r.want("srv", tenPerSecond(1), maxWait, 100*time.Millisecond, true)
		r.want("srv", tenPerSecond(1), maxWait, 200*time.Millisecond, true)
		// The next token free is the fourth from now: too late, not booked.
		r.want("srv", tenPerSecond(1), maxWait, 300*time.Millisecond, false)
		r.want("srv", tenPerSecond(1), 0, 300*time.Millisecond, false)
		// Once the first booked token has come, one more fits.
		r.clock.advance(100 * time.Millisecond)
		r.want("srv", tenPerSecond(1), maxWait, 200*time.Millisecond, true)
		r.want("srv", tenPerSecond(1), maxWait, 300*time.Millisecond, false)
	})
	t.Run("RetryAfterIsEnough", func(t *testing.T) {
		r := newRig(t, newLimiter)
		odd := gateway.RateLimit{PerSecond: 3, Burst: 1} // a token every 333.3 ms
		r.want("srv", odd, 0, 0, true)
		wait := r.want("srv", odd, 0, time.Second/3, false)
		r.clock.advance(wait)
		r.want("srv", odd, tolerance, 0, true)
	})
	t.Run("KeysAreIndependent", func(t *testing.T) {
		r := newRig(t, newLimiter)
		keys := []string{"a", "ab", "a:b", "a/b", "A", "ünï", "a b"}
		for _, k := range keys {
			r.want(k, tenPerSecond(1), 0, 0, true)
		}
		for _, k := range keys {
			r.want(k, tenPerSecond(1), 0, 100*time.Millisecond, false)
		}
		r.clock.advance(100 * time.Millisecond)
		r.want("a", tenPerSecond(1), 0, 0, true)
		r.want("a", tenPerSecond(1), 0, 100*time.Millisecond, false)
		r.want("ab", tenPerSecond(1), 0, 0, true)
	})
	t.Run("ConcurrentReservationsTakeEachTokenOnce", func(t *testing.T) {
		r := newRig(t, newLimiter)
		waits := r.concurrently("srv", tenPerSecond(5), 0, 40)
		if len(waits) != 5 {
			t.Fatalf("%d of 40 concurrent callers got one of 5 tokens", len(waits))
		}
		// With room to wait, every caller books its own future token: the
		// waits are 0 for the burst, then one refill interval apart.
		waits = r.concurrently("other", tenPerSecond(5), 10*time.Second, 20)
		if len(waits) != 20 {
			t.Fatalf("%d of 20 callers could book a token within 10s", len(waits))
		}
		slices.Sort(waits)
		for i, got := range waits {
			want := time.Duration(max(0, i-4)) * 100 * time.Millisecond
			if !near(got, want) {
				t.Fatalf("sorted waits = %v; wait %d is %v, want %v (a token booked twice or lost)", waits, i, got, want)
			}
		}
	})
}

// tolerance is how far a wait may be from the exact one (a backend may keep
// milliseconds).
const tolerance = time.Millisecond

func near(got, want time.Duration) bool { return got >= want-tolerance && got <= want+tolerance }

// rateRig is one limiter under test and its clock.
type rateRig struct {
	t     *testing.T
	rl    gateway.RateLimiter
	clock *manualClock
}

func newRig(t *testing.T, newLimiter func(t *testing.T, now func() time.Time) gateway.RateLimiter) *rateRig {
	c := &manualClock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	return &rateRig{t: t, rl: newLimiter(t, c.Now), clock: c}
}

// want reserves one token and checks the answer; it returns the wait.
func (r *rateRig) want(key string, limit gateway.RateLimit, maxWait, wantWait time.Duration, wantOK bool) time.Duration {
	r.t.Helper()
	wait, ok, err := r.rl.Reserve(context.Background(), key, limit, maxWait)
	if err != nil {
		r.t.Fatalf("Reserve(%q, %+v, maxWait %v): %v", key, limit, maxWait, err)
	}
	if ok != wantOK || !near(wait, wantWait) {
		r.t.Fatalf("Reserve(%q, %+v, maxWait %v) at +%v = %v, %v; want %v, %v",
			key, limit, maxWait, r.clock.elapsed(), wait, ok, wantWait, wantOK)
	}
	return wait
}

// concurrently makes n reservations at once and returns the waits of those
// that succeeded.
func (r *rateRig) concurrently(key string, limit gateway.RateLimit, maxWait time.Duration, n int) []time.Duration {
	r.t.Helper()
	var (
		mu    sync.Mutex
		waits []time.Duration
		errs  []error
		wg    sync.WaitGroup
		start = make(chan struct{})
	)
	for range n {
		wg.Go(func() {
			<-start
			wait, ok, err := r.rl.Reserve(context.Background(), key, limit, maxWait)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				errs = append(errs, err)
			case ok:
				waits = append(waits, wait)
			}
		})
	}
	close(start)
	wg.Wait()
	if len(errs) > 0 {
		r.t.Fatal(fmt.Errorf("%d of %d concurrent reservations failed, first: %w", len(errs), n, errs[0]))
	}
	return waits
}

// manualClock is a clock that moves only when told.
type manualClock struct {
	mu    sync.Mutex
	now   time.Time
	moved time.Duration
}

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *manualClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	c.moved += d
}

func (c *manualClock) elapsed() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.moved
}
