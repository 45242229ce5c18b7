package gateway

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/sandboxrt/sandbox/auth"
)

// Every piece of state the gateway keeps per caller session lives here, in
// one registry with one clean-up path (Session.Close): the client it relays
// upstream requests to, its log level, its resource subscriptions, the
// servers it narrowed itself to, and its upstream tokens (in the TokenStore,
// forgotten on close). The calls in flight per caller, which attribute an
// upstream's requests to the right client, are counted here too.

// sessionState is one open session.
type sessionState struct {
	caller auth.Caller
	peer   Peer

	// guarded by sessions.mu
	logLevel string
	subs     map[string]string // subscribed resource URIs, each to the server it resolved to for the session
	servers  map[string]bool   // the servers it narrowed itself to; nil: all
}

type sessions struct {
	mu   sync.Mutex
	open map[auth.SessionID]*sessionState
	// inflight counts calls in flight per server and caller key (a session,
	// or one sessionless call), for attributing upstream requests.
	inflight map[string]map[string]*inflightCaller
}

// inflightCaller is one caller's calls in flight on a server.
type inflightCaller struct {
	n int
	// ctx is the context of the caller's call while it has exactly one in
	// flight: what the call has to ask through (a task's InputAsker, a
	// waiting run's Peer), for the upstream requests of a transport that
	// loses the call's context (stdio, in-process).
	ctx context.Context
}

func newSessions() *sessions {
	return &sessions{open: map[auth.SessionID]*sessionState{}, inflight: map[string]map[string]*inflightCaller{}}
}

// Session is an open session's handle; Close ends it.
type Session struct {
	g     *Gateway
	state *sessionState
	once  sync.Once
}

// OpenSession registers a caller's session. p (may be nil) is the client that
// upstream requests made while serving the session's calls are relayed to,
// and that receives its notifications. Opening an id that is already open
// replaces the old session's client (a reconnect) and keeps its state.
func (g *Gateway) OpenSession(caller auth.Caller, p Peer) *Session {
	if !caller.HasSession() {
		panic("gateway: OpenSession needs a caller with a session")
	}
	g.sessions.mu.Lock()
	st := g.sessions.open[caller.Session]
	if st == nil || st.caller.Principal.Key() != caller.Principal.Key() {
		st = &sessionState{caller: caller, subs: map[string]string{}}
		g.sessions.open[caller.Session] = st
	}
	st.peer = p
	g.sessions.mu.Unlock()
	return &Session{g: g, state: st}
}

// Caller returns the session's caller.
func (s *Session) Caller() auth.Caller { return s.state.caller }

// Close ends the session: its client is detached, its subscriptions are
// dropped (upstream too, when it was the last subscriber), and its tokens
// are forgotten. Closing twice is a no-op.
func (s *Session) Close() { s.end(true) }

// Detach ends this process's copy of a session that lives on in other
// replicas (it idled out here): as Close, but its tokens, which replicas
// share, are kept for them.
func (s *Session) Detach() { s.end(false) }

func (s *Session) end(forgetTokens bool) {
	s.once.Do(func() {
		g := s.g
		g.sessions.mu.Lock()
		if g.sessions.open[s.state.caller.Session] != s.state {
			g.sessions.mu.Unlock()
			return
		}
		delete(g.sessions.open, s.state.caller.Session)
		subs := s.state.subs
		g.sessions.mu.Unlock()
		g.unsubscribeOrphans(subs)
		if !forgetTokens {
			return
		}
		if err := g.tokens.Forget(context.Background(), sessionScope(s.state.caller)); err != nil {
			g.log.Warn("forgetting a closed session's tokens failed", "session", string(s.state.caller.Session), "error", err)
		}
	})
}

// SetToken stores (or, with "", removes) the session's own bearer token for
// a server marked "sessionToken". Tokens for other servers, and tokens over
// MaxTokenBytes, are refused: a session holds at most one token per such
// server, so what a client can make the gateway keep is bounded.
func (s *Session) SetToken(ctx context.Context, server, token string) error {
	name, err := s.g.tokenServer(server, token)
	if err != nil {
		return err
	}
	return s.g.tokens.SetToken(ctx, sessionScope(s.state.caller), name, token)
}

// SetSessionToken is Session.SetToken for a session this process does not
// hold: one re-established here from a directory replicas share (the
// front end has checked that caller owns it).
func (g *Gateway) SetSessionToken(ctx context.Context, caller auth.Caller, server, token string) error {
	name, err := g.tokenServer(server, token)
	if err != nil {
		return err
	}
	return g.tokens.SetToken(ctx, sessionScope(caller), name, token)
}

// MaxTokenBytes bounds one upstream token.
const MaxTokenBytes = 8 << 10

// tokenServer checks a token offered for a server: the server must exist
// and take caller tokens ("sessionToken": true), the token must fit.
func (g *Gateway) tokenServer(server, token string) (string, error) {
	name := NormalizeName(server)
	u, ok := g.upstreams[name]
	switch {
	case !ok:
		return "", fmt.Errorf("there is no server %q to give a token to", truncate(server, 64))
	case !u.sc.SessionToken:
		return "", fmt.Errorf("server %q does not take callers' tokens (\"sessionToken\" is not set in its config)", name)
	case len(token) > MaxTokenBytes:
		return "", fmt.Errorf("the token for %q is %d bytes; at most %d are kept", name, len(token), MaxTokenBytes)
	}
	return name, nil
}

// WithRequestTokens gives the calls made under ctx by a caller without a
// session (a 2026-07-28 request) these tokens, by server: they serve that
// request only and are never stored. Tokens for servers that do not take
// callers' tokens are dropped.
func (g *Gateway) WithRequestTokens(ctx context.Context, tokens map[string]string) (context.Context, error) {
	kept := make(map[string]string, len(tokens))
	for server, tok := range tokens {
		name, err := g.tokenServer(server, tok)
		if err != nil {
			return ctx, err
		}
		kept[name] = tok
	}
	if len(kept) == 0 {
		return ctx, nil
	}
	return context.WithValue(ctx, requestTokensKey{}, kept), nil
}

type requestTokensKey struct{}

// Narrow sets the servers the session sees and may call (nil: every
// server). The hub tools gateway__connect_servers and
// gateway__disconnect_servers set it.
func (s *Session) Narrow(servers []string) {
	s.g.sessions.mu.Lock()
	defer s.g.sessions.mu.Unlock()
	if servers == nil {
		s.state.servers = nil
		return
	}
	s.state.servers = make(map[string]bool, len(servers))
	for _, n := range servers {
		s.state.servers[n] = true
	}
}

// Servers returns the servers the session narrowed itself to, sorted, and
// false when it sees every server.
func (s *Session) Servers() ([]string, bool) {
	return s.g.SessionServers(s.state.caller)
}

// SessionServers returns the servers a caller's session narrowed itself to,
// sorted, and false when it sees every server.
func (g *Gateway) SessionServers(c auth.Caller) ([]string, bool) {
	g.sessions.mu.Lock()
	defer g.sessions.mu.Unlock()
	st := g.sessions.open[c.Session]
	if !c.HasSession() || st == nil || st.servers == nil {
		return nil, false
	}
	out := make([]string, 0, len(st.servers))
	for n := range st.servers {
		out = append(out, n)
	}
	sort.Strings(out)
	return out, true
}

// Sees reports whether a caller may see and call the tools of a server: its
// principal may use the server (auth.Principal.MaySee), and its session, if
// it narrowed itself, chose it. This one rule serves tools/list, tools/call,
// search_tools and execute_code alike.
func (g *Gateway) Sees(c auth.Caller, server string) bool {
	if !c.Principal.MaySee(server) {
		return false
	}
	g.sessions.mu.Lock()
	defer g.sessions.mu.Unlock()
	st := g.sessions.open[c.Session]
	return !c.HasSession() || st == nil || st.sees(server)
}

// sees is Sees for an open session (sessions.mu held).
func (st *sessionState) sees(server string) bool {
	return st.caller.Principal.MaySee(server) && (st.servers == nil || st.servers[server])
}

// peer returns the client of a session (nil when none).
func (g *Gateway) peer(id auth.SessionID) Peer {
	g.sessions.mu.Lock()
	defer g.sessions.mu.Unlock()
	if st := g.sessions.open[id]; st != nil {
		return st.peer
	}
	return nil
}

// sessionLogLevel is the log level a caller's session asked for ("" if none).
func (g *Gateway) sessionLogLevel(c auth.Caller) string {
	if !c.HasSession() {
		return ""
	}
	g.sessions.mu.Lock()
	defer g.sessions.mu.Unlock()
	if st := g.sessions.open[c.Session]; st != nil {
		return st.logLevel
	}
	return ""
}

// LogLevel is the log level the session asked for ("" if none).
func (s *Session) LogLevel() string { return s.g.sessionLogLevel(s.state.caller) }

// setSessionLogLevel records an open session's log level (false: no such session).
func (g *Gateway) setSessionLogLevel(c auth.Caller, level string) bool {
	g.sessions.mu.Lock()
	defer g.sessions.mu.Unlock()
	st := g.sessions.open[c.Session]
	if !c.HasSession() || st == nil {
		return false
	}
	st.logLevel = level
	return true
}

// mostVerboseLogLevel is the most verbose level any open session asked for.
func (g *Gateway) mostVerboseLogLevel() string {
	g.sessions.mu.Lock()
	defer g.sessions.mu.Unlock()
	best := ""
	for _, st := range g.sessions.open {
		if r, ok := levelRank[st.logLevel]; ok && (best == "" || r < levelRank[best]) {
			best = st.logLevel
		}
	}
	return best
}

// --- calls in flight, for attributing what an upstream asks of its client ---

// callOwner is the key a call in flight is counted under: its session, or,
// for a sessionless call, a key of its own, so that two sessionless calls
// are never taken for one caller.
func callOwner(c auth.Caller, callID string) string {
	if c.HasSession() {
		return "s:" + string(c.Session)
	}
	return "c:" + callID
}

// enter records a call in flight on a server, made under ctx; the
// returned func ends it.
func (ss *sessions) enter(ctx context.Context, server, owner string) func() {
	ss.mu.Lock()
	if ss.inflight[server] == nil {
		ss.inflight[server] = map[string]*inflightCaller{}
	}
	c := ss.inflight[server][owner]
	if c == nil {
		c = &inflightCaller{}
		ss.inflight[server][owner] = c
	}
	c.n++
	c.ctx = nil
	if c.n == 1 {
		c.ctx = ctx
	}
	ss.mu.Unlock()
	return func() {
		ss.mu.Lock()
		defer ss.mu.Unlock()
		if c.n--; c.n <= 0 {
			delete(ss.inflight[server], owner)
		}
		c.ctx = nil // with one call left, which one is not known here
	}
}

// soleCaller returns the only caller with calls in flight on a server: its
// session ("" for a sessionless call) and, when it has exactly one call in
// flight, that call's context (else nil). With several callers, an
// upstream request that does not say which call it belongs to (stdio has
// no per-request stream) cannot be attributed, and is refused rather than
// shown to the wrong client.
func (ss *sessions) soleCaller(server string) (auth.SessionID, context.Context, bool) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if len(ss.inflight[server]) != 1 {
		return "", nil, false
	}
	for owner, c := range ss.inflight[server] {
		s, _ := strings.CutPrefix(owner, "s:")
		if !strings.HasPrefix(owner, "s:") {
			s = ""
		}
		return auth.SessionID(s), c.ctx, true
	}
	return "", nil, false
}

// soleSession returns the session of the only caller with calls in flight
// on a server, when that caller is a session.
func (ss *sessions) soleSession(server string) (auth.SessionID, bool) {
	s, _, ok := ss.soleCaller(server)
	return s, ok && s != ""
}

// inFlight counts the calls in flight on a server.
func (ss *sessions) inFlight(server string) int {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	n := 0
	for _, c := range ss.inflight[server] {
		n += c.n
	}
	return n
}
