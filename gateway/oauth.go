package gateway

// OAuth 2.1 to upstream servers (the MCP authorization spec): the grants a
// login leaves (oauth_login.go makes them), which principal's grant a call
// carries, renewing an expired access token with its refresh token, and
// trying once more after the server refuses a token.
//
// mcp-go's transport.OAuthHandler does the protocol: discovery (RFC 9728
// protected resource metadata, RFC 8414 / OIDC authorization server
// metadata), dynamic client registration (RFC 7591), PKCE (S256), resource
// indicators (RFC 8707) and a refresh shared by concurrent callers (a
// rotated refresh token is good for one use). What it lacks for a gateway,
// and this file adds: its transport option binds one token store to a
// connection, while here every call carries the grant of the principal it
// acts for over the one shared connection (the same per-call header as
// "sessionToken" servers); its handler never says why a refresh failed; and
// nothing in it keeps a grant from reaching a server other than the one it
// was issued for (a grant here names its server's URL, and a changed URL
// needs a new login).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/gateway/internal/upstream"
	"github.com/sandboxrt/sandbox/internal/atomicfile"
)

// OAuthConfig is a server's "oauth" block. Every HTTP server may use OAuth
// (a login is what turns it on); the block is needed only for a client
// registered by hand with the authorization server, or to choose scopes.
type OAuthConfig struct {
	// ClientID of a client registered with the authorization server ("":
	// register one by RFC 7591 dynamic registration at each login).
	ClientID string
	// ClientSecret of a confidential ClientID ("": a public client).
	ClientSecret string
	// Scopes to ask for (nil: those the server's 401 or its protected
	// resource metadata names).
	Scopes []string
	// RedirectPort is the loopback port of the login's redirect (0: a free
	// one). Set it when the client was registered with a fixed port.
	RedirectPort int
}

// OAuthGrant is what a login left for one principal and server: the tokens,
// the client they were issued to, and where to renew them.
type OAuthGrant struct {
	// URL is the server's URL at login: the grant is for that server only.
	URL   string          `json:"url"`
	Token transport.Token `json:"token"`
	// The client: dynamically registered at login, or the configured one.
	ClientID     string `json:"clientId"`
	ClientSecret string `json:"clientSecret,omitempty"`
	AuthMethod   string `json:"authMethod,omitempty"`
	RedirectURI  string `json:"redirectUri"`
	// ResourceMetadata is the protected resource metadata URL the server
	// named in its 401 ("": the well-known one at the server's origin).
	ResourceMetadata string    `json:"resourceMetadata,omitempty"`
	Scopes           []string  `json:"scopes,omitempty"`
	LoggedIn         time.Time `json:"loggedIn"`
}

// OAuthStore keeps OAuth grants by owner (auth.Principal.Key()) and server.
// The default is a file (FileOAuthStore); a store shared by replicas
// implements the same interface.
type OAuthStore interface {
	// Grant returns the owner's grant for the server (nil: none).
	Grant(ctx context.Context, owner, server string) (*OAuthGrant, error)
	// Update replaces the owner's grant for the server with what fn returns
	// given the current one (nil: none); fn returning nil removes it.
	Update(ctx context.Context, owner, server string, fn func(*OAuthGrant) *OAuthGrant) error
}

// OAuthRefreshLocker is an OAuthStore that several processes share and
// that can hold renewals of one grant to one at a time: a rotated refresh
// token is good for one use, and an authorization server that sees it used
// twice may revoke the whole grant. Lock waits for the grant's lock (or
// ctx) and returns its release.
type OAuthRefreshLocker interface {
	LockRefresh(ctx context.Context, owner, server string) (unlock func(), err error)
}

// defaultOAuthTokenFile is where grants are kept when the config names no
// file: the user's config folder (~/.config/sandbox/oauth-tokens.json on
// Linux).
func defaultOAuthTokenFile() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("no folder for OAuth tokens (%v): set \"gateway\": {\"oauthTokens\": \"/path/oauth-tokens.json\"} in the config", err)
	}
	return filepath.Join(dir, "sandbox", "oauth-tokens.json"), nil
}

// FileOAuthStore keeps grants in one JSON file of mode 0600 (in a folder of
// mode 0700), as the CLIs of hosted services keep theirs. It is re-read
// when it changes on disk, so a `sandbox login` while `sandbox serve` runs
// takes effect at the next call.
type FileOAuthStore struct {
	path string

	mu     sync.Mutex
	grants map[string]map[string]*OAuthGrant // owner -> server -> grant
	stamp  fileStamp                         // of the file last read
}

type fileStamp struct {
	mod  time.Time
	size int64
}

type oauthFile struct {
	Version int                               `json:"version"`
	Grants  map[string]map[string]*OAuthGrant `json:"grants"`
}

// NewFileOAuthStore opens the grants kept at path (none yet is fine).
func NewFileOAuthStore(path string) (*FileOAuthStore, error) {
	s := &FileOAuthStore{path: path}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.reloadLocked(); err != nil {
		return nil, err
	}
	return s, nil
}

// reloadLocked reads the file again if it changed since it was last read.
func (s *FileOAuthStore) reloadLocked() error {
	st, err := os.Stat(s.path)
	if errors.Is(err, os.ErrNotExist) {
		s.grants, s.stamp = map[string]map[string]*OAuthGrant{}, fileStamp{}
		return nil
	}
	if err != nil {
		return fmt.Errorf("OAuth token file: %w", err)
	}
	stamp := fileStamp{st.ModTime(), st.Size()}
	if s.grants != nil && stamp == s.stamp {
		return nil
	}
	if st.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("OAuth token file %s is readable by others (mode %v): run chmod 600 %s", s.path, st.Mode().Perm(), s.path)
	}
	data, err := os.ReadFile(s.path)
	if err != nil {
		return fmt.Errorf("OAuth token file: %w", err)
	}
	var f oauthFile
	if err := json.Unmarshal(data, &f); err != nil {
		return fmt.Errorf("OAuth token file %s is not valid (%v): remove it and log in again", s.path, err)
	}
	if f.Grants == nil {
		f.Grants = map[string]map[string]*OAuthGrant{}
	}
	s.grants, s.stamp = f.Grants, stamp
	return nil
}

func (s *FileOAuthStore) Grant(ctx context.Context, owner, server string) (*OAuthGrant, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.reloadLocked(); err != nil {
		return nil, err
	}
	g := s.grants[owner][server]
	if g == nil {
		return nil, nil
	}
	c := *g
	return &c, nil
}

func (s *FileOAuthStore) Update(ctx context.Context, owner, server string, fn func(*OAuthGrant) *OAuthGrant) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	// Another process (a login beside a running serve) may write the file
	// too: hold the file lock from reading to writing, and read what it
	// wrote, so its grants survive this write.
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		return err
	}
	unlock, err := lockFile(s.path + ".lock")
	if err != nil {
		return fmt.Errorf("OAuth token file lock: %w", err)
	}
	defer unlock()
	s.grants = nil // re-read whatever the stamp says: a same-size rewrite within the clock's tick looks unchanged
	if err := s.reloadLocked(); err != nil {
		return err
	}
	var cur *OAuthGrant
	if g := s.grants[owner][server]; g != nil {
		c := *g
		cur = &c
	}
	next := fn(cur)
	if next == nil {
		if cur == nil {
			return nil
		}
		delete(s.grants[owner], server)
		if len(s.grants[owner]) == 0 {
			delete(s.grants, owner)
		}
	} else {
		if s.grants[owner] == nil {
			s.grants[owner] = map[string]*OAuthGrant{}
		}
		s.grants[owner][server] = next
	}
	data, err := json.MarshalIndent(oauthFile{Version: 1, Grants: s.grants}, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.Write(s.path, data, 0o600); err != nil { // its folder was made above, for the lock
		return err
	}
	if st, err := os.Stat(s.path); err == nil {
		s.stamp = fileStamp{st.ModTime(), st.Size()}
	}
	return nil
}

// WithOAuthStore replaces the file the OAuth grants are kept in.
func WithOAuthStore(s OAuthStore) Option {
	return func(g *Gateway) error {
		if s != nil {
			g.oauth.store = s
		}
		return nil
	}
}

// oauthClients is the gateway's side of OAuth: the store, and one mcp-go
// handler per owner and server (it holds the discovered metadata and the
// refresh in flight, which concurrent callers share).
type oauthClients struct {
	store    OAuthStore // nil until a server needs it (openOAuthStore)
	warnOnce sync.Once

	mu       sync.Mutex
	handlers map[oauthKey]*oauthHandler
}

type oauthKey struct{ owner, server string }

type oauthHandler struct {
	h        *transport.OAuthHandler
	clientID string // the grant's client when the handler was made
	url      string
}

// usesOAuth reports whether calls to the server may carry an OAuth grant:
// HTTP servers whose token is neither per session nor a configured header.
func usesOAuth(sc *ServerConfig) bool {
	if sc.Transport != TransportStreamableHTTP && sc.Transport != TransportSSE {
		return false
	}
	if sc.SessionToken {
		return false
	}
	for k := range sc.Headers {
		if strings.EqualFold(k, "Authorization") {
			return false
		}
	}
	return true
}

// oauthOwner is whose grant a caller's calls carry: its principal's when
// principals authenticate (`sandbox serve` with auth), else the operator's.
// A principal never falls back to the operator's grant: that would let it
// act with the operator's account.
func oauthOwner(p auth.Principal) string {
	if p.ID == "" || p.IsAnonymous() || p.IsOperator() {
		return auth.Operator().Key()
	}
	return p.Key()
}

// oauthStore returns the grant store, opening the default file on first use.
func (g *Gateway) oauthStore() (OAuthStore, error) {
	o := &g.oauth
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.store != nil {
		return o.store, nil
	}
	// A failure is not kept: the operator may fix it (chmod 600) while
	// serve runs, and the next call opens the file.
	path := g.cfg.Settings.OAuthTokenFile
	if path == "" {
		var err error
		if path, err = defaultOAuthTokenFile(); err != nil {
			return nil, err
		}
	}
	s, err := NewFileOAuthStore(path)
	if err != nil {
		return nil, err
	}
	o.store = s
	return s, nil
}

// errNoGrant: the owner has not logged in to the server (or logged in to
// another URL).
var errNoGrant = errors.New("no OAuth login")

// oauthHandlerFor returns the handler for the owner's grant, made again
// when a new login changed the client.
func (g *Gateway) oauthHandlerFor(u *route, owner string, grant *OAuthGrant) *transport.OAuthHandler {
	o := &g.oauth
	key := oauthKey{owner, u.name}
	o.mu.Lock()
	defer o.mu.Unlock()
	if h := o.handlers[key]; h != nil && h.clientID == grant.ClientID && h.url == grant.URL {
		return h.h
	}
	if o.handlers == nil {
		o.handlers = map[oauthKey]*oauthHandler{}
	}
	h := newGrantHandler(u.sc, grant, grantTokens{store: o.store, owner: owner, server: u.name, url: grant.URL}, oauthHTTPClient())
	o.handlers[key] = &oauthHandler{h: h, clientID: grant.ClientID, url: grant.URL}
	return h
}

// newGrantHandler is mcp-go's handler for a grant's client, renewing into
// tokens.
func newGrantHandler(sc *ServerConfig, grant *OAuthGrant, tokens transport.TokenStore, client *http.Client) *transport.OAuthHandler {
	h := transport.NewOAuthHandler(transport.OAuthConfig{
		ClientID:                     grant.ClientID,
		ClientSecret:                 grant.ClientSecret,
		TokenEndpointAuthMethod:      grant.AuthMethod,
		RedirectURI:                  grant.RedirectURI,
		Scopes:                       grant.Scopes,
		TokenStore:                   tokens,
		ProtectedResourceMetadataURL: grant.ResourceMetadata,
		PKCEEnabled:                  true,
		HTTPClient:                   client,
	})
	h.SetBaseURL(sc.URL)
	return h
}

func oauthHTTPClient() *http.Client { return &http.Client{Timeout: 30 * time.Second} }

// grantTokens is one grant's tokens as mcp-go's TokenStore: a renewal
// replaces the token and keeps the client.
type grantTokens struct {
	store         OAuthStore
	owner, server string
	url           string
}

func (t grantTokens) GetToken(ctx context.Context) (*transport.Token, error) {
	grant, err := t.store.Grant(ctx, t.owner, t.server)
	if err != nil {
		return nil, err
	}
	if grant == nil || grant.URL != t.url {
		return nil, transport.ErrNoToken
	}
	return &grant.Token, nil
}

func (t grantTokens) SaveToken(ctx context.Context, tok *transport.Token) error {
	return t.store.Update(ctx, t.owner, t.server, func(cur *OAuthGrant) *OAuthGrant {
		if cur == nil || cur.URL != t.url {
			return cur // logged out (or in elsewhere) meanwhile: keep that
		}
		cur.Token = *tok
		return cur
	})
}

// oauthToken is the access token a call by owner to u carries ("" and nil:
// the owner has no grant, so the call goes without one; the server may not
// need it). An expired token is renewed first; a grant that cannot be
// renewed is errNoGrant wrapped with why.
func (g *Gateway) oauthToken(ctx context.Context, u *route, owner string) (string, error) {
	store, err := g.oauthStore()
	if err != nil {
		// No token file (no home folder, a file others may read): calls go
		// without a token, and a server that needs one says so (401 ->
		// AUTH_REQUIRED, and `sandbox login` reports this error).
		g.oauth.warnOnce.Do(func() { g.log.Warn("OAuth logins are unavailable", "error", err) })
		return "", nil
	}
	grant, err := store.Grant(ctx, owner, u.name)
	if err != nil {
		return "", err
	}
	if grant == nil || grant.URL != u.sc.URL {
		return "", nil
	}
	if locker, ok := store.(OAuthRefreshLocker); ok && (grant.Token.IsExpired() || grant.Token.AccessToken == "") {
		// Another replica may be renewing this grant: wait for it, then the
		// handler reads the store again and finds the renewed token.
		unlock, err := locker.LockRefresh(ctx, owner, u.name)
		if err != nil {
			return "", err
		}
		defer unlock()
	}
	header, err := g.oauthHandlerFor(u, owner, grant).GetAuthorizationHeader(ctx)
	if errors.Is(err, transport.ErrOAuthAuthorizationRequired) {
		if grant.Token.RefreshToken == "" {
			return "", fmt.Errorf("%w: the login expired and the server gave no refresh token", errNoGrant)
		}
		return "", fmt.Errorf("%w: the login expired or was refused, and renewing it failed: the authorization server refused the refresh token, or its metadata no longer names this server", errNoGrant)
	}
	if err != nil {
		return "", err
	}
	// The call redacts its own token from what it hands back (Call); the
	// token is not added to the gateway-wide secrets, which would grow with
	// every renewal.
	_, tok, _ := strings.Cut(header, " ")
	return tok, nil
}

// oauthRejected marks the owner's access token as expired after the server
// refused it, so the next oauthToken renews it (once: the renewed token
// differs from the refused one).
func (g *Gateway) oauthRejected(ctx context.Context, u *route, owner, token string) {
	store, err := g.oauthStore()
	if err != nil || token == "" {
		return
	}
	_ = store.Update(ctx, owner, u.name, func(cur *OAuthGrant) *OAuthGrant {
		if cur != nil && cur.Token.AccessToken == token {
			cur.Token.ExpiresAt = time.Unix(1, 0)
		}
		return cur
	})
}

// loginRequired is AUTH_REQUIRED for an OAuth server: what to run, by whom.
func (g *Gateway) loginRequired(id string, u *route, owner, why string) *Error {
	run := fmt.Sprintf("sandbox login %s --config <your mcp.json>", u.name)
	who := "log in"
	if owner != auth.Operator().Key() {
		run += " --principal " + owner
		who = "ask the operator to log you in"
	}
	return newError(CodeAuthRequired, id, nil, map[string]any{"server": u.name, "login": run},
		"server %q needs an OAuth login (%s); %s: `%s`, then call again", u.name, why, who, run)
}

// oauthStep is the token step of an OAuth-capable server's call.
func (g *Gateway) oauthStep(ctx context.Context, c *call) *Error {
	owner := oauthOwner(c.req.Caller.Principal)
	tok, err := g.oauthToken(ctx, c.u, owner)
	if errors.Is(err, errNoGrant) {
		c.oauthOwner = owner
		return g.signInStep(ctx, c, strings.TrimPrefix(err.Error(), errNoGrant.Error()+": "))
	}
	if err != nil {
		return newError(CodeInternal, c.toolID, err, map[string]any{"server": c.u.name},
			"the gateway could not read its OAuth tokens (%v); tell the operator", err)
	}
	c.token, c.oauthOwner = tok, owner
	return nil
}

// OAuthState says whether owner is logged in to a server, for `sandbox
// servers` ("" for a server that takes no OAuth login).
func (g *Gateway) OAuthState(ctx context.Context, server, owner string) string {
	u := g.upstreams[NormalizeName(server)]
	if u == nil || !usesOAuth(u.sc) {
		return ""
	}
	store, err := g.oauthStore()
	if err != nil {
		return "unknown: " + err.Error()
	}
	grant, err := store.Grant(ctx, owner, u.name)
	switch {
	case err != nil:
		return "unknown: " + err.Error()
	case grant == nil && u.sc.OAuth == nil && !strings.HasPrefix(u.status().Reason, upstream.ReasonNeedsAuthentication):
		// A url server without "oauth" that never asked for a login (it
		// is down, or needs none): a login state would send the operator
		// after the wrong cause.
		return ""
	case grant == nil:
		return "not logged in"
	case grant.URL != u.sc.URL:
		return "logged in to " + grant.URL + ", not " + u.sc.URL + ": log in again"
	case grant.Token.ExpiresAt.IsZero():
		return "logged in"
	case !grant.Token.IsExpired():
		return fmt.Sprintf("logged in (token valid %s more)", time.Until(grant.Token.ExpiresAt).Round(time.Second))
	case grant.Token.RefreshToken != "":
		return "logged in (token expired; renewed at the next call)"
	}
	return "login expired: log in again"
}
