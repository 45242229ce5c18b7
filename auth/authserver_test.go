package auth_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/internal/testpeers"
)

// authServer is oidc-provider, run by testdata/authserver.mjs.
type authServer struct {
	t      *testing.T
	issuer string
}

func startAuthServer(t *testing.T) *authServer {
	t.Helper()
	if testing.Short() {
		t.Skip("runs an npm peer (oidc-provider)")
	}
	var hello struct{ Issuer string }
	testpeers.StartScript(t, filepath.Join("testdata", "authserver.mjs"), []string{"OIDC_PROVIDER=" + testpeers.Package(t, "oidc-provider")}, &hello)
	if hello.Issuer == "" {
		t.Fatal("authserver.mjs named no issuer")
	}
	return &authServer{t: t, issuer: hello.Issuer}
}

// token gets an access token by the client_credentials grant.
func (as *authServer) token(client, scope, resource string) string {
	as.t.Helper()
	form := url.Values{"grant_type": {"client_credentials"}, "resource": {resource}}
	if scope != "" {
		form.Set("scope", scope)
	}
	req, _ := http.NewRequest(http.MethodPost, as.issuer+"/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(client, client+"-secret")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		as.t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		AccessToken string `json:"access_token"`
		TokenType   string `json:"token_type"`
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || body.AccessToken == "" {
		as.t.Fatalf("token for %s: %d %s %s (%v)", client, resp.StatusCode, body.Error, body.Description, err)
	}
	return body.AccessToken
}

// rotate makes the server sign with a new key; it returns the key's id.
func (as *authServer) rotate() string {
	as.t.Helper()
	resp, err := http.Post(as.issuer+"/test/rotate", "application/json", nil)
	if err != nil {
		as.t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct{ Kid string }
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || body.Kid == "" {
		as.t.Fatalf("rotate: %v", err)
	}
	return body.Kid
}

func header(t *testing.T, token string) map[string]any {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(strings.Split(token, ".")[0])
	if err != nil {
		t.Fatal(err)
	}
	var h map[string]any
	if err := json.Unmarshal(b, &h); err != nil {
		t.Fatal(err)
	}
	return h
}

func wantRefusal(t *testing.T, p auth.Principal, err error, code, description string) {
	t.Helper()
	var e *auth.Error
	if !errors.As(err, &e) || e.Code != code || e.Description != description {
		t.Fatalf("Verify = %+v, %v; want %s %q", p, err, code, description)
	}
}

// TestAuthServer verifies the access tokens of a real authorization server
// (oidc-provider): JWTs (typ at+jwt, ES256) issued by the client_credentials
// grant for the audience an RFC 8707 resource indicator names. The key set
// URL is discovered from the server's metadata.
func TestAuthServer(t *testing.T) {
	as := startAuthServer(t)
	const resource = "http://127.0.0.1:8808/mcp"
	cfg := auth.Config{OAuth: &auth.OAuthConfig{Issuer: as.issuer, Audience: resource, TenantClaim: ""}}
	v, err := auth.NewVerifier(cfg, auth.Options{MinRefetch: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	valid := as.token("agent", "mcp:tools server:fs", resource)
	if h := header(t, valid); h["typ"] != "at+jwt" || h["alg"] != "ES256" {
		t.Fatalf("not a JWT access token: header %v", h)
	}

	t.Run("valid", func(t *testing.T) {
		p, err := v.Verify(ctx, valid)
		if err != nil {
			t.Fatal(err)
		}
		if p.ID != "agent" || p.Tenant != "agent" || !slices.Equal(p.Scopes, []string{"mcp:tools", "server:fs"}) {
			t.Errorf("principal %+v", p)
		}
		if !p.MaySee("fs") || p.MaySee("github") {
			t.Errorf("the token's server:fs scope does not restrict it to fs: %+v", p)
		}
	})

	t.Run("tenant claim", func(t *testing.T) {
		c := *cfg.OAuth
		c.TenantClaim = "org_id"
		v, err := auth.NewVerifier(auth.Config{OAuth: &c}, auth.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if p, err := v.Verify(ctx, as.token("acme", "", resource)); err != nil || p.Key() != "acme/acme" {
			t.Errorf("acme: %+v, %v", p, err)
		}
		p, err := v.Verify(ctx, valid)
		wantRefusal(t, p, err, auth.CodeInvalidToken, "token lacks the tenant claim")
	})

	t.Run("expired", func(t *testing.T) {
		// The server's tokens live 300 s: verify at a time past it.
		late, err := auth.NewVerifier(cfg, auth.Options{Now: func() time.Time { return time.Now().Add(10 * time.Minute) }})
		if err != nil {
			t.Fatal(err)
		}
		p, err := late.Verify(ctx, valid)
		wantRefusal(t, p, err, auth.CodeInvalidToken, "token expired")
	})

	t.Run("not yet valid", func(t *testing.T) {
		// The server sets nbf an hour after iat in the "future" client's tokens.
		p, err := v.Verify(ctx, as.token("future", "", resource))
		wantRefusal(t, p, err, auth.CodeInvalidToken, "token not valid yet")
		// And a clock behind the server's: issued in the future.
		early, err := auth.NewVerifier(cfg, auth.Options{Now: func() time.Time { return time.Now().Add(-10 * time.Minute) }})
		if err != nil {
			t.Fatal(err)
		}
		p, err = early.Verify(ctx, valid)
		wantRefusal(t, p, err, auth.CodeInvalidToken, "token issued in the future")
	})

	t.Run("wrong audience", func(t *testing.T) {
		// A token the server issued for another resource.
		p, err := v.Verify(ctx, as.token("agent", "mcp:tools", "https://other.example.com/mcp"))
		wantRefusal(t, p, err, auth.CodeInvalidToken, "token audience is not this server")
	})

	t.Run("wrong issuer", func(t *testing.T) {
		// Configured for another issuer that (say) shares the key set: the
		// signature verifies, the issuer does not match.
		other := auth.Config{OAuth: &auth.OAuthConfig{Issuer: as.issuer + "/other", Audience: resource, JWKSURL: as.issuer + "/jwks"}}
		ov, err := auth.NewVerifier(other, auth.Options{})
		if err != nil {
			t.Fatal(err)
		}
		p, err := ov.Verify(ctx, valid)
		wantRefusal(t, p, err, auth.CodeInvalidToken, "token issuer is not the configured issuer")
	})

	t.Run("bad signature", func(t *testing.T) {
		// The same header (kid) and claims, signed by a key of the test's own.
		k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		h := header(t, valid)
		signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: jose.JSONWebKey{Key: k, KeyID: h["kid"].(string)}},
			(&jose.SignerOptions{}).WithType("at+jwt"))
		if err != nil {
			t.Fatal(err)
		}
		payload, _ := base64.RawURLEncoding.DecodeString(strings.Split(valid, ".")[1])
		jws, _ := signer.Sign(payload)
		forged, _ := jws.CompactSerialize()
		p, err := v.Verify(ctx, forged)
		wantRefusal(t, p, err, auth.CodeInvalidToken, "token signature does not verify with the issuer's keys")
	})

	t.Run("alg none", func(t *testing.T) {
		h, _ := json.Marshal(map[string]any{"alg": "none", "typ": "at+jwt", "kid": header(t, valid)["kid"]})
		unsigned := base64.RawURLEncoding.EncodeToString(h) + "." + strings.Split(valid, ".")[1] + "."
		p, err := v.Verify(ctx, unsigned)
		wantRefusal(t, p, err, auth.CodeInvalidToken, "token signing algorithm not accepted")
	})

	t.Run("rotated key", func(t *testing.T) {
		kid := as.rotate()
		rotated := as.token("agent", "mcp:tools", resource)
		if got := header(t, rotated)["kid"]; got != kid {
			t.Fatalf("the server signs with %v, not the new key %s", got, kid)
		}
		time.Sleep(150 * time.Millisecond) // MinRefetch since the last fetch
		p, err := v.Verify(ctx, rotated)
		if err != nil {
			t.Fatalf("a token signed by the rotated key: %v", err)
		}
		if p.ID != "agent" {
			t.Errorf("principal %+v", p)
		}
		// The old key is still published: its tokens still verify.
		if _, err := v.Verify(ctx, valid); err != nil {
			t.Errorf("a token signed by the previous key: %v", err)
		}
	})

	t.Run("middleware", func(t *testing.T) {
		mux := http.NewServeMux()
		for _, path := range auth.MetadataPaths(cfg.OAuth.Resource()) {
			mux.Handle(path, auth.MetadataHandler(*cfg.OAuth))
		}
		mux.Handle("/mcp", auth.Middleware(v, auth.MetadataURL(cfg.OAuth.Resource()))(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, auth.PrincipalFrom(r.Context()).Key())
		})))
		srv := httptest.NewServer(mux)
		defer srv.Close()

		// A client without a token learns where to get one, as the MCP
		// authorization spec has it: the challenge, then the metadata.
		resp, err := http.Post(srv.URL+"/mcp", "application/json", strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		challenge := resp.Header.Get("WWW-Authenticate")
		if resp.StatusCode != 401 || challenge != `Bearer resource_metadata="http://127.0.0.1:8808/.well-known/oauth-protected-resource/mcp"` {
			t.Fatalf("no token: %d %s", resp.StatusCode, challenge)
		}
		resp, err = http.Get(srv.URL + "/.well-known/oauth-protected-resource/mcp")
		if err != nil {
			t.Fatal(err)
		}
		var meta auth.ProtectedResourceMetadata
		err = json.NewDecoder(resp.Body).Decode(&meta)
		resp.Body.Close()
		if err != nil || meta.Resource != resource || !slices.Equal(meta.AuthorizationServers, []string{as.issuer}) {
			t.Fatalf("metadata %+v (%v)", meta, err)
		}

		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", strings.NewReader(`{}`))
		req.Header.Set("Authorization", "Bearer "+as.token("agent", "mcp:tools", meta.Resource))
		resp, err = http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(body) != "agent/agent" {
			t.Fatalf("with a token: %d %s", resp.StatusCode, body)
		}
	})
}
