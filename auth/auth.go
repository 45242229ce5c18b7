// Package auth says who is calling. Every request that reaches the gateway,
// the code-mode engine or the runtime's host calls carries one Caller: the
// Principal it acts for and the Session it belongs to. Packages key their
// per-caller state by it (tokens, rate limits, stored values) and never by a
// bare string a client could choose.
//
// Authentication, for callers over HTTP, makes the Principal: Config (the
// gateway.auth block of mcp.json) lists API keys and an OAuth issuer;
// NewVerifier turns a bearer credential into a Principal; Middleware puts
// it in the request's context (WithPrincipal) or refuses the request as an
// OAuth 2.1 resource server does; MetadataHandler publishes the protected
// resource metadata that points MCP clients at the authorization server.
//
// This package is a leaf: it imports nothing of the project, so every
// package on the data path can take a Caller.
package auth

import (
	"context"
	"slices"
	"strings"
)

// Principal is who a request acts for: a person, a team's agent, or the
// operator who started the process.
type Principal struct {
	// ID is stable and unique within its Tenant ("operator", an API key's
	// name, a token's subject).
	ID string `json:"id"`
	// Tenant groups principals that may share state; empty for the operator.
	Tenant string `json:"tenant,omitempty"`
	// Scopes are what the principal was granted (empty: no scope checks).
	Scopes []string `json:"scopes,omitempty"`
	// Operates marks a principal the configuration trusts to operate the
	// gateway (an API key with "operator": true, an access token carrying
	// the configured operator claim): it may use the operator console. It
	// grants nothing on the data path: its tools, tokens and state are its
	// own, as any principal's.
	Operates bool `json:"operates,omitempty"`
}

// The IDs of the two principals every process knows. They are constants
// behind functions, not exported variables: an identity that decides whose
// tokens a request carries must not be reassignable by any package.
const (
	operatorID  = "operator"
	anonymousID = "anonymous"
)

// Operator is the principal of whoever started the process: the CLI, a
// client on `sandbox serve`'s stdio, and the gateway's own connection-level
// requests to upstreams (initialize, listing, health checks). Its upstream
// tokens come from the operator's configuration (--token-env).
func Operator() Principal { return Principal{ID: operatorID} }

// Anonymous is the principal of a request over the network that nobody
// authenticated: every such client at once. It holds no principal-wide
// state: whatever it keeps is its session's alone, and what only a
// principal can keep (saved scripts, principal-scope store values) is
// refused to it.
func Anonymous() Principal { return Principal{ID: anonymousID} }

// IsOperator reports whether p is the operator.
func (p Principal) IsOperator() bool { return p.ID == operatorID && p.Tenant == "" }

// IsAnonymous reports whether p is Anonymous: every client nobody
// authenticated at once, so no one in particular. (No credential makes a
// principal with this identity: API keys and access tokens always carry a
// tenant.)
func (p Principal) IsAnonymous() bool { return p.ID == anonymousID && p.Tenant == "" }

// MayOperate reports whether p may use the operator console: the
// process's own operator, or a principal the configuration marks (Operates).
func (p Principal) MayOperate() bool { return p.Operates || p.IsOperator() }

// HasScope reports whether the principal was granted scope.
func (p Principal) HasScope(scope string) bool { return slices.Contains(p.Scopes, scope) }

// ServerScopePrefix starts the scopes that name an upstream server a
// principal may use: "server:github". A principal that holds at least one
// such scope may use only the servers they name; one that holds none is not
// restricted. Scopes only ever narrow: a token or API key without them sees
// every server, as the operator does.
const ServerScopePrefix = "server:"

// ServerScope returns the scope that allows the named server.
func ServerScope(server string) string { return ServerScopePrefix + server }

// AllowedServers returns the servers the principal is restricted to, in the
// order granted, and restricted=false when it may use every server.
func (p Principal) AllowedServers() (servers []string, restricted bool) {
	for _, s := range p.Scopes {
		if name, ok := strings.CutPrefix(s, ServerScopePrefix); ok {
			servers = append(servers, name)
			restricted = true
		}
	}
	return servers, restricted
}

// MaySee reports whether the principal may see and call the server's tools.
func (p Principal) MaySee(server string) bool {
	servers, restricted := p.AllowedServers()
	return !restricted || slices.Contains(servers, server)
}

// Key is the principal's identity as one string, unique across tenants
// ("tenant/id", or "id" without a tenant), for keying stored state.
func (p Principal) Key() string {
	if p.Tenant == "" {
		return p.ID
	}
	return p.Tenant + "/" + p.ID
}

// SessionID identifies one session of a principal: an MCP client session on
// the front end, or a CLI run. It is unique for the life of the process and
// never chosen by a client (the front end mints them).
type SessionID string

// Caller is who made a request: the principal it acts for and the session it
// belongs to. A Caller with an empty Session made a request that has no
// session (a 2026-07-28 client is stateless): it gets no per-session state
// and shares none with any other request.
type Caller struct {
	Principal Principal
	Session   SessionID
}

// HasSession reports whether the caller belongs to a session.
func (c Caller) HasSession() bool { return c.Session != "" }

// String is for logs: "principal" or "principal/session".
func (c Caller) String() string {
	if c.Session == "" {
		return c.Principal.Key()
	}
	return c.Principal.Key() + "/" + string(c.Session)
}

type principalKey struct{}

// WithPrincipal returns a context that carries the authenticated principal
// (set by the front end's authentication, read where a request's Caller is
// made). Requests themselves carry a Caller explicitly, not in the context.
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalFrom returns the principal a context carries, or Anonymous.
func PrincipalFrom(ctx context.Context) Principal {
	if p, ok := ctx.Value(principalKey{}).(Principal); ok {
		return p
	}
	return Anonymous()
}
