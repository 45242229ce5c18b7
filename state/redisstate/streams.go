package redisstate

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/sandboxrt/sandbox/gateway/frontend"
)

// CallStreams is frontend.CallStreamStore on Redis: per handed-over call
// stream a hash (session, principal, complete), a list of its events in
// order (each sealed: sealData, bound to the list and its place in it, so
// events cannot be reordered or moved to another stream), and a lease key
// the replica running the call renews. All expire a few minutes after the
// last news, past the longest a detached call runs.
type CallStreams struct{ c *Client }

// CallStreams returns the call streams replicas hand each other.
func (c *Client) CallStreams() *CallStreams { return &CallStreams{c: c} }

// streamTTL outlives a detached call (frontend's detachedLimit, 2 min) and
// the minute a finished stream is kept for a late resume.
const streamTTL = 4 * time.Minute

func (s *CallStreams) keys(id string) []string {
	return []string{s.c.key("stream", id), s.c.key("stream", id, "events"), s.c.key("stream", id, "lease")}
}

// appendScript adds the events the list does not have yet (a retried
// append adds nothing twice), refuses a stream of another principal, and
// marks the stream complete only when no event is missing.
var appendScript = redis.NewScript(`
local p = redis.call('HGET', KEYS[1], 'p')
if p and p ~= ARGV[2] then return redis.error_reply('a call stream of another principal') end
if not p then redis.call('HSET', KEYS[1], 's', ARGV[1], 'p', ARGV[2]) end
local n = redis.call('LLEN', KEYS[2])
local first = tonumber(ARGV[6])
for i = 7, #ARGV do
  if first + i - 7 == n then
    redis.call('RPUSH', KEYS[2], ARGV[i])
    n = n + 1
  end
end
if ARGV[3] == '1' and (#ARGV == 6 or n == first + #ARGV - 6) then redis.call('HSET', KEYS[1], 'done', '1') end
redis.call('SET', KEYS[3], '1', 'PX', ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
redis.call('PEXPIRE', KEYS[2], ARGV[5])
return n`)

func (s *CallStreams) Append(ctx context.Context, id string, info frontend.StreamInfo, events []frontend.StreamEvent, complete bool, lease time.Duration) error {
	first := 0
	if len(events) > 0 {
		first = events[0].Seq
	}
	done := "0"
	if complete {
		done = "1"
	}
	k := s.keys(id)
	args := []any{info.Session, info.Principal, done, lease.Milliseconds(), streamTTL.Milliseconds(), first}
	for _, ev := range events {
		// Sealed to its list and its sequence number, its index there.
		args = append(args, s.c.sealData(where(k[1], strconv.Itoa(ev.Seq)), ev.Data))
	}
	return unavailable(appendScript.Run(ctx, s.c.rdb, k, args...).Err())
}

func (s *CallStreams) Read(ctx context.Context, id string, from int) (frontend.StreamInfo, []frontend.StreamEvent, bool, bool, bool, error) {
	k := s.keys(id)
	var meta *redis.SliceCmd
	var evs *redis.StringSliceCmd
	var lease *redis.IntCmd
	_, err := s.c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		meta = p.HMGet(ctx, k[0], "s", "p", "done")
		evs = p.LRange(ctx, k[1], int64(from), -1)
		lease = p.Exists(ctx, k[2])
		return nil
	})
	if err != nil && err != redis.Nil {
		return frontend.StreamInfo{}, nil, false, false, false, unavailable(err)
	}
	m := meta.Val()
	session, _ := m[0].(string)
	principal, ok := m[1].(string)
	if !ok {
		return frontend.StreamInfo{}, nil, false, false, false, nil
	}
	done, _ := m[2].(string)
	var out []frontend.StreamEvent
	for i, stored := range evs.Val() {
		data, err := s.c.openData(where(k[1], strconv.Itoa(from+i)), []byte(stored))
		if err != nil {
			return frontend.StreamInfo{}, nil, false, false, false, fmt.Errorf("call stream %s: %w", id, err)
		}
		out = append(out, frontend.StreamEvent{Seq: from + i, Data: data})
	}
	return frontend.StreamInfo{Session: session, Principal: principal}, out, done == "1", lease.Val() == 1, true, nil
}
