package redisstate

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/sandboxrt/sandbox/gateway/frontend"
)

// ReleasedRuns is frontend.ReleasedRunStore on Redis: each run's record
// sealed (sealData: it holds tool results) under a key of its own, bound
// to that key and its principal; a sorted set of all the runs and one per
// principal by expiry, and hashes of their sizes and owners, so that Put
// counts a principal's runs and the bytes of all, and Take takes a run
// once, in one script each. Expiry is on the caller's clock (the suite's
// by hand); the keys' own TTLs only collect what nobody took.
type ReleasedRuns struct {
	c        *Client
	maxBytes int64
	now      func() time.Time
}

// ReleasedRuns returns the runs released from their workers, holding up
// to maxBytes (0: frontend.MaxReleasedBytes), on the clock now (nil:
// time.Now).
func (c *Client) ReleasedRuns(maxBytes int64, now func() time.Time) *ReleasedRuns {
	if maxBytes <= 0 {
		maxBytes = frontend.MaxReleasedBytes
	}
	if now == nil {
		now = time.Now
	}
	return &ReleasedRuns{c: c, maxBytes: maxBytes, now: now}
}

// keys: the run's record, all runs by expiry, their sizes, their owners,
// the principal's runs by expiry.
func (r *ReleasedRuns) keys(id, principal string) []string {
	return []string{r.c.key("released", id), r.c.key("released-all"), r.c.key("released-size"), r.c.key("released-owner"), r.c.key("released-by", principal)}
}

// releasedPutScript forgets the expired runs, then keeps the run unless
// its principal has ARGV[6] others or would hold over ARGV[9] bytes (0),
// or the store would hold over ARGV[7] bytes (-1).
var releasedPutScript = redis.NewScript(`
local now = tonumber(ARGV[5])
local expired = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now)
for _, x in ipairs(expired) do
  redis.call('HDEL', KEYS[3], x)
  redis.call('HDEL', KEYS[4], x)
end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[5], '-inf', now)
local n = 0
local own = 0
for _, x in ipairs(redis.call('ZRANGE', KEYS[5], 0, -1)) do
  if x ~= ARGV[1] then
    n = n + 1
    own = own + tonumber(redis.call('HGET', KEYS[3], x) or '0')
  end
end
if n >= tonumber(ARGV[6]) or own + tonumber(ARGV[8]) > tonumber(ARGV[9]) then return 0 end
local total = 0
for _, v in ipairs(redis.call('HVALS', KEYS[3])) do total = total + tonumber(v) end
local prev = redis.call('HGET', KEYS[3], ARGV[1])
if prev then total = total - tonumber(prev) end
if total + tonumber(ARGV[8]) > tonumber(ARGV[7]) then return -1 end
local ttl = tonumber(ARGV[4])
redis.call('SET', KEYS[1], ARGV[3], 'PX', ttl + 60000)
redis.call('ZADD', KEYS[2], now + ttl, ARGV[1])
redis.call('ZADD', KEYS[5], now + ttl, ARGV[1])
redis.call('PEXPIRE', KEYS[5], ttl + 60000)
redis.call('HSET', KEYS[3], ARGV[1], ARGV[8])
redis.call('HSET', KEYS[4], ARGV[1], ARGV[2])
return 1`)

// releasedTakeScript returns the run and forgets it, when it is ARGV[2]'s
// and has not expired; another principal's run stays.
var releasedTakeScript = redis.NewScript(`
if redis.call('HGET', KEYS[4], ARGV[1]) ~= ARGV[2] then return false end
local expires = redis.call('ZSCORE', KEYS[2], ARGV[1])
local run = redis.call('GET', KEYS[1])
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[5], ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
redis.call('HDEL', KEYS[4], ARGV[1])
if not expires or tonumber(expires) <= tonumber(ARGV[3]) then return false end
return run`)

// Put implements frontend.ReleasedRunStore.
func (r *ReleasedRuns) Put(ctx context.Context, id, principal string, run []byte, ttl time.Duration) error {
	k := r.keys(id, principal)
	sealed := r.c.sealData(where(k[0], principal), run)
	kept, err := releasedPutScript.Run(ctx, r.c.rdb, k, id, principal, sealed, ttl.Milliseconds(), r.now().UnixMilli(),
		frontend.MaxPausedRuns, r.maxBytes, len(run), frontend.ReleasedShare(r.maxBytes)).Int()
	if err != nil {
		return unavailable(err)
	}
	switch kept {
	case 0:
		return frontend.ErrTooManyReleased
	case -1:
		return frontend.ErrReleasedStoreFull
	}
	return nil
}

// Take implements frontend.ReleasedRunStore.
func (r *ReleasedRuns) Take(ctx context.Context, id, principal string) ([]byte, error) {
	k := r.keys(id, principal)
	stored, err := releasedTakeScript.Run(ctx, r.c.rdb, k, id, principal, r.now().UnixMilli()).Text()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, unavailable(err)
	}
	return r.c.openData(where(k[0], principal), []byte(stored))
}
