package redisstate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/sandboxrt/sandbox/gateway"
)

// SignInStore is gateway.SignInStore on Redis: the sign-ins in progress
// every replica shares. Each is a key holding its JSON sealed (the PKCE
// verifier and the registered client's secret are in it), expiring with
// its link; its authorization request's state names it through a second
// key (the state's hash, so the key does not hold it); each owner's open
// sign-ins are a sorted set by expiry, for the cap, and its ended ones
// (kept for a late retry) another, so Put drops the oldest past the
// bound. Update is an
// optimistic transaction (WATCH), so a link is used once and a flow ends
// once, whichever replicas race.
type SignInStore struct {
	c   *Client
	now func() time.Time
}

// SignInStore returns the shared sign-ins; now is the clock (nil:
// time.Now).
func (c *Client) SignInStore(now func() time.Time) *SignInStore {
	if now == nil {
		now = time.Now
	}
	return &SignInStore{c: c, now: now}
}

func (s *SignInStore) key(id string) string         { return s.c.key("signin", "id", id) }
func (s *SignInStore) ownerKey(owner string) string { return s.c.key("signin", "owner", owner) }
func (s *SignInStore) endedKey(owner string) string { return s.c.key("signin", "ended", owner) }
func (s *SignInStore) stateKey(state string) string {
	h := sha256.Sum256([]byte(state))
	return s.c.key("signin", "state", hex.EncodeToString(h[:]))
}

var signInPutScript = redis.NewScript(`
-- KEYS: record, owner's index, owner's ended index
-- ARGV: sealed record, expiry ms, now ms, max, id, records' key prefix
local now = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
-- The owner's ended sign-ins past max-1 go, the oldest first: kept only
-- for a retry to learn how they ended, they are not counted below.
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
local over = redis.call('ZCARD', KEYS[3]) - (tonumber(ARGV[4]) - 1)
if over > 0 then
  for _, id in ipairs(redis.call('ZRANGE', KEYS[3], 0, over - 1)) do
    redis.call('DEL', ARGV[6] .. id)
  end
  redis.call('ZREMRANGEBYRANK', KEYS[3], 0, over - 1)
end
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[4]) then return 0 end
if redis.call('EXISTS', KEYS[1]) == 1 then return -1 end
local ttl = tonumber(ARGV[2]) - now
if ttl < 1 then ttl = 1 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ttl)
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[5])
if redis.call('PTTL', KEYS[2]) < ttl then redis.call('PEXPIRE', KEYS[2], ttl) end
return 1`)

var signInEndedScript = redis.NewScript(`
-- KEYS: owner's ended index
-- ARGV: expiry ms, id, ttl ms
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2])
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[3]) then redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
return 1`)

func (s *SignInStore) Put(ctx context.Context, r gateway.SignInRecord, max int) error {
	if r.ID == "" {
		return errors.New("a sign-in needs an id")
	}
	data, err := json.Marshal(r)
	if err != nil {
		return err
	}
	k := s.key(r.ID)
	n, err := signInPutScript.Run(ctx, s.c.rdb, []string{k, s.ownerKey(r.Owner), s.endedKey(r.Owner)},
		s.c.seal(k, string(data)), r.Expires.UnixMilli(), s.now().UnixMilli(), max, r.ID, s.key("")).Int()
	switch {
	case err != nil:
		return unavailable(err)
	case n == 0:
		return gateway.ErrTooManySignIns
	case n < 0:
		return errors.New("a sign-in with this id exists already")
	}
	return nil
}

func (s *SignInStore) read(k, sealed string) (*gateway.SignInRecord, error) {
	plain, err := s.c.open(k, sealed)
	if err != nil {
		return nil, err
	}
	var r gateway.SignInRecord
	if err := json.Unmarshal([]byte(plain), &r); err != nil {
		return nil, fmt.Errorf("a sign-in in Redis is damaged: %v", err)
	}
	if !s.now().Before(r.Expires) {
		return nil, nil
	}
	return &r, nil
}

func (s *SignInStore) get(ctx context.Context, get func(string) *redis.StringCmd, id string) (*gateway.SignInRecord, error) {
	k := s.key(id)
	sealed, err := get(k).Result()
	if err == redis.Nil {
		return nil, nil
	}
	if err != nil {
		return nil, unavailable(err)
	}
	return s.read(k, sealed)
}

func (s *SignInStore) Get(ctx context.Context, id string) (*gateway.SignInRecord, error) {
	return s.get(ctx, func(k string) *redis.StringCmd { return s.c.rdb.Get(ctx, k) }, id)
}

func (s *SignInStore) ByState(ctx context.Context, state string) (*gateway.SignInRecord, error) {
	id, err := s.c.rdb.Get(ctx, s.stateKey(state)).Result()
	if err == redis.Nil {
		return nil, nil
	}
	if err != nil {
		return nil, unavailable(err)
	}
	r, err := s.Get(ctx, id)
	if err != nil || r == nil || r.Login == nil || r.Login.State != state {
		return nil, err
	}
	return r, nil
}

func (s *SignInStore) Update(ctx context.Context, id string, fn func(*gateway.SignInRecord) error) error {
	k := s.key(id)
	for attempt := range 64 {
		if attempt > 0 {
			time.Sleep(time.Duration(attempt) * time.Millisecond) // let the other writer finish
		}
		var fnErr error
		err := s.c.rdb.Watch(ctx, func(tx *redis.Tx) error {
			cur, err := s.get(ctx, func(k string) *redis.StringCmd { return tx.Get(ctx, k) }, id)
			if err != nil {
				return err
			}
			if cur == nil {
				return gateway.ErrNoSuchSignIn
			}
			next := *cur
			if cur.Login != nil {
				l := *cur.Login
				next.Login = &l
			}
			if fnErr = fn(&next); fnErr != nil {
				return fnErr
			}
			next.ID, next.Owner, next.Expires = cur.ID, cur.Owner, cur.Expires // not fn's to change
			data, err := json.Marshal(next)
			if err != nil {
				return err
			}
			ttl := time.Until(cur.Expires)
			if ttl < time.Millisecond {
				ttl = time.Millisecond
			}
			_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.Set(ctx, k, s.c.seal(k, string(data)), ttl)
				if next.Login != nil && (cur.Login == nil || cur.Login.State != next.Login.State) {
					p.Set(ctx, s.stateKey(next.Login.State), id, ttl)
				}
				if next.Ended {
					p.ZRem(ctx, s.ownerKey(cur.Owner), id)
				}
				if next.Ended && !cur.Ended {
					signInEndedScript.Eval(ctx, p, []string{s.endedKey(cur.Owner)}, cur.Expires.UnixMilli(), id, ttl.Milliseconds())
				}
				return nil
			})
			return err
		}, k)
		switch {
		case fnErr != nil:
			return fnErr
		case errors.Is(err, gateway.ErrNoSuchSignIn):
			return err
		case err != redis.TxFailedErr:
			return unavailable(err)
		}
	}
	return errors.New("a sign-in kept changing under this update; try again")
}
