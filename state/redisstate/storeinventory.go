package redisstate

import (
	"bytes"
	"context"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/sandboxrt/sandbox/codemode"
)

// Store is a codemode.StoreInventory too: the operator console lists whose
// values there are, their keys, sizes and expiry (never the values) from
// the same keys the scripts keep.

// Principals lists the principals that keep values: those with a values
// hash under this client's prefix (a hash whose values all expired may
// still be listed until a write purges it; Entries then lists nothing).
func (s *Store) Principals(ctx context.Context) ([]string, error) {
	head := s.c.prefix + "store:{"
	var out []string
	keys := s.c.rdb.Scan(ctx, 0, globEscape(head)+"*}:values", 1000).Iterator()
	for keys.Next(ctx) {
		escaped := strings.TrimSuffix(strings.TrimPrefix(keys.Val(), head), "}:values")
		if p, err := url.QueryUnescape(escaped); err == nil {
			out = append(out, p)
		}
	}
	if err := keys.Err(); err != nil {
		return nil, unavailable(err)
	}
	sort.Strings(out)
	return out, nil
}

// Entries lists a principal's live values by scope and key, with the size
// each was stored at (before sealing) and its expiry.
func (s *Store) Entries(ctx context.Context, principal string) ([]codemode.StoreEntry, error) {
	k := s.keys(codemode.StoreScope{Principal: principal})
	values, err := s.c.rdb.HGetAll(ctx, k[0]).Result()
	if err != nil {
		return nil, unavailable(err)
	}
	expiries, err := s.c.rdb.ZRangeWithScores(ctx, k[2], 0, -1).Result()
	if err != nil {
		return nil, unavailable(err)
	}
	expires := map[string]int64{}
	for _, z := range expiries {
		f, _ := z.Member.(string)
		expires[f] = int64(z.Score)
	}
	now := s.now().UnixMilli()
	out := []codemode.StoreEntry{}
	for f, v := range values {
		session, key, ok := strings.Cut(f, "\x00")
		if !ok {
			continue
		}
		e := codemode.StoreEntry{Scope: codemode.StoreScope{Principal: principal, Session: session}, Key: key, Bytes: len(v)}
		if bytes.HasPrefix([]byte(v), []byte(sealedPrefix)) {
			e.Bytes -= sealedOverhead
		}
		if ms, ok := expires[f]; ok && ms > 0 {
			if ms <= now {
				continue // expired, not yet purged
			}
			e.Expires = time.UnixMilli(ms)
		}
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Scope.Session != out[j].Scope.Session {
			return out[i].Scope.Session < out[j].Scope.Session
		}
		return out[i].Key < out[j].Key
	})
	return out, nil
}

var _ codemode.StoreInventory = (*Store)(nil)
