package auth

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
)

func hexDigest(key string) string {
	d := sha256.Sum256([]byte(key))
	return hex.EncodeToString(d[:])
}

func TestValidate(t *testing.T) {
	const key = "0123456789abcdef-key"
	okOAuth := func() *OAuthConfig {
		return &OAuthConfig{Issuer: "https://login.example.com", Audience: "https://mcp.example.com/mcp"}
	}
	for _, tc := range []struct {
		name string
		cfg  Config
		want []string // substrings of the error; none: valid
	}{
		{"empty", Config{}, nil},
		{"key", Config{APIKeys: []APIKey{{Name: "ci", Key: key, Servers: []string{"fs"}}}}, nil},
		{"sha256, upper-case hex", Config{APIKeys: []APIKey{{Name: "ci", SHA256: strings.ToUpper(hexDigest(key))}}}, nil},
		{"oauth", Config{OAuth: okOAuth()}, nil},
		{"oauth on loopback http", Config{OAuth: &OAuthConfig{Issuer: "http://127.0.0.1:9000", Audience: "http://localhost:8808/mcp", JWKSURL: "http://[::1]:9000/jwks"}}, nil},
		{"neither key nor sha256", Config{APIKeys: []APIKey{{Name: "ci"}}}, []string{`apiKeys[0] (ci): neither "key" nor "sha256"`}},
		{"both", Config{APIKeys: []APIKey{{Name: "ci", Key: key, SHA256: hexDigest(key)}}}, []string{`both "key" and "sha256"`}},
		{"no name", Config{APIKeys: []APIKey{{Key: key}}}, []string{"apiKeys[0].name: missing"}},
		{"slash in name", Config{APIKeys: []APIKey{{Name: "a/b", Key: key}}}, []string{`apiKeys[0] (a/b).name: "a/b" may hold only`}},
		{"slash in tenant", Config{APIKeys: []APIKey{{Name: "a", Tenant: "x/y", Key: key}}}, []string{`.tenant: "x/y"`}},
		{"duplicate names", Config{APIKeys: []APIKey{{Name: "ci", Key: key}, {Name: "ci", Key: key + "2"}}}, []string{"apiKeys[1] (ci).name: duplicate of apiKeys[0]"}},
		{"same secret twice", Config{APIKeys: []APIKey{{Name: "a", Key: key}, {Name: "b", SHA256: hexDigest(key)}}}, []string{"apiKeys[1] (b): the same secret as apiKeys[0]"}},
		{"short key", Config{APIKeys: []APIKey{{Name: "ci", Key: "short"}}}, []string{"apiKeys[0] (ci).key: 5 characters; an API key needs at least 16"}},
		{"key with a space", Config{APIKeys: []APIKey{{Name: "ci", Key: "0123456789 abcdef"}}}, []string{"characters a bearer token cannot carry"}},
		{"bad hex", Config{APIKeys: []APIKey{{Name: "ci", SHA256: "zz" + hexDigest(key)[2:]}}}, []string{"apiKeys[0] (ci).sha256: not a SHA-256 digest"}},
		{"short hex", Config{APIKeys: []APIKey{{Name: "ci", SHA256: hexDigest(key)[:62]}}}, []string{"not a SHA-256 digest"}},
		{"empty server", Config{APIKeys: []APIKey{{Name: "ci", Key: key, Servers: []string{""}}}}, []string{"apiKeys[0] (ci).servers[0]: empty server name"}},
		{"oauth without issuer or audience", Config{OAuth: &OAuthConfig{ResourceURL: "https://mcp.example.com/mcp"}}, []string{"oauth.issuer: missing", "oauth.audience: missing"}},
		{"issuer over http", Config{OAuth: &OAuthConfig{Issuer: "http://login.example.com", Audience: "https://m/mcp"}}, []string{"oauth.issuer:", "uses http"}},
		{"issuer not a URL", Config{OAuth: &OAuthConfig{Issuer: "login.example.com", Audience: "https://m/mcp"}}, []string{"oauth.issuer:", "not an absolute http(s) URL"}},
		{"audience not a URL and no resource", Config{OAuth: &OAuthConfig{Issuer: "https://l", Audience: "api://sandbox"}}, []string{"oauth.resourceUrl: missing, and audience"}},
		{"audience not a URL with resource", Config{OAuth: &OAuthConfig{Issuer: "https://l", Audience: "api://sandbox", ResourceURL: "https://m/mcp"}}, nil},
		{"resource with fragment", Config{OAuth: &OAuthConfig{Issuer: "https://l", Audience: "a", ResourceURL: "https://m/mcp#x"}}, []string{"oauth.resourceUrl:", "fragment"}},
		{"alg none", Config{OAuth: &OAuthConfig{Issuer: "https://l", Audience: "https://m", Algorithms: []string{"none"}}}, []string{`oauth.algorithms[0]: "none" means unsigned`}},
		{"alg HS256", Config{OAuth: &OAuthConfig{Issuer: "https://l", Audience: "https://m", Algorithms: []string{"RS256", "HS256"}}}, []string{`oauth.algorithms[1]: "HS256" is a shared-secret algorithm`}},
		{"bad scope", Config{OAuth: &OAuthConfig{Issuer: "https://l", Audience: "https://m", Scopes: []string{"a b"}, RequiredScopes: []string{""}}}, []string{"oauth.scopes[0]", "oauth.requiredScopes[0]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate() = nil, want an error with %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Validate() = %v\nwant it to contain %q", err, w)
				}
			}
			if strings.Contains(err.Error(), key) {
				t.Errorf("the error repeats the secret: %v", err)
			}
		})
	}
}

func TestResource(t *testing.T) {
	if got := (OAuthConfig{Audience: "https://m/mcp"}).Resource(); got != "https://m/mcp" {
		t.Errorf("Resource() = %q, want the audience", got)
	}
	if got := (OAuthConfig{Audience: "api://x", ResourceURL: "https://m/mcp"}).Resource(); got != "https://m/mcp" {
		t.Errorf("Resource() = %q, want resourceUrl", got)
	}
}
