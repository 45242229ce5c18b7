package redisstate

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/sandboxrt/sandbox/gateway/frontend"
)

// SessionDirectory is frontend.SessionDirectory on Redis: one hash per MCP
// session holding its principal ("p") and the parts of what the front end
// keeps of it ("s:<part>": narrowing, log level; one field each, so two
// replicas saving different parts at once lose neither), expiring after
// the idle timeout unless its principal uses it, so a session made on one
// replica is served, as it is, on every other.
//
// The session's upstream tokens (TokenStore, key "t" here) live and expire
// with it: a session that idles out on every replica is never closed by
// any of them, and its tokens must not outlive it; a released session's go
// at once.
type SessionDirectory struct{ c *Client }

// SessionDirectory returns the replicas' shared session directory.
func (c *Client) SessionDirectory() *SessionDirectory { return &SessionDirectory{c: c} }

func (d *SessionDirectory) key(id string) string { return d.c.key("session", id) }

// statePrefix marks the hash fields that hold parts of a session's state.
const statePrefix = "s:"

// claimScript records a new session; an id already taken is left alone (ids
// are random: a collision is someone replaying one).
var claimScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'p', ARGV[1], 't', KEYS[2])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return 1`)

func (d *SessionDirectory) Claim(ctx context.Context, id, principal string, idle time.Duration) error {
	keys := []string{d.key(id), d.c.sessionTokensKey(principal, id)}
	return unavailable(claimScript.Run(ctx, d.c.rdb, keys, principal, idle.Milliseconds()).Err())
}

// lookupScript reads a session; used by its principal (only), it is kept
// alive, with its tokens, for another idle period.
var lookupScript = redis.NewScript(`
local v = redis.call('HGETALL', KEYS[1])
if #v == 0 then return false end
local owner, tokens
for i = 1, #v, 2 do
  if v[i] == 'p' then owner = v[i+1] elseif v[i] == 't' then tokens = v[i+1] end
end
if owner == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  if tokens then redis.call('PEXPIRE', tokens, ARGV[2]) end
end
return v`)

func (d *SessionDirectory) Lookup(ctx context.Context, id, principal string, idle time.Duration) (string, map[string][]byte, bool, error) {
	v, err := lookupScript.Run(ctx, d.c.rdb, []string{d.key(id)}, principal, idle.Milliseconds()).StringSlice()
	if err == redis.Nil {
		return "", nil, false, nil
	}
	if err != nil {
		return "", nil, false, unavailable(err)
	}
	owner, state := "", map[string][]byte{}
	for i := 0; i+1 < len(v); i += 2 {
		switch {
		case v[i] == "p":
			owner = v[i+1]
		case len(v[i]) > len(statePrefix) && v[i][:len(statePrefix)] == statePrefix:
			state[v[i][len(statePrefix):]] = []byte(v[i+1])
		}
	}
	if owner == "" {
		return "", nil, false, nil
	}
	return owner, state, true, nil
}

// saveScript sets one part of a session's state if the session is
// principal's.
var saveScript = redis.NewScript(`
if redis.call('HGET', KEYS[1], 'p') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], ARGV[2], ARGV[3])
return 1`)

func (d *SessionDirectory) Save(ctx context.Context, id, principal, part string, value []byte) error {
	return unavailable(saveScript.Run(ctx, d.c.rdb, []string{d.key(id)}, principal, statePrefix+part, value).Err())
}

// releaseScript deletes a session, and its tokens, if it is principal's.
var releaseScript = redis.NewScript(`
if redis.call('HGET', KEYS[1], 'p') ~= ARGV[1] then return 0 end
local tokens = redis.call('HGET', KEYS[1], 't')
if tokens then redis.call('DEL', tokens) end
return redis.call('DEL', KEYS[1])`)

func (d *SessionDirectory) Release(ctx context.Context, id, principal string) error {
	return unavailable(releaseScript.Run(ctx, d.c.rdb, []string{d.key(id)}, principal).Err())
}

var (
	_ frontend.SessionDirectory = (*SessionDirectory)(nil)
	_ frontend.CallStreamStore  = (*CallStreams)(nil)
)
