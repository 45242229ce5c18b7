// Package oauthtest runs the real OAuth world the upstream-login tests need:
// an authorization server (oidc-provider, an npm peer, by oauthserver.mjs),
// MCP servers that require its tokens, and the person in the browser.
package oauthtest

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"path/filepath"
	"strings"
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
