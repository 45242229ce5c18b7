package redisstate

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/sandboxrt/sandbox/gateway"
)

// RateLimiter is gateway.RateLimiter on Redis: one token bucket per key for
// the whole deployment, so a server's perSecond holds across replicas. The
// bucket is the in-memory one's, computed in one Lua script.
type RateLimiter struct {
	c   *Client
	now func() time.Time
}

// RateLimiter returns the shared buckets; now is the clock (nil: time.Now).
func (c *Client) RateLimiter(now func() time.Time) *RateLimiter {
	if now == nil {
		now = time.Now
	}
	return &RateLimiter{c: c, now: now}
}

// reserveScript: KEYS[1] the bucket (a hash of tokens and last, in µs);
// ARGV rate per µs, burst, now µs, max wait µs. It returns {wait µs, ok}.
// Tokens may go negative: reservations booked ahead.
var reserveScript = redis.NewScript(`
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local maxWait = tonumber(ARGV[4])
local b = redis.call('HMGET', KEYS[1], 'tokens', 'last')
local tokens, last = tonumber(b[1]), tonumber(b[2])
if tokens == nil then tokens, last = burst, now end
if now > last then
  tokens = math.min(burst, tokens + (now - last) * rate)
  last = now
end
local wait, ok = 0, 1
if tokens >= 1 then
  tokens = tokens - 1
else
  wait = math.ceil((1 - tokens) / rate)
  if wait > maxWait then
    ok = 0
  else
    tokens = tokens - 1
  end
end
if ok == 1 then
  redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'last', tostring(last))
  -- A bucket left alone refills: forget it once it would be full again.
  redis.call('PEXPIRE', KEYS[1], math.ceil((burst - tokens) / rate / 1000) + 60000)
end
return {wait, ok}
`)

func (r *RateLimiter) Reserve(ctx context.Context, key string, limit gateway.RateLimit, maxWait time.Duration) (time.Duration, bool, error) {
	if !(limit.PerSecond > 0) {
		return 0, false, fmt.Errorf("rate limit for %q: PerSecond must be positive, got %v", key, limit.PerSecond)
	}
	burst := max(limit.Burst, 1)
	res, err := reserveScript.Run(ctx, r.c.rdb, []string{r.c.key("rate", key)},
		strconv.FormatFloat(limit.PerSecond/1e6, 'g', -1, 64), burst, r.now().UnixMicro(), maxWait.Microseconds()).Int64Slice()
	if err != nil {
		return 0, false, unavailable(err)
	}
	return time.Duration(res[0]) * time.Microsecond, res[1] == 1, nil
}
