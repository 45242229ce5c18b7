package redisstate

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/redis/go-redis/v9"
)

// ShapeStore is codemode.ShapeStore on Redis: one hash, a field per tool
// holding the result type its replicas learned. Updates are WATCH
// transactions on the hash, retried when another replica's lands first
// (each replica pools every 10 s: they seldom meet).
type ShapeStore struct{ c *Client }

// ShapeStore returns the result types replicas pool.
func (c *Client) ShapeStore() *ShapeStore { return &ShapeStore{c: c} }

func (s *ShapeStore) key() string { return s.c.key("shapes") }

// maxUpdateTries bounds the retries of an update that keeps meeting others.
const maxUpdateTries = 8

func (s *ShapeStore) Update(ctx context.Context, field string, update func(current []byte) ([]byte, error)) error {
	key := s.key()
	for range maxUpdateTries {
		err := s.c.rdb.Watch(ctx, func(tx *redis.Tx) error {
			cur, err := tx.HGet(ctx, key, field).Bytes()
			if err == redis.Nil {
				cur, err = nil, nil
			}
			if err != nil {
				return err
			}
			next, err := update(cur)
			if err != nil {
				return err
			}
			_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.HSet(ctx, key, field, next)
				return nil
			})
			return err
		}, key)
		if !errors.Is(err, redis.TxFailedErr) {
			return unavailable(err)
		}
		time.Sleep(time.Duration(1+rand.IntN(5)) * time.Millisecond) // let the other one finish
	}
	return fmt.Errorf("the learned result type of %q changed under %d tries; it is pooled at the next round", field, maxUpdateTries)
}

func (s *ShapeStore) Load(ctx context.Context) (map[string][]byte, error) {
	all, err := s.c.rdb.HGetAll(ctx, s.key()).Result()
	if err != nil {
		return nil, unavailable(err)
	}
	out := make(map[string][]byte, len(all))
	for k, v := range all {
		out[k] = []byte(v)
	}
	return out, nil
}
