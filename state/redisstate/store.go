package redisstate

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/sandboxrt/sandbox/codemode"
)

// Store is codemode.Store (sandbox.store's values) on Redis. A principal's
// values are kept under keys of its own: a hash of values (field: session,
// NUL, key), a hash of its byte and key counts, a sorted set of expiry
// times, and one lexically sorted index per scope for listing. The limits
// are checked and the counts kept in the same Lua script as each write, so
// two replicas cannot both take the last room. Values are sealed (sealData,
// bound to their hash and field); the scripts count them at the size the
// snippet stored. Keys stay in clear: listing by prefix is Redis's.
type Store struct {
	c      *Client
	limits codemode.StoreLimits
	now    func() time.Time
}

// Store returns the shared sandbox.store values, with limits (zero fields:
// defaults) and a clock (nil: time.Now).
func (c *Client) Store(limits codemode.StoreLimits, now func() time.Time) *Store {
	if now == nil {
		now = time.Now
	}
	return &Store{c: c, limits: limits.WithDefaults(), now: now}
}

// keys of a principal: values, counts, expiries, and the scope's index.
// They share the hash tag {principal}, so a Redis Cluster keeps them in
// one slot, as its scripts need.
func (s *Store) keys(scope codemode.StoreScope) []string {
	base := s.principalKey(scope.Principal)
	return []string{base + "values", base + "counts", base + "expiry", s.indexPrefix(scope) + scope.Session}
}

func (s *Store) principalKey(principal string) string {
	return s.c.prefix + "store:{" + url.QueryEscape(principal) + "}:"
}

func field(scope codemode.StoreScope, key string) string { return scope.Session + "\x00" + key }

// storeLib is shared by the scripts: purge drops the principal's expired
// values (their room is free) and fixes the counts.
var storeLib = sealedSize + `
local function purge(values, counts, expiry, now, indexPrefix)
  local gone = redis.call('ZRANGEBYSCORE', expiry, '-inf', now)
  for _, f in ipairs(gone) do
    local v = redis.call('HGET', values, f)
    local sep = string.find(f, '\0', 1, true)
    local session, key = string.sub(f, 1, sep - 1), string.sub(f, sep + 1)
    if v then
      redis.call('HDEL', values, f)
      redis.call('HINCRBY', counts, 'bytes', -(#key + sealedSize(v)))
      redis.call('HINCRBY', counts, 'keys', -1)
    end
    redis.call('ZREM', indexPrefix .. session, key)
    redis.call('ZREM', expiry, f)
  end
end
`

// setScript: KEYS values, counts, expiry, index; ARGV field, key, value,
// expires (ms, 0 never), now (ms), max keys, max bytes, index prefix.
// Returns "" or the limit refused ("keys", "total") with the counts.
var setScript = redis.NewScript(storeLib + `
local values, counts, expiry, index = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local f, key, value = ARGV[1], ARGV[2], ARGV[3]
local expires, now = tonumber(ARGV[4]), tonumber(ARGV[5])
local maxKeys, maxBytes = tonumber(ARGV[6]), tonumber(ARGV[7])
local function after()
  local c = redis.call('HMGET', counts, 'bytes', 'keys')
  local b, k = tonumber(c[1] or '0') or 0, tonumber(c[2] or '0') or 0
  b, k = b + #key + sealedSize(value), k + 1
  local old = redis.call('HGET', values, f)
  if old then b, k = b - #key - sealedSize(old), k - 1 end
  return b, k
end
local b, k = after()
if k > maxKeys or b > maxBytes then
  purge(values, counts, expiry, now, ARGV[8])
  b, k = after()
end
if k > maxKeys then return {'keys', b, k} end
if b > maxBytes then return {'total', b, k} end
redis.call('HSET', values, f, value)
redis.call('HSET', counts, 'bytes', b, 'keys', k)
redis.call('ZADD', index, 0, key)
if expires > 0 then redis.call('ZADD', expiry, expires, f) else redis.call('ZREM', expiry, f) end
return {'', b, k}
`)

// getScript: KEYS values, expiry; ARGV field, now. A value past its
// expiry is not there.
var getScript = redis.NewScript(`
local e = redis.call('ZSCORE', KEYS[2], ARGV[1])
if e and tonumber(e) <= tonumber(ARGV[2]) then return false end
return redis.call('HGET', KEYS[1], ARGV[1])
`)

// deleteScript: KEYS values, counts, expiry, index; ARGV field, key, now.
// Returns 1 when a live value was deleted.
var deleteScript = redis.NewScript(sealedSize + `
local v = redis.call('HGET', KEYS[1], ARGV[1])
if not v then return 0 end
local e = redis.call('ZSCORE', KEYS[3], ARGV[1])
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('HINCRBY', KEYS[2], 'bytes', -(#ARGV[2] + sealedSize(v)))
redis.call('HINCRBY', KEYS[2], 'keys', -1)
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('ZREM', KEYS[4], ARGV[2])
if e and tonumber(e) <= tonumber(ARGV[3]) then return 0 end
return 1
`)

// keysScript: KEYS values, counts, expiry, index; ARGV now, index prefix,
// min, max (ZRANGEBYLEX bounds), limit.
var keysScript = redis.NewScript(storeLib + `
purge(KEYS[1], KEYS[2], KEYS[3], tonumber(ARGV[1]), ARGV[2])
return redis.call('ZRANGEBYLEX', KEYS[4], ARGV[3], ARGV[4], 'LIMIT', 0, tonumber(ARGV[5]))
`)

// indexPrefix starts the index keys of the principal's scopes (the session
// follows, as the scripts append it).
func (s *Store) indexPrefix(scope codemode.StoreScope) string {
	return s.principalKey(scope.Principal) + "index:"
}

func (s *Store) Get(ctx context.Context, scope codemode.StoreScope, key string) (json.RawMessage, bool, error) {
	k, f := s.keys(scope), field(scope, key)
	v, err := getScript.Run(ctx, s.c.rdb, []string{k[0], k[2]}, f, s.now().UnixMilli()).Text()
	if err == redis.Nil {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, unavailable(err)
	}
	plain, err := s.c.openData(where(k[0], f), []byte(v))
	if err != nil {
		return nil, false, fmt.Errorf("sandbox.store key %q: %w", key, err)
	}
	return json.RawMessage(plain), true, nil
}

func (s *Store) Set(ctx context.Context, scope codemode.StoreScope, key string, value json.RawMessage, ttl time.Duration) error {
	if len(value) > s.limits.ValueBytes {
		return &codemode.StoreLimitError{Limit: "value", Message: fmt.Sprintf("the value is %d bytes of JSON; a value is at most %d: store less, or split it over several keys", len(value), s.limits.ValueBytes)}
	}
	var expires int64
	if ttl > 0 {
		expires = s.now().Add(ttl).UnixMilli()
	}
	k, f := s.keys(scope), field(scope, key)
	sealed := s.c.sealData(where(k[0], f), value)
	res, err := setScript.Run(ctx, s.c.rdb, k, f, key, sealed, expires, s.now().UnixMilli(),
		s.limits.Keys, s.limits.TotalBytes, s.indexPrefix(scope)).Slice()
	if err != nil {
		return unavailable(err)
	}
	switch res[0] {
	case "keys":
		return &codemode.StoreLimitError{Limit: "keys", Message: fmt.Sprintf("this principal already keeps %d keys, the most it may; delete some (sandbox.store.keys lists them) or give values a ttlSeconds", s.limits.Keys)}
	case "total":
		return &codemode.StoreLimitError{Limit: "total", Message: fmt.Sprintf("this would make %v bytes kept by this principal; the most is %d: delete some keys or store less", res[1], s.limits.TotalBytes)}
	}
	return nil
}

func (s *Store) Delete(ctx context.Context, scope codemode.StoreScope, key string) (bool, error) {
	n, err := deleteScript.Run(ctx, s.c.rdb, s.keys(scope), field(scope, key), key, s.now().UnixMilli()).Int()
	if err != nil {
		return false, unavailable(err)
	}
	return n == 1, nil
}

func (s *Store) Keys(ctx context.Context, scope codemode.StoreScope, prefix string) ([]string, error) {
	lo, hi := "-", "+"
	if prefix != "" {
		lo, hi = "["+prefix, "["+prefix+"\xff"
	}
	keys, err := keysScript.Run(ctx, s.c.rdb, s.keys(scope), s.now().UnixMilli(), s.indexPrefix(scope), lo, hi, s.limits.KeysListed).StringSlice()
	if err != nil {
		return nil, unavailable(err)
	}
	if keys == nil {
		keys = []string{}
	}
	return keys, nil
}
