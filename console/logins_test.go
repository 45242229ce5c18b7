package console

import (
	"fmt"
	"html"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sandboxrt/sandbox/config"
	"github.com/sandboxrt/sandbox/internal/oauthtest"
)

// TestServersPageSignsTheOperatorIn: an upstream that needs an OAuth login
// shows a Sign in button; pressed (with the CSRF token), the page links
// the authorization URL, and once the person has approved there, the
// server shows the operator logged in. Against a real authorization
// server (oidc-provider, an npm peer).
func TestServersPageSignsTheOperatorIn(t *testing.T) {
	issuer := oauthtest.StartAuthServer(t) // skips in -short
	secure := oauthtest.StartProtectedServer(t, issuer)
	tokens := filepath.Join(t.TempDir(), "oauth-tokens.json")
	file, err := config.Parse("gw.json", []byte(fmt.Sprintf(`{"mcpServers": {"secure": {"url": %q}},
  "gateway": {"oauthTokens": %q, "restartBackoff": "100ms", "maxRestartBackoff": "200ms", "startupTimeout": "10s"}}`, secure, tokens)))
	if err != nil {
		t.Fatal(err)
	}
	w := newWorldWith(t, file.Gateway)

	_, page := w.get(t, "ops-key", "servers")
	token := csrfField.FindStringSubmatch(page)
	if !strings.Contains(page, "not logged in") || !strings.Contains(page, `value="login">Sign in</button>`) || token == nil {
		t.Fatalf("before the login:\n%s", page)
	}
	if resp, _ := w.post(t, "ops-key", "servers", url.Values{"action": {"login"}, "server": {"secure"}}, ""); resp.StatusCode != http.StatusForbidden {
		t.Errorf("signing in without the CSRF token: %d", resp.StatusCode)
	}
	if resp, body := w.post(t, "ops-key", "servers", url.Values{"action": {"login"}, "server": {"secure"}, "csrf": {token[1]}}, ""); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("signing in: %d %s", resp.StatusCode, body)
	}
	_, page = w.get(t, "ops-key", "servers")
	link := regexp.MustCompile(`<a href="([^"]+)" target="_blank" rel="noopener noreferrer" class="signin">`).FindStringSubmatch(page)
	if link == nil {
		t.Fatalf("no sign-in link:\n%s", page)
	}
	oauthtest.Browse(t, html.UnescapeString(link[1])) // the person approves
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(page, "logged in (token valid"); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the login did not finish:\n%s", page)
		}
		_, page = w.get(t, "ops-key", "servers?fragment=1")
	}
	if strings.Contains(page, `value="login">Sign in</button>`) {
		t.Errorf("still offers to sign in once logged in:\n%s", page)
	}
}
