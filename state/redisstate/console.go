package redisstate

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// ConsoleRevocations are the operator console's signed-out sessions
// (console.Revocations) in Redis, so a sign-out on one replica ends the
// cookie on every one. A revocation is one key holding nothing, under the
// session's id (random, no user data), which Redis expires when the cookie
// would have ended by itself: the keys are bounded by the sign-outs of one
// cookie life.
type ConsoleRevocations struct{ c *Client }

// ConsoleRevocations returns the console's shared sign-outs.
func (c *Client) ConsoleRevocations() *ConsoleRevocations { return &ConsoleRevocations{c: c} }

func (r *ConsoleRevocations) key(id string) string { return r.c.key("console", "revoked", id) }

// Revoke records that session id is signed out until until.
func (r *ConsoleRevocations) Revoke(ctx context.Context, id string, until time.Time) error {
	ttl := time.Until(until)
	if ttl <= 0 {
		return nil // the cookie has ended already
	}
	return unavailable(r.c.rdb.Set(ctx, r.key(id), "", ttl).Err())
}

// Revoked reports whether session id was signed out (issued is not needed
// here: nothing is ever forgotten early).
func (r *ConsoleRevocations) Revoked(ctx context.Context, id string, _ time.Time) (bool, error) {
	err := r.c.rdb.Get(ctx, r.key(id)).Err()
	if errors.Is(err, redis.Nil) {
		return false, nil
	}
	return err == nil, unavailable(err)
}
