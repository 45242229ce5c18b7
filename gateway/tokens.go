package gateway

import "sync"

// SessionID identifies a caller of the gateway: one MCP client session on the
// front end, or one code-mode run. Per-session state (tokens, the subset of
// servers a session sees, where sampling requests go) is keyed by it.
type SessionID string

// DefaultSession is the session of callers that have none of their own (the
// CLI). Its tokens are also used for the gateway's own connection-level
// requests (initialize, tools/list, health checks) to servers that need a
// session token.
const DefaultSession SessionID = "default"

// TokenStore holds the bearer tokens that sessions present to HTTP upstreams
// marked "sessionToken": true. Tokens are looked up per call and sent only in
// the Authorization header of that upstream request; they are never read
// from the environment during a call and never logged.
type TokenStore interface {
	// Token returns the session's token for a server.
	Token(session SessionID, server string) (string, bool)
	// SetToken stores (or, with "", removes) the session's token for a server.
	SetToken(session SessionID, server, token string)
	// ForgetSession drops every token of a session that ended.
	ForgetSession(session SessionID)
}

// MemoryTokenStore is the default TokenStore: tokens live in memory only.
type MemoryTokenStore struct {
	mu     sync.RWMutex
	tokens map[SessionID]map[string]string
}

// NewMemoryTokenStore returns an empty in-memory token store.
func NewMemoryTokenStore() *MemoryTokenStore {
	return &MemoryTokenStore{tokens: map[SessionID]map[string]string{}}
}

func (m *MemoryTokenStore) Token(session SessionID, server string) (string, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	t, ok := m.tokens[session][server]
	return t, ok && t != ""
}

func (m *MemoryTokenStore) SetToken(session SessionID, server, token string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if token == "" {
		delete(m.tokens[session], server)
		return
	}
	if m.tokens[session] == nil {
		m.tokens[session] = map[string]string{}
	}
	m.tokens[session][server] = token
}

func (m *MemoryTokenStore) ForgetSession(session SessionID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.tokens, session)
}
