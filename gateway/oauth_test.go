package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/internal/oauthtest"
	"github.com/sandboxrt/sandbox/internal/testwait"
)

func browse(t *testing.T) func(string) {
	return func(authURL string) { oauthtest.Browse(t, authURL) }
}

func oauthGateway(t *testing.T, tokens string, servers string) *Gateway {
	t.Helper()
	g, _ := startGateway(t, fmt.Sprintf(`{"mcpServers": {%s}, "gateway": {"oauthTokens": %q, "restartBackoff": "100ms", "maxRestartBackoff": "200ms", "startupTimeout": "10s"}}`, servers, tokens))
	return g
}

func whoami(g *Gateway, server string, p auth.Principal) (string, error) {
	res, err := g.Call(context.Background(), CallRequest{Tool: server + ":whoami", Caller: auth.Caller{Principal: p}})
	if err != nil {
		return "", err
	}
	var b struct{ Text string }
	_ = json.Unmarshal(res.Content[0], &b)
	return b.Text, nil
}

func grantOf(t *testing.T, g *Gateway, owner, server string) *OAuthGrant {
	t.Helper()
	store, err := g.oauthStore()
	if err != nil {
		t.Fatal(err)
	}
	grant, err := store.Grant(context.Background(), owner, server)
	if err != nil || grant == nil {
		t.Fatalf("no grant of %s for %s (%v)", owner, server, err)
	}
	return grant
}

func editGrant(t *testing.T, g *Gateway, owner, server string, fn func(*OAuthGrant)) {
	t.Helper()
	store, _ := g.oauthStore()
	if err := store.Update(context.Background(), owner, server, func(cur *OAuthGrant) *OAuthGrant { fn(cur); return cur }); err != nil {
		t.Fatal(err)
	}
}

// TestOAuthLogin logs in to a server that requires a real authorization
// server's tokens, with dynamic client registration, and follows the grant
// through expiry (refresh), a refused token (renew and call again), a
// revoked refresh token and a token for another audience, each against the
// real servers.
func TestOAuthLogin(t *testing.T) {
	issuer := oauthtest.StartAuthServer(t)
	secure := oauthtest.StartProtectedServer(t, issuer)
	other := oauthtest.StartProtectedServer(t, issuer)
	tokens := filepath.Join(t.TempDir(), "cfg", "oauth-tokens.json")
	g := oauthGateway(t, tokens, fmt.Sprintf(`"secure": {"url": %q}, "other": {"url": %q}`, secure, other))
	ctx := context.Background()
	op := auth.Operator().Key()

	// Before any login the connection is refused, and says what to run.
	st := g.Servers()[1]
	if st.Name != "secure" || st.State == StateReady || !strings.Contains(st.Reason+st.LastError, "sandbox login secure") {
		t.Fatalf("before login: %+v", st)
	}
	if s := g.OAuthState(ctx, "secure", op); s != "not logged in" {
		t.Errorf("state before login = %q", s)
	}

	grant, err := g.Login(ctx, "secure", LoginOptions{Show: browse(t), Wait: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if grant.Token.AccessToken == "" || grant.Token.RefreshToken == "" || grant.ClientID == "" || grant.URL != secure {
		t.Fatalf("grant %+v", grant)
	}
	if st, err := os.Stat(tokens); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v, %v", st, err)
	}
	if s := g.OAuthState(ctx, "secure", op); !strings.HasPrefix(s, "logged in (token valid") {
		t.Errorf("state after login = %q", s)
	}
	// The running gateway reconnects with the login and calls with it.
	testwait.Until(t, 10*time.Second, "secure to connect with the login", func() bool { return g.Servers()[1].State == StateReady })
	if who, err := whoami(g, "secure", auth.Operator()); err != nil || who != "alice" {
		t.Fatalf("whoami = %q, %v", who, err)
	}

	t.Run("refresh on expiry", func(t *testing.T) {
		before := grantOf(t, g, op, "secure")
		editGrant(t, g, op, "secure", func(gr *OAuthGrant) { gr.Token.ExpiresAt = time.Now().Add(-time.Second) })
		if who, err := whoami(g, "secure", auth.Operator()); err != nil || who != "alice" {
			t.Fatalf("whoami after expiry = %q, %v", who, err)
		}
		after := grantOf(t, g, op, "secure")
		if after.Token.AccessToken == before.Token.AccessToken || after.Token.RefreshToken == before.Token.RefreshToken || after.Token.IsExpired() {
			t.Fatalf("not renewed (refresh token rotated: %v)", after.Token.RefreshToken != before.Token.RefreshToken)
		}
	})

	t.Run("refused token is renewed", func(t *testing.T) {
		// The server refuses a token the grant still thinks valid (revoked,
		// its key rotated): 401, renewed, called again.
		editGrant(t, g, op, "secure", func(gr *OAuthGrant) { gr.Token.AccessToken = "refused-" + gr.Token.AccessToken[:20] })
		if who, err := whoami(g, "secure", auth.Operator()); err != nil || who != "alice" {
			t.Fatalf("whoami after a refused token = %q, %v", who, err)
		}
		if tok := grantOf(t, g, op, "secure").Token.AccessToken; strings.HasPrefix(tok, "refused-") {
			t.Fatal("the refused token was kept")
		}
		if st := g.Servers()[1]; st.Restarts != 0 && st.State != StateReady {
			t.Fatalf("a refused token broke the connection: %+v", st)
		}
	})

	t.Run("principal without a login", func(t *testing.T) {
		bob := auth.Principal{ID: "bob", Tenant: "acme"}
		_, err := whoami(g, "secure", bob)
		e := wantCode(t, err, CodeAuthRequired)
		if !strings.Contains(e.Message, "sandbox login secure") || !strings.Contains(e.Message, "--principal acme/bob") {
			t.Fatalf("message: %s", e.Message)
		}
	})

	t.Run("revoked refresh token", func(t *testing.T) {
		oauthtest.Revoke(t, issuer, grantOf(t, g, op, "secure").Token.RefreshToken)
		editGrant(t, g, op, "secure", func(gr *OAuthGrant) { gr.Token.ExpiresAt = time.Now().Add(-time.Second) })
		_, err := whoami(g, "secure", auth.Operator())
		e := wantCode(t, err, CodeAuthRequired)
		if !strings.Contains(e.Message, "renewing it failed") || !strings.Contains(e.Message, "sandbox login secure") {
			t.Fatalf("message: %s", e.Message)
		}
	})

	t.Run("token for another audience", func(t *testing.T) {
		// bob's grant for other is really a token for secure (a copied
		// token file entry): other refuses it, the renewal is refused too
		// (secure's metadata names another resource than other), and the
		// call asks bob to log in instead of retrying for ever.
		if _, err := g.Login(ctx, "secure", LoginOptions{Show: browse(t), Wait: 30 * time.Second}); err != nil {
			t.Fatal(err)
		}
		if _, err := g.Login(ctx, "other", LoginOptions{Show: browse(t), Wait: 30 * time.Second}); err != nil {
			t.Fatal(err)
		}
		testwait.Until(t, 10*time.Second, "other to connect with the login", func() bool { return g.Servers()[0].State == StateReady })
		bob := auth.Principal{ID: "bob", Tenant: "acme"}
		wrong := grantOf(t, g, op, "secure")
		wrong.URL = other
		store, _ := g.oauthStore()
		if err := store.Update(ctx, bob.Key(), "other", func(*OAuthGrant) *OAuthGrant { return wrong }); err != nil {
			t.Fatal(err)
		}
		_, err := whoami(g, "other", bob)
		e := wantCode(t, err, CodeAuthRequired)
		if !strings.Contains(e.Message, "sandbox login other") || !strings.Contains(e.Message, "--principal acme/bob") {
			t.Fatalf("message: %s", e.Message)
		}
		// The operator's own login to other is untouched.
		if who, err := whoami(g, "other", auth.Operator()); err != nil || who != "alice" {
			t.Fatalf("operator's whoami on other = %q, %v", who, err)
		}
	})

	t.Run("logout", func(t *testing.T) {
		ok, err := g.Logout(ctx, "secure", op)
		if err != nil || !ok {
			t.Fatalf("logout: %v, %v", ok, err)
		}
		if s := g.OAuthState(ctx, "secure", op); s != "not logged in" {
			t.Errorf("state after logout = %q", s)
		}
	})
}

// TestOAuthLoginWithoutRegistration: an authorization server that offers no
// dynamic registration needs a configured client; without one the login
// says what to configure.
func TestOAuthLoginWithoutRegistration(t *testing.T) {
	issuer := oauthtest.StartAuthServer(t, "NO_REGISTRATION=1")
	secure := oauthtest.StartProtectedServer(t, issuer)
	tokens := filepath.Join(t.TempDir(), "oauth-tokens.json")
	ctx := context.Background()

	g := oauthGateway(t, tokens, fmt.Sprintf(`"secure": {"url": %q}`, secure))
	_, err := g.Login(ctx, "secure", LoginOptions{Show: func(string) { t.Error("a login without a client reached the browser") }})
	if err == nil || !strings.Contains(err.Error(), "no dynamic client registration") || !strings.Contains(err.Error(), `"clientId"`) {
		t.Fatalf("login without a client: %v", err)
	}

	g = oauthGateway(t, tokens, fmt.Sprintf(`"secure": {"url": %q, "oauth": {"clientId": "sandbox-cli"}}`, secure))
	grant, err := g.Login(ctx, "secure", LoginOptions{Show: browse(t), Wait: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if grant.ClientID != "sandbox-cli" {
		t.Fatalf("client %q", grant.ClientID)
	}
	testwait.Until(t, 10*time.Second, "secure to connect with the login", func() bool { return g.Servers()[0].State == StateReady })
	if who, err := whoami(g, "secure", auth.Operator()); err != nil || who != "alice" {
		t.Fatalf("whoami = %q, %v", who, err)
	}
}

// TestAuthParams reads WWW-Authenticate challenges as servers write them.
func TestAuthParams(t *testing.T) {
	for header, want := range map[string]map[string]string{
		`Bearer resource_metadata="https://h/.well-known/oauth-protected-resource/mcp", scope="a b"`: {"resource_metadata": "https://h/.well-known/oauth-protected-resource/mcp", "scope": "a b"},
		`Bearer error="invalid_token", error_description="say \"hi\", then go"`:                      {"error": "invalid_token", "error_description": `say "hi", then go`},
		`Bearer realm=example,scope=x`: {"realm": "example", "scope": "x"},
		`Bearer`:                       {},
		`Bearer scope="unterminated`:   {"scope": "unterminated"},
	} {
		got := authParams(header)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("authParams(%s) = %v, want %v", header, got, want)
		}
	}
}

// TestFileOAuthStore: grants survive a reopen, a write by another process
// is seen at the next read, and a file others may read is refused.
func TestFileOAuthStore(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "tokens.json")
	a, err := NewFileOAuthStore(path)
	if err != nil {
		t.Fatal(err)
	}
	put := func(s OAuthStore, owner, tok string) {
		t.Helper()
		if err := s.Update(ctx, owner, "gh", func(*OAuthGrant) *OAuthGrant {
			return &OAuthGrant{URL: "https://gh/mcp", Token: transport.Token{AccessToken: tok}}
		}); err != nil {
			t.Fatal(err)
		}
	}
	put(a, "operator", "one")
	b, err := NewFileOAuthStore(path) // another process
	if err != nil {
		t.Fatal(err)
	}
	if g, _ := b.Grant(ctx, "operator", "gh"); g == nil || g.Token.AccessToken != "one" {
		t.Fatalf("reopened: %+v", g)
	}
	time.Sleep(10 * time.Millisecond) // a distinct modification time
	put(b, "acme/bob", "two")
	if g, _ := a.Grant(ctx, "acme/bob", "gh"); g == nil || g.Token.AccessToken != "two" {
		t.Fatalf("the other process's write was not seen: %+v", g)
	}
	// a's next write keeps b's grant.
	put(a, "operator", "three")
	if g, _ := b.Grant(ctx, "acme/bob", "gh"); g == nil {
		t.Fatal("a write lost another process's grant")
	}
	if err := a.Update(ctx, "acme/bob", "gh", func(*OAuthGrant) *OAuthGrant { return nil }); err != nil {
		t.Fatal(err)
	}
	if g, _ := b.Grant(ctx, "acme/bob", "gh"); g != nil {
		t.Fatal("a removed grant is still there")
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := NewFileOAuthStore(path); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("a world-readable token file: %v", err)
	}
}

// TestOAuthOverSSE: a server on the legacy HTTP+SSE transport needs the
// login on its GET stream too, which lives as long as the connection.
func TestOAuthOverSSE(t *testing.T) {
	issuer := oauthtest.StartAuthServer(t)
	sse := oauthtest.StartProtectedSSEServer(t, issuer)
	tokens := filepath.Join(t.TempDir(), "oauth-tokens.json")
	g := oauthGateway(t, tokens, fmt.Sprintf(`"legacy": {"url": %q, "transport": "sse"}`, sse))
	if _, err := g.Login(context.Background(), "legacy", LoginOptions{Show: browse(t), Wait: 30 * time.Second}); err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, 10*time.Second, "legacy to connect with the login", func() bool { return g.Servers()[0].State == StateReady })
	if who, err := whoami(g, "legacy", auth.Operator()); err != nil || who != "alice" {
		t.Fatalf("whoami over SSE = %q, %v", who, err)
	}
}

// TestFileOAuthStoreTwoProcesses: two stores on one file (as a `sandbox
// login` beside a running serve) updating at once lose no write: the file
// lock spans each read-modify-write.
func TestFileOAuthStoreTwoProcesses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens.json")
	a, _ := NewFileOAuthStore(path)
	b, _ := NewFileOAuthStore(path)
	var wg sync.WaitGroup
	for i, s := range []*FileOAuthStore{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 40 {
				owner := fmt.Sprintf("p%d-%d", i, j)
				if err := s.Update(context.Background(), owner, "gh", func(*OAuthGrant) *OAuthGrant { return &OAuthGrant{URL: "https://gh/mcp"} }); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	c, _ := NewFileOAuthStore(path)
	for i := range 2 {
		for j := range 40 {
			if g, _ := c.Grant(context.Background(), fmt.Sprintf("p%d-%d", i, j), "gh"); g == nil {
				t.Fatalf("the grant of p%d-%d was lost", i, j)
			}
		}
	}
}
