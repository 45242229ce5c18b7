package gateway

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"
)

// RateLimiter keeps the token buckets behind the servers' "rateLimit". It is
// state replicas can share: the in-memory default (MemoryRateLimiter) limits
// one process, a shared store (Redis, with the bucket updated by one atomic
// script) limits all replicas together. Every implementation passes
// state/statetest.TestRateLimiter.
//
// The concurrency cap ("maxConcurrent") is not part of it: it counts this
// process's calls in flight and stays per process.
type RateLimiter interface {
	// Reserve takes one token from the bucket named key. The bucket holds up
	// to limit.Burst tokens (at least 1), starts full, and gains
	// limit.PerSecond tokens per second (PerSecond > 0).
	//
	// When a token is there it is taken: (0, true). Otherwise the next token
	// to come is booked when it comes within maxWait: (wait, true), and the
	// caller goes on after wait; later reservations queue behind it. When it
	// would come later, nothing is booked: (wait, false), where wait is how
	// long until a retry could get a token.
	//
	// The check and the booking are one atomic step for each key, across
	// every user of the store. An error means the store could not answer;
	// the call is then neither allowed nor limited.
	Reserve(ctx context.Context, key string, limit RateLimit, maxWait time.Duration) (wait time.Duration, ok bool, err error)
}

// WithRateLimiter replaces the in-memory token buckets of the servers' rate
// limits, e.g. with a store that replicas share. Bucket keys are
// "server/principal". The concurrency cap stays per process.
func WithRateLimiter(rl RateLimiter) Option {
	return func(g *Gateway) error {
		if rl != nil {
			g.rates = rl
		}
		return nil
	}
}

// MemoryRateLimiter is the default RateLimiter: token buckets in this
// process's memory. A bucket is kept for each key ever used (the gateway
// uses one per rate-limited server and principal).
type MemoryRateLimiter struct {
	now     func() time.Time
	mu      sync.Mutex
	buckets map[string]*bucket
}

type bucket struct {
	tokens float64 // may be negative: tokens booked ahead
	last   time.Time
}

// NewMemoryRateLimiter returns an in-memory RateLimiter that reads the time
// from now (nil: time.Now); tests pass a clock they move by hand.
func NewMemoryRateLimiter(now func() time.Time) *MemoryRateLimiter {
	if now == nil {
		now = time.Now
	}
	return &MemoryRateLimiter{now: now, buckets: map[string]*bucket{}}
}

func (m *MemoryRateLimiter) Reserve(_ context.Context, key string, limit RateLimit, maxWait time.Duration) (time.Duration, bool, error) {
	if !(limit.PerSecond > 0) {
		return 0, false, fmt.Errorf("rate limit for %q: PerSecond must be positive, got %v", key, limit.PerSecond)
	}
	rate, burst := limit.PerSecond, float64(max(limit.Burst, 1))
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	b := m.buckets[key]
	if b == nil {
		b = &bucket{tokens: burst, last: now}
		m.buckets[key] = b
	}
	if elapsed := now.Sub(b.last); elapsed > 0 {
		b.tokens = math.Min(burst, b.tokens+elapsed.Seconds()*rate)
		b.last = now
	}
	if b.tokens >= 1 {
		b.tokens--
		return 0, true, nil
	}
	wait := time.Duration((1 - b.tokens) / rate * float64(time.Second))
	if wait > maxWait {
		return wait, false, nil
	}
	b.tokens--
	return wait, true, nil
}

// limiter applies one server's rate limit (through the gateway's
// RateLimiter, under the server's name) and its concurrency cap (here, per
// process). A call that cannot proceed within the bounded wait fails at once
// with RATE_LIMITED rather than queueing without end; a call whose wait
// could never fit in the bound fails without waiting at all.
type limiter struct {
	key   string
	rate  *RateLimit    // nil means unlimited
	slots chan struct{} // nil means no concurrency cap
}

func newLimiter(key string, rl *RateLimit, maxConcurrent int) *limiter {
	l := &limiter{key: key}
	if rl != nil && rl.PerSecond > 0 {
		l.rate = &RateLimit{PerSecond: rl.PerSecond, Burst: max(rl.Burst, 1)}
	}
	if maxConcurrent > 0 {
		l.slots = make(chan struct{}, maxConcurrent)
	}
	return l
}

// limitKind says which limit stopped a call.
type limitKind string

const (
	limitRate        limitKind = "rate limit"
	limitConcurrency limitKind = "concurrency cap"
)

// acquire waits at most maxWait for both limits. On success the caller must
// call release. On failure it reports which limit and how long a retry
// should wait at least (err is errLimited), or the context's error, or a
// *rateStoreError when the RateLimiter could not answer.
//
// The rate limit is a bucket per server and principal: each tenant gets the
// configured rate, and one tenant's burst never spends another's tokens.
func (l *limiter) acquire(ctx context.Context, rates RateLimiter, principal string, maxWait time.Duration) (release func(), kind limitKind, retryAfter time.Duration, err error) {
	deadline := time.Now().Add(maxWait)
	if l.rate != nil {
		wait, ok, err := rates.Reserve(ctx, l.key+"/"+principal, *l.rate, maxWait)
		switch {
		case err != nil:
			if ctx.Err() != nil {
				return nil, "", 0, ctx.Err()
			}
			return nil, "", 0, &rateStoreError{err}
		case !ok:
			return nil, limitRate, wait, errLimited
		case wait > 0:
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return nil, "", 0, ctx.Err()
			}
		}
	}
	if l.slots == nil {
		return func() {}, "", 0, nil
	}
	select {
	case l.slots <- struct{}{}:
		return l.release, "", 0, nil
	default:
	}
	remaining := time.Until(deadline)
	if remaining <= 0 {
		return nil, limitConcurrency, 0, errLimited
	}
	t := time.NewTimer(remaining)
	defer t.Stop()
	select {
	case l.slots <- struct{}{}:
		return l.release, "", 0, nil
	case <-t.C:
		return nil, limitConcurrency, 0, errLimited
	case <-ctx.Done():
		return nil, "", 0, ctx.Err()
	}
}

func (l *limiter) release() { <-l.slots }

type limitedError struct{}

func (limitedError) Error() string { return "limited" }

var errLimited = limitedError{}

// rateStoreError is a RateLimiter that could not answer.
type rateStoreError struct{ err error }

func (e *rateStoreError) Error() string { return "rate limiter: " + e.err.Error() }
func (e *rateStoreError) Unwrap() error { return e.err }
