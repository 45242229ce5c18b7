package auth_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/sandboxrt/sandbox/auth"
)

// TestCheck: a credential posted in a form is checked by the same
// middleware as /mcp's bearer token: the key's principal when accepted,
// refused (and heard by the refusal audit) otherwise; the form's request
// is left as it was, and its own headers play no part.
func TestCheck(t *testing.T) {
	v, err := auth.NewVerifier(auth.Config{APIKeys: []auth.APIKey{{
		Name: "ci-bot", SHA256: "6ba31a9bd6fe7999e8ad7486828c4d1a284766591bfcc1d16658ba8bf8710293"}}}, auth.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var refused []string
	mw := auth.Middleware(v, "", func(_ *http.Request, reason string) { refused = append(refused, reason) })
	form := func() *http.Request {
		r := httptest.NewRequest(http.MethodPost, "/ui/login", strings.NewReader(url.Values{"credential": {"x"}}.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.Header.Set("Authorization", "Bearer someone-elses-key-0123")
		return r
	}
	r := form()
	p, ok := auth.Check(mw, r, "ci-0123456789abcdef")
	if !ok || p.Key() != "ci-bot/ci-bot" {
		t.Fatalf("the right key: %q, %v", p.Key(), ok)
	}
	if r.Header.Get("Authorization") != "Bearer someone-elses-key-0123" || r.Method != http.MethodPost {
		t.Error("the form's request was changed")
	}
	if p, ok := auth.Check(mw, form(), "wrong-key-0123456789"); ok || p.Key() != (auth.Principal{}).Key() {
		t.Errorf("a wrong key passed as %q", p.Key())
	}
	if len(refused) != 1 {
		t.Errorf("refusals heard: %q, want the wrong key's", refused)
	}
	// Authentication off: every credential passes as the anonymous principal.
	if p, ok := auth.Check(func(h http.Handler) http.Handler { return h }, form(), "anything"); !ok || !p.IsAnonymous() {
		t.Errorf("with authentication off: %q, %v", p.Key(), ok)
	}
}
