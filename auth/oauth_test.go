package auth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// testIssuer is an authorization server made in the test: its metadata,
// its key set, and keys to sign with.
type testIssuer struct {
	t      *testing.T
	srv    *httptest.Server
	issuer string

	mu        sync.Mutex
	published []jose.JSONWebKey // the key set served
	metadata  string            // which well-known document is served
	down      bool              // the key set answers 500

	keyFetches  atomic.Int32
	metaFetches atomic.Int32
}

type signingKey struct {
	kid string
	alg jose.SignatureAlgorithm
	key crypto.Signer
}

func newTestIssuer(t *testing.T, path string) *testIssuer {
	ti := &testIssuer{t: t, metadata: "oauth-authorization-server"}
	ti.srv = httptest.NewServer(http.HandlerFunc(ti.serve))
	t.Cleanup(ti.srv.Close)
	ti.issuer = ti.srv.URL + path
	return ti
}

func (ti *testIssuer) serve(w http.ResponseWriter, r *http.Request) {
	ti.mu.Lock()
	defer ti.mu.Unlock()
	switch {
	case r.URL.Path == "/keys":
		ti.keyFetches.Add(1)
		if ti.down {
			http.Error(w, "down", http.StatusInternalServerError)
			return
		}
		_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: ti.published})
	case strings.HasPrefix(r.URL.Path, "/.well-known/"+ti.metadata):
		ti.metaFetches.Add(1)
		_ = json.NewEncoder(w).Encode(map[string]string{"issuer": ti.issuer, "jwks_uri": ti.srv.URL + "/keys"})
	default:
		http.NotFound(w, r)
	}
}

// newKey makes a key; publish puts it in the served key set.
func newKey(t *testing.T, kid string, alg jose.SignatureAlgorithm) signingKey {
	t.Helper()
	var k crypto.Signer
	var err error
	switch alg {
	case jose.RS256, jose.PS256, jose.RS384:
		k, err = rsa.GenerateKey(rand.Reader, 2048)
	case jose.ES256:
		k, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case jose.EdDSA:
		_, k, err = ed25519.GenerateKey(rand.Reader)
	default:
		t.Fatalf("no key for %s", alg)
	}
	if err != nil {
		t.Fatal(err)
	}
	return signingKey{kid: kid, alg: alg, key: k}
}

func (ti *testIssuer) publish(keys ...signingKey) {
	ti.mu.Lock()
	defer ti.mu.Unlock()
	ti.published = nil
	for _, k := range keys {
		ti.published = append(ti.published, jose.JSONWebKey{Key: k.key.Public(), KeyID: k.kid, Algorithm: string(k.alg), Use: "sig"})
	}
}

// claims returns valid claims for the issuer and audience, changed by set.
func (ti *testIssuer) claims(set map[string]any) map[string]any {
	now := time.Now().Unix()
	c := map[string]any{
		"iss": ti.issuer, "sub": "user-1", "aud": testAudience, "client_id": "c1",
		"iat": now, "exp": now + 300, "scope": "mcp:tools server:fs", "jti": "j1",
	}
	for k, v := range set {
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
	}
	return c
}

func sign(t *testing.T, k signingKey, claims map[string]any) string {
	t.Helper()
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: k.alg, Key: jose.JSONWebKey{Key: k.key, KeyID: k.kid}},
		(&jose.SignerOptions{}).WithType("at+jwt"))
	if err != nil {
		t.Fatal(err)
	}
	payload, _ := json.Marshal(claims)
	jws, err := signer.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	s, err := jws.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// forge makes a compact JWS with any header, signed by mac (nil: empty
// signature).
func forge(header, claims map[string]any, mac []byte) string {
	h, _ := json.Marshal(header)
	p, _ := json.Marshal(claims)
	input := base64.RawURLEncoding.EncodeToString(h) + "." + base64.RawURLEncoding.EncodeToString(p)
	var sig []byte
	if mac != nil {
		m := hmac.New(sha256.New, mac)
		m.Write([]byte(input))
		sig = m.Sum(nil)
	}
	return input + "." + base64.RawURLEncoding.EncodeToString(sig)
}

const testAudience = "https://mcp.example.com/mcp"

func oauthVerifierFor(t *testing.T, ti *testIssuer, cfg OAuthConfig, opts Options) Verifier {
	t.Helper()
	if cfg.Issuer == "" {
		cfg.Issuer = ti.issuer
	}
	if cfg.Audience == "" {
		cfg.Audience = testAudience
	}
	v, err := NewVerifier(Config{OAuth: &cfg}, opts)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// refused checks that err is a refusal with the code and description.
func refused(t *testing.T, p Principal, err error, code, description string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("Verify = %+v, %v; want a refusal %q", p, err, description)
	}
	if e.Code != code || e.Description != description {
		t.Fatalf("refusal %s %q (%v); want %s %q", e.Code, e.Description, err, code, description)
	}
}

func TestOAuthClaims(t *testing.T) {
	ti := newTestIssuer(t, "")
	rs, es, ed, ps := newKey(t, "rs", jose.RS256), newKey(t, "es", jose.ES256), newKey(t, "ed", jose.EdDSA), newKey(t, "ps", jose.PS256)
	other := newKey(t, "rs", jose.RS256) // same kid, another key
	rs384 := newKey(t, "rs384", jose.RS384)
	ti.publish(rs, es, ed, ps, rs384)
	v := oauthVerifierFor(t, ti, OAuthConfig{}, Options{})
	ctx := context.Background()
	now := time.Now().Unix()

	for _, k := range []signingKey{rs, es, ed, ps} {
		t.Run("valid "+string(k.alg), func(t *testing.T) {
			p, err := v.Verify(ctx, sign(t, k, ti.claims(nil)))
			if err != nil {
				t.Fatal(err)
			}
			if p.ID != "user-1" || p.Tenant != "user-1" || !slices.Equal(p.Scopes, []string{"mcp:tools", "server:fs"}) {
				t.Errorf("principal %+v", p)
			}
			if !p.MaySee("fs") || p.MaySee("github") {
				t.Errorf("a token's server scope does not restrict: %+v", p)
			}
		})
	}

	for _, tc := range []struct {
		name   string
		claims map[string]any
		scopes []string
	}{
		{"audience in an array", map[string]any{"aud": []string{"other", testAudience}}, []string{"mcp:tools", "server:fs"}},
		{"scp array", map[string]any{"scope": nil, "scp": []string{"a", "b"}}, []string{"a", "b"}},
		{"scp string", map[string]any{"scope": nil, "scp": "a b"}, []string{"a", "b"}},
		{"no scope", map[string]any{"scope": nil}, nil},
		{"expired within the leeway", map[string]any{"exp": now - 10}, []string{"mcp:tools", "server:fs"}},
		{"not before, within the leeway", map[string]any{"nbf": now + 10}, []string{"mcp:tools", "server:fs"}},
		{"fractional times", map[string]any{"exp": float64(now) + 60.5, "nbf": float64(now) - 0.5}, []string{"mcp:tools", "server:fs"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := v.Verify(ctx, sign(t, rs, ti.claims(tc.claims)))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(p.Scopes, tc.scopes) {
				t.Errorf("scopes %q, want %q", p.Scopes, tc.scopes)
			}
		})
	}

	pub, _ := x509.MarshalPKIXPublicKey(rs.key.Public())
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub})
	for _, tc := range []struct {
		name, token, description string
	}{
		{"expired", sign(t, rs, ti.claims(map[string]any{"exp": now - 60})), "token expired"},
		{"not yet valid", sign(t, rs, ti.claims(map[string]any{"nbf": now + 120})), "token not valid yet"},
		{"issued in the future", sign(t, rs, ti.claims(map[string]any{"iat": now + 120})), "token issued in the future"},
		{"no expiry", sign(t, rs, ti.claims(map[string]any{"exp": nil})), "token has no expiry"},
		{"no subject", sign(t, rs, ti.claims(map[string]any{"sub": nil})), "token has no subject"},
		{"wrong audience", sign(t, rs, ti.claims(map[string]any{"aud": "https://other.example.com/mcp"})), "token audience is not this server"},
		{"audience with a trailing slash", sign(t, rs, ti.claims(map[string]any{"aud": testAudience + "/"})), "token audience is not this server"},
		{"no audience", sign(t, rs, ti.claims(map[string]any{"aud": nil})), "token audience is not this server"},
		{"wrong issuer", sign(t, rs, ti.claims(map[string]any{"iss": "https://evil.example.com"})), "token issuer is not the configured issuer"},
		{"bad signature", sign(t, other, ti.claims(nil)), "token signature does not verify with the issuer's keys"},
		{"alg none", forge(map[string]any{"alg": "none", "kid": "rs"}, ti.claims(nil), nil), "token signing algorithm not accepted"},
		{"HS256 keyed with the public key", forge(map[string]any{"alg": "HS256", "kid": "rs"}, ti.claims(nil), pubPEM), "token signing algorithm not accepted"},
		{"algorithm not in the allow-list", sign(t, rs384, ti.claims(nil)), "token signing algorithm not accepted"},
		{"malformed scope", sign(t, rs, ti.claims(map[string]any{"scope": nil, "scp": 7})), "malformed token scope"},
		{"malformed expiry", sign(t, rs, ti.claims(map[string]any{"exp": "tomorrow"})), "malformed token claims"},
		{"garbage", "aaa.bbb.ccc", "malformed token"},
		{"tampered payload", func() string {
			parts := strings.Split(sign(t, rs, ti.claims(nil)), ".")
			parts[1] = base64.RawURLEncoding.EncodeToString([]byte(`{"iss":"` + ti.issuer + `","sub":"admin","aud":"` + testAudience + `","exp":9999999999}`))
			return strings.Join(parts, ".")
		}(), "token signature does not verify with the issuer's keys"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := v.Verify(ctx, tc.token)
			refused(t, p, err, CodeInvalidToken, tc.description)
			if strings.Contains(err.Error(), tc.token) {
				t.Errorf("the error holds the token: %v", err)
			}
		})
	}

	t.Run("a JWT with the RS256 header but the none algorithm's empty signature", func(t *testing.T) {
		parts := strings.Split(sign(t, rs, ti.claims(nil)), ".")
		p, err := v.Verify(ctx, parts[0]+"."+parts[1]+".")
		refused(t, p, err, CodeInvalidToken, "token signature does not verify with the issuer's keys")
	})
}

func TestOAuthPrincipal(t *testing.T) {
	ti := newTestIssuer(t, "")
	k := newKey(t, "k1", jose.ES256)
	ti.publish(k)
	ctx := context.Background()

	v := oauthVerifierFor(t, ti, OAuthConfig{TenantClaim: "org_id", RequiredScopes: []string{"mcp:tools"}}, Options{})
	p, err := v.Verify(ctx, sign(t, k, ti.claims(map[string]any{"org_id": "acme"})))
	if err != nil || p.Key() != "acme/user-1" {
		t.Fatalf("Verify = %+v, %v; want acme/user-1", p, err)
	}
	if p.MayOperate() {
		t.Errorf("a token operates without an operator claim configured: %+v", p)
	}
	p, err = v.Verify(ctx, sign(t, k, ti.claims(nil)))
	refused(t, p, err, CodeInvalidToken, "token lacks the tenant claim")

	// The operator claim: only the boolean true makes an operator.
	ops := oauthVerifierFor(t, ti, OAuthConfig{OperatorClaim: "sandbox_operator"}, Options{})
	for value, want := range map[any]bool{true: true, false: false, "true": false, 1: false} {
		p, err := ops.Verify(ctx, sign(t, k, ti.claims(map[string]any{"sandbox_operator": value})))
		if err != nil || p.MayOperate() != want {
			t.Errorf("operator claim %#v: %+v, %v; want operates=%v", value, p, err, want)
		}
	}
	if p, err := ops.Verify(ctx, sign(t, k, ti.claims(nil))); err != nil || p.MayOperate() {
		t.Errorf("no operator claim: %+v, %v", p, err)
	}
	p, err = v.Verify(ctx, sign(t, k, ti.claims(map[string]any{"org_id": "a/b"})))
	refused(t, p, err, CodeInvalidToken, "token lacks the tenant claim")
	p, err = v.Verify(ctx, sign(t, k, ti.claims(map[string]any{"org_id": "acme", "scope": "other"})))
	refused(t, p, err, CodeInsufficientScope, "token lacks a required scope")
	if e := err.(*Error); e.Status() != http.StatusForbidden || !slices.Equal(e.Scopes, []string{"mcp:tools"}) {
		t.Errorf("insufficient scope: status %d, scopes %q", e.Status(), e.Scopes)
	}

	// An API key and an access token in one verifier: a token whose
	// subject is a key's name does not get the key's principal.
	cfg := Config{
		APIKeys: []APIKey{{Name: "ci-bot", Key: "ci-0123456789abcdef"}},
		OAuth:   &OAuthConfig{Issuer: ti.issuer, Audience: testAudience},
	}
	both, err := NewVerifier(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p, err := both.Verify(ctx, "ci-0123456789abcdef"); err != nil || p.ID != "ci-bot" {
		t.Errorf("API key: %+v, %v", p, err)
	}
	if p, err := both.Verify(ctx, sign(t, k, ti.claims(nil))); err != nil || p.ID != "user-1" {
		t.Errorf("token: %+v, %v", p, err)
	}
	p, err = both.Verify(ctx, sign(t, k, ti.claims(map[string]any{"sub": "ci-bot"})))
	refused(t, p, err, CodeInvalidToken, "token subject is the name of an API key")
	p, err = both.Verify(ctx, "not-a-key-and-not-a-jwt")
	refused(t, p, err, CodeInvalidToken, "neither an API key nor a JWT access token")
}

func TestOAuthKeyRotation(t *testing.T) {
	ti := newTestIssuer(t, "")
	old, rotated := newKey(t, "2026-01", jose.RS256), newKey(t, "2026-02", jose.ES256)
	ti.publish(old)
	const every = 500 * time.Millisecond
	v := oauthVerifierFor(t, ti, OAuthConfig{}, Options{MinRefetch: every, MaxKeyAge: time.Hour})
	ctx := context.Background()
	if _, err := v.Verify(ctx, sign(t, old, ti.claims(nil))); err != nil {
		t.Fatal(err)
	}
	if n := ti.keyFetches.Load(); n != 1 {
		t.Fatalf("%d key fetches, want 1", n)
	}

	// Made-up key ids make the verifier fetch the keys again, but not
	// more than once per MinRefetch.
	stranger := newKey(t, "made-up", jose.ES256)
	var strangers []string
	for i := 0; i < 20; i++ {
		strangers = append(strangers, sign(t, stranger, ti.claims(map[string]any{"jti": i})))
	}
	time.Sleep(every + 50*time.Millisecond)
	for _, token := range strangers {
		p, err := v.Verify(ctx, token)
		refused(t, p, err, CodeInvalidToken, "token signature does not verify with the issuer's keys")
	}
	if n := ti.keyFetches.Load(); n != 2 {
		t.Fatalf("%d key fetches after 20 tokens with an unknown key, want 2", n)
	}

	// The issuer rotates: the new key signs, the old one still verifies.
	ti.publish(rotated, old)
	token := sign(t, rotated, ti.claims(nil))
	time.Sleep(every + 50*time.Millisecond)
	p, err := v.Verify(ctx, token)
	if err != nil {
		t.Fatalf("a token signed by the rotated key: %v", err)
	}
	if p.ID != "user-1" || ti.keyFetches.Load() != 3 {
		t.Errorf("principal %+v after %d fetches", p, ti.keyFetches.Load())
	}
	if _, err := v.Verify(ctx, sign(t, old, ti.claims(nil))); err != nil {
		t.Errorf("the old key, still published: %v", err)
	}
	if n := ti.keyFetches.Load(); n != 3 {
		t.Errorf("%d key fetches, want 3 (both keys are cached)", n)
	}
}

func TestOAuthWithdrawnKey(t *testing.T) {
	ti := newTestIssuer(t, "")
	old, rotated := newKey(t, "old", jose.ES256), newKey(t, "new", jose.ES256)
	ti.publish(old)
	const maxAge = 500 * time.Millisecond
	v := oauthVerifierFor(t, ti, OAuthConfig{}, Options{MinRefetch: time.Millisecond, MaxKeyAge: maxAge})
	ctx := context.Background()
	token := sign(t, old, ti.claims(nil))
	if _, err := v.Verify(ctx, token); err != nil {
		t.Fatal(err)
	}
	ti.publish(rotated) // the old key is withdrawn
	if _, err := v.Verify(ctx, token); err != nil {
		t.Fatalf("within MaxKeyAge the cached key still verifies: %v", err)
	}
	time.Sleep(maxAge + 50*time.Millisecond)
	p, err := v.Verify(ctx, token)
	refused(t, p, err, CodeInvalidToken, "token signature does not verify with the issuer's keys")
}

func TestOAuthUnavailable(t *testing.T) {
	ti := newTestIssuer(t, "")
	k := newKey(t, "k", jose.ES256)
	ti.publish(k)
	ti.down = true
	v := oauthVerifierFor(t, ti, OAuthConfig{}, Options{MinRefetch: 50 * time.Millisecond})
	ctx := context.Background()
	token := sign(t, k, ti.claims(nil))
	p, err := v.Verify(ctx, token)
	refused(t, p, err, CodeInvalidToken, "the authorization server's keys are unavailable")
	if e := err.(*Error); !e.Unavailable || e.Status() != http.StatusServiceUnavailable {
		t.Errorf("refusal %+v, want unavailable (503)", e)
	}

	// Back up: the keys are fetched (after MinRefetch).
	ti.mu.Lock()
	ti.down = false
	ti.mu.Unlock()
	time.Sleep(60 * time.Millisecond)
	if _, err := v.Verify(ctx, token); err != nil {
		t.Fatalf("after the issuer came back: %v", err)
	}
	// Down again: the keys fetched last keep verifying.
	ti.mu.Lock()
	ti.down = true
	ti.mu.Unlock()
	time.Sleep(60 * time.Millisecond)
	if _, err := v.Verify(ctx, sign(t, newKey(t, "unknown", jose.ES256), ti.claims(nil))); err == nil {
		t.Fatal("a token signed by an unknown key verified")
	}
	if _, err := v.Verify(ctx, token); err != nil {
		t.Fatalf("with the issuer down, the cached keys: %v", err)
	}
}

func TestOAuthDiscovery(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name, path, metadata string
	}{
		{"RFC 8414", "", "oauth-authorization-server"},
		{"OpenID Connect", "", "openid-configuration"},
		{"RFC 8414, issuer with a path", "/tenant1", "oauth-authorization-server"},
		{"OpenID Connect, issuer with a path", "/tenant1", "openid-configuration"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ti := newTestIssuer(t, tc.path)
			ti.metadata = tc.metadata
			k := newKey(t, "k", jose.EdDSA)
			ti.publish(k)
			v := oauthVerifierFor(t, ti, OAuthConfig{}, Options{})
			for i := 0; i < 3; i++ {
				if _, err := v.Verify(ctx, sign(t, k, ti.claims(nil))); err != nil {
					t.Fatal(err)
				}
			}
			if n := ti.metaFetches.Load(); n != 1 {
				t.Errorf("metadata fetched %d times, want once", n)
			}
		})
	}

	t.Run("metadata naming another issuer", func(t *testing.T) {
		ti := newTestIssuer(t, "")
		k := newKey(t, "k", jose.ES256)
		ti.publish(k)
		v := oauthVerifierFor(t, ti, OAuthConfig{Issuer: ti.srv.URL + "/"}, Options{})
		p, err := v.Verify(ctx, sign(t, k, ti.claims(map[string]any{"iss": ti.srv.URL + "/"})))
		refused(t, p, err, CodeInvalidToken, "the authorization server's metadata is unavailable")
		if !strings.Contains(err.Error(), "names issuer") {
			t.Errorf("error %v does not say why", err)
		}
	})

	t.Run("no metadata", func(t *testing.T) {
		ti := newTestIssuer(t, "")
		ti.metadata = "nothing"
		k := newKey(t, "k", jose.ES256)
		ti.publish(k)
		v := oauthVerifierFor(t, ti, OAuthConfig{}, Options{})
		p, err := v.Verify(ctx, sign(t, k, ti.claims(nil)))
		refused(t, p, err, CodeInvalidToken, "the authorization server's metadata is unavailable")
		// A configured key set URL needs no metadata.
		v = oauthVerifierFor(t, ti, OAuthConfig{JWKSURL: ti.srv.URL + "/keys"}, Options{})
		if _, err := v.Verify(ctx, sign(t, k, ti.claims(nil))); err != nil {
			t.Fatal(err)
		}
	})
}

func TestOAuthMiddleware(t *testing.T) {
	ti := newTestIssuer(t, "")
	k := newKey(t, "k", jose.ES256)
	ti.publish(k)
	cfg := OAuthConfig{Issuer: ti.issuer, Audience: testAudience, RequiredScopes: []string{"mcp:tools"}}
	v := oauthVerifierFor(t, ti, cfg, Options{})
	meta := MetadataURL(cfg.Resource())
	var got Principal
	h := Middleware(v, meta)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = PrincipalFrom(r.Context()) }))

	do := func(token string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	if rec := do(sign(t, k, ti.claims(nil))); rec.Code != 200 || got.ID != "user-1" {
		t.Fatalf("valid token: %d, %+v", rec.Code, got)
	}
	rec := do(sign(t, k, ti.claims(map[string]any{"exp": time.Now().Unix() - 3600})))
	if want := `Bearer resource_metadata="` + meta + `", scope="mcp:tools", error="invalid_token", error_description="token expired"`; rec.Code != 401 || rec.Header().Get("WWW-Authenticate") != want {
		t.Errorf("expired: %d %s", rec.Code, rec.Header().Get("WWW-Authenticate"))
	}
	rec = do(sign(t, k, ti.claims(map[string]any{"scope": "other"})))
	if want := `Bearer resource_metadata="` + meta + `", scope="mcp:tools", error="insufficient_scope", error_description="token lacks a required scope"`; rec.Code != 403 || rec.Header().Get("WWW-Authenticate") != want {
		t.Errorf("insufficient scope: %d %s", rec.Code, rec.Header().Get("WWW-Authenticate"))
	}
}
