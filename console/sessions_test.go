package console

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
)

// replica is one more console over the world's gateway, with its own
// listener: a second `sandbox serve` behind the same balancer.
func (w *world) replica(t *testing.T, key []byte, revoked Revocations) (*Console, string) {
	t.Helper()
	c, err := New(Options{Gateway: w.g, Engine: w.engine, Authenticate: testAuth, Key: key, Revocations: revoked})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	mux := http.NewServeMux()
	mux.Handle("/ui/", http.StripPrefix("/ui", c))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return c, srv.URL + "/ui/"
}

// signInAt signs in with key at a console and returns the cookie's value.
func signInAt(t *testing.T, base, key string) string {
	t.Helper()
	req, _ := http.NewRequest("POST", base+"login", strings.NewReader(url.Values{"credential": {key}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, _ := do(t, noRedirects, req)
	for _, ck := range resp.Cookies() {
		if ck.Name == cookieName && ck.Value != "" {
			return ck.Value
		}
	}
	t.Fatalf("signing in at %s set no cookie: %d", base, resp.StatusCode)
	return ""
}

// withCookie sends a request to a console with the sign-in's cookie only.
func withCookie(t *testing.T, method, target, cookie string, form url.Values) (*http.Response, string) {
	t.Helper()
	var req *http.Request
	if form != nil {
		req, _ = http.NewRequest(method, target, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	} else {
		req, _ = http.NewRequest(method, target, nil)
	}
	req.AddCookie(&http.Cookie{Name: cookieName, Value: cookie})
	return do(t, noRedirects, req)
}

// TestConsolesWithOneKeyShareSignInsAndTokens: two consoles given the same
// key (two replicas with one "gateway.redis") take each other's cookie and
// CSRF token; a console with another key takes neither.
func TestConsolesWithOneKeyShareSignInsAndTokens(t *testing.T) {
	w := newWorld(t)
	key, other := []byte(strings.Repeat("k", 32)), []byte(strings.Repeat("o", 32))
	shared := NewMemoryRevocations(nil)
	ca, a := w.replica(t, key, shared)
	_, b := w.replica(t, key, shared)
	_, c := w.replica(t, other, nil)

	cookie := signInAt(t, a, "ops-key")
	if resp, _ := withCookie(t, "GET", b+"servers", cookie, nil); resp.StatusCode != http.StatusOK {
		t.Errorf("the other replica refused the cookie: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	if resp, _ := withCookie(t, "GET", c+"servers", cookie, nil); resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "login?expired=1" {
		t.Errorf("a console with another key took the cookie: %d", resp.StatusCode)
	}

	// The token replica a puts in the operator's forms.
	decide := url.Values{"csrf": {ca.csrfToken(keys["ops-key"])}, "id": {"no-such-call"}, "decision": {"deny"}}
	if resp, body := withCookie(t, "POST", b+"approvals", cookie, decide); resp.StatusCode != http.StatusOK || !strings.Contains(body, "no longer waiting") {
		t.Errorf("the other replica refused the token: %d\n%s", resp.StatusCode, body)
	}
	// On the console with another key, the token is wrong (it is asked with
	// a bearer key, which that console accepts, so only the token differs).
	req, _ := http.NewRequest("POST", c+"approvals", strings.NewReader(decide.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", "Bearer ops-key")
	if resp, body := do(t, noRedirects, req); resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "CSRF") {
		t.Errorf("a console with another key took the token: %d\n%s", resp.StatusCode, body)
	}
}

// TestSigningOutEndsTheCookieEverywhere: after a sign-out on one replica
// the same cookie, replayed (a copy kept by someone, a browser that did not
// forget it), is refused by every replica that shares the revocations;
// another sign-in still works.
func TestSigningOutEndsTheCookieEverywhere(t *testing.T) {
	w := newWorld(t)
	key := []byte(strings.Repeat("k", 32))
	shared := NewMemoryRevocations(nil)
	_, a := w.replica(t, key, shared)
	_, b := w.replica(t, key, shared)

	cookie, kept := signInAt(t, a, "ops-key"), signInAt(t, b, "ops-key")
	resp, _ := withCookie(t, "POST", b+"logout", cookie, url.Values{})
	if resp.StatusCode != http.StatusSeeOther || !strings.Contains(resp.Header.Get("Set-Cookie"), "Max-Age=0") {
		t.Fatalf("sign-out: %d %q", resp.StatusCode, resp.Header.Get("Set-Cookie"))
	}
	for _, at := range []string{a, b} {
		if resp, _ := withCookie(t, "GET", at+"servers", cookie, nil); resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "login?expired=1" {
			t.Errorf("%s took a signed-out cookie: %d", at, resp.StatusCode)
		}
		if resp, _ := withCookie(t, "GET", at+"servers", kept, nil); resp.StatusCode != http.StatusOK {
			t.Errorf("%s refused another session's cookie: %d", at, resp.StatusCode)
		}
	}
}

// TestMemoryRevocationsAreBoundedAndExpire: a revocation ends with the
// cookie's life; past maxRevoked the store signs every session out rather
// than forget one.
func TestMemoryRevocationsAreBoundedAndExpire(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(1_800_000_000, 0)
	r := NewMemoryRevocations(func() time.Time { return now }).(*memoryRevocations)
	issued := now.Add(-time.Hour)
	_ = r.Revoke(ctx, "gone", now.Add(time.Minute))
	if ok, _ := r.Revoked(ctx, "gone", issued); !ok {
		t.Fatal("a revoked session is not revoked")
	}
	if ok, _ := r.Revoked(ctx, "kept", issued); ok {
		t.Fatal("a session never signed out is revoked")
	}
	now = now.Add(2 * time.Minute)
	if ok, _ := r.Revoked(ctx, "gone", issued); ok {
		t.Error("a revocation outlived the cookie it revoked")
	}

	for i := range maxRevoked + 1 {
		_ = r.Revoke(ctx, "s"+strconv.Itoa(i), now.Add(time.Hour))
	}
	if len(r.revoked) > maxRevoked {
		t.Errorf("%d revocations kept, more than %d", len(r.revoked), maxRevoked)
	}
	if ok, _ := r.Revoked(ctx, "never-signed-out", issued); !ok {
		t.Error("past the bound, a session sealed before it still works: a sign-out could have been forgotten")
	}
	if ok, _ := r.Revoked(ctx, "signed-in-after", now.Add(time.Second)); ok {
		t.Error("a session sealed after the bound was hit is refused")
	}
}
