package redisstate

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// ShapeStore is codemode.ShapeStore on Redis: one hash, a field per tool
// holding the result type its replicas learned, a version counter, and a
// sorted set of the fields by the version that last changed them, so that
// a replica reads only what changed since its last look. Updates are WATCH
// transactions on the field's hash, retried when another replica's lands
// first (each replica pools every 10 s: they seldom meet).
//
// Entries are bounded (MaxShapeEntryBytes, MaxShapeEntries): the keys are
// the catalog's tool ids, which the operator chooses, but the pool must
// not grow with anything a caller controls.
type ShapeStore struct{ c *Client }

// ShapeStore returns the result types replicas pool.
func (c *Client) ShapeStore() *ShapeStore { return &ShapeStore{c: c} }

const (
	// MaxShapeEntryBytes bounds one pooled result type.
	MaxShapeEntryBytes = 64 << 10
	// MaxShapeEntries bounds the tools with a pooled result type.
	MaxShapeEntries = 50_000
)

func (s *ShapeStore) keys() (entries, version, changed string) {
	return s.c.key("shapes"), s.c.key("shapes", "version"), s.c.key("shapes", "changed")
}

// maxUpdateTries bounds the retries of an update that keeps meeting others.
const maxUpdateTries = 8

func (s *ShapeStore) Update(ctx context.Context, field string, update func(current []byte) ([]byte, error)) error {
	entries, version, changed := s.keys()
	for range maxUpdateTries {
		err := s.c.rdb.Watch(ctx, func(tx *redis.Tx) error {
			cur, err := tx.HGet(ctx, entries, field).Bytes()
			if err == redis.Nil {
				cur, err = nil, nil
				if n, err := tx.HLen(ctx, entries).Result(); err != nil {
					return err
				} else if n >= MaxShapeEntries {
					return fmt.Errorf("the pool of learned result types holds %d tools, the most it keeps; %q is not pooled", n, field)
				}
			}
			if err != nil {
				return err
			}
			next, err := update(cur)
			if err != nil {
				return err
			}
			if len(next) > MaxShapeEntryBytes {
				return fmt.Errorf("the learned result type of %q is %d bytes, over the %d the pool keeps", field, len(next), MaxShapeEntryBytes)
			}
			_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.HSet(ctx, entries, field, next)
				p.Incr(ctx, version)
				// The new version is known inside the transaction only: a
				// script sets the field's score from it.
				p.Eval(ctx, `redis.call('ZADD', KEYS[1], redis.call('GET', KEYS[2]), ARGV[1]) return 1`, []string{changed, version}, field)
				return nil
			})
			return err
		}, entries)
		if !errors.Is(err, redis.TxFailedErr) {
			return unavailable(err)
		}
		time.Sleep(time.Duration(1+rand.IntN(5)) * time.Millisecond) // let the other one finish
	}
	return fmt.Errorf("the learned result type of %q changed under %d tries; it is pooled at the next round", field, maxUpdateTries)
}

func (s *ShapeStore) Changes(ctx context.Context, since int64) (map[string][]byte, int64, error) {
	entries, version, changed := s.keys()
	var ver *redis.StringCmd
	var fields *redis.StringSliceCmd
	_, err := s.c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		ver = p.Get(ctx, version)
		fields = p.ZRangeByScore(ctx, changed, &redis.ZRangeBy{Min: "(" + strconv.FormatInt(since, 10), Max: "+inf"})
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, since, unavailable(err)
	}
	now, _ := strconv.ParseInt(ver.Val(), 10, 64)
	out := map[string][]byte{}
	if len(fields.Val()) == 0 {
		return out, now, nil
	}
	vals, err := s.c.rdb.HMGet(ctx, entries, fields.Val()...).Result()
	if err != nil {
		return nil, since, unavailable(err)
	}
	for i, v := range vals {
		if str, ok := v.(string); ok {
			out[fields.Val()[i]] = []byte(str)
		}
	}
	return out, now, nil
}
