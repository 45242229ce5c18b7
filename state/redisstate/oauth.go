package redisstate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
		return nil, fmt.Errorf("%w: %v", errDamaged, err)
	}
	var g gateway.OAuthGrant
	if err := json.Unmarshal([]byte(plain), &g); err != nil {
		return nil, fmt.Errorf("%w: log in again", errDamaged)
	}
	return &g, nil
}

// errDamaged: a stored grant that does not decrypt or parse.
var errDamaged = errors.New("a stored OAuth grant cannot be read")

// LockRefresh implements gateway.OAuthRefreshLocker: a lock key per grant
// (SET NX, expiring after 30 s, so a replica that dies holding it does not
// block the others for longer), released only by its holder.
func (s *OAuthStore) LockRefresh(ctx context.Context, owner, server string) (func(), error) {
	k := s.key(owner, server) + ":refreshing"
	token := s.c.seal(k, "lock") // unique: a random nonce
	for {
		ok, err := s.c.rdb.SetNX(ctx, k, token, 30*time.Second).Result()
		if err != nil {
			return nil, unavailable(err)
		}
		if ok {
			return func() { _ = unlockScript.Run(context.WithoutCancel(ctx), s.c.rdb, []string{k}, token).Err() }, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

var unlockScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`)

func (s *OAuthStore) Grant(ctx context.Context, owner, server string) (*gateway.OAuthGrant, error) {
	return s.read(ctx, func(k string) *redis.StringCmd { return s.c.rdb.Get(ctx, k) }, s.key(owner, server))
}

func (s *OAuthStore) Update(ctx context.Context, owner, server string, fn func(*gateway.OAuthGrant) *gateway.OAuthGrant) error {
	k := s.key(owner, server)
	read := func(tx *redis.Tx) (*gateway.OAuthGrant, error) {
		cur, err := s.read(ctx, func(k string) *redis.StringCmd { return tx.Get(ctx, k) }, k)
		if err != nil && !errors.Is(err, errDamaged) {
			return nil, err
		}
		// A grant that no longer decrypts (the encryptionKey changed) or
		// parses is as good as none: a new login replaces it.
		return cur, nil
	}
	for attempt := range 64 {
		if attempt > 0 {
			time.Sleep(time.Duration(attempt) * time.Millisecond) // let the other writer finish
		}
		err := s.c.rdb.Watch(ctx, func(tx *redis.Tx) error {
			cur, err := read(tx)
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
