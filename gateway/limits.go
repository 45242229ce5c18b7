package gateway

import (
	"context"
	"math"
	"sync"
	"time"
)

// limiter applies one server's rate limit (token bucket) and concurrency cap.
// A call that cannot proceed within the bounded wait fails at once with
// RATE_LIMITED rather than queueing without end; a call whose wait could
// never fit in the bound fails without waiting at all.
type limiter struct {
	// token bucket; rate == 0 means unlimited
	mu     sync.Mutex
	rate   float64 // tokens per second
	burst  float64
	tokens float64
	last   time.Time

	slots chan struct{} // nil means no concurrency cap
}

func newLimiter(rl *RateLimit, maxConcurrent int) *limiter {
	l := &limiter{}
	if rl != nil && rl.PerSecond > 0 {
		l.rate, l.burst = rl.PerSecond, float64(max(rl.Burst, 1))
		l.tokens, l.last = l.burst, time.Now()
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
// should wait at least.
func (l *limiter) acquire(ctx context.Context, maxWait time.Duration) (release func(), kind limitKind, retryAfter time.Duration, err error) {
	deadline := time.Now().Add(maxWait)
	if l.rate > 0 {
		if wait, ok := l.reserve(maxWait); !ok {
			return nil, limitRate, wait, errLimited
		} else if wait > 0 {
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

// reserve takes a token now or books one in the future; it refuses (without
// booking) when the token would come later than maxWait.
func (l *limiter) reserve(maxWait time.Duration) (time.Duration, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	l.tokens = math.Min(l.burst, l.tokens+now.Sub(l.last).Seconds()*l.rate)
	l.last = now
	if l.tokens >= 1 {
		l.tokens--
		return 0, true
	}
	wait := time.Duration((1 - l.tokens) / l.rate * float64(time.Second))
	if wait > maxWait {
		return wait, false
	}
	l.tokens--
	return wait, true
}

type limitedError struct{}

func (limitedError) Error() string { return "limited" }

var errLimited = limitedError{}

// inflight returns how many calls hold a concurrency slot.
func (l *limiter) inflight() int {
	if l.slots == nil {
		return 0
	}
	return len(l.slots)
}
