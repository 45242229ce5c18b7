package redisstate

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

// SessionDirectory is frontend.SessionDirectory on Redis: one key per MCP
// session holding its principal, expiring after the idle timeout unless
// used, so a session made on one replica is served on every other.
type SessionDirectory struct{ c *Client }

// SessionDirectory returns the replicas' shared session directory.
func (c *Client) SessionDirectory() *SessionDirectory { return &SessionDirectory{c: c} }

func (d *SessionDirectory) key(id string) string { return d.c.key("session", id) }

func (d *SessionDirectory) Claim(ctx context.Context, id, principal string, idle time.Duration) error {
	return unavailable(d.c.rdb.Set(ctx, d.key(id), principal, idle).Err())
}

func (d *SessionDirectory) Owner(ctx context.Context, id string, idle time.Duration) (string, bool, error) {
	p, err := d.c.rdb.GetEx(ctx, d.key(id), idle).Result()
	if err == redis.Nil {
		return "", false, nil
	}
	if err != nil {
		return "", false, unavailable(err)
	}
	return p, true, nil
}

// releaseScript deletes a session's entry if it is principal's.
var releaseScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`)

func (d *SessionDirectory) Release(ctx context.Context, id, principal string) error {
	err := releaseScript.Run(ctx, d.c.rdb, []string{d.key(id)}, principal).Err()
	if err == redis.Nil {
		return nil
	}
	return unavailable(err)
}
