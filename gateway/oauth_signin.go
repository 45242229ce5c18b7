package gateway

// A principal of `sandbox serve` signs itself in to an upstream server from
// inside a call, by URL-mode elicitation (MCP 2025-11-25): the call that
// found no login for its principal asks the client to open a link to
// serve's own listener; the page there checks that the person is the
// principal (its credential, as the console's sign-in does), sends the
// browser on to the authorization server (the code flow with PKCE of
// oauth_login.go), and takes the redirect on serve's listener too. The
// grant is stored as the principal's login, the very one `sandbox login
// --principal` leaves, and the call goes on with it.
//
// Why the person must prove to be the principal (docs/operations.md): the
// grant is the upstream account of whoever signs in at the authorization
// server. Were the link enough, a principal could send its link (or the
// authorization URL behind it) to someone else, who would sign in with
// their own account and hand that principal their access. So the link
// alone does nothing: the page takes the principal's credential, and only
// the browser that gave it (a cookie set then, checked at the redirect)
// can finish the flow.

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"

	"github.com/sandboxrt/sandbox/auth"
)

// SignInOptions turn on principals signing themselves in (SignInHandler).
type SignInOptions struct {
	// PublicURL is where the person's browser reaches serve's listener,
	// with the path prefix of a proxy in front of it if any
	// ("https://gw.example.com/sandbox"). The links and the authorization
	// server's redirect are built on it.
	PublicURL string
	// Authenticate is serve's authentication: the page runs the credential
	// the person types through it.
	Authenticate func(http.Handler) http.Handler
	// TTL is how long a link may be opened (10 minutes; 0: that).
	TTL time.Duration
}

// AuditKindSignIn is a principal's sign-in to an upstream server from
// inside a call: "OK" once it signed in, "UNAUTHORIZED" for a link given
// another principal's credential or finished in another browser. Unlike
// AuditKindAuth (anyone's refused requests, counted apart), these name the
// principal whose link it was.
const AuditKindSignIn AuditKind = "signin"

// DefaultSignInTTL is how long a sign-in link is good for.
const DefaultSignInTTL = 10 * time.Minute

// maxSignInsPerPrincipal bounds the links one principal has open at once:
// each holds a registered client and a call waiting.
const maxSignInsPerPrincipal = 8

// signInKey is the key of the input request that asks a 2026-07-28 client
// to open a sign-in link; its answer never goes upstream.
const signInKey = "sandbox_signin"

// signInCookie + "_" + a piece of the link's id holds, in the browser that
// proved to be the principal, the nonce the redirect must bring back: a
// cookie per link, so that two links finished in one browser (two calls
// that both need a sign-in) do not take each other's place.
const signInCookie = "sandbox_signin"

// signInCookieName is the cookie of link id.
func signInCookieName(id string) string { return signInCookie + "_" + id[:min(16, len(id))] }

// signInDesk is the sign-ins in progress: in store (shared by replicas
// with WithSignInStore, so a link's page and callback work on any of them),
// and the calls of this process waiting for theirs to end (wake).
type signInDesk struct {
	store  SignInStore
	shared bool

	mu   sync.Mutex
	opts *SignInOptions
	wake map[string]chan struct{} // by link id: closed when its flow ends here
}

// WithSignInStore shares the sign-ins in progress through s
// (state/redisstate): a link made on one replica is opened, and its
// redirect taken, on any replica, and the call waiting on the first learns
// how it ended.
func WithSignInStore(s SignInStore) Option {
	return func(g *Gateway) error {
		if s != nil {
			g.signIns.store, g.signIns.shared = s, true
		}
		return nil
	}
}

// errSignInUsed is what Update's fn returns for a link used already (or a
// flow ended, or a redirect taken): it changes nothing.
var errSignInUsed = errors.New("the sign-in link was used already")

// SignInHandler turns on signing in by URL-mode elicitation and returns
// the pages of it, to be served at "/oauth/" of the listener PublicURL
// names: /oauth/signin/<id> (the link) and /oauth/callback (the
// authorization server's redirect).
func (g *Gateway) SignInHandler(opts SignInOptions) (http.Handler, error) {
	u, err := url.Parse(opts.PublicURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("the public URL %q is not an http(s) URL; set \"gateway\": {\"publicURL\": \"https://host[/prefix]\"} to where browsers reach sandbox serve", opts.PublicURL)
	}
	if opts.Authenticate == nil {
		return nil, errors.New("signing in by URL needs serve's authentication (\"gateway.auth\"): without it there is no principal to sign in")
	}
	if opts.TTL <= 0 {
		opts.TTL = DefaultSignInTTL
	}
	opts.PublicURL = strings.TrimRight(opts.PublicURL, "/")
	g.signIns.mu.Lock()
	g.signIns.opts = &opts
	g.signIns.mu.Unlock()
	mux := http.NewServeMux()
	mux.HandleFunc("/oauth/signin/{id}", g.serveSignInPage)
	mux.HandleFunc("/oauth/callback", g.serveSignInCallback)
	return mux, nil
}

func (d *signInDesk) options() *SignInOptions {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.opts
}

// start makes a link for owner to sign in to server.
func (d *signInDesk) start(ctx context.Context, owner, server string) (*SignInRecord, error) {
	ttl := d.options().TTL
	r := SignInRecord{ID: randomHex(32), ElicitationID: randomHex(16), Owner: owner, Server: server, Expires: time.Now().Add(ttl)}
	switch err := d.store.Put(ctx, r, maxSignInsPerPrincipal); {
	case errors.Is(err, ErrTooManySignIns):
		return nil, fmt.Errorf("%d sign-in links of yours are open already (the most one principal may have); finish or let them expire (%s), then call again", maxSignInsPerPrincipal, ttl)
	case err != nil:
		return nil, fmt.Errorf("a sign-in link cannot be made: %w", err)
	}
	return &r, nil
}

// end records how the flow of link id ended (the first end stands), and
// wakes the call of this process that waits for it.
func (d *signInDesk) end(ctx context.Context, id string, err error) {
	_ = d.store.Update(context.WithoutCancel(ctx), id, func(r *SignInRecord) error {
		if r.Ended {
			return errSignInUsed
		}
		r.Ended = true
		if err != nil {
			r.Err = err.Error()
		}
		return nil
	})
	d.mu.Lock()
	if ch := d.wake[id]; ch != nil {
		close(ch)
		delete(d.wake, id)
	}
	d.mu.Unlock()
}

// get is the sign-in of link id, nil when there is none (or the store
// does not answer).
func (d *signInDesk) get(ctx context.Context, id string) *SignInRecord {
	r, err := d.store.Get(ctx, id)
	if err != nil {
		return nil
	}
	return r
}

func signInURL(base, id string) string { return base + "/oauth/signin/" + id }

// wait waits for the flow of s to end (here, or on another replica: a
// shared store is polled every second), ctx, or the link to expire.
func (d *signInDesk) wait(ctx context.Context, s *SignInRecord) error {
	d.mu.Lock()
	if d.wake == nil {
		d.wake = map[string]chan struct{}{}
	}
	ch := d.wake[s.ID]
	if ch == nil {
		ch = make(chan struct{})
		d.wake[s.ID] = ch
	}
	d.mu.Unlock()
	defer func() {
		d.mu.Lock()
		if d.wake[s.ID] == ch {
			delete(d.wake, s.ID)
		}
		d.mu.Unlock()
	}()
	ended := func() (bool, error) {
		r, err := d.store.Get(ctx, s.ID)
		switch {
		case err != nil:
			return false, nil // the store does not answer: wait on
		case r == nil:
			return true, errors.New("the sign-in link expired before the sign-in finished")
		case !r.Ended:
			return false, nil
		case r.Err != "":
			return true, errors.New(r.Err)
		}
		return true, nil
	}
	if done, err := ended(); done { // it may have ended before the wait
		return err
	}
	timer := time.NewTimer(time.Until(s.Expires))
	defer timer.Stop()
	var poll <-chan time.Time
	if d.shared {
		t := time.NewTicker(signInPoll)
		defer t.Stop()
		poll = t.C
	}
	for {
		select {
		case <-ch:
			ch = nil // ended here: read how
			if done, err := ended(); done {
				return err
			}
		case <-poll:
			if done, err := ended(); done {
				return err
			}
		case <-ctx.Done():
			return ctx.Err()
		case <-timer.C:
			return errors.New("nobody finished the sign-in before its link expired")
		}
	}
}

// signInPoll is how often a call waiting for a sign-in looks at a shared
// store for its end on another replica.
const signInPoll = time.Second

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// signInAsker says whether the call can ask its client to open a link:
// its request or session declared URL-mode elicitation. peer is who to
// ask (nil for a 2026-07-28 request asked by input_required).
func (g *Gateway) signInAsker(ctx context.Context, c *call) (peer Peer, ok bool) {
	if c.asking != nil {
		return nil, c.asking.declaresURLElicitation()
	}
	if c.req.Caller.Session != "" {
		peer = g.peer(c.req.Caller.Session)
	} else {
		peer = peerFrom(ctx)
	}
	return peer, peer != nil && peer.Supports(CapabilityURLElicitation)
}

// CapabilityURLElicitation is what Peer.Supports is asked for URL-mode
// elicitation (a client's "elicitation": {"url": {}}).
const CapabilityURLElicitation = "elicitation.url"

// signInStep is the token step of a principal that has no login to an
// OAuth server (why says what is wrong with the one it has, if any): the
// call asks its client to have the person sign in by URL and, once signed
// in, carries the new token (c.token); a 2026-07-28 request is asked by
// input_required (c.ask), and its retry goes on. When the client cannot
// be asked by URL (or serve has no public URL), AUTH_REQUIRED says to ask
// the operator as before.
func (g *Gateway) signInStep(ctx context.Context, c *call, why string) *Error {
	opts := g.signIns.options()
	peer, askable := g.signInAsker(ctx, c)
	if opts == nil || !askable || c.oauthOwner == auth.Operator().Key() {
		return g.loginRequired(c.toolID, c.u, c.oauthOwner, why)
	}
	var s *SignInRecord
	if c.asking != nil {
		var answers map[string]json.RawMessage
		_ = json.Unmarshal(c.asking.InputResponses, &answers)
		if answer, ok := answers[signInKey]; ok && c.state.SignIn != "" {
			// The retry after the link was shown: wait for the sign-in
			// the person is finishing, then go on.
			if declined(answer) {
				return g.loginRequired(c.toolID, c.u, c.oauthOwner, "the sign-in was declined")
			}
			s = g.signIns.get(ctx, c.state.SignIn)
			if s == nil || s.Owner != c.oauthOwner || s.Server != c.u.name {
				return g.loginRequired(c.toolID, c.u, c.oauthOwner, "the sign-in link of this call is gone (it expired, or another replica of the gateway made it without shared state); call again for a new one")
			}
			return g.signedIn(ctx, c, s, nil)
		}
	}
	s, err := g.signIns.start(ctx, c.oauthOwner, c.u.name)
	if err != nil {
		return newError(CodeAuthRequired, c.toolID, err, map[string]any{"server": c.u.name}, "server %q needs an OAuth login (%s) and %v", c.u.name, why, err)
	}
	params, _ := json.Marshal(map[string]any{
		"mode":          "url",
		"message":       fmt.Sprintf("Server %q needs you to sign in (%s). Open the link, give your sandbox credential, and sign in at the server's authorization page; the call goes on once you have. The link is yours alone and works once, for %s.", c.u.name, why, time.Until(s.Expires).Round(time.Minute)),
		"url":           signInURL(opts.PublicURL, s.ID),
		"elicitationId": s.ElicitationID,
	})
	if c.asking != nil {
		requests, _ := json.Marshal(map[string]any{signInKey: map[string]any{"method": "elicitation/create", "params": json.RawMessage(params)}})
		st := c.state
		st.SignIn = s.ID
		c.ask = &InputRequired{Requests: requests, State: st.encode()}
		return nil
	}
	// A session (or a run that waits for its client): ask, then wait for
	// the flow; the caller's clock stands meanwhile, as for an approval.
	if pause := c.req.PauseClock; pause != nil {
		defer pause()()
	}
	askCtx, cancel := context.WithDeadline(ctx, s.Expires)
	defer cancel()
	raw, err := peer.Request(askCtx, "elicitation/create", params)
	if err != nil {
		g.signIns.end(ctx, s.ID, err)
		return g.loginRequired(c.toolID, c.u, c.oauthOwner, "asking to sign in failed: "+err.Error())
	}
	if declined(raw) {
		g.signIns.end(ctx, s.ID, errors.New("declined"))
		return g.loginRequired(c.toolID, c.u, c.oauthOwner, "the sign-in was declined")
	}
	return g.signedIn(askCtx, c, s, peer)
}

// declined reports whether an elicitation result is not an accept.
func declined(raw json.RawMessage) bool {
	var a struct {
		Action string `json:"action"`
	}
	return json.Unmarshal(raw, &a) != nil || a.Action != "accept"
}

// signedIn waits for s to finish, tells peer it did (a 2025 session's
// notifications/elicitation/complete), and takes the new token.
func (g *Gateway) signedIn(ctx context.Context, c *call, s *SignInRecord, peer Peer) *Error {
	if err := g.signIns.wait(ctx, s); err != nil {
		g.signIns.end(ctx, s.ID, err)
		return g.loginRequired(c.toolID, c.u, c.oauthOwner, "the sign-in did not finish: "+err.Error())
	}
	if peer != nil {
		note, _ := json.Marshal(map[string]string{"elicitationId": s.ElicitationID})
		peer.Notify("notifications/elicitation/complete", note)
	}
	tok, err := g.oauthToken(ctx, c.u, c.oauthOwner)
	if err != nil || tok == "" {
		return g.loginRequired(c.toolID, c.u, c.oauthOwner, "the sign-in finished but left no usable token")
	}
	c.token = tok
	g.observe.audit(AuditRecord{Kind: AuditKindSignIn, Tool: c.toolID, Principal: c.oauthOwner, Session: string(c.req.Caller.Session),
		Outcome: "OK", Reason: "signed in to server " + c.u.name + " by URL elicitation"})
	return nil
}

// --- the pages ---

// serveSignInPage is the link: GET shows the form that asks for the
// principal's credential, POST checks it and sends the browser on to the
// authorization server.
func (g *Gateway) serveSignInPage(w http.ResponseWriter, r *http.Request) {
	opts := g.signIns.options()
	s := g.signIns.get(r.Context(), r.PathValue("id"))
	if s == nil || time.Now().After(s.Expires) || s.Ended {
		signInPage(w, http.StatusNotFound, "This sign-in link is not valid: it expired, was used already, or never existed. Call the tool again for a new link.", "")
		return
	}
	if s.Opened {
		signInPage(w, http.StatusGone, "This sign-in link was used already; it works once. Call the tool again for a new link.", "")
		return
	}
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		signInPage(w, http.StatusOK, fmt.Sprintf("Sign in to server %q as principal %s. Give the credential (API key or access token) this principal uses with sandbox: the link is for it alone.", s.Server, s.Owner), "form")
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "GET, POST")
		http.Error(w, "use GET or POST", http.StatusMethodNotAllowed)
		return
	}
	if why := crossSite(r, opts.PublicURL); why != "" {
		// Another site's form, posted by the person's browser: with the
		// poster's own credential it would send this browser on to sign
		// in, and store the person's upstream account as the poster's
		// login. The link stays unused.
		signInPage(w, http.StatusForbidden, "This form was posted from another site ("+why+"); open the link itself and give the credential there.", "")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		signInPage(w, http.StatusBadRequest, "The form could not be read.", "form")
		return
	}
	who, ok := g.credentialPrincipal(r, opts, strings.TrimSpace(r.PostForm.Get("credential")))
	if !ok || who.Key() != s.Owner {
		// Not the principal: the link stays unused for the one it is for.
		g.observe.audit(AuditRecord{Kind: AuditKindSignIn, Principal: s.Owner, Outcome: "UNAUTHORIZED",
			Reason: "a sign-in link to server " + s.Server + " was given a credential that is not its principal's"})
		signInPage(w, http.StatusForbidden, "That credential is not the one of the principal this link is for.", "form")
		return
	}
	// The link is used here, once, whichever replica another browser
	// (or the same one, twice) reaches.
	nonce := randomHex(32)
	err := g.signIns.store.Update(r.Context(), s.ID, func(cur *SignInRecord) error {
		if cur.Opened || cur.Ended {
			return errSignInUsed
		}
		cur.Opened, cur.BrowserHash = true, browserHash(nonce)
		return nil
	})
	switch {
	case errors.Is(err, errSignInUsed):
		signInPage(w, http.StatusGone, "This sign-in link was used already; it works once. Call the tool again for a new link.", "")
		return
	case errors.Is(err, ErrNoSuchSignIn):
		signInPage(w, http.StatusNotFound, "This sign-in link is not valid: it expired, was used already, or never existed. Call the tool again for a new link.", "")
		return
	case err != nil:
		signInPage(w, http.StatusServiceUnavailable, "The sign-in cannot go on now ("+err.Error()+"); try the link again in a moment.", "")
		return
	}
	p, err := g.prepareLogin(r.Context(), g.upstreams[s.Server], s.Owner, opts.PublicURL+"/oauth/callback", opts.PublicURL+"/oauth/callback", oauthHTTPClient())
	if err != nil {
		g.signIns.end(r.Context(), s.ID, err)
		signInPage(w, http.StatusBadGateway, "The sign-in could not start: "+err.Error(), "")
		return
	}
	login := &SignInLogin{State: p.state, Verifier: p.verify, Client: *p.grant, Issuer: p.expect.issuer, IssuerRequired: p.expect.required, TokenEndpoint: p.token}
	if err := g.signIns.store.Update(r.Context(), s.ID, func(cur *SignInRecord) error { cur.Login = login; return nil }); err != nil {
		g.signIns.end(r.Context(), s.ID, err)
		signInPage(w, http.StatusServiceUnavailable, "The sign-in could not start: "+err.Error(), "")
		return
	}
	http.SetCookie(w, &http.Cookie{Name: signInCookieName(s.ID), Value: nonce, Path: cookiePath(opts.PublicURL), HttpOnly: true,
		Secure: strings.HasPrefix(opts.PublicURL, "https:"), SameSite: http.SameSiteLaxMode, Expires: s.Expires})
	http.Redirect(w, r, p.authURL, http.StatusSeeOther)
}

// crossSite says why a POST to a link came from another site than the
// link's page ("" when it did not): a browser's Sec-Fetch-Site, or an
// Origin that is not the public URL's (the link's page is there; a name
// the request's Host gives, a DNS rebinding's, is not). A client that
// sends neither (no browser) is let through: the credential it posts is
// its own.
func crossSite(r *http.Request, public string) string {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" {
		return "Sec-Fetch-Site: " + site
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return ""
	}
	o, err := url.Parse(origin) // "null" (a sandboxed frame's, a redirect's) has no host: refused
	p, _ := url.Parse(public)
	if err != nil || o.Host == "" || webOrigin(o) != webOrigin(p) {
		return "Origin: " + clip(origin, 100)
	}
	return ""
}

// webOrigin is u's scheme, host and port as a browser's Origin header
// spells them: lower case, without the scheme's default port (a public
// URL may name ":443").
func webOrigin(u *url.URL) string {
	scheme, host, port := strings.ToLower(u.Scheme), strings.ToLower(u.Hostname()), u.Port()
	if scheme == "https" && port == "443" || scheme == "http" && port == "80" {
		port = ""
	}
	if port != "" {
		host = net.JoinHostPort(host, port)
	} else if strings.Contains(host, ":") {
		host = "[" + host + "]" // an IPv6 literal
	}
	return scheme + "://" + host
}

// browserHash is what the store keeps of the browser's cookie: its hash,
// so what Redis holds cannot finish a flow by itself.
func browserHash(nonce string) string {
	h := sha256.Sum256([]byte("sandbox sign-in browser\x00" + nonce))
	return hex.EncodeToString(h[:])
}

// resumeLogin is the authorization request of s, on whichever replica the
// redirect reached: its client, state and PKCE verifier.
func (g *Gateway) resumeLogin(s *SignInRecord) (*pendingLogin, error) {
	u := g.upstreams[s.Server]
	if u == nil {
		return nil, fmt.Errorf("server %q is no longer in the config", s.Server)
	}
	store, err := g.oauthStore()
	if err != nil {
		return nil, err
	}
	grant := s.Login.Client
	tokens := transport.NewMemoryTokenStore()
	h := newGrantHandler(u.sc, &grant, tokens, oauthHTTPClient())
	h.SetExpectedState(s.Login.State)
	return &pendingLogin{g: g, u: u, owner: s.Owner, store: store, grant: &grant, tokens: tokens, h: h, token: s.Login.TokenEndpoint,
		expect: issuerCheck{issuer: s.Login.Issuer, required: s.Login.IssuerRequired}, state: s.Login.State, verify: s.Login.Verifier}, nil
}

// cookiePath is the path of the callback under the public URL's prefix.
func cookiePath(public string) string {
	u, _ := url.Parse(public)
	return strings.TrimRight(u.Path, "/") + "/oauth/"
}

// credentialPrincipal runs credential through serve's authentication.
func (g *Gateway) credentialPrincipal(r *http.Request, opts *SignInOptions, credential string) (auth.Principal, bool) {
	if credential == "" {
		return auth.Principal{}, false
	}
	who, ok := auth.Check(opts.Authenticate, r, credential)
	return who, ok && !who.IsAnonymous()
}

// serveSignInCallback is the authorization server's redirect: from the
// browser that proved to be the principal, it exchanges the code and
// keeps the grant.
func (g *Gateway) serveSignInCallback(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var s *SignInRecord
	if state := q.Get("state"); state != "" {
		s, _ = g.signIns.store.ByState(r.Context(), state)
	}
	if s == nil || s.Login == nil || s.Ended || s.Login.Redeemed {
		signInPage(w, http.StatusBadRequest, "This is no sign-in sandbox is waiting for: it finished, expired, or never started. Call the tool again for a new link.", "")
		return
	}
	ck, err := r.Cookie(signInCookieName(s.ID))
	if err != nil || subtle.ConstantTimeCompare([]byte(browserHash(ck.Value)), []byte(s.BrowserHash)) != 1 {
		// Another browser than the one that gave the principal's
		// credential: someone sent on to the authorization server by a
		// link that was not theirs. Their code goes nowhere.
		g.observe.audit(AuditRecord{Kind: AuditKindSignIn, Principal: s.Owner, Outcome: "UNAUTHORIZED",
			Reason: "a sign-in to server " + s.Server + " came back in another browser than the principal's"})
		signInPage(w, http.StatusForbidden, "This sign-in was started in another browser; it can only finish in the browser where the principal's credential was given. Nothing was stored.", "")
		return
	}
	if err := (issuerCheck{issuer: s.Login.Issuer, required: s.Login.IssuerRequired}).check(q); err != nil {
		g.signIns.end(r.Context(), s.ID, err)
		signInPage(w, http.StatusBadRequest, "sandbox refused this sign-in: "+err.Error(), "")
		return
	}
	if e := q.Get("error"); e != "" {
		msg := e
		if d := q.Get("error_description"); d != "" {
			msg += ": " + d
		}
		err := fmt.Errorf("the authorization server refused the sign-in: %s", clip(msg, 300))
		g.signIns.end(r.Context(), s.ID, err)
		signInPage(w, http.StatusOK, err.Error()+". Call the tool again to try anew.", "")
		return
	}
	if q.Get("code") == "" {
		signInPage(w, http.StatusBadRequest, "The redirect brought no authorization code.", "")
		return
	}
	// One redirect is taken, whichever replicas receive it again.
	if err := g.signIns.store.Update(r.Context(), s.ID, func(cur *SignInRecord) error {
		if cur.Ended || cur.Login == nil || cur.Login.Redeemed {
			return errSignInUsed
		}
		cur.Login.Redeemed = true
		return nil
	}); err != nil {
		signInPage(w, http.StatusBadRequest, "This is no sign-in sandbox is waiting for: it finished, expired, or never started. Call the tool again for a new link.", "")
		return
	}
	p, err := g.resumeLogin(s)
	if err == nil {
		_, err = p.exchange(r.Context(), q.Get("code"))
	}
	g.signIns.end(r.Context(), s.ID, err)
	http.SetCookie(w, &http.Cookie{Name: signInCookieName(s.ID), Value: "", Path: cookiePath(g.signIns.options().PublicURL), MaxAge: -1, HttpOnly: true})
	if err != nil {
		signInPage(w, http.StatusBadGateway, "The sign-in failed: "+err.Error(), "")
		return
	}
	signInPage(w, http.StatusOK, fmt.Sprintf("Signed in to server %q as %s. You can close this tab: the call goes on.", s.Server, s.Owner), "")
}

// signInPage writes a small page: the message and, with form, the
// credential form (posted back to the link itself: a relative action, right
// behind any path prefix).
func signInPage(w http.ResponseWriter, status int, message, form string) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	// same-origin, not no-referrer: under no-referrer a browser sends
	// "Origin: null" with the page's own form, which crossSite must refuse;
	// the link still goes to no other site (the authorization server).
	h.Set("Referrer-Policy", "same-origin")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Content-Security-Policy", "default-src 'none'; form-action 'self' https: http:; frame-ancestors 'none'")
	w.WriteHeader(status)
	fmt.Fprintf(w, "<!doctype html><html><head><meta charset=utf-8><title>sandbox sign-in</title></head><body><h1>sandbox sign-in</h1><p>%s</p>", html.EscapeString(message))
	if form != "" {
		fmt.Fprint(w, `<form method="post"><label>Credential <input type="password" name="credential" autocomplete="off" autofocus></label> <button type="submit">Continue</button></form>`)
	}
	fmt.Fprint(w, "</body></html>")
}
