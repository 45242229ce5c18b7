package redisstate

import (
	"context"
	"strings"

	"github.com/redis/go-redis/v9"
)

// SealLegacy brings up to date what a version before users' data was
// sealed left in Redis: store values and saved scripts written in clear
// are sealed in place, and what search learned from use, kept under the
// words in clear, is dropped (search learns it again from use; the ranking
// only loses its hints meanwhile). Call streams and big results written in
// clear are read as they are and expire within minutes, so they are left
// to expire.
//
// Every change is a compare-and-set, so replicas may run it at once and
// beside live traffic; run again, it finds nothing to do (one SCAN of the
// prefix's keys). It returns how many values it sealed and how many keys of
// the old learning it dropped.
func (c *Client) SealLegacy(ctx context.Context) (sealed, dropped int, err error) {
	for _, pattern := range []string{"store:{*}:values", "scripts:{*}:code"} {
		n, err := c.sealHashes(ctx, globEscape(c.prefix)+pattern)
		sealed += n
		if err != nil {
			return sealed, 0, err
		}
	}
	dropped, err = c.dropWordsInClear(ctx)
	return sealed, dropped, err
}

// sealInPlaceScript: KEYS the hash; ARGV field, the value read in clear,
// its sealed form. It seals the value only if nobody changed it meanwhile.
var sealInPlaceScript = redis.NewScript(`
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
return 1`)

// sealHashes seals the fields in clear of every hash whose key matches.
// A field is sealed to its hash and field (where), as the stores seal it.
func (c *Client) sealHashes(ctx context.Context, match string) (int, error) {
	sealed := 0
	keys := c.rdb.Scan(ctx, 0, match, 1000).Iterator()
	for keys.Next(ctx) {
		hash := keys.Val()
		fields := c.rdb.HScan(ctx, hash, 0, "", 100).Iterator()
		for fields.Next(ctx) {
			field := fields.Val()
			if !fields.Next(ctx) {
				break
			}
			value := fields.Val()
			if strings.HasPrefix(value, sealedPrefix) {
				continue
			}
			n, err := sealInPlaceScript.Run(ctx, c.rdb, []string{hash}, field, value, c.sealData(where(hash, field), []byte(value))).Int()
			if err != nil {
				return sealed, unavailable(err)
			}
			sealed += n
		}
		if err := fields.Err(); err != nil {
			return sealed, unavailable(err)
		}
	}
	return sealed, unavailable(keys.Err())
}

// dropWordsInClear drops the learning of a version that named words in
// clear, once: a marker key says it was done.
func (c *Client) dropWordsInClear(ctx context.Context) (int, error) {
	marker := c.prefix + "usage:{usage}:digests"
	if n, err := c.rdb.Exists(ctx, marker).Result(); err != nil || n == 1 {
		return 0, unavailable(err)
	}
	dropped := 0
	keys := c.rdb.Scan(ctx, 0, globEscape(c.prefix)+"usage:{usage}:*", 1000).Iterator()
	for keys.Next(ctx) {
		if keys.Val() == marker {
			continue // another replica finished first
		}
		if err := c.rdb.Unlink(ctx, keys.Val()).Err(); err != nil {
			return dropped, unavailable(err)
		}
		dropped++
	}
	if err := keys.Err(); err != nil {
		return dropped, unavailable(err)
	}
	return dropped, unavailable(c.rdb.Set(ctx, marker, "1", 0).Err())
}

// globEscape escapes what SCAN's MATCH would read as a pattern.
func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
