package redisstate

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

// SessionDirectory is frontend.SessionDirectory on Redis: one hash per MCP
// session holding its principal ("p") and what the front end keeps of it
// ("s": narrowing, log level), expiring after the idle timeout unless used,
// so a session made on one replica is served, as it is, on every other.
//
// The session's upstream tokens (TokenStore, key "t" here) live and expire
// with it: a session that idles out on every replica is never closed by
// any of them, and its tokens must not outlive it.
type SessionDirectory struct{ c *Client }

// SessionDirectory returns the replicas' shared session directory.
func (c *Client) SessionDirectory() *SessionDirectory { return &SessionDirectory{c: c} }

func (d *SessionDirectory) key(id string) string { return d.c.key("session", id) }

// claimScript records a new session; an id already taken is left alone (ids
// are random: a collision is someone replaying one).
var claimScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'p', ARGV[1], 's', '', 't', KEYS[2])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return 1`)

func (d *SessionDirectory) Claim(ctx context.Context, id, principal string, idle time.Duration) error {
	keys := []string{d.key(id), d.c.sessionTokensKey(principal, id)}
	return unavailable(claimScript.Run(ctx, d.c.rdb, keys, principal, idle.Milliseconds()).Err())
}

// lookupScript reads a session and keeps it alive for another idle period.
var lookupScript = redis.NewScript(`
local v = redis.call('HMGET', KEYS[1], 'p', 's', 't')
if not v[1] then return false end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
if v[3] then redis.call('PEXPIRE', v[3], ARGV[1]) end
return {v[1], v[2] or ''}`)

func (d *SessionDirectory) Lookup(ctx context.Context, id string, idle time.Duration) (principal string, state []byte, ok bool, err error) {
	v, err := lookupScript.Run(ctx, d.c.rdb, []string{d.key(id)}, idle.Milliseconds()).StringSlice()
	if err == redis.Nil {
		return "", nil, false, nil
	}
	if err != nil {
		return "", nil, false, unavailable(err)
	}
	if len(v) != 2 {
		return "", nil, false, nil
	}
	return v[0], []byte(v[1]), true, nil
}

// saveScript replaces a session's state if the session is principal's.
var saveScript = redis.NewScript(`
if redis.call('HGET', KEYS[1], 'p') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 's', ARGV[2])
return 1`)

func (d *SessionDirectory) Save(ctx context.Context, id, principal string, state []byte) error {
	return unavailable(saveScript.Run(ctx, d.c.rdb, []string{d.key(id)}, principal, state).Err())
}

// releaseScript deletes a session if it is principal's.
var releaseScript = redis.NewScript(`
if redis.call('HGET', KEYS[1], 'p') == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`)

func (d *SessionDirectory) Release(ctx context.Context, id, principal string) error {
	return unavailable(releaseScript.Run(ctx, d.c.rdb, []string{d.key(id)}, principal).Err())
}
