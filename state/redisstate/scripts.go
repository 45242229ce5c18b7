package redisstate

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/sandboxrt/sandbox/codemode"
)

// ScriptStore is codemode.ScriptStore on Redis, so a script saved through
// one replica runs on every other. An owner's scripts are one hash (name ->
// JSON, sealed: sealData, bound to the hash and the name) beside a hash of
// their sizes; shared scripts are members of one set ("owner NUL name");
// owners with scripts, another set. Put checks the owner's count and bytes
// in the same Lua script that writes.
type ScriptStore struct{ c *Client }

// ScriptStore returns the shared saved scripts.
func (c *Client) ScriptStore() *ScriptStore { return &ScriptStore{c: c} }

func (s *ScriptStore) ownerKeys(owner string) (scripts, sizes string) {
	base := s.c.prefix + "scripts:{" + url.QueryEscape(owner) + "}:"
	return base + "code", base + "size"
}

func (s *ScriptStore) sharedKey() string { return s.c.prefix + "scripts:shared" }
func (s *ScriptStore) ownersKey() string { return s.c.prefix + "scripts:owners" }

// putScript: KEYS scripts, sizes (one owner's: one Cluster slot); ARGV
// name, JSON, size, max count, max bytes. It returns {"", total} or the
// limit refused: {"count", n} or {"bytes", total}. A replaced script keeps
// its sharing (the shared set is untouched).
var putScript = redis.NewScript(`
local exists = redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1
if not exists and redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[4]) then
  return {'count', redis.call('HLEN', KEYS[1])}
end
local total = tonumber(ARGV[3])
local sizes = redis.call('HGETALL', KEYS[2])
for i = 1, #sizes, 2 do
  if sizes[i] ~= ARGV[1] then total = total + tonumber(sizes[i + 1]) end
end
if total > tonumber(ARGV[5]) then return {'bytes', total} end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
return {'', total}
`)

func (s *ScriptStore) Put(ctx context.Context, sc codemode.Script) error {
	sc.Shared = false // kept in the shared set, not in the script
	data, err := json.Marshal(sc)
	if err != nil {
		return err
	}
	scripts, sizes := s.ownerKeys(sc.Owner)
	sealed := s.c.sealData(where(scripts, sc.Name), data)
	res, err := putScript.Run(ctx, s.c.rdb, []string{scripts, sizes}, sc.Name, sealed, sc.Size(),
		codemode.MaxScriptsPerPrincipal, codemode.MaxScriptBytesPerPrincipal).Slice()
	if err != nil {
		return unavailable(err)
	}
	switch res[0] {
	case "count":
		return codemode.TooManyScripts()
	case "bytes":
		return codemode.ScriptsTooLarge(int(res[1].(int64)))
	}
	// The owners set only lists owners for All: an owner left in it with
	// no scripts lists none.
	return unavailable(s.c.rdb.SAdd(ctx, s.ownersKey(), sc.Owner).Err())
}

func sharedMember(owner, name string) string { return owner + "\x00" + name }

func (s *ScriptStore) ownerScripts(ctx context.Context, owner string, shared map[string]bool) ([]codemode.Script, error) {
	scripts, _ := s.ownerKeys(owner)
	all, err := s.c.rdb.HGetAll(ctx, scripts).Result()
	if err != nil {
		return nil, unavailable(err)
	}
	out := make([]codemode.Script, 0, len(all))
	for name, stored := range all {
		sc, err := s.decode(scripts, name, stored)
		if err != nil {
			return nil, err
		}
		sc.Shared = shared[sharedMember(sc.Owner, sc.Name)]
		out = append(out, sc)
	}
	return out, nil
}

// decode reads the script stored under name in the hash scripts.
func (s *ScriptStore) decode(scripts, name, stored string) (codemode.Script, error) {
	var sc codemode.Script
	data, err := s.c.openData(where(scripts, name), []byte(stored))
	if err != nil {
		return sc, fmt.Errorf("saved script %q: %w", name, err)
	}
	if err := json.Unmarshal(data, &sc); err != nil {
		return sc, fmt.Errorf("saved script %q in Redis is damaged", name)
	}
	return sc, nil
}

func (s *ScriptStore) sharedSet(ctx context.Context) (map[string]bool, error) {
	members, err := s.c.rdb.SMembers(ctx, s.sharedKey()).Result()
	if err != nil {
		return nil, unavailable(err)
	}
	out := make(map[string]bool, len(members))
	for _, m := range members {
		out[m] = true
	}
	return out, nil
}

func (s *ScriptStore) All(ctx context.Context) ([]codemode.Script, error) {
	owners, err := s.c.rdb.SMembers(ctx, s.ownersKey()).Result()
	if err != nil {
		return nil, unavailable(err)
	}
	shared, err := s.sharedSet(ctx)
	if err != nil {
		return nil, err
	}
	var out []codemode.Script
	for _, o := range owners {
		scripts, err := s.ownerScripts(ctx, o, shared)
		if err != nil {
			return nil, err
		}
		out = append(out, scripts...)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Owner != out[j].Owner {
			return out[i].Owner < out[j].Owner
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

func (s *ScriptStore) Visible(ctx context.Context, principal string) ([]codemode.Script, error) {
	shared, err := s.sharedSet(ctx)
	if err != nil {
		return nil, err
	}
	byName := map[string]codemode.Script{}
	for m := range shared {
		owner, name, _ := strings.Cut(m, "\x00")
		if owner == principal {
			continue
		}
		scripts, _ := s.ownerKeys(owner)
		stored, err := s.c.rdb.HGet(ctx, scripts, name).Result()
		if err == redis.Nil {
			continue // deleted meanwhile
		}
		if err != nil {
			return nil, unavailable(err)
		}
		sc, err := s.decode(scripts, name, stored)
		if err != nil {
			continue // another's script that does not read: not offered
		}
		sc.Shared = true
		if cur, ok := byName[name]; !ok || sc.Owner < cur.Owner {
			byName[name] = sc
		}
	}
	own, err := s.ownerScripts(ctx, principal, shared)
	if err != nil {
		return nil, err
	}
	for _, sc := range own {
		byName[sc.Name] = sc // its own win the name
	}
	out := make([]codemode.Script, 0, len(byName))
	for _, sc := range byName {
		out = append(out, sc)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func (s *ScriptStore) Delete(ctx context.Context, owner, name string) (bool, error) {
	scripts, sizes := s.ownerKeys(owner)
	var n *redis.IntCmd
	_, err := s.c.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		n = p.HDel(ctx, scripts, name)
		p.HDel(ctx, sizes, name)
		p.SRem(ctx, s.sharedKey(), sharedMember(owner, name))
		return nil
	})
	if err != nil {
		return false, unavailable(err)
	}
	return n.Val() == 1, nil
}

// shareScript: KEYS the owner's scripts, the shared set; ARGV name, member,
// "1" to share. Checking that the script exists and marking it are one
// step, so a script deleted meanwhile is not marked (and a later one of
// that name not shared without the operator's say).
var shareScript = redis.NewScript(`
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return 0 end
if ARGV[3] == '1' then redis.call('SADD', KEYS[2], ARGV[2]) else redis.call('SREM', KEYS[2], ARGV[2]) end
return 1`)

func (s *ScriptStore) Share(ctx context.Context, owner, name string, shared bool) error {
	scripts, _ := s.ownerKeys(owner)
	flag := "0"
	if shared {
		flag = "1"
	}
	ok, err := shareScript.Run(ctx, s.c.rdb, []string{scripts, s.sharedKey()}, name, sharedMember(owner, name), flag).Int()
	if err != nil {
		return unavailable(err)
	}
	if ok == 0 {
		return codemode.NoSuchScript(owner, name)
	}
	return nil
}
