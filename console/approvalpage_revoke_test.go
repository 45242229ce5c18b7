package console

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sandboxrt/sandbox/auth"
)

// TestApprovalCookieEndsWithItsCredential: an operator key removed from
// serve's authentication no longer opens the approval page with the cookie
// it got (which deciding every approval would otherwise outlive by up to
// 30 minutes); the page asks for a credential again.
func TestApprovalCookieEndsWithItsCredential(t *testing.T) {
	w := newWorld(t)
	var revoked atomic.Bool
	authn := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") == "Bearer ops-key" && !revoked.Load() {
				next.ServeHTTP(rw, r.WithContext(auth.WithPrincipal(r.Context(), keys["ops-key"])))
				return
			}
			http.Error(rw, "unauthorized", http.StatusUnauthorized)
		})
	}
	srv := httptest.NewServer(http.StripPrefix("/approve", NewApprovalPage(ApprovalPageOptions{Gateway: w.g, Authenticate: authn})))
	t.Cleanup(srv.Close)
	b := newBrowser(t)
	if status, page := b.post(srv.URL+"/approve/", url.Values{"credential": {"ops-key"}}, ""); status != http.StatusOK || !strings.Contains(page, "Signed in as ops/ops") {
		t.Fatalf("sign in: %d %s", status, page)
	}
	revoked.Store(true)
	if status, page := b.get(srv.URL + "/approve/"); strings.Contains(page, "Signed in as ops/ops") {
		t.Errorf("after the key was removed the page still serves it: %d", status)
	} else if !strings.Contains(page, `name="credential"`) {
		t.Errorf("after the key was removed: %d %s", status, page)
	}
}
