// Package oauthtest runs the real OAuth world the upstream-login tests need:
// an authorization server (oidc-provider, an npm peer, by oauthserver.mjs),
// MCP servers that require its tokens, and the person in the browser; and a
// fake authorization server (FakeAuth) for the answers a real one never
// gives.
package oauthtest

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/internal/testpeers"
)

// StartAuthServer runs oidc-provider (oauthserver.mjs: its header says what
// env does) and returns its issuer URL. It skips in -short mode.
func StartAuthServer(t *testing.T, env ...string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("runs an npm peer (oidc-provider)")
	}
	var hello struct{ Issuer string }
	env = append(env, "OIDC_PROVIDER="+testpeers.Package(t, "oidc-provider"))
	script := filepath.Join(testpeers.RepoRoot(t), "internal", "oauthtest", "oauthserver.mjs")
	testpeers.StartScript(t, script, env, &hello)
	return hello.Issuer
}

// StartProtectedServer is an MCP server that requires the issuer's tokens
// for its own URL (their audience), as the MCP authorization spec has
// servers do: 401 with resource_metadata without one, its protected
// resource metadata at the well-known URLs. Its one tool, whoami, answers
// the token's subject. It returns the server's URL.
func StartProtectedServer(t *testing.T, issuer string) string {
	return startProtected(t, issuer, false)
}

// StartProtectedSSEServer is StartProtectedServer over the legacy HTTP+SSE
// transport: the GET stream at /sse needs the token as much as the POSTs.
// It returns the /sse URL.
func StartProtectedSSEServer(t *testing.T, issuer string) string {
	return startProtected(t, issuer, true)
}

func startProtected(t *testing.T, issuer string, sse bool) string {
	t.Helper()
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	resource := srv.URL + "/mcp"
	if sse {
		resource = srv.URL + "/sse"
	}
	o := auth.OAuthConfig{Issuer: issuer, Audience: resource, Scopes: []string{"mcp:tools"}}
	v, err := auth.NewVerifier(auth.Config{OAuth: &o}, auth.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := server.NewMCPServer("protected", "1.0.0")
	s.AddTool(mcp.NewTool("whoami", mcp.WithDescription("The subject of the caller's token"), mcp.WithReadOnlyHintAnnotation(true)),
		func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(auth.PrincipalFrom(ctx).ID), nil
		})
	for _, p := range auth.MetadataPaths(resource) {
		mux.Handle(p, auth.MetadataHandler(o))
	}
	protect := auth.Middleware(v, auth.MetadataURL(resource))
	if sse {
		h := server.NewSSEServer(s, server.WithBaseURL(srv.URL), server.WithSSEContextFunc(func(ctx context.Context, r *http.Request) context.Context {
			return auth.WithPrincipal(ctx, auth.PrincipalFrom(r.Context()))
		}))
		mux.Handle("/sse", protect(h))
		mux.Handle("/message", protect(h))
		return resource
	}
	mux.Handle("/mcp", protect(server.NewStreamableHTTPServer(s,
		server.WithHTTPContextFunc(func(ctx context.Context, r *http.Request) context.Context {
			return auth.WithPrincipal(ctx, auth.PrincipalFrom(r.Context()))
		}))))
	return resource
}

// Browse is the person in the browser: it follows an authorization URL
// through the (simulated) login and consent to the client's redirect, in
// the background, and reports a failure on t.
func Browse(t *testing.T, authURL string) {
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 20 * time.Second}
	go func() {
		resp, err := c.Get(authURL)
		if err != nil {
			t.Errorf("browsing %s: %v", authURL, err)
			return
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("the browser ended at %s with %s: %s", resp.Request.URL, resp.Status, body)
		}
	}()
}

// Revoke revokes a refresh token at the authorization server.
func Revoke(t *testing.T, issuer, refreshToken string) {
	t.Helper()
	resp, err := http.Post(issuer+"/test/revoke", "text/plain", strings.NewReader(refreshToken))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `"revoked":true`) {
		t.Fatalf("revoke: %s", body)
	}
}

// FakeAuth is an authorization server written for one test, in front of an
// MCP server that requires a login (both on one listener): it registers any
// client, approves every authorization request at once, and answers it with
// the iss the test chooses, for the cases no real server produces (RFC
// 9207's mix-up: an answer naming another issuer, or none).
type FakeAuth struct {
	// AdvertiseIss sets authorization_response_iss_parameter_supported in
	// its metadata.
	AdvertiseIss bool
	// Iss is the iss of its authorization responses, given its own issuer;
	// "" sends none. Nil: its own issuer, as an honest server does.
	Iss func(issuer string) string

	// Issuer and MCPURL are set by Start.
	Issuer, MCPURL string
	exchanged      atomic.Int32
}

// Start serves f until the test ends.
func (f *FakeAuth) Start(t *testing.T) {
	t.Helper()
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	f.Issuer, f.MCPURL = srv.URL, srv.URL+"/mcp"
	writeJSON := func(w http.ResponseWriter, status int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(v)
	}
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+srv.URL+`/.well-known/oauth-protected-resource/mcp"`)
		http.Error(w, "log in first", http.StatusUnauthorized)
	})
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"resource": f.MCPURL, "authorization_servers": []string{f.Issuer}})
	})
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{
			"issuer": f.Issuer, "authorization_endpoint": f.Issuer + "/authorize", "token_endpoint": f.Issuer + "/token",
			"registration_endpoint": f.Issuer + "/register", "response_types_supported": []string{"code"},
			"code_challenge_methods_supported":               []string{"S256"},
			"authorization_response_iss_parameter_supported": f.AdvertiseIss,
		})
	})
	mux.HandleFunc("/register", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusCreated, map[string]any{"client_id": "fake-client", "token_endpoint_auth_method": "none"})
	})
	mux.HandleFunc("/authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		back, err := url.Parse(q.Get("redirect_uri"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		answer := url.Values{"code": {"fake-code"}, "state": {q.Get("state")}}
		iss := f.Issuer
		if f.Iss != nil {
			iss = f.Iss(f.Issuer)
		}
		if iss != "" {
			answer.Set("iss", iss)
		}
		back.RawQuery = answer.Encode()
		http.Redirect(w, r, back.String(), http.StatusFound)
	})
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		f.exchanged.Add(1)
		writeJSON(w, http.StatusOK, map[string]any{"access_token": "fake-access-token", "token_type": "Bearer", "expires_in": 3600})
	})
}

// Exchanged counts the codes sent to its token endpoint.
func (f *FakeAuth) Exchanged() int { return int(f.exchanged.Load()) }
