package gateway

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestSignInLinkRefusesCrossSitePosts: another site's page cannot post a
// credential to a sign-in link from a person's browser. Were it let
// through, an attacker posting its own credential to its own link would
// send the victim's browser on to the authorization server, where the
// victim (signed in there) would grant the attacker's principal access to
// the victim's upstream account. The refused link stays good for its own
// page's form.
func TestSignInLinkRefusesCrossSitePosts(t *testing.T) {
	w := startSignInWorld(t)
	s, err := w.g.signIns.start(context.Background(), w.bob.Key(), "secure")
	if err != nil {
		t.Fatal(err)
	}
	link := signInURL(w.public, s.ID)
	pub, _ := url.Parse(w.public)
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	post := func(header map[string]string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, link, strings.NewReader(url.Values{"credential": {w.keys["bob"]}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		for k, v := range header {
			if k == "Host" {
				req.Host = v
				continue
			}
			req.Header.Set(k, v)
		}
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	// Under no-referrer a browser posts the page's own form with "Origin:
	// null", which is refused (TestURLPagesInABrowser found it).
	if resp, err := http.Get(link); err != nil || resp.Header.Get("Referrer-Policy") != "same-origin" {
		t.Fatalf("the link's page: %v, Referrer-Policy %q", err, resp.Header.Get("Referrer-Policy"))
	} else {
		resp.Body.Close()
	}
	for _, h := range []map[string]string{
		{"Origin": "https://attacker.example", "Sec-Fetch-Site": "cross-site"},
		{"Origin": "https://attacker.example"},
		{"Sec-Fetch-Site": "same-site"},
		{"Origin": "null"},
		// A page of a name rebound to the listener's address is
		// "same-origin" to itself, not to the public URL.
		{"Host": "rebound.example", "Origin": "http://rebound.example", "Sec-Fetch-Site": "same-origin"},
		{"Origin": "https://" + pub.Host},
	} {
		if resp := post(h); resp.StatusCode != http.StatusForbidden || resp.Header.Get("Set-Cookie") != "" {
			t.Errorf("a post with %v: %d, cookie %q", h, resp.StatusCode, resp.Header.Get("Set-Cookie"))
		}
	}
	if cur := w.g.signIns.get(context.Background(), s.ID); cur == nil || cur.Opened || cur.Login != nil {
		t.Fatal("a cross-site post used the link")
	}
	// The link's own page posts with its own origin: on to the
	// authorization server.
	resp := post(map[string]string{"Origin": pub.Scheme + "://" + pub.Host, "Sec-Fetch-Site": "same-origin"})
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), w.issuer) {
		t.Fatalf("the link's own form: %d, to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
}

// TestWebOrigin: a public URL that names its scheme's default port, or
// upper case, is the Origin a browser sends for it.
func TestWebOrigin(t *testing.T) {
	for public, origin := range map[string]string{
		"https://GW.example.com:443/sandbox": "https://gw.example.com",
		"http://gw.example.com:80":           "http://gw.example.com",
		"http://127.0.0.1:8080/x":            "http://127.0.0.1:8080",
		"http://[::1]:8080":                  "http://[::1]:8080",
		"https://[::1]/":                     "https://[::1]",
	} {
		p, _ := url.Parse(public)
		o, _ := url.Parse(origin)
		if webOrigin(p) != webOrigin(o) || webOrigin(o) != origin {
			t.Errorf("%s: %q, its Origin %q", public, webOrigin(p), webOrigin(o))
		}
	}
}
