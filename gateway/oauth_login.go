package gateway

// The login of `sandbox login`: the authorization code flow with PKCE of
// the MCP authorization spec, with the redirect received on a loopback port
// (RFC 8252 §7.3), leaving an OAuthGrant in the store.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"

	"github.com/sandboxrt/sandbox/auth"
)

// LoginOptions configure Login.
type LoginOptions struct {
	// Owner is the principal the login is for (auth.Principal.Key(); "":
	// the operator).
	Owner string
	// Show is given the URL the person must open (print it, open a
	// browser). Required.
	Show func(authorizationURL string)
	// Wait bounds the wait for the person to finish in the browser (5 min).
	Wait time.Duration
	// HTTPClient makes the requests to the server and the authorization
	// server (default: 30 s timeout).
	HTTPClient *http.Client
}

// ErrNoLoginNeeded: the server answered without credentials.
var ErrNoLoginNeeded = errors.New("the server answered without a login: it needs none")

// Login logs owner in to an HTTP server: it asks the server what protects it
// (its 401 and protected resource metadata), discovers the authorization
// server, registers a client when none is configured and the server offers
// registration, has the person approve in a browser (opts.Show), receives
// the code on a loopback redirect, exchanges it with the PKCE verifier for
// tokens bound to the server (resource indicator), and keeps them. The
// gateway need not be started.
func (g *Gateway) Login(ctx context.Context, server string, opts LoginOptions) (*OAuthGrant, error) {
	u := g.upstreams[NormalizeName(server)]
	if u == nil {
		return nil, fmt.Errorf("no server %q in the config (it has: %s)", server, strings.Join(g.names, ", "))
	}
	if !usesOAuth(u.sc) {
		return nil, fmt.Errorf("server %q takes no OAuth login: only HTTP servers without \"sessionToken\" or an Authorization header do", u.name)
	}
	if opts.Owner == "" {
		opts.Owner = auth.Operator().Key()
	}
	if opts.Wait == 0 {
		opts.Wait = 5 * time.Minute
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = oauthHTTPClient()
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(oauthConfigOf(u.sc).RedirectPort)))
	if err != nil {
		return nil, fmt.Errorf("listening for the login's redirect on 127.0.0.1:%d: %w", oauthConfigOf(u.sc).RedirectPort, err)
	}
	defer ln.Close()
	redirect := fmt.Sprintf("http://127.0.0.1:%d/callback", ln.Addr().(*net.TCPAddr).Port)
	p, err := g.prepareLogin(ctx, u, opts.Owner, redirect, "http://127.0.0.1/callback, any port", opts.HTTPClient)
	if err != nil {
		return nil, err
	}
	code, err := awaitRedirect(ctx, ln, p.state, p.expect, opts.Wait, func() { opts.Show(p.authURL) })
	if err != nil {
		return nil, err
	}
	return p.exchange(ctx, code)
}

func oauthConfigOf(sc *ServerConfig) *OAuthConfig {
	if sc.OAuth == nil {
		return &OAuthConfig{}
	}
	return sc.OAuth
}

// pendingLogin is a login between the authorization URL shown to the
// person and the code the redirect brings: the PKCE verifier and state,
// the client (registered or configured), and where the grant goes.
type pendingLogin struct {
	g       *Gateway
	u       *route
	owner   string
	store   OAuthStore
	grant   *OAuthGrant
	tokens  transport.TokenStore
	h       *transport.OAuthHandler
	token   string // the token endpoint, for messages
	expect  issuerCheck
	state   string
	verify  string
	authURL string
}

// prepareLogin asks the server what protects it, discovers its
// authorization server, registers a client when none is configured, and
// draws the PKCE verifier and state: everything up to the authorization
// URL, with the redirect going to redirectURI. registerAs is what to tell
// an operator to register by hand when the authorization server offers no
// registration.
func (g *Gateway) prepareLogin(ctx context.Context, u *route, owner, redirectURI, registerAs string, httpClient *http.Client) (*pendingLogin, error) {
	store, err := g.oauthStore()
	if err != nil {
		return nil, err
	}
	cfg := oauthConfigOf(u.sc)
	challenge, err := probeServer(ctx, httpClient, u.sc.URL)
	if err != nil {
		return nil, fmt.Errorf("asking %s what protects it: %w", u.sc.URL, err)
	}
	scopes := cfg.Scopes
	if scopes == nil {
		scopes = challenge.scopes
	}
	if scopes == nil && challenge.resourceMetadata != "" {
		scopes = resourceScopes(ctx, httpClient, challenge.resourceMetadata)
	}
	grant := &OAuthGrant{
		URL:              u.sc.URL,
		ClientID:         cfg.ClientID,
		ClientSecret:     cfg.ClientSecret,
		RedirectURI:      redirectURI,
		ResourceMetadata: challenge.resourceMetadata,
		Scopes:           scopes,
	}
	tokens := transport.NewMemoryTokenStore()
	discovery := &issuerDocuments{next: httpClient.Transport}
	client := *httpClient
	client.Transport = discovery
	h := newGrantHandler(u.sc, grant, tokens, &client)

	meta, err := h.GetServerMetadata(ctx)
	if err != nil {
		return nil, fmt.Errorf("finding the authorization server of %q: %w", u.name, err)
	}
	expect := issuerCheck{issuer: meta.Issuer, required: discovery.advertisesIss(meta.Issuer)}
	if !slices.Contains(meta.CodeChallengeMethodsSupported, "S256") {
		// The MCP authorization spec: no PKCE S256 in the metadata, no login.
		return nil, fmt.Errorf("the authorization server %s does not offer PKCE with S256, which MCP requires; it cannot be used", meta.Issuer)
	}
	if grant.ClientID == "" {
		if meta.RegistrationEndpoint == "" {
			return nil, fmt.Errorf("the authorization server %s offers no dynamic client registration: register a client there (redirect URI %s) and set \"oauth\": {\"clientId\": \"...\"} for %q in the config", meta.Issuer, registerAs, u.name)
		}
		if err := h.RegisterClient(ctx, "sandbox ("+u.name+")"); err != nil {
			return nil, fmt.Errorf("registering a client with %s: %w", meta.Issuer, err)
		}
		grant.ClientID, grant.ClientSecret, grant.AuthMethod = h.GetClientID(), h.GetClientSecret(), h.GetTokenEndpointAuthMethod()
	}

	verifier, err := transport.GenerateCodeVerifier()
	if err != nil {
		return nil, err
	}
	state, err := transport.GenerateState()
	if err != nil {
		return nil, err
	}
	authURL, err := h.GetAuthorizationURL(ctx, state, transport.GenerateCodeChallenge(verifier))
	if err != nil {
		return nil, err
	}
	return &pendingLogin{g: g, u: u, owner: owner, store: store, grant: grant, tokens: tokens, h: h, token: meta.TokenEndpoint,
		expect: expect, state: state, verify: verifier, authURL: authURL}, nil
}

// exchange trades the code the redirect brought for tokens and keeps them
// as the owner's grant.
func (p *pendingLogin) exchange(ctx context.Context, code string) (*OAuthGrant, error) {
	if err := p.h.ProcessAuthorizationResponse(ctx, code, p.state, p.verify); err != nil {
		return nil, fmt.Errorf("exchanging the authorization code at %s: %w", p.token, err)
	}
	tok, err := p.tokens.GetToken(ctx)
	if err != nil {
		return nil, err
	}
	grant := p.grant
	grant.Token, grant.LoggedIn = *tok, time.Now().UTC()
	if err := p.store.Update(ctx, p.owner, p.u.name, func(*OAuthGrant) *OAuthGrant { return grant }); err != nil {
		return nil, err
	}
	p.g.forgetHandler(p.owner, p.u.name)
	return grant, nil
}

// Logout forgets owner's login to a server; ok false when there was none.
func (g *Gateway) Logout(ctx context.Context, server, owner string) (ok bool, err error) {
	u := g.upstreams[NormalizeName(server)]
	if u == nil {
		return false, fmt.Errorf("no server %q in the config (it has: %s)", server, strings.Join(g.names, ", "))
	}
	if owner == "" {
		owner = auth.Operator().Key()
	}
	store, err := g.oauthStore()
	if err != nil {
		return false, err
	}
	err = store.Update(ctx, owner, u.name, func(cur *OAuthGrant) *OAuthGrant {
		ok = cur != nil
		return nil
	})
	g.forgetHandler(owner, u.name)
	return ok, err
}

func (g *Gateway) forgetHandler(owner, server string) {
	g.oauth.mu.Lock()
	delete(g.oauth.handlers, oauthKey{owner, server})
	g.oauth.mu.Unlock()
}

// challenge is what a server's 401 says about its protection.
type challenge struct {
	resourceMetadata string   // RFC 9728 §5.1 resource_metadata
	scopes           []string // the "scope" parameter, if any
}

// probeServer sends an unauthenticated initialize and reads the 401.
func probeServer(ctx context.Context, client *http.Client, serverURL string) (challenge, error) {
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sandbox-login","version":"1"}}}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, serverURL, strings.NewReader(body))
	if err != nil {
		return challenge{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := client.Do(req)
	if err != nil {
		return challenge{}, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 == 2 {
		return challenge{}, ErrNoLoginNeeded
	}
	if resp.StatusCode != http.StatusUnauthorized {
		return challenge{}, fmt.Errorf("it answered %s, not 401 with WWW-Authenticate", resp.Status)
	}
	var c challenge
	for _, v := range resp.Header.Values("WWW-Authenticate") {
		params := authParams(v)
		if c.resourceMetadata == "" {
			c.resourceMetadata = params["resource_metadata"]
		}
		if s := params["scope"]; s != "" && c.scopes == nil {
			c.scopes = strings.Fields(s)
		}
	}
	if c.resourceMetadata != "" && !sameOrigin(c.resourceMetadata, serverURL) {
		// RFC 9728 §3.3: a resource serves its own metadata; one pointing
		// elsewhere could send the login to an attacker's server.
		c.resourceMetadata = ""
	}
	return c, nil
}

// authParams reads the auth-params of a Bearer challenge (RFC 7235 §2.1).
func authParams(header string) map[string]string {
	out := map[string]string{}
	_, rest, ok := strings.Cut(strings.TrimSpace(header), " ")
	if !ok {
		return out
	}
	for rest != "" {
		rest = strings.TrimLeft(rest, " ,")
		name, after, ok := strings.Cut(rest, "=")
		if !ok {
			break
		}
		name = strings.ToLower(strings.TrimSpace(name))
		var value string
		if strings.HasPrefix(after, `"`) {
			var b strings.Builder
			i := 1
			for ; i < len(after) && after[i] != '"'; i++ {
				if after[i] == '\\' && i+1 < len(after) {
					i++
				}
				b.WriteByte(after[i])
			}
			value, rest = b.String(), after[min(i+1, len(after)):]
		} else {
			value, rest, _ = strings.Cut(after, ",")
			value = strings.TrimSpace(value)
		}
		out[name] = value
	}
	return out
}

func sameOrigin(a, b string) bool {
	ua, err1 := url.Parse(a)
	ub, err2 := url.Parse(b)
	return err1 == nil && err2 == nil && strings.EqualFold(ua.Scheme, ub.Scheme) && strings.EqualFold(ua.Host, ub.Host)
}

// resourceScopes reads scopes_supported from protected resource metadata.
func resourceScopes(ctx context.Context, client *http.Client, metadataURL string) []string {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, metadataURL, nil)
	if err != nil {
		return nil
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	var m struct {
		Scopes []string `json:"scopes_supported"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&m) != nil {
		return nil
	}
	return m.Scopes
}

// issuerCheck is what the authorization response's iss parameter must be
// (RFC 9207): the issuer the login sent the person to, and whether that
// issuer's metadata promises to name itself in every response.
type issuerCheck struct {
	issuer   string
	required bool
}

// check refuses a response from another issuer than the one the login
// used, and one without iss from an issuer that promises it. Without it a
// mix-up attack works: an authorization server the config trusts less
// sends the person on to one it trusts more, and receives the code that
// one issues when the login exchanges it at the first one's token
// endpoint. A present iss is compared whatever the metadata says (RFC
// 9207 §2.4): it is the answer of a server that names itself.
func (e issuerCheck) check(q url.Values) error {
	const why = "it may be a mix-up attack (RFC 9207), in which another authorization server's answer is passed off as this one's, so its code was not sent anywhere; check which authorization servers the config's servers use, and log in again"
	iss, named := q.Get("iss"), q.Has("iss")
	switch {
	case named && iss != e.issuer:
		return fmt.Errorf("the authorization response was issued by %q, not by %q where the login sent you: %s", clip(iss, 200), e.issuer, why)
	case !named && e.required:
		return fmt.Errorf("the authorization response has no iss, which %s says it always sends: %s", e.issuer, why)
	}
	return nil
}

// clip cuts what another party chose to at most n bytes, for a message.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// issuerDocuments is the login's HTTP transport: it passes every request on
// and notes, of each authorization server metadata document discovery
// reads (RFC 8414, OIDC discovery), whether it advertises
// authorization_response_iss_parameter_supported, which mcp-go's
// AuthServerMetadata does not keep. A document is noted under the issuer
// it names; mcp-go uses a document only when that issuer is the one it
// looked for, so the issuer of the metadata it returns is the one to ask
// about.
type issuerDocuments struct {
	next http.RoundTripper // nil: http.DefaultTransport

	mu         sync.Mutex
	advertised map[string]bool
}

func (d *issuerDocuments) RoundTrip(req *http.Request) (*http.Response, error) {
	next := d.next
	if next == nil {
		next = http.DefaultTransport
	}
	resp, err := next.RoundTrip(req)
	if err != nil || req.Method != http.MethodGet || resp.StatusCode != http.StatusOK ||
		!(strings.Contains(req.URL.Path, "/.well-known/oauth-authorization-server") || strings.Contains(req.URL.Path, "/.well-known/openid-configuration")) {
		return resp, err
	}
	// Read what mcp-go reads of it (1 MiB), and hand it the same bytes.
	head, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		resp.Body.Close()
		return nil, err
	}
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(head), resp.Body), resp.Body}
	var doc struct {
		Issuer string `json:"issuer"`
		Iss    bool   `json:"authorization_response_iss_parameter_supported"`
	}
	if json.Unmarshal(head, &doc) == nil && doc.Iss {
		d.mu.Lock()
		if d.advertised == nil {
			d.advertised = map[string]bool{}
		}
		d.advertised[doc.Issuer] = true
		d.mu.Unlock()
	}
	return resp, nil
}

// advertisesIss reports whether a document of issuer read during discovery
// promised the iss parameter.
func (d *issuerDocuments) advertisesIss(issuer string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.advertised[issuer]
}

// awaitRedirect serves the loopback redirect until it brings the code for
// state (a request with another state is answered and ignored: anything on
// this machine can reach the port), the authorization server reports an
// error, ctx ends or wait passes. A response of another issuer than expect
// ends the login with an error before its code goes anywhere. show runs
// once the listener is serving.
func awaitRedirect(ctx context.Context, ln net.Listener, state string, expect issuerCheck, wait time.Duration, show func()) (string, error) {
	type outcome struct {
		code string
		err  error
	}
	done := make(chan outcome, 1)
	mux := http.NewServeMux()
	mux.HandleFunc("/callback", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("state") != state {
			http.Error(w, "this is not the login sandbox is waiting for (state does not match)", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if err := expect.check(q); err != nil {
			fmt.Fprintf(w, "<p>sandbox refused this login: %s. You can close this tab.</p>", html.EscapeString(err.Error()))
			http.NewResponseController(w).Flush()
			select {
			case done <- outcome{err: err}:
			default:
			}
			return
		}
		if e := q.Get("error"); e != "" {
			msg := e
			if d := q.Get("error_description"); d != "" {
				msg += ": " + d
			}
			fmt.Fprintf(w, "<p>The login failed: %s. You can close this tab.</p>", html.EscapeString(msg))
			http.NewResponseController(w).Flush() // the page is out before the login ends
			select {
			case done <- outcome{err: fmt.Errorf("the authorization server refused the login: %s", msg)}:
			default:
			}
			return
		}
		fmt.Fprint(w, "<p>Logged in. You can close this tab and return to sandbox.</p>")
		http.NewResponseController(w).Flush()
		select {
		case done <- outcome{code: q.Get("code")}:
		default:
		}
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer func() {
		// Let the browser's request finish (its page was flushed before
		// the code was handed over) rather than cut it: a browser shows
		// a cut connection as an error.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if srv.Shutdown(ctx) != nil {
			_ = srv.Close()
		}
	}()
	show()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case o := <-done:
		if o.err == nil && o.code == "" {
			return "", errors.New("the redirect brought no authorization code")
		}
		return o.code, o.err
	case <-ctx.Done():
		return "", ctx.Err()
	case <-timer.C:
		return "", fmt.Errorf("nobody finished the login in the browser within %s; run the command again", wait)
	}
}
