package auth_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/sandboxrt/sandbox/auth"
)

func Example() {
	// The front end learns the principal from authentication and the
	// session from the protocol; together they are the request's Caller.
	ctx := auth.WithPrincipal(context.Background(), auth.Principal{ID: "ci-bot", Tenant: "acme"})
	caller := auth.Caller{Principal: auth.PrincipalFrom(ctx), Session: "3f2a"}
	fmt.Println(caller, caller.HasSession())

	// A request nobody authenticated acts for Anonymous; a stateless one has
	// no session and shares no state with any other request.
	fmt.Println(auth.Caller{Principal: auth.PrincipalFrom(context.Background())}.HasSession())
	// Output:
	// acme/ci-bot/3f2a true
	// false
}

// The front end's wiring for `sandbox serve --http` with API keys: the
// middleware in front of /mcp. Only the key's digest is in the
// configuration (`printf %s "$KEY" | sha256sum`).
func ExampleMiddleware() {
	cfg := auth.Config{APIKeys: []auth.APIKey{{
		Name:    "ci-bot",
		SHA256:  "6ba31a9bd6fe7999e8ad7486828c4d1a284766591bfcc1d16658ba8bf8710293",
		Servers: []string{"github"},
	}}}
	v, err := auth.NewVerifier(cfg, auth.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	mcp := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := auth.PrincipalFrom(r.Context())
		fmt.Fprintln(w, p.Key(), "github:", p.MaySee("github"), "fs:", p.MaySee("fs"))
	})
	mux := http.NewServeMux()
	mux.Handle("/mcp", auth.Middleware(v, "")(mcp)) // "": no OAuth, no metadata

	for _, credential := range []string{"", "wrong-key-0123456789", "ci-0123456789abcdef"} {
		req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		if credential != "" {
			req.Header.Set("Authorization", "Bearer "+credential)
		}
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		fmt.Printf("%d %s %s", rec.Code, rec.Header().Get("WWW-Authenticate"), rec.Body)
	}
	// Output:
	// 401 Bearer Unauthorized: authentication required: send Authorization: Bearer <token>
	// 401 Bearer error="invalid_token", error_description="unknown API key" Unauthorized: unknown API key
	// 200  ci-bot/ci-bot github: true fs: false
}

// With OAuth, the MCP endpoint is a resource server: a client without a
// token is pointed at the protected resource metadata, which names the
// authorization server to get one from.
func ExampleMetadataHandler() {
	oauth := auth.OAuthConfig{
		Issuer:   "https://login.example.com",
		Audience: "https://mcp.example.com/mcp",
		Scopes:   []string{"mcp:tools"},
	}
	v, err := auth.NewVerifier(auth.Config{OAuth: &oauth}, auth.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	mux := http.NewServeMux()
	for _, path := range auth.MetadataPaths(oauth.Resource()) {
		mux.Handle(path, auth.MetadataHandler(oauth))
	}
	mux.Handle("/mcp", auth.Middleware(v, auth.MetadataURL(oauth.Resource()))(http.NotFoundHandler()))

	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/mcp", nil))
	fmt.Println(rec.Code, rec.Header().Get("WWW-Authenticate"))
	rec = httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/.well-known/oauth-protected-resource/mcp", nil))
	fmt.Println(rec.Code, rec.Body)
	// Output:
	// 401 Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
	// 200 {"resource":"https://mcp.example.com/mcp","authorization_servers":["https://login.example.com"],"bearer_methods_supported":["header"],"scopes_supported":["mcp:tools"]}
}
