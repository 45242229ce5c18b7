package redisstate

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/sandboxrt/sandbox/codemode"
)

// Usage is codemode.UsageStore (what code mode learns from use) on Redis,
// shared by every replica, so that a deployment learns from all of its
// sessions. Three kinds of sorted sets, their scores the time in ms:
//
//   - per principal, its pairs (member: word:tool), to hold it to
//     MaxUsagePairsPerPrincipal and to expire its pairs;
//   - per pair (word:tool), the principals that recorded it, which
//     Evidence counts;
//   - per word, the tools with a pair (member: the tool, escaped).
//
// A word is the words of agents' searches: it appears only as its HMAC
// under a key derived from the encryption key (wordDigest), which
// Evidence computes the same way, so Redis never holds the words. Tools,
// the operator's catalog ids, are escaped.
//
// Every key carries the hash tag {usage}, so a Redis Cluster keeps them in
// one slot: the scripts reach the pair keys of the pairs they drop, which
// they learn only from the principal's set. Each key expires UsageTTL after
// its last write, so what nobody renews goes away on its own.
type Usage struct {
	c   *Client
	now func() time.Time
}

// Usage returns the shared UsageStore, with a clock (nil: time.Now).
func (c *Client) Usage(now func() time.Time) *Usage {
	if now == nil {
		now = time.Now
	}
	return &Usage{c: c, now: now}
}

func (u *Usage) base() string { return u.c.prefix + "usage:{usage}:" }

// recordScript: KEYS principal's set, then a word's set and the pair's set
// for each pair; ARGV now, TTL (ms), MaxUsagePairsPerPrincipal, principal,
// the pair keys' prefix, the word keys' prefix, then for each pair its
// member in the principal's set (word digest:tool escaped) and its tool
// (escaped). A pair nobody holds any more leaves its word's set too, so
// that what a principal holds in Redis stays within its bound.
var recordScript = redis.NewScript(`
local p = KEYS[1]
local now, ttl, maxPairs = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local principal, pairPrefix, wordPrefix = ARGV[4], ARGV[5], ARGV[6]
local function drop(members)
  for _, m in ipairs(members) do
    redis.call('ZREM', pairPrefix .. m, principal)
    redis.call('ZREM', p, m)
    if redis.call('EXISTS', pairPrefix .. m) == 0 then
      local w, t = string.match(m, '^([^:]*):(.*)$')
      redis.call('ZREM', wordPrefix .. w, t)
    end
  end
end
drop(redis.call('ZRANGEBYSCORE', p, '-inf', now - ttl))
for i = 1, (#KEYS - 1) / 2 do
  local word, pair = KEYS[2 * i], KEYS[2 * i + 1]
  local member, tool = ARGV[5 + 2 * i], ARGV[6 + 2 * i]
  redis.call('ZADD', p, now, member)
  redis.call('ZADD', pair, now, principal)
  redis.call('ZREMRANGEBYSCORE', pair, '-inf', now - ttl)
  redis.call('PEXPIRE', pair, ttl)
  redis.call('ZADD', word, now, tool)
  redis.call('ZREMRANGEBYSCORE', word, '-inf', now - ttl)
  redis.call('PEXPIRE', word, ttl)
end
local over = redis.call('ZCARD', p) - maxPairs
if over > 0 then drop(redis.call('ZRANGE', p, 0, over - 1)) end
redis.call('PEXPIRE', p, ttl)
return 1
`)

// evidenceScript: KEYS the words' sets; ARGV the oldest live time (ms),
// the pair keys' prefix, then each word's digest. Returns, per word, a flat
// list of tool (escaped) and count, for the tools with live pairs.
var evidenceScript = redis.NewScript(`
local since, pairPrefix = tonumber(ARGV[1]), ARGV[2]
local out = {}
for i, word in ipairs(KEYS) do
  local counts = {}
  for _, tool in ipairs(redis.call('ZRANGEBYSCORE', word, '(' .. since, '+inf')) do
    local n = redis.call('ZCOUNT', pairPrefix .. ARGV[2 + i] .. ':' .. tool, '(' .. since, '+inf')
    if n > 0 then
      table.insert(counts, tool)
      table.insert(counts, n)
    end
  end
  out[i] = counts
end
return out
`)

// Record implements codemode.UsageStore.
func (u *Usage) Record(ctx context.Context, principal string, words, tools []string) error {
	pairs := codemode.UsagePairs(words, tools)
	if len(pairs) == 0 {
		return nil
	}
	base := u.base()
	keys := []string{base + "p:" + url.QueryEscape(principal)}
	args := []any{u.now().UnixMilli(), codemode.UsageTTL.Milliseconds(), codemode.MaxUsagePairsPerPrincipal, principal, base + "wt:", base + "w:"}
	for _, pair := range pairs {
		w, t := u.c.wordDigest(pair.Word), url.QueryEscape(pair.Tool)
		keys = append(keys, base+"w:"+w, base+"wt:"+w+":"+t)
		args = append(args, w+":"+t, t)
	}
	return unavailable(recordScript.Run(ctx, u.c.rdb, keys, args...).Err())
}

// Evidence implements codemode.UsageStore.
func (u *Usage) Evidence(ctx context.Context, words []string) (map[string]map[string]int, error) {
	out := map[string]map[string]int{}
	var asked []string
	for _, w := range words {
		if w != "" && len(w) <= codemode.MaxUsageTermBytes {
			asked = append(asked, w)
		}
	}
	if len(asked) == 0 {
		return out, nil
	}
	base := u.base()
	keys := make([]string, len(asked))
	args := []any{u.now().Add(-codemode.UsageTTL).UnixMilli(), base + "wt:"}
	for i, w := range asked {
		keys[i] = base + "w:" + u.c.wordDigest(w)
		args = append(args, u.c.wordDigest(w))
	}
	res, err := evidenceScript.Run(ctx, u.c.rdb, keys, args...).Slice()
	if err != nil {
		return nil, unavailable(err)
	}
	for i, per := range res {
		list, _ := per.([]any)
		counts := map[string]int{}
		for j := 0; j+1 < len(list); j += 2 {
			escaped, _ := list[j].(string)
			n, _ := list[j+1].(int64)
			tool, err := url.QueryUnescape(escaped)
			if err != nil || n <= 0 {
				continue
			}
			counts[tool] = int(n)
		}
		if len(counts) > 0 {
			out[asked[i]] = codemode.TopUsageTools(counts)
		}
	}
	return out, nil
}

// wordDigest is how a word is named in Redis: 128 bits of its HMAC, in hex
// (no ':' to split on), under the words' key.
func (c *Client) wordDigest(word string) string {
	mac := hmac.New(sha256.New, c.words)
	mac.Write([]byte(word))
	return hex.EncodeToString(mac.Sum(nil)[:16])
}
