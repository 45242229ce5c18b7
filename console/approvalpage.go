package console

// The approval page: where a call asked by URL-mode elicitation is
// approved or denied (gateway's approval_page.go). It is not the operator
// console: the caller's own principal signs in here with its credential
// and sees its own pending approvals and nothing else; an operator sees
// and decides every one. It shows the question a form shows (the gateway's
// rendering of the tool and every argument), and takes the decision by a
// POST bound to the principal and the approval (CSRF).

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"html/template"
	"net/http"
	"strings"
	"time"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/gateway"
)

// ApprovalPageOptions configure NewApprovalPage.
type ApprovalPageOptions struct {
	Gateway *gateway.Gateway // required
	// Authenticate is serve's authentication, which checks the credential
	// a person gives on the page. Required.
	Authenticate func(http.Handler) http.Handler
	// AllowedHosts are extra Host names accepted on loopback connections
	// (the DNS-rebinding check, as for /mcp).
	AllowedHosts []string
	// Secret signs the page's cookies and forms. Replicas behind one
	// address give the same one (serve derives it from
	// gateway.redis.encryptionKey), so a person signed in on one replica
	// is on every one, as the pending approvals are. Nil: a key of this
	// process's own.
	Secret []byte
}

// ApprovalPage serves the approval page. Mount it with its prefix
// stripped (http.StripPrefix("/approve", page)): "/" lists the person's
// pending approvals, "/<id>" is one, the link a client is asked to open.
type ApprovalPage struct {
	opts    ApprovalPageOptions
	secret  []byte
	allowed map[string]bool
}

// approvalCookie holds the credential given on the approval page, sealed
// with the process's secret, for approvalCookieLife. Each request runs it
// through serve's authentication again (as the console's cookie does): a
// key removed or a token expired or revoked stops working on the page at
// once, not when the cookie ends.
const (
	approvalCookie     = "sandbox_approve"
	approvalCookieLife = 30 * time.Minute
)

// NewApprovalPage makes the approval page.
func NewApprovalPage(opts ApprovalPageOptions) *ApprovalPage {
	p := &ApprovalPage{opts: opts, secret: opts.Secret, allowed: map[string]bool{}}
	if len(p.secret) == 0 {
		p.secret = make([]byte, 32)
		_, _ = rand.Read(p.secret)
	}
	for _, h := range opts.AllowedHosts {
		p.allowed[strings.ToLower(h)] = true
	}
	return p
}

// viewer is who reads the page: the principal's key, and whether it may
// operate (then it sees every pending approval).
type viewer struct {
	Key     string
	Operate bool
}

// approvalSession is what the cookie seals.
type approvalSession struct {
	Credential string `json:"c"`
	Expires    int64  `json:"e"` // unix seconds
}

func (p *ApprovalPage) sign(b []byte) []byte {
	m := hmac.New(sha256.New, p.secret)
	m.Write([]byte("sandbox approval page v1\x00"))
	m.Write(b)
	return m.Sum(nil)
}

// cookieAEAD seals the cookie under a key of its own, derived from the
// page's secret (the CSRF tokens' key).
func (p *ApprovalPage) cookieAEAD() cipher.AEAD {
	block, _ := aes.NewCipher(p.sign([]byte("cookie v2")))
	aead, _ := cipher.NewGCM(block)
	return aead
}

func (p *ApprovalPage) cookieValue(credential string, expires time.Time) string {
	return sealCookie(p.cookieAEAD(), approvalCookie, approvalSession{Credential: credential, Expires: expires.Unix()})
}

// viewerOf is who the request's cookie signs in, as serve's
// authentication says now.
func (p *ApprovalPage) viewerOf(r *http.Request) (viewer, bool) {
	ck, err := r.Cookie(approvalCookie)
	if err != nil {
		return viewer{}, false
	}
	var s approvalSession
	if !openCookie(p.cookieAEAD(), approvalCookie, ck.Value, &s) || s.Credential == "" || time.Now().Unix() > s.Expires {
		return viewer{}, false
	}
	who, ok := p.authenticate(r, s.Credential)
	if !ok {
		return viewer{}, false
	}
	return viewer{Key: who.Key(), Operate: who.MayOperate()}, true
}

// csrf is the token of a decision form: bound to the viewer and the
// approval.
func (p *ApprovalPage) csrf(v viewer, id string) string {
	return hex.EncodeToString(p.sign([]byte("csrf\x00" + v.Key + "\x00" + id)))
}

// may reports whether v may see and decide a.
func (v viewer) may(a gateway.PendingApproval) bool {
	return v.Operate || (a.Page && a.Principal == v.Key)
}

// authenticate runs credential through serve's authentication.
func (p *ApprovalPage) authenticate(r *http.Request, credential string) (auth.Principal, bool) {
	who, ok := auth.Check(p.opts.Authenticate, r, credential)
	return who, ok && !who.IsAnonymous()
}

func (p *ApprovalPage) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !guardPage(w, r, p.allowed, "default-src 'none'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'") {
		return
	}
	id := strings.Trim(r.URL.Path, "/")
	if strings.Contains(id, "/") {
		http.NotFound(w, r)
		return
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
	case http.MethodPost:
		if why := sameOrigin(r); why != "" {
			http.Error(w, "Forbidden: "+why, http.StatusForbidden)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
		if err := r.ParseForm(); err != nil {
			http.Error(w, "the form could not be read", http.StatusBadRequest)
			return
		}
	default:
		w.Header().Set("Allow", "GET, HEAD, POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if r.Method == http.MethodPost && r.PostForm.Has("credential") {
		p.signIn(w, r, id)
		return
	}
	v, ok := p.viewerOf(r)
	if !ok {
		p.render(w, http.StatusOK, approvalView{SignIn: true, Message: "Sign in with the credential (API key or access token) you use with sandbox to see the calls waiting for your approval."})
		return
	}
	if id == "" {
		p.list(w, v)
		return
	}
	a, ok := p.opts.Gateway.PendingApprovalByID(id)
	if !ok || !v.may(a) {
		// Another principal's approval is not found, as one that is gone.
		p.render(w, http.StatusNotFound, approvalView{Viewer: v.Key, Message: "No call is waiting for your approval here: it was decided, timed out, its caller went away, or it is not yours."})
		return
	}
	if r.Method == http.MethodPost {
		p.decide(w, r, v, a)
		return
	}
	p.render(w, http.StatusOK, approvalView{Viewer: v.Key, Pending: []pendingView{{a, p.csrf(v, a.ID), "./" + a.ID}}, One: true})
}

// signIn takes the credential given on the page and keeps it, sealed, in
// the cookie (viewerOf checks it again at each request).
func (p *ApprovalPage) signIn(w http.ResponseWriter, r *http.Request, id string) {
	credential := strings.TrimSpace(r.PostForm.Get("credential"))
	if _, ok := p.authenticate(r, credential); !ok {
		p.render(w, http.StatusUnauthorized, approvalView{SignIn: true, Message: "That credential is not accepted."})
		return
	}
	secure := r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https")
	// No Path: the page's folder, whatever prefix a proxy serves it under.
	http.SetCookie(w, &http.Cookie{Name: approvalCookie, Value: p.cookieValue(credential, time.Now().Add(approvalCookieLife)), HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure: secure, MaxAge: int(approvalCookieLife / time.Second)})
	target := "./"
	if id != "" {
		target = "./" + id
	}
	w.Header().Set("Location", target)
	w.WriteHeader(http.StatusSeeOther)
}

// list shows v's pending approvals (an operator's: every one).
func (p *ApprovalPage) list(w http.ResponseWriter, v viewer) {
	view := approvalView{Viewer: v.Key}
	for _, a := range p.opts.Gateway.PendingApprovals() {
		if v.may(a) {
			view.Pending = append(view.Pending, pendingView{a, p.csrf(v, a.ID), "./" + a.ID})
		}
	}
	if len(view.Pending) == 0 {
		view.Message = "No call is waiting for your approval."
	}
	p.render(w, http.StatusOK, view)
}

// decide takes an Approve or Deny.
func (p *ApprovalPage) decide(w http.ResponseWriter, r *http.Request, v viewer, a gateway.PendingApproval) {
	got := r.PostForm.Get("csrf")
	if got == "" || subtle.ConstantTimeCompare([]byte(got), []byte(p.csrf(v, a.ID))) != 1 {
		http.Error(w, "Forbidden: the form's CSRF token is missing or wrong; reload the page and try again", http.StatusForbidden)
		return
	}
	decision := r.PostForm.Get("decision")
	if decision != "approve" && decision != "deny" {
		http.Error(w, `the decision must be "approve" or "deny"`, http.StatusBadRequest)
		return
	}
	if err := p.opts.Gateway.DecideApproval(a.ID, decision == "approve", v.Key); err != nil {
		msg := "The call is no longer waiting: it was decided, timed out, or its caller went away."
		var decided *gateway.DecidedError
		if errors.As(err, &decided) {
			msg = "The call is no longer waiting: " + decided.Error() + "."
		}
		p.render(w, http.StatusOK, approvalView{Viewer: v.Key, Message: msg})
		return
	}
	msg := "Approved: the call goes on. You can close this tab."
	if decision == "deny" {
		msg = "Denied: the call does not run. You can close this tab."
	}
	p.render(w, http.StatusOK, approvalView{Viewer: v.Key, Message: msg})
}

type pendingView struct {
	gateway.PendingApproval
	CSRF string
	Link string
}

type approvalView struct {
	Viewer  string
	Message string
	SignIn  bool
	One     bool
	Pending []pendingView
}

// approvalTemplate escapes every string (the question holds what an agent
// and a server wrote); no script, no style.
var approvalTemplate = template.Must(template.New("approve").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>sandbox: approve a call</title></head><body>
<h1>Approve a call</h1>
{{if .Viewer}}<p>Signed in as {{.Viewer}}.</p>{{end}}
{{if .Message}}<p>{{.Message}}</p>{{end}}
{{if .SignIn}}<form method="post"><label>Credential <input type="password" name="credential" autocomplete="off" autofocus></label> <button type="submit">Sign in</button></form>{{end}}
{{range .Pending}}<section>
<h2>{{.Tool}}{{if not $.One}} <a href="{{.Link}}">open</a>{{end}}</h2>
<p>Asked by {{.Principal}} at {{.Since.UTC.Format "15:04:05"}} UTC; denied unless decided by {{.Deadline.UTC.Format "15:04:05"}} UTC.</p>
<pre>{{.Question}}</pre>
<form method="post" action="{{.Link}}"><input type="hidden" name="csrf" value="{{.CSRF}}">
<button type="submit" name="decision" value="approve">Approve</button> <button type="submit" name="decision" value="deny">Deny</button></form>
</section>{{end}}
</body></html>
`))

func (p *ApprovalPage) render(w http.ResponseWriter, status int, v approvalView) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_ = approvalTemplate.Execute(w, v)
}
