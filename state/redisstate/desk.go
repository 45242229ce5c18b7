package redisstate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/sandboxrt/sandbox/gateway"
)

// DeskStore is gateway.DeskStore on Redis: the approval desk every replica
// shares. Each pending approval is a key holding its JSON sealed (the
// question shows the tool's arguments), expiring at its deadline; a
// decision is a key beside it, sealed too, expiring at the same time. Two
// sorted sets by deadline index them: every approval (for the consoles'
// lists) and each principal's (for its cap). Put, Decide and Withdraw are
// scripts, so the cap holds across replicas and an approval is decided or
// withdrawn once.
type DeskStore struct {
	c   *Client
	now func() time.Time
}

// DeskStore returns the shared approval desk; now is the clock (nil:
// time.Now).
func (c *Client) DeskStore(now func() time.Time) *DeskStore {
	if now == nil {
		now = time.Now
	}
	return &DeskStore{c: c, now: now}
}

func (s *DeskStore) pendingKey(id string) string  { return s.c.key("desk", "a", id) }
func (s *DeskStore) decisionKey(id string) string { return s.c.key("desk", "d", id) }
func (s *DeskStore) indexKey() string             { return s.c.key("desk", "index") }
func (s *DeskStore) versionKey() string           { return s.c.key("desk", "version") }
func (s *DeskStore) principalKey(principal string) string {
	return s.c.key("desk", "p", principal)
}

var deskPutScript = redis.NewScript(`
-- KEYS: pending, index, principal's index, version
-- ARGV: sealed approval, deadline ms, now ms, max, id
local now = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
if redis.call('ZCARD', KEYS[3]) >= tonumber(ARGV[4]) then return 0 end
if redis.call('EXISTS', KEYS[1]) == 1 then return -1 end
local ttl = tonumber(ARGV[2]) - now
if ttl < 1 then ttl = 1 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ttl)
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[5])
redis.call('ZADD', KEYS[3], ARGV[2], ARGV[5])
if redis.call('PTTL', KEYS[3]) < ttl then redis.call('PEXPIRE', KEYS[3], ttl) end
if redis.call('PTTL', KEYS[2]) < ttl then redis.call('PEXPIRE', KEYS[2], ttl) end
redis.call('INCR', KEYS[4])
return 1`)

// deskDecideScript decides a waiting approval unless a decision came
// first: {1, decision} then; {0} when it no longer waits; {2} decided.
var deskDecideScript = redis.NewScript(`
-- KEYS: pending, decision, index, principal's index, version
-- ARGV: sealed decision, id
local d = redis.call('GET', KEYS[2])
if d then return {1, d} end
local ttl = redis.call('PTTL', KEYS[1])
if ttl <= 0 then return {0} end
redis.call('SET', KEYS[2], ARGV[1], 'PX', ttl)
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[3], ARGV[2])
redis.call('ZREM', KEYS[4], ARGV[2])
redis.call('INCR', KEYS[5])
return {2}`)

// deskWithdrawScript withdraws an approval unless it was decided: the
// decision then.
var deskWithdrawScript = redis.NewScript(`
-- KEYS: pending, decision, index, principal's index, version
-- ARGV: id
local d = redis.call('GET', KEYS[2])
if d then return d end
if redis.call('DEL', KEYS[1]) == 1 then redis.call('INCR', KEYS[5]) end
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('ZREM', KEYS[4], ARGV[1])
return false`)

func (s *DeskStore) Put(ctx context.Context, a gateway.PendingApproval, max int) error {
	if a.ID == "" {
		return errors.New("a pending approval needs an id")
	}
	data, err := json.Marshal(a)
	if err != nil {
		return err
	}
	k := s.pendingKey(a.ID)
	n, err := deskPutScript.Run(ctx, s.c.rdb, []string{k, s.indexKey(), s.principalKey(a.Principal), s.versionKey()},
		s.c.seal(k, string(data)), a.Deadline.UnixMilli(), s.now().UnixMilli(), max, a.ID).Int()
	switch {
	case err != nil:
		return unavailable(err)
	case n == 0:
		return gateway.ErrDeskFull
	case n < 0:
		return fmt.Errorf("approval %s is on the desk already", a.ID)
	}
	return nil
}

// read opens a pending approval as stored at k ("" for none).
func (s *DeskStore) read(k, sealed string) (gateway.PendingApproval, error) {
	plain, err := s.c.open(k, sealed)
	if err != nil {
		return gateway.PendingApproval{}, err
	}
	var a gateway.PendingApproval
	if err := json.Unmarshal([]byte(plain), &a); err != nil {
		return gateway.PendingApproval{}, fmt.Errorf("a pending approval in Redis is damaged: %v", err)
	}
	return a, nil
}

func (s *DeskStore) Pending(ctx context.Context) ([]gateway.PendingApproval, error) {
	now := strconv.FormatInt(s.now().UnixMilli(), 10)
	ids, err := s.c.rdb.ZRangeArgs(ctx, redis.ZRangeArgs{Key: s.indexKey(), Start: "(" + now, Stop: "+inf", ByScore: true}).Result()
	if err != nil || len(ids) == 0 {
		return nil, unavailable(err)
	}
	keys := make([]string, len(ids))
	for i, id := range ids {
		keys[i] = s.pendingKey(id)
	}
	vals, err := s.c.rdb.MGet(ctx, keys...).Result()
	if err != nil {
		return nil, unavailable(err)
	}
	out := make([]gateway.PendingApproval, 0, len(vals))
	for i, v := range vals {
		sealed, ok := v.(string)
		if !ok {
			continue // decided or withdrawn since
		}
		a, err := s.read(keys[i], sealed)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

func (s *DeskStore) Get(ctx context.Context, id string) (gateway.PendingApproval, bool, error) {
	k := s.pendingKey(id)
	sealed, err := s.c.rdb.Get(ctx, k).Result()
	if err == redis.Nil {
		return gateway.PendingApproval{}, false, nil
	}
	if err != nil {
		return gateway.PendingApproval{}, false, unavailable(err)
	}
	a, err := s.read(k, sealed)
	if err != nil {
		return gateway.PendingApproval{}, false, err
	}
	return a, s.now().Before(a.Deadline), nil
}

func (s *DeskStore) decision(k, sealed string) (*gateway.DeskDecision, error) {
	plain, err := s.c.open(k, sealed)
	if err != nil {
		return nil, err
	}
	var d gateway.DeskDecision
	if err := json.Unmarshal([]byte(plain), &d); err != nil {
		return nil, fmt.Errorf("a decision in Redis is damaged: %v", err)
	}
	return &d, nil
}

func (s *DeskStore) Decide(ctx context.Context, id string, d gateway.DeskDecision) error {
	// The principal's index is named by the approval's principal, which is
	// sealed: read it first; the script checks it still waits.
	a, ok, err := s.Get(ctx, id)
	if err != nil {
		return err
	}
	if !ok {
		if prior, err := s.Decision(ctx, id); err != nil || prior != nil {
			if err != nil {
				return err
			}
			return &gateway.DecidedError{Decision: *prior}
		}
		return gateway.ErrNoSuchApproval
	}
	d.Of = a.Principal
	data, err := json.Marshal(d)
	if err != nil {
		return err
	}
	dk := s.decisionKey(id)
	res, err := deskDecideScript.Run(ctx, s.c.rdb, []string{s.pendingKey(id), dk, s.indexKey(), s.principalKey(a.Principal), s.versionKey()},
		s.c.seal(dk, string(data)), id).Slice()
	if err != nil {
		return unavailable(err)
	}
	switch res[0].(int64) {
	case 0:
		return gateway.ErrNoSuchApproval
	case 1:
		prior, err := s.decision(dk, res[1].(string))
		if err != nil {
			return err
		}
		return &gateway.DecidedError{Decision: *prior}
	}
	return nil
}

func (s *DeskStore) Decision(ctx context.Context, id string) (*gateway.DeskDecision, error) {
	k := s.decisionKey(id)
	sealed, err := s.c.rdb.Get(ctx, k).Result()
	if err == redis.Nil {
		return nil, nil
	}
	if err != nil {
		return nil, unavailable(err)
	}
	return s.decision(k, sealed)
}

func (s *DeskStore) Withdraw(ctx context.Context, id string) (*gateway.DeskDecision, error) {
	principal := ""
	k := s.pendingKey(id)
	if sealed, err := s.c.rdb.Get(ctx, k).Result(); err == nil {
		if a, err := s.read(k, sealed); err == nil {
			principal = a.Principal
		}
	} else if err != redis.Nil {
		return nil, unavailable(err)
	}
	dk := s.decisionKey(id)
	sealed, err := deskWithdrawScript.Run(ctx, s.c.rdb, []string{k, dk, s.indexKey(), s.principalKey(principal), s.versionKey()}, id).Text()
	if err == redis.Nil {
		return nil, nil
	}
	if err != nil {
		return nil, unavailable(err)
	}
	return s.decision(dk, sealed)
}

func (s *DeskStore) Version(ctx context.Context) (uint64, error) {
	v, err := s.c.rdb.Get(ctx, s.versionKey()).Uint64()
	if err == redis.Nil {
		return 0, nil
	}
	return v, unavailable(err)
}
