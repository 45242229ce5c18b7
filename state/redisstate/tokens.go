package redisstate

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/sandboxrt/sandbox/gateway"
)

// TokenStore is gateway.TokenStore on Redis: a scope's tokens are one hash
// (server -> token, encrypted), so a session's token set on one replica
// serves its calls on every other.
type TokenStore struct{ c *Client }

// TokenStore returns the shared session tokens.
func (c *Client) TokenStore() *TokenStore { return &TokenStore{c: c} }

func (s *TokenStore) hash(scope gateway.TokenScope) string {
	return s.c.sessionTokensKey(scope.Principal, string(scope.Session))
}

// sessionTokensKey is the hash of one scope's tokens; a session's expires
// with the session (SessionDirectory).
func (c *Client) sessionTokensKey(principal, session string) string {
	return c.key("tokens", principal, session)
}

func (s *TokenStore) Token(ctx context.Context, scope gateway.TokenScope, server string) (string, bool, error) {
	h := s.hash(scope)
	sealed, err := s.c.rdb.HGet(ctx, h, server).Result()
	if err == redis.Nil {
		return "", false, nil
	}
	if err != nil {
		return "", false, unavailable(err)
	}
	tok, err := s.c.open(h+"/"+server, sealed)
	if err != nil {
		return "", false, err
	}
	return tok, tok != "", nil
}

func (s *TokenStore) SetToken(ctx context.Context, scope gateway.TokenScope, server, token string) error {
	h := s.hash(scope)
	if token == "" {
		return unavailable(s.c.rdb.HDel(ctx, h, server).Err())
	}
	sealed := s.c.seal(h+"/"+server, token)
	if scope.Session == "" {
		return unavailable(s.c.rdb.HSet(ctx, h, server, sealed).Err())
	}
	// A session's tokens expire with its directory entry, which keeps
	// them alive from then on (SessionDirectory.Lookup).
	return unavailable(setSessionTokenScript.Run(ctx, s.c.rdb, []string{h, s.c.key("session", string(scope.Session))}, server, sealed).Err())
}

var setSessionTokenScript = redis.NewScript(`
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
local ttl = redis.call('PTTL', KEYS[2])
if ttl > 0 then redis.call('PEXPIRE', KEYS[1], ttl) end
return 1`)

func (s *TokenStore) Forget(ctx context.Context, scope gateway.TokenScope) error {
	return unavailable(s.c.rdb.Del(ctx, s.hash(scope)).Err())
}
