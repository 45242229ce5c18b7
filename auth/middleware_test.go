package auth

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

// stubVerifier accepts "good", refuses "narrow" for a missing scope and is
// unavailable for "later".
type stubVerifier struct{}

func (stubVerifier) Verify(_ context.Context, credential string) (Principal, error) {
	switch credential {
	case "good":
		return Principal{ID: "u1", Tenant: "t1", Scopes: []string{"mcp"}}, nil
	case "narrow":
		return Principal{}, &Error{Code: CodeInsufficientScope, Description: "needs mcp:admin", Scopes: []string{"mcp", "mcp:admin"}}
	case "later":
		return Principal{}, &Error{Code: CodeInvalidToken, Description: "keys unreachable", Unavailable: true}
	}
	return Principal{}, invalidToken("token expired", nil)
}

func (stubVerifier) RequiredScopes() []string { return []string{"mcp"} }

// unreadBody fails the test when anything reads it.
type unreadBody struct{ t *testing.T }

func (b unreadBody) Read([]byte) (int, error) {
	b.t.Error("the request body was read before authentication")
	return 0, io.EOF
}
func (unreadBody) Close() error { return nil }

func TestMiddleware(t *testing.T) {
	const meta = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
	const secret = "topsecret-credential"
	var got *Principal
	var sawAuthorization bool
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := PrincipalFrom(r.Context())
		got = &p
		sawAuthorization = r.Header.Get("Authorization") != ""
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusNoContent)
	})
	h := Middleware(stubVerifier{}, meta)(inner)

	for _, tc := range []struct {
		name      string
		header    []string // Authorization values
		query     string
		status    int
		challenge string // WWW-Authenticate; "-": absent
	}{
		{"no credential", nil, "", 401,
			`Bearer resource_metadata="` + meta + `", scope="mcp"`},
		{"empty header", []string{""}, "", 401,
			`Bearer resource_metadata="` + meta + `", scope="mcp"`},
		{"another scheme", []string{"Basic dXNlcjpwYXNz"}, "", 401,
			`Bearer resource_metadata="` + meta + `", scope="mcp"`},
		{"bad token", []string{"Bearer " + secret}, "", 401,
			`Bearer resource_metadata="` + meta + `", scope="mcp", error="invalid_token", error_description="token expired"`},
		{"scheme is case-insensitive", []string{"bearer " + secret}, "", 401,
			`Bearer resource_metadata="` + meta + `", scope="mcp", error="invalid_token", error_description="token expired"`},
		{"empty token", []string{"Bearer "}, "", 400,
			`Bearer resource_metadata="` + meta + `", error="invalid_request", error_description="malformed bearer credential"`},
		{"token with a quote", []string{`Bearer a"b`}, "", 400,
			`Bearer resource_metadata="` + meta + `", error="invalid_request", error_description="malformed bearer credential"`},
		{"two headers", []string{"Bearer good", "Bearer good"}, "", 400,
			`Bearer resource_metadata="` + meta + `", error="invalid_request", error_description="more than one Authorization header"`},
		{"token in the URL", nil, "access_token=" + secret, 400,
			`Bearer resource_metadata="` + meta + `", error="invalid_request", error_description="send the access token in the Authorization header, not in the URL"`},
		{"token in the URL and the header", []string{"Bearer good"}, "access_token=good", 400,
			`Bearer resource_metadata="` + meta + `", error="invalid_request", error_description="send the access token in the Authorization header, not in the URL"`},
		{"insufficient scope", []string{"Bearer narrow"}, "", 403,
			`Bearer resource_metadata="` + meta + `", scope="mcp mcp:admin", error="insufficient_scope", error_description="needs mcp:admin"`},
		{"verifier unavailable", []string{"Bearer later"}, "", 503, "-"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got = nil
			req := httptest.NewRequest(http.MethodPost, "/mcp?"+tc.query, unreadBody{t})
			for _, v := range tc.header {
				req.Header.Add("Authorization", v)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tc.status {
				t.Errorf("status %d, want %d", rec.Code, tc.status)
			}
			challenge := rec.Header().Get("WWW-Authenticate")
			if tc.challenge == "-" {
				if challenge != "" {
					t.Errorf("WWW-Authenticate %q on a %d", challenge, rec.Code)
				}
			} else if challenge != tc.challenge {
				t.Errorf("WWW-Authenticate:\n got %s\nwant %s", challenge, tc.challenge)
			}
			if got != nil {
				t.Errorf("the inner handler ran for %+v", *got)
			}
			for k, v := range rec.Header() {
				if strings.Contains(strings.Join(v, " "), secret) {
					t.Errorf("header %s echoes the credential", k)
				}
			}
			if strings.Contains(rec.Body.String(), secret) {
				t.Errorf("the body echoes the credential: %q", rec.Body)
			}
		})
	}

	t.Run("success", func(t *testing.T) {
		got = nil
		req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader("{}"))
		req.Header.Set("Authorization", "Bearer good")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusNoContent || got == nil {
			t.Fatalf("status %d, inner ran: %v", rec.Code, got != nil)
		}
		if got.Key() != "t1/u1" || !slices.Equal(got.Scopes, []string{"mcp"}) {
			t.Errorf("principal %+v", *got)
		}
		if sawAuthorization {
			t.Error("the inner handler saw the Authorization header")
		}
		if req.Header.Get("Authorization") == "" {
			t.Error("the caller's request lost its header (the middleware must not modify it)")
		}
	})

	t.Run("no resource metadata with API keys only", func(t *testing.T) {
		v, err := NewVerifier(Config{APIKeys: []APIKey{{Name: "k", Key: "0123456789abcdef"}}}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		rec := httptest.NewRecorder()
		Middleware(v, "")(inner).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/mcp", nil))
		if rec.Code != 401 || rec.Header().Get("WWW-Authenticate") != "Bearer" {
			t.Errorf("status %d, WWW-Authenticate %q; want 401, Bearer", rec.Code, rec.Header().Get("WWW-Authenticate"))
		}
		req := httptest.NewRequest(http.MethodGet, "/mcp", nil)
		req.Header.Set("Authorization", "Bearer 0123456789abcdef")
		rec = httptest.NewRecorder()
		Middleware(v, "")(inner).ServeHTTP(rec, req)
		if rec.Code != http.StatusNoContent || got.ID != "k" {
			t.Errorf("status %d, principal %+v", rec.Code, got)
		}
	})
}

func TestQuoted(t *testing.T) {
	if got := quoted("a\"b\\c\nd\u00e9"); got != "a b c d  " {
		t.Errorf("quoted = %q", got)
	}
}

func TestMetadata(t *testing.T) {
	o := OAuthConfig{Issuer: "https://login.example.com", Audience: "https://mcp.example.com/mcp", Scopes: []string{"mcp:tools"}}
	for resource, want := range map[string]string{
		"https://mcp.example.com/mcp":        "https://mcp.example.com/.well-known/oauth-protected-resource/mcp",
		"https://mcp.example.com/mcp/":       "https://mcp.example.com/.well-known/oauth-protected-resource/mcp",
		"https://mcp.example.com":            "https://mcp.example.com/.well-known/oauth-protected-resource",
		"http://127.0.0.1:8808/team/a/mcp":   "http://127.0.0.1:8808/.well-known/oauth-protected-resource/team/a/mcp",
		"https://mcp.example.com:8443/mcp?x": "https://mcp.example.com:8443/.well-known/oauth-protected-resource/mcp?x",
	} {
		if got := MetadataURL(resource); got != want {
			t.Errorf("MetadataURL(%q) = %q, want %q", resource, got, want)
		}
	}
	if got := MetadataPaths("https://mcp.example.com/mcp"); !slices.Equal(got, []string{WellKnownPath + "/mcp", WellKnownPath}) {
		t.Errorf("MetadataPaths = %q", got)
	}
	if got := MetadataPaths("https://mcp.example.com"); !slices.Equal(got, []string{WellKnownPath}) {
		t.Errorf("MetadataPaths = %q", got)
	}

	mux := http.NewServeMux()
	for _, p := range MetadataPaths(o.Resource()) {
		mux.Handle(p, MetadataHandler(o))
	}
	srv := httptest.NewServer(mux)
	defer srv.Close()
	for _, p := range []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"} {
		resp, err := http.Get(srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		err = json.NewDecoder(resp.Body).Decode(&doc)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("GET %s: %d %s %v", p, resp.StatusCode, resp.Header.Get("Content-Type"), err)
		}
		want := map[string]any{
			"resource":                 "https://mcp.example.com/mcp",
			"authorization_servers":    []any{"https://login.example.com"},
			"bearer_methods_supported": []any{"header"},
			"scopes_supported":         []any{"mcp:tools"},
		}
		gotJSON, _ := json.Marshal(doc)
		wantJSON, _ := json.Marshal(want)
		if string(gotJSON) != string(wantJSON) {
			t.Errorf("GET %s:\n got %s\nwant %s", p, gotJSON, wantJSON)
		}
		if resp.Header.Get("Access-Control-Allow-Origin") != "*" {
			t.Errorf("GET %s: no CORS header", p)
		}
	}
	resp, err := http.Post(srv.URL+WellKnownPath, "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d, want 405", resp.StatusCode)
	}
	// Without scopes, scopes_supported is left out.
	b, _ := json.Marshal(OAuthConfig{Issuer: "https://l", Audience: "https://m/mcp"}.Metadata())
	if strings.Contains(string(b), "scopes_supported") {
		t.Errorf("metadata without scopes: %s", b)
	}
}
