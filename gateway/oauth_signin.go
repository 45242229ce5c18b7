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
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

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

// signInCookie holds, in the browser that proved to be the principal, the
// nonce the redirect must bring back.
const signInCookie = "sandbox_signin"

// signInDesk holds the sign-ins in progress, by link id and by the OAuth
// state of their authorization request. Per process: the link is served
// by the replica that made it (docs/operations.md).
type signInDesk struct {
	mu      sync.Mutex
	opts    *SignInOptions
	byID    map[string]*signIn
	byState map[string]*signIn
}

// signIn is one link: for one principal, one server, one call.
type signIn struct {
	id            string // in the link
	elicitationID string // what the client is told (the link's id stays in the URL)
	owner, server string
	expires       time.Time
	done          chan struct{} // closed when the flow ended (err says how)

	// set under the desk's lock:
	opened bool          // the principal proved itself: the link is used
	nonce  string        // the cookie of the browser that did
	login  *pendingLogin // from then on
	err    error
	ended  bool
}

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
func (d *signInDesk) start(owner, server string) (*signIn, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := time.Now()
	n := 0
	for id, s := range d.byID {
		if now.After(s.expires) {
			d.dropLocked(id)
			continue
		}
		if s.owner == owner && !s.ended {
			n++
		}
	}
	if n >= maxSignInsPerPrincipal {
		return nil, fmt.Errorf("%d sign-in links of yours are open already (the most one principal may have); finish or let them expire (%s), then call again", n, d.opts.TTL)
	}
	if d.byID == nil {
		d.byID, d.byState = map[string]*signIn{}, map[string]*signIn{}
	}
	s := &signIn{id: randomHex(32), elicitationID: randomHex(16), owner: owner, server: server,
		expires: now.Add(d.opts.TTL), done: make(chan struct{})}
	d.byID[s.id] = s
	return s, nil
}

func (d *signInDesk) dropLocked(id string) {
	s := d.byID[id]
	if s == nil {
		return
	}
	delete(d.byID, id)
	if s.login != nil {
		delete(d.byState, s.login.state)
	}
	if !s.ended {
		s.ended, s.err = true, errors.New("the sign-in link expired before the sign-in finished")
		close(s.done)
	}
}

// end records how s ended. It stays, ended, until its link would have
// expired: a 2026-07-28 retry that comes after the flow learns from it how
// the flow ended.
func (d *signInDesk) end(s *signIn, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !s.ended {
		s.ended, s.err = true, err
		close(s.done)
	}
	if s.login != nil {
		delete(d.byState, s.login.state)
	}
}

func (d *signInDesk) get(id string) *signIn {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.byID[id]
}

func (s *signIn) url(base string) string { return base + "/oauth/signin/" + s.id }

// wait waits for the flow to end, ctx, or the link to expire.
func (s *signIn) wait(ctx context.Context) error {
	timer := time.NewTimer(time.Until(s.expires))
	defer timer.Stop()
	select {
	case <-s.done:
		return s.err
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return errors.New("nobody finished the sign-in before its link expired")
	}
}

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
	var s *signIn
	if c.asking != nil {
		var answers map[string]json.RawMessage
		_ = json.Unmarshal(c.asking.InputResponses, &answers)
		if answer, ok := answers[signInKey]; ok && c.state.SignIn != "" {
			// The retry after the link was shown: wait for the sign-in
			// the person is finishing (on this replica), then go on.
			if declined(answer) {
				return g.loginRequired(c.toolID, c.u, c.oauthOwner, "the sign-in was declined")
			}
			s = g.signIns.get(c.state.SignIn)
			if s == nil || s.owner != c.oauthOwner || s.server != c.u.name {
				return g.loginRequired(c.toolID, c.u, c.oauthOwner, "the sign-in link of this call is gone (it expired, or another replica of the gateway made it); call again for a new one")
			}
			return g.signedIn(ctx, c, s, nil)
		}
	}
	s, err := g.signIns.start(c.oauthOwner, c.u.name)
	if err != nil {
		return newError(CodeAuthRequired, c.toolID, err, map[string]any{"server": c.u.name}, "server %q needs an OAuth login (%s) and %v", c.u.name, why, err)
	}
	params, _ := json.Marshal(map[string]any{
		"mode":          "url",
		"message":       fmt.Sprintf("Server %q needs you to sign in (%s). Open the link, give your sandbox credential, and sign in at the server's authorization page; the call goes on once you have. The link is yours alone and works once, for %s.", c.u.name, why, time.Until(s.expires).Round(time.Minute)),
		"url":           s.url(opts.PublicURL),
		"elicitationId": s.elicitationID,
	})
	if c.asking != nil {
		requests, _ := json.Marshal(map[string]any{signInKey: map[string]any{"method": "elicitation/create", "params": json.RawMessage(params)}})
		st := c.state
		st.SignIn = s.id
		c.ask = &InputRequired{Requests: requests, State: st.encode()}
		return nil
	}
	// A session (or a run that waits for its client): ask, then wait for
	// the flow; the caller's clock stands meanwhile, as for an approval.
	if pause := c.req.PauseClock; pause != nil {
		defer pause()()
	}
	askCtx, cancel := context.WithDeadline(ctx, s.expires)
	defer cancel()
	raw, err := peer.Request(askCtx, "elicitation/create", params)
	if err != nil {
		g.signIns.end(s, err)
		return g.loginRequired(c.toolID, c.u, c.oauthOwner, "asking to sign in failed: "+err.Error())
	}
	if declined(raw) {
		g.signIns.end(s, errors.New("declined"))
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
func (g *Gateway) signedIn(ctx context.Context, c *call, s *signIn, peer Peer) *Error {
	if err := s.wait(ctx); err != nil {
		g.signIns.end(s, err)
		return g.loginRequired(c.toolID, c.u, c.oauthOwner, "the sign-in did not finish: "+err.Error())
	}
	if peer != nil {
		note, _ := json.Marshal(map[string]string{"elicitationId": s.elicitationID})
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
	s := g.signIns.get(r.PathValue("id"))
	if s == nil || time.Now().After(s.expires) {
		signInPage(w, http.StatusNotFound, "This sign-in link is not valid: it expired, was used already, or never existed. Call the tool again for a new link.", "")
		return
	}
	g.signIns.mu.Lock()
	opened, ended := s.opened, s.ended
	g.signIns.mu.Unlock()
	if ended {
		signInPage(w, http.StatusNotFound, "This sign-in link is not valid: it expired, was used already, or never existed. Call the tool again for a new link.", "")
		return
	}
	if opened {
		signInPage(w, http.StatusGone, "This sign-in link was used already; it works once. Call the tool again for a new link.", "")
		return
	}
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		signInPage(w, http.StatusOK, fmt.Sprintf("Sign in to server %q as principal %s. Give the credential (API key or access token) this principal uses with sandbox: the link is for it alone.", s.server, s.owner), "form")
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "GET, POST")
		http.Error(w, "use GET or POST", http.StatusMethodNotAllowed)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		signInPage(w, http.StatusBadRequest, "The form could not be read.", "form")
		return
	}
	who, ok := g.credentialPrincipal(r, opts, strings.TrimSpace(r.PostForm.Get("credential")))
	if !ok || who.Key() != s.owner {
		// Not the principal: the link stays unused for the one it is for.
		g.observe.audit(AuditRecord{Kind: AuditKindSignIn, Principal: s.owner, Outcome: "UNAUTHORIZED",
			Reason: "a sign-in link to server " + s.server + " was given a credential that is not its principal's"})
		signInPage(w, http.StatusForbidden, "That credential is not the one of the principal this link is for.", "form")
		return
	}
	g.signIns.mu.Lock()
	if s.opened || s.ended {
		g.signIns.mu.Unlock()
		signInPage(w, http.StatusGone, "This sign-in link was used already; it works once. Call the tool again for a new link.", "")
		return
	}
	s.opened, s.nonce = true, randomHex(32)
	g.signIns.mu.Unlock()
	p, err := g.prepareLogin(r.Context(), g.upstreams[s.server], s.owner, opts.PublicURL+"/oauth/callback", opts.PublicURL+"/oauth/callback", oauthHTTPClient())
	if err != nil {
		g.signIns.end(s, err)
		signInPage(w, http.StatusBadGateway, "The sign-in could not start: "+err.Error(), "")
		return
	}
	g.signIns.mu.Lock()
	s.login = p
	g.signIns.byState[p.state] = s
	g.signIns.mu.Unlock()
	http.SetCookie(w, &http.Cookie{Name: signInCookie, Value: s.nonce, Path: cookiePath(opts.PublicURL), HttpOnly: true,
		Secure: strings.HasPrefix(opts.PublicURL, "https:"), SameSite: http.SameSiteLaxMode, Expires: s.expires})
	http.Redirect(w, r, p.authURL, http.StatusSeeOther)
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
	check := r.Clone(r.Context())
	check.Header = http.Header{"Authorization": {"Bearer " + credential}}
	check.Body, check.Form, check.PostForm = http.NoBody, nil, nil
	var who auth.Principal
	ok := false
	opts.Authenticate(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		who, ok = auth.PrincipalFrom(r.Context()), true
	})).ServeHTTP(discardWriter{}, check)
	return who, ok && !who.IsAnonymous()
}

// discardWriter takes the authentication's refusal, which the page words
// itself.
type discardWriter struct{}

func (discardWriter) Header() http.Header         { return http.Header{} }
func (discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (discardWriter) WriteHeader(int)             {}

// serveSignInCallback is the authorization server's redirect: from the
// browser that proved to be the principal, it exchanges the code and
// keeps the grant.
func (g *Gateway) serveSignInCallback(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	g.signIns.mu.Lock()
	s := g.signIns.byState[q.Get("state")]
	g.signIns.mu.Unlock()
	if s == nil || s.login == nil {
		signInPage(w, http.StatusBadRequest, "This is no sign-in sandbox is waiting for: it finished, expired, or never started here. Call the tool again for a new link.", "")
		return
	}
	ck, err := r.Cookie(signInCookie)
	if err != nil || subtle.ConstantTimeCompare([]byte(ck.Value), []byte(s.nonce)) != 1 {
		// Another browser than the one that gave the principal's
		// credential: someone sent on to the authorization server by a
		// link that was not theirs. Their code goes nowhere.
		g.observe.audit(AuditRecord{Kind: AuditKindSignIn, Principal: s.owner, Outcome: "UNAUTHORIZED",
			Reason: "a sign-in to server " + s.server + " came back in another browser than the principal's"})
		signInPage(w, http.StatusForbidden, "This sign-in was started in another browser; it can only finish in the browser where the principal's credential was given. Nothing was stored.", "")
		return
	}
	if err := s.login.expect.check(q); err != nil {
		g.signIns.end(s, err)
		signInPage(w, http.StatusBadRequest, "sandbox refused this sign-in: "+err.Error(), "")
		return
	}
	if e := q.Get("error"); e != "" {
		msg := e
		if d := q.Get("error_description"); d != "" {
			msg += ": " + d
		}
		err := fmt.Errorf("the authorization server refused the sign-in: %s", clip(msg, 300))
		g.signIns.end(s, err)
		signInPage(w, http.StatusOK, err.Error()+". Call the tool again to try anew.", "")
		return
	}
	if q.Get("code") == "" {
		signInPage(w, http.StatusBadRequest, "The redirect brought no authorization code.", "")
		return
	}
	_, err = s.login.exchange(r.Context(), q.Get("code"))
	g.signIns.end(s, err)
	http.SetCookie(w, &http.Cookie{Name: signInCookie, Value: "", Path: cookiePath(g.signIns.options().PublicURL), MaxAge: -1, HttpOnly: true})
	if err != nil {
		signInPage(w, http.StatusBadGateway, "The sign-in failed: "+err.Error(), "")
		return
	}
	signInPage(w, http.StatusOK, fmt.Sprintf("Signed in to server %q as %s. You can close this tab: the call goes on.", s.server, s.owner), "")
}

// signInPage writes a small page: the message and, with form, the
// credential form (posted back to the link itself: a relative action, right
// behind any path prefix).
func signInPage(w http.ResponseWriter, status int, message, form string) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Content-Security-Policy", "default-src 'none'; form-action 'self' https: http:; frame-ancestors 'none'")
	w.WriteHeader(status)
	fmt.Fprintf(w, "<!doctype html><html><head><meta charset=utf-8><title>sandbox sign-in</title></head><body><h1>sandbox sign-in</h1><p>%s</p>", html.EscapeString(message))
	if form != "" {
		fmt.Fprint(w, `<form method="post"><label>Credential <input type="password" name="credential" autocomplete="off" autofocus></label> <button type="submit">Continue</button></form>`)
	}
	fmt.Fprint(w, "</body></html>")
}
