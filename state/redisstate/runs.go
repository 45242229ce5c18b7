package redisstate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/sandboxrt/sandbox/runs"
)

// RunStore is runs.Store (the runs that outlive their request: tasks) on
// Redis, so tasks/get, tasks/update and tasks/cancel work on any replica.
// An owner's runs are two kinds of key under the hash tag {owner}: an index
// (a hash: run id -> its runs.Meta as JSON, in clear: state, times, sizes,
// no tool data) and one key per run holding the whole run sealed (its
// result, console lines and input requests are tool data). Every change is
// an optimistic transaction (WATCH the index and the run, read, change in
// Go, MULTI/EXEC, again on a conflict): a sealed value cannot be changed in
// Lua, and the caps need the owner's index read with the change. A sorted
// set of the owners (score: when one last started a run) lets an operator
// list every owner's runs (List) without scanning the keyspace.
type RunStore struct {
	c   *Client
	now func() time.Time
}

// RunStore returns the shared runs, with a clock (nil: time.Now).
func (c *Client) RunStore(now func() time.Time) *RunStore {
	if now == nil {
		now = time.Now
	}
	return &RunStore{c: c, now: now}
}

func (s *RunStore) ownerKey(owner string) string {
	return s.c.prefix + "runs:{" + url.QueryEscape(owner) + "}:"
}
func (s *RunStore) indexKey(owner string) string   { return s.ownerKey(owner) + "index" }
func (s *RunStore) ownersKey() string              { return s.c.prefix + "runs:owners" }
func (s *RunStore) runKey(owner, id string) string { return s.ownerKey(owner) + "run:" + id }

// keepFor is how long Redis keeps a run's key: until the run expires, with
// a margin for the replicas' clocks (runs expire by the replicas' clock;
// this only clears what a prune missed).
func (s *RunStore) keepFor(m runs.Meta) time.Duration {
	return max(m.ExpiresAt().Sub(s.now()), 0) + time.Hour
}

// retries bounds the optimistic transactions of one call.
const retries = 20

func (s *RunStore) metas(ctx context.Context, tx *redis.Tx, owner string) ([]runs.Meta, error) {
	all, err := tx.HGetAll(ctx, s.indexKey(owner)).Result()
	if err != nil {
		return nil, unavailable(err)
	}
	out := make([]runs.Meta, 0, len(all))
	for id, v := range all {
		var m runs.Meta
		if json.Unmarshal([]byte(v), &m) != nil {
			m = runs.Meta{ID: id} // broken: expired at once, pruned
		}
		out = append(out, m)
	}
	return out, nil
}

func (s *RunStore) write(ctx context.Context, p redis.Pipeliner, r runs.Run) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	m := r.Meta()
	mb, _ := json.Marshal(m)
	key := s.runKey(r.Owner, r.ID)
	p.Set(ctx, key, s.c.sealData(where(key, "run"), b), s.keepFor(m))
	p.HSet(ctx, s.indexKey(r.Owner), r.ID, mb)
	return nil
}

func (s *RunStore) transact(ctx context.Context, owner, id string, fn func(tx *redis.Tx) error) error {
	keys := []string{s.indexKey(owner)}
	if id != "" {
		keys = append(keys, s.runKey(owner, id))
	}
	for i := 0; i < retries; i++ {
		err := s.c.rdb.Watch(ctx, fn, keys...)
		if !errors.Is(err, redis.TxFailedErr) {
			return err
		}
	}
	return fmt.Errorf("redis: a run of this principal changes too often to be changed now; try again")
}

func (s *RunStore) Create(ctx context.Context, r runs.Run, limits runs.Limits) error {
	limits = limits.WithDefaults()
	err := s.transact(ctx, r.Owner, "", func(tx *redis.Tx) error {
		metas, err := s.metas(ctx, tx, r.Owner)
		if err != nil {
			return err
		}
		forget, held := runs.Prune(metas, limits, s.now())
		if err := runs.CheckLive(held, limits); err != nil {
			return err
		}
		_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			for _, id := range forget {
				p.HDel(ctx, s.indexKey(r.Owner), id)
				p.Unlink(ctx, s.runKey(r.Owner, id))
			}
			return s.write(ctx, p, r)
		})
		return unavailable(err)
	})
	if err != nil {
		return err
	}
	// Apart from the transaction (the owners' set is no owner's key): a
	// run whose owner is missing here for a moment is only not listed.
	return unavailable(s.c.rdb.ZAdd(ctx, s.ownersKey(), redis.Z{Score: float64(s.now().Unix()), Member: r.Owner}).Err())
}

// IndexOwners puts in the owners' set (List's) every principal with runs,
// once: a version before the set kept runs its List would not find. It
// returns how many owners it added (0 once done: a marker key says so).
func (s *RunStore) IndexOwners(ctx context.Context) (int, error) {
	marker := s.c.prefix + "runs:owners-indexed"
	if n, err := s.c.rdb.Exists(ctx, marker).Result(); err != nil || n == 1 {
		return 0, unavailable(err)
	}
	head, tail := s.c.prefix+"runs:{", "}:index"
	added := 0
	keys := s.c.rdb.Scan(ctx, 0, head+"*"+tail, 1000).Iterator()
	for keys.Next(ctx) {
		k := keys.Val()
		owner, err := url.QueryUnescape(strings.TrimSuffix(strings.TrimPrefix(k, head), tail))
		if err != nil || !strings.HasPrefix(k, head) || !strings.HasSuffix(k, tail) {
			continue
		}
		n, err := s.c.rdb.ZAddNX(ctx, s.ownersKey(), redis.Z{Score: float64(s.now().Unix()), Member: owner}).Result()
		if err != nil {
			return added, unavailable(err)
		}
		added += int(n)
	}
	if err := keys.Err(); err != nil {
		return added, unavailable(err)
	}
	return added, unavailable(s.c.rdb.Set(ctx, marker, "1", 0).Err())
}

// forgetOwner removes an owner from the owners' set if it started no run
// since ARGV[2] (a Create that raced the List's read keeps it).
var forgetOwner = redis.NewScript(`
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if score and tonumber(score) < tonumber(ARGV[2]) then redis.call('ZREM', KEYS[1], ARGV[1]) end
return 0`)

// listOwners bounds the owners one List reads (the most recent starters).
const listOwners = 1000

// List implements runs.Store: the owners' indexes, in one round trip; no
// run is read (the index holds what a listing shows).
func (s *RunStore) List(ctx context.Context, limit int) ([]runs.Run, error) {
	owners, err := s.c.rdb.ZRangeArgs(ctx, redis.ZRangeArgs{Key: s.ownersKey(), Start: 0, Stop: listOwners - 1, Rev: true}).Result()
	if err != nil {
		return nil, unavailable(err)
	}
	p := s.c.rdb.Pipeline()
	indexes := make([]*redis.MapStringStringCmd, len(owners))
	for i, o := range owners {
		indexes[i] = p.HGetAll(ctx, s.indexKey(o))
	}
	if _, err := p.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, unavailable(err)
	}
	now := s.now()
	var metas []runs.Meta
	ownerOf := map[string]string{}
	for i, cmd := range indexes {
		kept := 0
		for id, v := range cmd.Val() {
			var m runs.Meta
			if json.Unmarshal([]byte(v), &m) != nil || m.Expired(now) {
				continue
			}
			metas = append(metas, m)
			ownerOf[id] = owners[i]
			kept++
		}
		if kept == 0 { // every run of its gone or expired: forget the owner, unless it just started one
			_ = forgetOwner.Run(ctx, s.c.rdb, []string{s.ownersKey()}, owners[i], now.Add(-time.Minute).Unix()).Err()
		}
	}
	runs.Newest(metas)
	metas = metas[:min(len(metas), max(limit, 0))]
	out := make([]runs.Run, 0, len(metas))
	for _, m := range metas {
		out = append(out, m.Listed(ownerOf[m.ID]))
	}
	return out, nil
}

// read returns the owner's run, ErrNotFound when it is not there or expired.
func (s *RunStore) read(ctx context.Context, rd redis.Cmdable, owner, id string) (runs.Run, error) {
	key := s.runKey(owner, id)
	stored, err := rd.Get(ctx, key).Bytes()
	if errors.Is(err, redis.Nil) {
		return runs.Run{}, runs.ErrNotFound
	}
	if err != nil {
		return runs.Run{}, unavailable(err)
	}
	plain, err := s.c.openData(where(key, "run"), stored)
	if err != nil {
		return runs.Run{}, fmt.Errorf("task %s: %w", id, err)
	}
	var r runs.Run
	if err := json.Unmarshal(plain, &r); err != nil {
		return runs.Run{}, fmt.Errorf("redis holds a broken task %s: %w", id, err)
	}
	if r.Owner != owner || r.ID != id || r.Expired(s.now()) {
		return runs.Run{}, runs.ErrNotFound
	}
	return r, nil
}

func (s *RunStore) Get(ctx context.Context, owner, id string) (runs.Run, error) {
	return s.read(ctx, s.c.rdb, owner, id)
}

func (s *RunStore) Modify(ctx context.Context, owner, id string, change func(*runs.Run, runs.Held) error) (runs.Run, error) {
	var out runs.Run
	err := s.transact(ctx, owner, id, func(tx *redis.Tx) error {
		r, err := s.read(ctx, tx, owner, id)
		if err != nil {
			return err
		}
		out = r
		metas, err := s.metas(ctx, tx, owner)
		if err != nil {
			return err
		}
		write, err := runs.Change(&r, runs.HeldBesides(metas, id, s.now()), change)
		if err != nil || !write {
			return err
		}
		r.ID, r.Owner = id, owner // a change moves no run
		if _, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error { return s.write(ctx, p, r) }); err != nil {
			return unavailable(err)
		}
		out = r
		return nil
	})
	return out, err
}
