package redisstate

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/sandboxrt/sandbox/codemode"
)

// ResultStore is codemode.ResultStore (the results sandbox.results reads in
// parts) on Redis: a handle made on one replica is read on another. A
// result's bytes are a hash of 1 MiB chunks (field: the chunk's index;
// each chunk sealed, bound to its hash and index), written one chunk at a
// time and read one chunk at a time, so neither side holds more than a
// chunk (and its decryption). Beside them: a hash of each result's
// description, a sorted set of last uses (everyone's, and one per
// principal), the bytes each principal holds, the total, and the set of
// results still being written. Every key carries the hash tag {results}:
// making room drops other principals' results in the same script, so a
// Redis Cluster keeps them all in one slot (on one node).
//
// Room is reserved (Lua: expired results purged, the least recently used
// dropped, the limits checked) before a byte is written; a result being
// written is neither read nor dropped to make room, and one abandoned
// half-written (the replica died) expires like any other.
type ResultStore struct {
	c      *Client
	limits codemode.ResultLimits
	now    func() time.Time
}

// resultChunk is the size of one chunk of a result in Redis.
const resultChunk = 1 << 20

// ResultStore returns the shared big results, with limits (zero fields:
// defaults) and a clock (nil: time.Now).
func (c *Client) ResultStore(limits codemode.ResultLimits, now func() time.Time) *ResultStore {
	if now == nil {
		now = time.Now
	}
	return &ResultStore{c: c, limits: limits.WithDefaults(), now: now}
}

func (s *ResultStore) key(name string) string { return s.c.prefix + "results:{results}:" + name }

// keys are the keys every script takes, in this order.
func (s *ResultStore) keys() []string {
	return []string{s.key("meta"), s.key("used"), s.key("bytes"), s.key("total"), s.key("writing")}
}

func (s *ResultStore) dataKey(id string) string { return s.key("data:") + id }

// resultsLib is shared by the scripts: drop forgets a result and frees its
// room; purge drops those unused since cutoff.
const resultsLib = `
local meta, used, bytes, total, writing = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local function drop(id, dataPrefix, byPrefix)
  local m = redis.call('HGET', meta, id)
  redis.call('ZREM', used, id)
  redis.call('SREM', writing, id)
  redis.call('UNLINK', dataPrefix .. id)
  if not m then return end
  local r = cjson.decode(m)
  redis.call('HDEL', meta, id)
  redis.call('ZREM', byPrefix .. r.principal, id)
  redis.call('DECRBY', total, r.bytes)
  if redis.call('HINCRBY', bytes, r.principal, -r.bytes) <= 0 then redis.call('HDEL', bytes, r.principal) end
end
local function purge(cutoff, dataPrefix, byPrefix)
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', used, '-inf', '(' .. cutoff)) do drop(id, dataPrefix, byPrefix) end
end
`

// reserveResultScript: ARGV id, principal, size, now, cutoff (ms), per
// principal, total, the description (JSON), data prefix, by prefix.
// Returns "" when the room is reserved, "full" when results being written
// hold it.
var reserveResultScript = redis.NewScript(resultsLib + `
local id, principal, size, now = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
local perPrincipal, maxTotal, dataPrefix, byPrefix = tonumber(ARGV[6]), tonumber(ARGV[7]), ARGV[9], ARGV[10]
purge(tonumber(ARGV[5]), dataPrefix, byPrefix)
local by = byPrefix .. principal
local function held() return tonumber(redis.call('HGET', bytes, principal) or '0') end
local function all() return tonumber(redis.call('GET', total) or '0') end
local function makeRoom(set, over)
  local skip = 0
  while over() do
    local ids = redis.call('ZRANGE', set, skip, skip)
    if #ids == 0 then return end
    if redis.call('SISMEMBER', writing, ids[1]) == 1 then skip = skip + 1 else drop(ids[1], dataPrefix, byPrefix) end
  end
end
makeRoom(by, function() return held() + size > perPrincipal end)
makeRoom(used, function() return all() + size > maxTotal end)
if held() + size > perPrincipal or all() + size > maxTotal then return 'full' end
redis.call('HSET', meta, id, ARGV[8])
redis.call('ZADD', used, now, id)
redis.call('ZADD', by, now, id)
redis.call('SADD', writing, id)
redis.call('HINCRBY', bytes, principal, size)
redis.call('INCRBY', total, size)
return ''
`)

// writtenResultScript: ARGV id. The result is whole: 1, or 0 when it was dropped
// (expired) while it was written.
var writtenResultScript = redis.NewScript(resultsLib + `
if redis.call('SREM', writing, ARGV[1]) == 0 or redis.call('HEXISTS', meta, ARGV[1]) == 0 then return 0 end
return 1
`)

// dropResultScript: ARGV id, data prefix, by prefix.
var dropResultScript = redis.NewScript(resultsLib + `
drop(ARGV[1], ARGV[2], ARGV[3])
return 1
`)

// getResultScript: ARGV id, principal, now, cutoff (ms), data prefix, by prefix,
// touch (1: a use, whose TTL starts again), TTL (ms). Returns the
// description, or false.
var getResultScript = redis.NewScript(resultsLib + `
local id, principal = ARGV[1], ARGV[2]
local m = redis.call('HGET', meta, id)
if not m or redis.call('SISMEMBER', writing, id) == 1 then return false end
local usedAt = tonumber(redis.call('ZSCORE', used, id) or '0')
if usedAt < tonumber(ARGV[4]) then drop(id, ARGV[5], ARGV[6]) return false end
if cjson.decode(m).principal ~= principal then return false end
if ARGV[7] == '1' then
  redis.call('ZADD', used, ARGV[3], id)
  redis.call('ZADD', ARGV[6] .. principal, ARGV[3], id)
  redis.call('PEXPIRE', ARGV[5] .. id, ARGV[8])
end
return m
`)

// dataTTL is how long a result's chunks live in Redis after their last
// use: the TTL, with a margin for clocks (results expire by the
// replicas' clock; this only clears what a purge missed).
func (s *ResultStore) dataTTL() time.Duration { return s.limits.TTL + time.Hour }

func (s *ResultStore) Put(ctx context.Context, r codemode.HeldResult, body io.Reader) error {
	if r.Bytes > s.limits.PerPrincipalBytes {
		return codemode.TooLargeToHold(r, s.limits)
	}
	desc, err := json.Marshal(r)
	if err != nil {
		return err
	}
	now := s.now()
	res, err := reserveResultScript.Run(ctx, s.c.rdb, s.keys(), r.ID, r.Principal, r.Bytes, now.UnixMilli(), now.Add(-s.limits.TTL).UnixMilli(),
		s.limits.PerPrincipalBytes, s.limits.TotalBytes, string(desc), s.key("data:"), s.key("by:")).Text()
	if err != nil {
		return unavailable(err)
	}
	if res == "full" {
		return &codemode.ResultLimitError{Message: "the sandbox holds all the big results it may right now; try again in a moment, or ask for less"}
	}
	if err := s.write(ctx, r, body); err != nil {
		_ = dropResultScript.Run(context.WithoutCancel(ctx), s.c.rdb, s.keys(), r.ID, s.key("data:"), s.key("by:")).Err()
		return err
	}
	ok, err := writtenResultScript.Run(ctx, s.c.rdb, s.keys(), r.ID).Int()
	if err != nil {
		return unavailable(err)
	}
	if ok == 0 {
		_ = s.c.rdb.Unlink(ctx, s.dataKey(r.ID)).Err()
		return fmt.Errorf("the result of %s expired while it was stored; call the tool again", r.Tool)
	}
	return nil
}

// write stores the result's bytes, a chunk at a time.
func (s *ResultStore) write(ctx context.Context, r codemode.HeldResult, body io.Reader) error {
	key := s.dataKey(r.ID)
	buf := make([]byte, resultChunk)
	var written int64
	for i := 0; written < r.Bytes; i++ {
		n, err := io.ReadFull(body, buf[:min(int64(resultChunk), r.Bytes-written)])
		if err != nil {
			return fmt.Errorf("codemode: the result ended after %d of its %d bytes: %w", written+int64(n), r.Bytes, err)
		}
		pipe := s.c.rdb.Pipeline()
		pipe.HSet(ctx, key, strconv.Itoa(i), s.c.sealData(where(key, strconv.Itoa(i)), buf[:n]))
		pipe.PExpire(ctx, key, s.dataTTL())
		if _, err := pipe.Exec(ctx); err != nil {
			return unavailable(err)
		}
		written += int64(n)
	}
	return nil
}

func (s *ResultStore) get(ctx context.Context, principal, id string, touch bool) (codemode.HeldResult, bool, error) {
	now := s.now()
	t := "0"
	if touch {
		t = "1"
	}
	m, err := getResultScript.Run(ctx, s.c.rdb, s.keys(), id, principal, now.UnixMilli(), now.Add(-s.limits.TTL).UnixMilli(),
		s.key("data:"), s.key("by:"), t, s.dataTTL().Milliseconds()).Text()
	if err == redis.Nil {
		return codemode.HeldResult{}, false, nil
	}
	if err != nil {
		return codemode.HeldResult{}, false, unavailable(err)
	}
	var r codemode.HeldResult
	if err := json.Unmarshal([]byte(m), &r); err != nil {
		return codemode.HeldResult{}, false, fmt.Errorf("redis holds a broken description of result %s: %w", id, err)
	}
	return r, true, nil
}

func (s *ResultStore) Get(ctx context.Context, principal, id string) (codemode.HeldResult, bool, error) {
	return s.get(ctx, principal, id, true)
}

func (s *ResultStore) Open(ctx context.Context, principal, id string, offset int64) (io.ReadCloser, error) {
	r, ok, err := s.get(ctx, principal, id, false)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, codemode.ErrResultNotHeld
	}
	return &chunkReader{ctx: ctx, s: s, key: s.dataKey(id), size: r.Bytes, off: offset}, nil
}

// chunkReader reads a result a chunk at a time.
type chunkReader struct {
	ctx   context.Context
	s     *ResultStore
	key   string
	size  int64
	off   int64
	chunk []byte // the rest of the chunk being read
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.chunk) == 0 {
		if c.off >= c.size {
			return 0, io.EOF
		}
		i := strconv.FormatInt(c.off/resultChunk, 10)
		stored, err := c.s.c.rdb.HGet(c.ctx, c.key, i).Bytes()
		if err == redis.Nil {
			return 0, fmt.Errorf("the result was dropped while it was read (the sandbox made room for others)")
		}
		if err != nil {
			return 0, unavailable(err)
		}
		b, err := c.s.c.openData(where(c.key, i), stored)
		if err != nil {
			return 0, err
		}
		skip := c.off % resultChunk
		if skip > int64(len(b)) {
			return 0, fmt.Errorf("redis holds a short chunk of a result")
		}
		c.chunk = b[skip:]
	}
	n := copy(p, c.chunk)
	c.chunk = c.chunk[n:]
	c.off += int64(n)
	return n, nil
}

func (c *chunkReader) Close() error { return nil }
