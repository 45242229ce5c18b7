package gateway

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestTwoSignInLinksInOneBrowser: a person with two links open at once (a
// snippet whose two calls both need a sign-in) gives the credential on
// both pages, then finishes both sign-ins, in either order, in the one
// browser: the second link's cookie must not take the first's place.
func TestTwoSignInLinksInOneBrowser(t *testing.T) {
	w := startSignInWorld(t)
	jar, _ := cookiejar.New(nil)
	noFollow := &http.Client{Jar: jar, Timeout: 20 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	follow := &http.Client{Jar: jar, Timeout: 20 * time.Second}
	var links []*SignInRecord
	var authURLs []string
	for range 2 {
		s, err := w.g.signIns.start(context.Background(), w.bob.Key(), "secure")
		if err != nil {
			t.Fatal(err)
		}
		resp, err := noFollow.PostForm(signInURL(w.public, s.ID), url.Values{"credential": {w.keys["bob"]}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("giving the credential: %s", resp.Status)
		}
		links, authURLs = append(links, s), append(authURLs, resp.Header.Get("Location"))
	}
	for i, u := range authURLs { // the first link first
		resp, err := follow.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		page, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(page), "Signed in to server") {
			t.Errorf("finishing sign-in %d: %s %s", i+1, resp.Status, page)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		if err := w.g.signIns.wait(ctx, links[i]); err != nil {
			t.Errorf("sign-in %d ended with %v", i+1, err)
		}
		cancel()
	}
}
