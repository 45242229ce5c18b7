// Package console is the operator console: a face of the gateway and the
// code-mode engine in the browser, as gateway/frontend is their face for
// MCP clients. `sandbox serve --http` installs it at /ui/ behind the same
// authentication as /mcp; only principals that may operate
// (auth.Principal.MayOperate) see it.
//
// It reads what the gateway and the engine already tell (Gateway.Servers,
// the approval desk's WatchApprovals, Engine.ObserveRuns and RunStats) and
// acts only through their public operations (DecideApproval). Pages are
// rendered on the server with html/template, which escapes every string an
// upstream, an agent or a snippet wrote; the one script is a file of its
// own (no inline script, so the Content-Security-Policy forbids every
// inline one), and a page that only reads works without it. Every POST
// carries a token bound to the principal (CSRF).
package console

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/codemode"
	"github.com/sandboxrt/sandbox/gateway"
	"github.com/sandboxrt/sandbox/internal/mcphttp"
	"github.com/sandboxrt/sandbox/runs"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Options configure a Console.
type Options struct {
	Gateway *gateway.Gateway // required
	Engine  *codemode.Engine // nil: code mode is off (no runs, no metrics of them)
	// Tasks are the runs that outlive their request (the tasks
	// extension), listed beside the runs (nil: none).
	Tasks *runs.Registry
	// Authenticate puts serve's authentication in front of a handler (the
	// one /mcp is behind). Nil: nobody is authenticated, and the console
	// is for everyone who reaches it only when Open says so.
	Authenticate func(http.Handler) http.Handler
	// Open serves the console to unauthenticated requests (the anonymous
	// principal): for a serve on loopback without "gateway.auth", where
	// whoever reaches the port may already run code with the operator's
	// tokens.
	Open bool
	// AllowedHosts are extra Host names accepted on loopback connections
	// (the DNS-rebinding check, as for /mcp).
	AllowedHosts []string
	// Principals are the ones the search playground may search as (the
	// API keys' principals): OAuth principals are not known in advance.
	Principals []auth.Principal
	// AuditPath is the gateway's audit log ("": it keeps none), which the
	// audit page searches.
	AuditPath string
	// Key is the secret the CSRF tokens and the cookies' seal are derived
	// from: the same on every replica behind one balancer (serve derives
	// it from "gateway.redis"'s encryption key), so a person signed in on
	// one is signed in on all. Nil: a random one for this process.
	Key []byte
	// Revocations keeps the signed-out sessions (nil: the process's own,
	// NewMemoryRevocations): shared by the replicas that share Key.
	Revocations Revocations
	Logger      *slog.Logger
}

// Console serves the operator console. Close stops its watchers.
type Console struct {
	opts    Options
	pages   map[string]*template.Template
	static  http.Handler
	hub     *hub
	runs    *runLog
	allowed map[string]bool
	secret  []byte // keys the CSRF tokens and the cookies (Options.Key)
	revoked Revocations
	closed  chan struct{}
	stop    []func()
	ctx     context.Context // ends with Close: what the console started in the background
	logins  logins
	tasks   watchedTasks // the task pages shown live

	closeOnce sync.Once
}

// cookieName holds the credential a person signed in with: a browser
// cannot send an Authorization header on a page load, so the console
// keeps the API key or access token it was given in an HttpOnly,
// SameSite=Strict cookie scoped to its own path, sealed (AES-256-GCM under
// the console's key, with an expiry: cookieLife, and a session id a
// sign-out revokes: sessions.go), and every request is authenticated with
// it exactly as /mcp authenticates a bearer token. A cookie reaches every
// port of its host: sealed, it gives another service there nothing it can
// use against /mcp.
const cookieName = "sandbox_console"

// cookieLife is how long a sign-in lasts.
const cookieLife = 12 * time.Hour

// sealCredential is the cookie's value for credential: a new session.
func (c *Console) sealCredential(credential string, now time.Time) string {
	return sealCookie(c.cookieAEAD(), cookieName, session{Credential: credential, ID: newSessionID(), Issued: now.Unix(), Expires: now.Add(cookieLife).Unix()})
}

// sealCookie is the value of cookie name holding v as JSON, sealed by aead
// (a fresh nonce before it; the name as additional data, so that one
// cookie's value does not open as another's).
func sealCookie(aead cipher.AEAD, name string, v any) string {
	plain, _ := json.Marshal(v)
	nonce := make([]byte, aead.NonceSize())
	_, _ = rand.Read(nonce)
	return base64.RawURLEncoding.EncodeToString(aead.Seal(nonce, nonce, plain, []byte(name)))
}

// openCookie reads into v what sealCookie sealed as cookie name's value;
// false when value is not one (another key, another cookie, tampered).
func openCookie(aead cipher.AEAD, name, value string, v any) bool {
	sealed, err := base64.RawURLEncoding.DecodeString(value)
	if err != nil || len(sealed) < aead.NonceSize() {
		return false
	}
	plain, err := aead.Open(nil, sealed[:aead.NonceSize()], sealed[aead.NonceSize():], []byte(name))
	return err == nil && json.Unmarshal(plain, v) == nil
}

// unseal is the session a cookie's value seals, unless it is not one
// sealed under the console's key or it has expired. Whether it was signed
// out is openSession's question.
func (c *Console) unseal(v string, now time.Time) (session, bool) {
	var s session
	if !openCookie(c.cookieAEAD(), cookieName, v, &s) || s.Credential == "" || s.ID == "" || now.Unix() > s.Expires {
		return session{}, false
	}
	return s, true
}

// cookieAEAD seals the cookies under a key of their own, derived from the
// console's key (the CSRF tokens' key). v2: the cookie holds a session id.
func (c *Console) cookieAEAD() cipher.AEAD {
	m := hmac.New(sha256.New, c.secret)
	m.Write([]byte("sandbox console cookie v2"))
	block, _ := aes.NewCipher(m.Sum(nil))
	aead, _ := cipher.NewGCM(block)
	return aead
}

// New makes a console and starts watching the gateway and the engine.
func New(opts Options) (*Console, error) {
	if opts.Gateway == nil {
		return nil, errors.New("console: Options.Gateway is required")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	pages, err := parseTemplates()
	if err != nil {
		return nil, err
	}
	sub, err := fs.Sub(staticFS, "static")
	if err != nil {
		return nil, err
	}
	c := &Console{opts: opts, pages: pages, static: http.StripPrefix("/static/", http.FileServer(http.FS(sub))), hub: newHub(),
		allowed: map[string]bool{}, secret: append([]byte(nil), opts.Key...), revoked: opts.Revocations, closed: make(chan struct{})}
	for _, h := range opts.AllowedHosts {
		c.allowed[strings.ToLower(h)] = true
	}
	if len(c.secret) == 0 {
		c.secret = make([]byte, 32)
		if _, err := rand.Read(c.secret); err != nil {
			return nil, err
		}
	}
	if c.revoked == nil {
		c.revoked = NewMemoryRevocations(nil)
	}
	c.runs = newRunLog(c.hub)
	ctx, cancel := context.WithCancel(context.Background())
	c.ctx = ctx
	go c.watchServers(ctx)
	c.stop = append(c.stop, cancel, opts.Gateway.WatchApprovals(func() { c.hub.notify(topicApprovals) }))
	if opts.Engine != nil {
		c.stop = append(c.stop, opts.Engine.ObserveRuns(c.runs))
	}
	if opts.Tasks != nil {
		go c.watchTasks(ctx)
	}
	return c, nil
}

// Close stops watching and ends the open event streams.
func (c *Console) Close() {
	c.closeOnce.Do(func() {
		close(c.closed)
		for _, fn := range c.stop {
			fn()
		}
	})
}

// guardPage sets the headers every page of the console and the approval
// page carry (csp, its Content-Security-Policy, is each one's own) and
// refuses a request that fails the DNS-rebinding check; it reports whether
// the request may be served.
func guardPage(w http.ResponseWriter, r *http.Request, allowed map[string]bool, csp string) bool {
	h := w.Header()
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	// same-origin, not no-referrer: under no-referrer a browser sends
	// "Origin: null" with a form's POST, which the origin checks (and the
	// DNS-rebinding check) must refuse.
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
	if msg := mcphttp.Rebinding(r, allowed); msg != "" {
		http.Error(w, msg, http.StatusForbidden)
		return false
	}
	return true
}

// ServeHTTP serves the console. Mount it with its prefix stripped:
// http.StripPrefix("/ui", console). Its links are relative, so it works
// behind a reverse proxy that adds a prefix of its own.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !guardPage(w, r, c.allowed, "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "+
		"form-action 'self'; frame-ancestors 'none'; base-uri 'none'") {
		return
	}
	h := w.Header()
	path := strings.TrimPrefix(r.URL.Path, "/")
	switch {
	case strings.HasPrefix(path, "static/"):
		h.Set("Cache-Control", "no-cache")
		c.static.ServeHTTP(w, r)
		return
	case path == "login":
		c.serveLogin(w, r)
		return
	case path == "logout":
		c.serveLogout(w, r)
		return
	}
	if c.opts.Authenticate == nil {
		c.serveAuthorized(w, r)
		return
	}
	viaCookie := false
	if r.Header.Get("Authorization") == "" {
		ck, err := r.Cookie(cookieName)
		if err != nil || ck.Value == "" {
			c.toLogin(w, r)
			return
		}
		s, err := c.openSession(r.Context(), ck.Value, time.Now())
		if err != nil && !errors.Is(err, errSignedOut) {
			c.opts.Logger.Warn("console: the signed-out sessions could not be read", "error", err)
			http.Error(w, "the console cannot tell whether this sign-in was ended (its shared state does not answer); try again shortly", http.StatusServiceUnavailable)
			return
		}
		if err != nil { // expired, signed out, or sealed under another key
			http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode})
			w.Header().Set("Location", relativeTo(r, "login?expired=1"))
			w.WriteHeader(http.StatusSeeOther)
			return
		}
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+s.Credential)
		viaCookie = true
	}
	if viaCookie {
		// A credential the cookie kept that is no longer accepted (a key
		// removed, a token expired) sends the person to sign in again.
		w = &refusedToLogin{ResponseWriter: w, r: r}
	}
	c.opts.Authenticate(http.HandlerFunc(c.serveAuthorized)).ServeHTTP(w, r)
}

// serveAuthorized serves an authenticated request: operators only.
func (c *Console) serveAuthorized(w http.ResponseWriter, r *http.Request) {
	p := auth.PrincipalFrom(r.Context())
	if !p.MayOperate() && !(c.opts.Open && p.IsAnonymous()) {
		c.forbidden(w, r, p)
		return
	}
	if r.Method == http.MethodPost {
		r.Body = http.MaxBytesReader(w, r.Body, 64<<10) // the console's forms are small
		if why := c.checkPost(r, p); why != "" {
			c.opts.Logger.Warn("console: a POST was refused", "principal", p.Key(), "path", r.URL.Path, "why", why)
			http.Error(w, "Forbidden: "+why, http.StatusForbidden)
			return
		}
	} else if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD, POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	c.route(w, r, p)
}

// forbidden answers a principal that may not operate.
func (c *Console) forbidden(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	w.WriteHeader(http.StatusForbidden)
	c.render(w, r, "forbidden", page{Title: "Forbidden", Principal: p.Key()}, nil)
}

// csrfToken is the token every form of principal p carries: an HMAC of
// its identity under the process's secret. A page of another origin
// cannot read it, so it cannot make the browser POST on the person's
// behalf.
func (c *Console) csrfToken(p auth.Principal) string {
	m := hmac.New(sha256.New, c.secret)
	m.Write([]byte(p.Key()))
	return hex.EncodeToString(m.Sum(nil))
}

// checkPost says why a state-changing request is refused ("" when it is
// not): it must come from a page of the console's own origin and carry the
// principal's CSRF token.
func (c *Console) checkPost(r *http.Request, p auth.Principal) string {
	if why := sameOrigin(r); why != "" {
		return why
	}
	if err := r.ParseForm(); err != nil {
		return "the form could not be read"
	}
	got := r.PostForm.Get("csrf")
	if got == "" || subtle.ConstantTimeCompare([]byte(got), []byte(c.csrfToken(p))) != 1 {
		return "the form's CSRF token is missing or wrong; reload the page and try again"
	}
	return ""
}

// sameOrigin refuses a request a browser marks as sent from another site.
func sameOrigin(r *http.Request) string {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" {
		return "a cross-site request (Sec-Fetch-Site: " + site + ")"
	}
	if origin := r.Header.Get("Origin"); origin != "" {
		u, err := url.Parse(origin) // "null" (a sandboxed frame's) has no host: refused
		if err != nil || !strings.EqualFold(u.Host, r.Host) {
			return fmt.Sprintf("a request from another origin (%q)", origin)
		}
	}
	return ""
}

// toLogin sends a person without a credential to the sign-in page (a page
// load), or answers 401 (a script's request).
func (c *Console) toLogin(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && !strings.HasPrefix(strings.TrimPrefix(r.URL.Path, "/"), "events") {
		w.Header().Set("Location", relativeTo(r, "login"))
		w.WriteHeader(http.StatusSeeOther)
		return
	}
	http.Error(w, "Unauthorized: sign in at the console's login page", http.StatusUnauthorized)
}

// relativeTo is a relative reference to a console path from the request's:
// the console's links never name the prefix it is served under.
func relativeTo(r *http.Request, target string) string {
	depth := strings.Count(strings.TrimPrefix(r.URL.Path, "/"), "/")
	return strings.Repeat("../", depth) + target
}

// refusedToLogin turns the authentication's 401 for a credential the
// cookie kept into a redirect to the sign-in page, forgetting the cookie.
type refusedToLogin struct {
	http.ResponseWriter
	r       *http.Request
	refused bool
}

func (w *refusedToLogin) WriteHeader(code int) {
	if code == http.StatusUnauthorized {
		w.refused = true
		http.SetCookie(w.ResponseWriter, &http.Cookie{Name: cookieName, Value: "", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode})
		w.ResponseWriter.Header().Del("WWW-Authenticate")
		w.ResponseWriter.Header().Set("Location", relativeTo(w.r, "login?expired=1"))
		w.ResponseWriter.WriteHeader(http.StatusSeeOther)
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *refusedToLogin) Write(b []byte) (int, error) {
	if w.refused {
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}

func (w *refusedToLogin) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok && !w.refused {
		f.Flush()
	}
}

// serveLogin shows the sign-in form, and takes a credential: it is
// checked by the same authentication as /mcp, and kept in the cookie only
// for a principal that may operate.
func (c *Console) serveLogin(w http.ResponseWriter, r *http.Request) {
	if c.opts.Authenticate == nil {
		w.Header().Set("Location", "./")
		w.WriteHeader(http.StatusSeeOther)
		return
	}
	if r.Method != http.MethodPost {
		msg := ""
		if r.URL.Query().Get("expired") != "" {
			msg = "The credential you signed in with is no longer accepted. Sign in again."
		}
		c.render(w, r, "login", page{Title: "Sign in", Message: msg}, nil)
		return
	}
	if why := sameOrigin(r); why != "" {
		http.Error(w, "Forbidden: "+why, http.StatusForbidden)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "the form could not be read", http.StatusBadRequest)
		return
	}
	credential := strings.TrimSpace(r.PostForm.Get("credential"))
	if credential == "" {
		c.render(w, r, "login", page{Title: "Sign in", Message: "Paste an API key or an access token."}, nil)
		return
	}
	who, ok := auth.Check(c.opts.Authenticate, r, credential)
	switch {
	case !ok:
		w.WriteHeader(http.StatusUnauthorized)
		c.render(w, r, "login", page{Title: "Sign in", Message: "That credential is not accepted."}, nil)
		return
	case !who.MayOperate():
		c.forbidden(w, r, who)
		return
	}
	secure := r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https")
	// No Path: the cookie's path is then the login page's folder, the
	// console's own, whatever prefix a proxy serves it under.
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: c.sealCredential(credential, time.Now()), HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: secure, MaxAge: int(cookieLife / time.Second)})
	c.opts.Logger.Info("console: signed in", "principal", who.Key())
	w.Header().Set("Location", "./")
	w.WriteHeader(http.StatusSeeOther)
}

// serveLogout forgets the cookie and ends its session everywhere.
func (c *Console) serveLogout(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		http.Error(w, "sign out with the button on a console page", http.StatusMethodNotAllowed)
		return
	}
	if why := sameOrigin(r); why != "" {
		http.Error(w, "Forbidden: "+why, http.StatusForbidden)
		return
	}
	if ck, err := r.Cookie(cookieName); err == nil && ck.Value != "" {
		if err := c.signOut(r.Context(), ck.Value, time.Now()); err != nil {
			c.opts.Logger.Warn("console: a sign-out could not be recorded", "error", err)
			http.Error(w, "the sign-out could not be recorded (the console's shared state does not answer); try again shortly", http.StatusServiceUnavailable)
			return
		}
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	w.Header().Set("Location", "login")
	w.WriteHeader(http.StatusSeeOther)
}
