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
	return s.c.key("tokens", scope.Principal, string(scope.Session))
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
	return unavailable(s.c.rdb.HSet(ctx, h, server, s.c.seal(h+"/"+server, token)).Err())
}

func (s *TokenStore) Forget(ctx context.Context, scope gateway.TokenScope) error {
	return unavailable(s.c.rdb.Del(ctx, s.hash(scope)).Err())
}
