package redisstate

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/sandboxrt/sandbox/gateway"
)

// OAuthStore is gateway.OAuthStore on Redis: each grant one key, its JSON
// encrypted. Update is an optimistic transaction (WATCH): two replicas
// renewing the same grant at once do not lose either write.
type OAuthStore struct{ c *Client }

// OAuthStore returns the shared OAuth grants.
func (c *Client) OAuthStore() *OAuthStore { return &OAuthStore{c: c} }

func (s *OAuthStore) key(owner, server string) string { return s.c.key("oauth", owner, server) }

func (s *OAuthStore) read(ctx context.Context, get func(string) *redis.StringCmd, k string) (*gateway.OAuthGrant, error) {
	sealed, err := get(k).Result()
	if err == redis.Nil {
		return nil, nil
	}
	if err != nil {
		return nil, unavailable(err)
	}
	plain, err := s.c.open(k, sealed)
	if err != nil {
		return nil, err
	}
	var g gateway.OAuthGrant
	if err := json.Unmarshal([]byte(plain), &g); err != nil {
		return nil, errors.New("a stored OAuth grant is damaged: log in again")
	}
	return &g, nil
}

func (s *OAuthStore) Grant(ctx context.Context, owner, server string) (*gateway.OAuthGrant, error) {
	return s.read(ctx, func(k string) *redis.StringCmd { return s.c.rdb.Get(ctx, k) }, s.key(owner, server))
}

func (s *OAuthStore) Update(ctx context.Context, owner, server string, fn func(*gateway.OAuthGrant) *gateway.OAuthGrant) error {
	k := s.key(owner, server)
	for attempt := range 64 {
		if attempt > 0 {
			time.Sleep(time.Duration(attempt) * time.Millisecond) // let the other writer finish
		}
		err := s.c.rdb.Watch(ctx, func(tx *redis.Tx) error {
			cur, err := s.read(ctx, func(k string) *redis.StringCmd { return tx.Get(ctx, k) }, k)
			if err != nil {
				return err
			}
			next := fn(cur)
			_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
				if next == nil {
					p.Del(ctx, k)
					return nil
				}
				data, err := json.Marshal(next)
				if err != nil {
					return err
				}
				p.Set(ctx, k, s.c.seal(k, string(data)), 0)
				return nil
			})
			return err
		}, k)
		if err != redis.TxFailedErr {
			return unavailable(err)
		}
	}
	return errors.New("an OAuth grant kept changing under this update; try again")
}
