package redisstate

import (
	"context"
	"time"
)

// QuestionLedger is gateway.QuestionLedger on Redis: a taken question is a
// key set with NX and the TTL, given back by deleting it, so one approval
// runs its call once whichever replicas the copies of its requestState
// reach. The key holds nothing but its name (a random id): no tool data.
type QuestionLedger struct{ c *Client }

// QuestionLedger returns the shared ledger of answered approval questions.
func (c *Client) QuestionLedger() *QuestionLedger { return &QuestionLedger{c: c} }

func (l *QuestionLedger) Take(ctx context.Context, id string, ttl time.Duration) (bool, error) {
	ok, err := l.c.rdb.SetNX(ctx, l.c.key("question", id), "1", ttl).Result()
	if err != nil {
		return false, unavailable(err)
	}
	return ok, nil
}

func (l *QuestionLedger) Release(ctx context.Context, id string) error {
	return unavailable(l.c.rdb.Del(ctx, l.c.key("question", id)).Err())
}
