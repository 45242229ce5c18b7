package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/internal/oauthtest"
	"github.com/sandboxrt/sandbox/internal/testwait"
)

// urlPeer is a 2025 client session that declared URL-mode elicitation:
// it answers a URL elicitation with accept and hands the link to its
// person (open), and records the notifications it gets.
type urlPeer struct {
	open func(link string)

	mu     sync.Mutex
	params []map[string]any
	notes  []string
}

func (p *urlPeer) Request(_ context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	var m map[string]any
	_ = json.Unmarshal(params, &m)
	p.mu.Lock()
	p.params = append(p.params, m)
	p.mu.Unlock()
	if method != "elicitation/create" || m["mode"] != "url" {
		return nil, fmt.Errorf("asked %s %s", method, params)
	}
	go p.open(m["url"].(string))
	return json.RawMessage(`{"action":"accept"}`), nil
}

func (p *urlPeer) Notify(method string, params json.RawMessage) {
	p.mu.Lock()
	p.notes = append(p.notes, method+" "+string(params))
	p.mu.Unlock()
}

func (p *urlPeer) Supports(c string) bool { return c == "elicitation" || c == CapabilityURLElicitation }

// signInBrowser is the person's browser: it opens a sign-in link, gives
// credential, and follows the authorization server's login to the end.
// It returns the last page's status and text.
func signInBrowser(t *testing.T, link, credential string) (int, string) {
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 20 * time.Second}
	resp, err := c.Get(link)
	if err != nil {
		t.Errorf("opening %s: %v", link, err)
		return 0, ""
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, string(page)
	}
	resp, err = c.PostForm(link, url.Values{"credential": {credential}})
	if err != nil {
		t.Errorf("posting to %s: %v", link, err)
		return 0, ""
	}
	defer resp.Body.Close()
	page, _ = io.ReadAll(resp.Body)
	return resp.StatusCode, string(page)
}

type signInWorld struct {
	g          *Gateway
	issuer     string
	public     string // where the pages are, behind a path prefix
	bob, carol auth.Principal
	keys       map[string]string // principal ID -> its API key
}

func startSignInWorld(t *testing.T) *signInWorld {
	issuer := oauthtest.StartAuthServer(t)
	secure := oauthtest.StartProtectedServer(t, issuer)
	tokens := filepath.Join(t.TempDir(), "oauth-tokens.json")
	g := oauthGateway(t, tokens, fmt.Sprintf(`"secure": {"url": %q}`, secure))
	// The operator's login carries the connection (listing, health);
	// principals' calls carry their own.
	if _, err := g.Login(context.Background(), "secure", LoginOptions{Show: browse(t), Wait: 30 * time.Second}); err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, 10*time.Second, "secure to connect with the login", func() bool { return g.Servers()[0].State == StateReady })
	w := &signInWorld{g: g, issuer: issuer, keys: map[string]string{}}
	var keys []auth.APIKey
	for _, name := range []string{"bob", "carol", "eve"} {
		k := auth.APIKey{Name: name, Key: name + "-key-0123456789abcdef"}
		keys = append(keys, k)
		w.keys[name] = k.Key
	}
	w.bob, w.carol = keys[0].Principal(), keys[1].Principal()
	v, err := auth.NewVerifier(auth.Config{APIKeys: keys}, auth.Options{})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	// Behind a proxy's path prefix: the links and the redirect carry it.
	w.public = srv.URL + "/gw"
	h, err := g.SignInHandler(SignInOptions{PublicURL: w.public, Authenticate: auth.Middleware(v, "")})
	if err != nil {
		t.Fatal(err)
	}
	mux.Handle("/gw/", http.StripPrefix("/gw", h))
	return w
}

// TestSignInByURL: a principal without a login calls a protected server;
// its client is asked to open a link to the gateway's own page, the person
// gives the principal's credential there and signs in at the real
// authorization server, and the call goes on with the principal's new
// token. Another principal's credential does nothing with the link; a used,
// expired or unknown link is refused with a page that says so; a flow that
// comes back in another browser stores nothing.
func TestSignInByURL(t *testing.T) {
	w := startSignInWorld(t)
	g := w.g

	t.Run("2025 session", func(t *testing.T) {
		var links []string
		var mu sync.Mutex
		peer := &urlPeer{}
		peer.open = func(link string) {
			mu.Lock()
			links = append(links, link)
			mu.Unlock()
			// Eve, given bob's link, cannot use it...
			if status, page := signInBrowser(t, link, w.keys["eve"]); status != http.StatusForbidden || !strings.Contains(page, "not the one of the principal") {
				t.Errorf("eve with bob's link: %d %s", status, page)
			}
			// ...and it stays good for bob.
			if status, page := signInBrowser(t, link, w.keys["bob"]); status != http.StatusOK || !strings.Contains(page, "Signed in to server") {
				t.Errorf("bob with his link: %d %s", status, page)
			}
		}
		caller := auth.Caller{Principal: w.bob, Session: "bob-1"}
		g.OpenSession(caller, peer)
		res, err := g.Call(context.Background(), CallRequest{Tool: "secure:whoami", Caller: caller})
		if err != nil {
			t.Fatalf("the call after signing in: %v", err)
		}
		if got := callText(t, res); got != "alice" {
			t.Fatalf("whoami = %q", got)
		}
		if grant := grantOf(t, g, w.bob.Key(), "secure"); grant.Token.AccessToken == "" || !strings.HasPrefix(grant.RedirectURI, w.public+"/oauth/callback") {
			t.Fatalf("bob's grant %+v", grant)
		}
		peer.mu.Lock()
		defer peer.mu.Unlock()
		if len(peer.params) != 1 || len(links) != 1 || !strings.HasPrefix(links[0], w.public+"/oauth/signin/") {
			t.Fatalf("asked %v, links %v", peer.params, links)
		}
		id, _ := peer.params[0]["elicitationId"].(string)
		if len(peer.notes) != 1 || id == "" || peer.notes[0] != `notifications/elicitation/complete {"elicitationId":"`+id+`"}` {
			t.Fatalf("notifications %v (elicitation %q)", peer.notes, id)
		}
		// A link is good once.
		if status, page := signInBrowser(t, links[0], w.keys["bob"]); status != http.StatusNotFound || !strings.Contains(page, "not valid") {
			t.Fatalf("a used link: %d %s", status, page)
		}
		// With the login, the next call asks nothing.
		if who, err := whoami(g, "secure", w.bob); err != nil || who != "alice" {
			t.Fatalf("next call: %q %v", who, err)
		}
		peer.mu.Unlock()
		// A login that expired and cannot be renewed (its refresh token
		// revoked) is signed in again the same way.
		grant := grantOf(t, g, w.bob.Key(), "secure")
		oauthtest.Revoke(t, w.issuer, grant.Token.RefreshToken)
		editGrant(t, g, w.bob.Key(), "secure", func(gr *OAuthGrant) { gr.Token.ExpiresAt = time.Now().Add(-time.Second) })
		res, err = g.Call(context.Background(), CallRequest{Tool: "secure:whoami", Caller: caller})
		if err != nil || callText(t, res) != "alice" {
			t.Fatalf("the call after signing in again: %v", err)
		}
		peer.mu.Lock()
		if len(peer.params) != 2 || !strings.Contains(peer.params[1]["message"].(string), "renewing it failed") {
			t.Fatalf("asked %v", peer.params)
		}
		if renewed := grantOf(t, g, w.bob.Key(), "secure"); renewed.Token.RefreshToken == grant.Token.RefreshToken {
			t.Fatal("the grant was not replaced")
		}
	})

	t.Run("2026 input_required", func(t *testing.T) {
		ctx := WithAsking(context.Background(), Asking{Capabilities: json.RawMessage(`{"elicitation":{"url":{}}}`)})
		res, err := g.Call(ctx, CallRequest{Tool: "secure:whoami", Caller: auth.Caller{Principal: w.carol}})
		if err != nil || res.InputRequired == nil {
			t.Fatalf("first round: %+v %v", res, err)
		}
		var reqs map[string]struct {
			Method string
			Params struct{ Mode, URL, ElicitationID string }
		}
		if err := json.Unmarshal(res.InputRequired.Requests, &reqs); err != nil {
			t.Fatal(err)
		}
		ask := reqs[signInKey]
		if ask.Method != "elicitation/create" || ask.Params.Mode != "url" || !strings.HasPrefix(ask.Params.URL, w.public+"/oauth/signin/") {
			t.Fatalf("asked %s", res.InputRequired.Requests)
		}
		if status, page := signInBrowser(t, ask.Params.URL, w.keys["carol"]); status != http.StatusOK {
			t.Fatalf("carol signing in: %d %s", status, page)
		}
		retry := WithAsking(context.Background(), Asking{Capabilities: json.RawMessage(`{"elicitation":{"url":{}}}`),
			InputResponses: json.RawMessage(`{"sandbox_signin":{"action":"accept"}}`), RequestState: res.InputRequired.State})
		res, err = g.Call(retry, CallRequest{Tool: "secure:whoami", Caller: auth.Caller{Principal: w.carol}})
		if err != nil || res.InputRequired != nil {
			t.Fatalf("retry: %+v %v", res, err)
		}
		if got := callText(t, res); got != "alice" {
			t.Fatalf("whoami = %q", got)
		}
		grantOf(t, g, w.carol.Key(), "secure")
	})

	t.Run("2026 retries after a declined or failed sign-in", func(t *testing.T) {
		eve := auth.Principal{ID: "eve", Tenant: "eve"}
		caps := json.RawMessage(`{"elicitation":{"url":{}}}`)
		for _, c := range []struct{ answer, fail, want string }{
			{`{"action":"decline"}`, "", "the sign-in was declined"},
			{`{"action":"accept"}`, "the authorization server refused the sign-in: access_denied", "the sign-in did not finish: the authorization server refused the sign-in: access_denied"},
		} {
			res, err := g.Call(WithAsking(context.Background(), Asking{Capabilities: caps}), CallRequest{Tool: "secure:whoami", Caller: auth.Caller{Principal: eve}})
			if err != nil || res.InputRequired == nil {
				t.Fatalf("first round: %+v %v", res, err)
			}
			if c.fail != "" { // the flow ended so before the retry
				st := decodeCallState(res.InputRequired.State)
				g.signIns.end(context.Background(), st.SignIn, errors.New(c.fail))
			}
			retry := WithAsking(context.Background(), Asking{Capabilities: caps, InputResponses: json.RawMessage(`{"sandbox_signin":` + c.answer + `}`), RequestState: res.InputRequired.State})
			_, err = g.Call(retry, CallRequest{Tool: "secure:whoami", Caller: auth.Caller{Principal: eve}})
			var e *Error
			if !errors.As(err, &e) || e.Code != CodeAuthRequired || !strings.Contains(e.Message, c.want) {
				t.Errorf("answer %s: %v", c.answer, err)
			}
		}
	})

	t.Run("a client without URL elicitation is told to ask the operator", func(t *testing.T) {
		ctx := WithAsking(context.Background(), Asking{Capabilities: json.RawMessage(`{"elicitation":{}}`)})
		dave := auth.Principal{ID: "dave", Tenant: "dave"}
		_, err := g.Call(ctx, CallRequest{Tool: "secure:whoami", Caller: auth.Caller{Principal: dave}})
		var e *Error
		if !errors.As(err, &e) || e.Code != CodeAuthRequired || !strings.Contains(e.Message, "ask the operator") {
			t.Fatalf("got %v", err)
		}
	})

	t.Run("another browser", func(t *testing.T) {
		s, err := g.signIns.start(context.Background(), "dave/dave", "secure")
		if err != nil {
			t.Fatal(err)
		}
		// Dave (say) proves himself on the page but hands the
		// authorization URL to someone else, whose browser comes back
		// without dave's cookie: nothing is stored for dave.
		v, _ := auth.NewVerifier(auth.Config{APIKeys: []auth.APIKey{{Name: "dave", Key: "dave-key-0123456789abcdef"}}}, auth.Options{})
		opts := *g.signIns.options()
		opts.Authenticate = auth.Middleware(v, "")
		g.signIns.mu.Lock()
		g.signIns.opts = &opts
		g.signIns.mu.Unlock()
		noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := noFollow.PostForm(signInURL(w.public, s.ID), url.Values{"credential": {"dave-key-0123456789abcdef"}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		authURL := resp.Header.Get("Location")
		if resp.StatusCode != http.StatusSeeOther || authURL == "" {
			t.Fatalf("posting the credential: %s", resp.Status)
		}
		jar, _ := cookiejar.New(nil)
		victim := &http.Client{Jar: jar, Timeout: 20 * time.Second}
		resp, err = victim.Get(authURL)
		if err != nil {
			t.Fatal(err)
		}
		page, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(page), "another browser") {
			t.Fatalf("the victim's browser came back with %s: %s", resp.Status, page)
		}
		store, _ := g.oauthStore()
		if grant, _ := store.Grant(context.Background(), "dave/dave", "secure"); grant != nil {
			t.Fatal("a grant was stored from another browser")
		}
	})

	t.Run("expired and unknown links", func(t *testing.T) {
		expired := SignInRecord{ID: randomHex(32), Owner: w.bob.Key(), Server: "secure", Expires: time.Now().Add(-time.Second)}
		if err := g.signIns.store.Put(context.Background(), expired, maxSignInsPerPrincipal); err != nil {
			t.Fatal(err)
		}
		for _, link := range []string{signInURL(w.public, expired.ID), w.public + "/oauth/signin/nosuchlink"} {
			if status, page := signInBrowser(t, link, w.keys["bob"]); status != http.StatusNotFound || !strings.Contains(page, "expired, was used already, or never existed") {
				t.Errorf("%s: %d %s", link, status, page)
			}
		}
	})
}
