package gateway

import (
	"context"
	"sync"

	"github.com/sandboxrt/sandbox/auth"
)

// TokenScope says whose upstream token it is: one session's (Session set), or
// every session of a principal (Session empty). The operator's principal-wide
// tokens (--token-env) also serve the gateway's own connection-level
// requests.
type TokenScope struct {
	Principal string // auth.Principal.Key()
	Session   auth.SessionID
}

func sessionScope(c auth.Caller) TokenScope {
	return TokenScope{Principal: c.Principal.Key(), Session: c.Session}
}

func principalScope(p auth.Principal) TokenScope { return TokenScope{Principal: p.Key()} }

// operatorTokens is the scope of the operator's own tokens.
func operatorTokens() TokenScope { return principalScope(auth.Operator()) }

// TokenStore holds the bearer tokens that callers present to HTTP upstreams
// marked "sessionToken": true. Tokens are looked up per call and sent only in
// the Authorization header of that upstream request; they are never read
// from the environment during a call and never logged.
//
// A store shared by replicas (Redis) implements the same interface; every
// implementation passes state/statetest.TestTokenStore.
type TokenStore interface {
	// Token returns the scope's token for a server (ok false: none).
	Token(ctx context.Context, scope TokenScope, server string) (token string, ok bool, err error)
	// SetToken stores (or, with "", removes) the scope's token for a server.
	SetToken(ctx context.Context, scope TokenScope, server, token string) error
	// Forget drops every token of a scope (a session that ended).
	Forget(ctx context.Context, scope TokenScope) error
}

// MemoryTokenStore is the default TokenStore: tokens live in memory only.
type MemoryTokenStore struct {
	mu     sync.RWMutex
	tokens map[TokenScope]map[string]string
}

// NewMemoryTokenStore returns an empty in-memory token store.
func NewMemoryTokenStore() *MemoryTokenStore {
	return &MemoryTokenStore{tokens: map[TokenScope]map[string]string{}}
}

func (m *MemoryTokenStore) Token(_ context.Context, scope TokenScope, server string) (string, bool, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	t, ok := m.tokens[scope][server]
	return t, ok && t != "", nil
}

func (m *MemoryTokenStore) SetToken(_ context.Context, scope TokenScope, server, token string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if token == "" {
		delete(m.tokens[scope], server)
		if len(m.tokens[scope]) == 0 {
			delete(m.tokens, scope)
		}
		return nil
	}
	if m.tokens[scope] == nil {
		m.tokens[scope] = map[string]string{}
	}
	m.tokens[scope][server] = token
	return nil
}

func (m *MemoryTokenStore) Forget(_ context.Context, scope TokenScope) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.tokens, scope)
	return nil
}

// tokenFor finds the token a caller's call to a server carries: a
// sessionless request's own (WithRequestTokens), else the session's own,
// else its principal's.
func (g *Gateway) tokenFor(ctx context.Context, c auth.Caller, server string) (string, bool, error) {
	if !c.HasSession() {
		tokens, _ := ctx.Value(requestTokensKey{}).(map[string]string)
		if t, ok := tokens[server]; ok {
			return t, true, nil
		}
	}
	if c.HasSession() {
		if t, ok, err := g.tokens.Token(ctx, sessionScope(c), server); err != nil || ok {
			return t, ok, err
		}
	}
	return g.tokens.Token(ctx, principalScope(c.Principal), server)
}

// SetOperatorToken stores the operator's token for a server: it serves the
// operator's calls (the CLI, a stdio client) and the gateway's own
// connection-level requests (initialize, listing, health checks).
func (g *Gateway) SetOperatorToken(ctx context.Context, server, token string) error {
	g.addSecrets(token) // redacted from whatever any call hands back
	return g.tokens.SetToken(ctx, operatorTokens(), NormalizeName(server), token)
}
