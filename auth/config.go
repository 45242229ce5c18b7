package auth

import (
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
)

// Config is how callers over the network authenticate: the "auth" block of
// the gateway settings in mcp.json.
//
//	"gateway": {"auth": {
//	  "apiKeys": [
//	    {"name": "ci-bot", "sha256": "9f86d08...", "servers": ["github"]},
//	    {"name": "alice", "key": "a-long-random-secret-of-32-chars"}
//	  ],
//	  "oauth": {"issuer": "https://login.example.com", "audience": "https://mcp.example.com/mcp",
//	            "scopes": ["mcp:tools"]}
//	}}
//
// A request presents one credential as "Authorization: Bearer <credential>":
// either an API key or an OAuth 2.1 access token (a signed JWT). The JSON
// tags are the block's key names.
type Config struct {
	APIKeys []APIKey     `json:"apiKeys,omitempty"`
	OAuth   *OAuthConfig `json:"oauth,omitempty"`
}

// APIKey is one static credential. Give the secret as Key, or only its
// digest as SHA256 so the file never holds the secret (sha256 of the key's
// bytes, hex: `printf %s "$KEY" | sha256sum`).
type APIKey struct {
	// Name identifies the key: the principal's ID, in logs and per-caller
	// state. Unique among the keys.
	Name string `json:"name"`
	// Key is the secret itself: at least 16 characters of the bearer-token
	// alphabet (letters, digits, -._~+/ and trailing =).
	Key string `json:"key,omitempty"`
	// SHA256 is the hex SHA-256 digest of the secret, instead of Key.
	SHA256 string `json:"sha256,omitempty"`
	// Tenant groups keys whose principals share state (default: Name).
	Tenant string `json:"tenant,omitempty"`
	// Servers limits the key to these upstream servers (empty: every
	// server). They become the principal's "server:<name>" scopes.
	Servers []string `json:"servers,omitempty"`
	// Operator lets the key's principal use the operator console
	// (Principal.Operates).
	Operator bool `json:"operator,omitempty"`
}

// OAuthConfig makes the gateway an OAuth 2.1 resource server (the role the
// MCP authorization spec gives an MCP server): it accepts JWT access tokens
// that Issuer signed for Audience, and publishes its Protected Resource
// Metadata (RFC 9728) so clients find the authorization server.
type OAuthConfig struct {
	// Issuer is the authorization server's issuer identifier, exactly as it
	// appears in the tokens' "iss" claim and its metadata (https, or http
	// on a loopback address).
	Issuer string `json:"issuer"`
	// Audience is the value the tokens' "aud" claim must hold (a string or
	// one element of an array), compared exactly. With RFC 8707 resource
	// indicators it is the MCP endpoint's canonical URL.
	Audience string `json:"audience"`
	// JWKSURL is where the issuer publishes its signing keys. Empty: found
	// in the issuer's metadata (/.well-known/oauth-authorization-server,
	// then /.well-known/openid-configuration).
	JWKSURL string `json:"jwksUrl,omitempty"`
	// ResourceURL is the MCP endpoint's canonical URL ("resource" in the
	// protected resource metadata). Empty: Audience, which must then be an
	// absolute http(s) URL.
	ResourceURL string `json:"resourceUrl,omitempty"`
	// Scopes are advertised as "scopes_supported": the scopes a client
	// should request.
	Scopes []string `json:"scopes,omitempty"`
	// RequiredScopes must all be granted in a token's "scope" (or "scp")
	// claim; a token without them is refused with 403 insufficient_scope.
	RequiredScopes []string `json:"requiredScopes,omitempty"`
	// TenantClaim names the claim whose string value is the principal's
	// tenant (say "org_id"); a token without it is refused. Empty: the
	// tenant is the subject.
	TenantClaim string `json:"tenantClaim,omitempty"`
	// OperatorClaim names a claim that marks the token of an operator: a
	// token whose claim is the JSON boolean true may use the operator
	// console (Principal.Operates). Empty: no access token may.
	OperatorClaim string `json:"operatorClaim,omitempty"`
	// Algorithms are the signature algorithms accepted (default RS256,
	// ES256, PS256, EdDSA). "none" and the shared-secret HS* algorithms are
	// never accepted.
	Algorithms []string `json:"algorithms,omitempty"`
}

// DefaultAlgorithms are the signature algorithms accepted when
// OAuthConfig.Algorithms is empty.
var DefaultAlgorithms = []string{"RS256", "ES256", "PS256", "EdDSA"}

// asymmetricAlgorithms are the algorithms Algorithms may name: signatures
// checked with the issuer's public keys.
var asymmetricAlgorithms = []string{"RS256", "RS384", "RS512", "ES256", "ES384", "ES512", "PS256", "PS384", "PS512", "EdDSA"}

// MinKeyLength is the shortest API key accepted.
const MinKeyLength = 16

// Enabled reports whether the configuration authenticates anyone.
func (c Config) Enabled() bool { return len(c.APIKeys) > 0 || c.OAuth != nil }

// Validate reports every problem in the configuration, each naming the
// field ("apiKeys[1] (ci-bot).key: ..."), joined into one error.
func (c Config) Validate() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", field, fmt.Sprintf(format, args...)))
	}
	names := map[string]int{}
	digests := map[string]int{}
	for i, k := range c.APIKeys {
		field := fmt.Sprintf("apiKeys[%d]", i)
		if k.Name != "" {
			field += " (" + k.Name + ")"
		}
		switch {
		case k.Name == "":
			bad(field+".name", "missing; every key needs a name (the principal it authenticates)")
		case !validName(k.Name):
			bad(field+".name", "%q may hold only letters, digits and -_.@: (no '/', spaces or control characters)", k.Name)
		}
		if j, dup := names[k.Name]; dup && k.Name != "" {
			bad(field+".name", "duplicate of apiKeys[%d]; key names must be unique", j)
		} else {
			names[k.Name] = i
		}
		if k.Tenant != "" && !validName(k.Tenant) {
			bad(field+".tenant", "%q may hold only letters, digits and -_.@: (no '/', spaces or control characters)", k.Tenant)
		}
		var digest string
		switch {
		case k.Key == "" && k.SHA256 == "":
			bad(field, `neither "key" nor "sha256": give the secret or its SHA-256 digest`)
		case k.Key != "" && k.SHA256 != "":
			bad(field, `both "key" and "sha256": give one (prefer "sha256", which keeps the secret out of the file)`)
		case k.Key != "":
			if len(k.Key) < MinKeyLength {
				bad(field+".key", "%d characters; an API key needs at least %d (use a random one, e.g. `openssl rand -hex 32`)", len(k.Key), MinKeyLength)
			} else if !isB64Token(k.Key) {
				bad(field+".key", "has characters a bearer token cannot carry; use letters, digits and -._~+/ (and trailing =)")
			}
			digest = hex.EncodeToString(sha256Sum(k.Key))
		default:
			if b, err := hex.DecodeString(k.SHA256); err != nil || len(b) != 32 {
				bad(field+".sha256", "not a SHA-256 digest: want 64 hex digits (`printf %%s \"$KEY\" | sha256sum`)")
			} else {
				digest = hex.EncodeToString(b)
			}
		}
		if digest != "" {
			if j, dup := digests[digest]; dup {
				bad(field, "the same secret as apiKeys[%d]; every key needs its own secret", j)
			} else {
				digests[digest] = i
			}
		}
		for j, s := range k.Servers {
			if strings.TrimSpace(s) == "" {
				bad(fmt.Sprintf("%s.servers[%d]", field, j), "empty server name")
			}
		}
	}
	if c.OAuth != nil {
		errs = append(errs, c.OAuth.validate()...)
	}
	return errors.Join(errs...)
}

func (o *OAuthConfig) validate() []error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("oauth.%s: %s", field, fmt.Sprintf(format, args...)))
	}
	if o.Issuer == "" {
		bad("issuer", "missing; the authorization server's issuer URL (its tokens' \"iss\")")
	} else if err := checkServerURL(o.Issuer); err != nil {
		bad("issuer", "%v", err)
	} else if u, _ := url.Parse(o.Issuer); u.RawQuery != "" || u.Fragment != "" {
		bad("issuer", "%q has a query or fragment; an issuer identifier has neither (RFC 8414)", o.Issuer)
	}
	if o.Audience == "" {
		bad("audience", "missing; the value this server's tokens carry in \"aud\" (usually the MCP endpoint's URL)")
	}
	if o.JWKSURL != "" {
		if err := checkServerURL(o.JWKSURL); err != nil {
			bad("jwksUrl", "%v", err)
		}
	}
	switch {
	case o.ResourceURL != "":
		if err := checkResourceURL(o.ResourceURL); err != nil {
			bad("resourceUrl", "%v", err)
		}
	case o.Audience != "" && checkResourceURL(o.Audience) != nil:
		bad("resourceUrl", "missing, and audience %q is not the MCP endpoint's URL; set resourceUrl to the URL clients connect to (https://host/mcp)", o.Audience)
	}
	for i, s := range o.Scopes {
		if !isScopeToken(s) {
			bad(fmt.Sprintf("scopes[%d]", i), "%q is not a scope (non-empty, printable ASCII without spaces, '\"' or '\\')", s)
		}
	}
	for i, s := range o.RequiredScopes {
		if !isScopeToken(s) {
			bad(fmt.Sprintf("requiredScopes[%d]", i), "%q is not a scope (non-empty, printable ASCII without spaces, '\"' or '\\')", s)
		}
	}
	for i, a := range o.Algorithms {
		switch {
		case slices.Contains(asymmetricAlgorithms, a):
		case strings.EqualFold(a, "none"):
			bad(fmt.Sprintf("algorithms[%d]", i), `"none" means unsigned tokens, which anyone can forge`)
		case strings.HasPrefix(strings.ToUpper(a), "HS"):
			bad(fmt.Sprintf("algorithms[%d]", i), "%q is a shared-secret algorithm; a resource server checks signatures with the issuer's public keys", a)
		default:
			bad(fmt.Sprintf("algorithms[%d]", i), "%q is not one of %s", a, strings.Join(asymmetricAlgorithms, ", "))
		}
	}
	return errs
}

// Resource is the MCP endpoint's canonical URL, the "resource" of the
// protected resource metadata: ResourceURL, or else Audience.
func (o OAuthConfig) Resource() string {
	if o.ResourceURL != "" {
		return o.ResourceURL
	}
	return o.Audience
}

func (o OAuthConfig) algorithms() []string {
	if len(o.Algorithms) == 0 {
		return DefaultAlgorithms
	}
	return o.Algorithms
}

// checkServerURL accepts the URL of an authorization server's endpoint:
// https, or http only on a loopback host (a local test server).
func checkServerURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return fmt.Errorf("%q is not an absolute http(s) URL", raw)
	}
	if u.Scheme == "http" && !isLoopback(u.Hostname()) {
		return fmt.Errorf("%q uses http; an authorization server is reached over https (http only on localhost)", raw)
	}
	return nil
}

// checkResourceURL accepts a canonical MCP server URL (MCP authorization
// spec, "Canonical Server URI"): absolute http(s), no fragment.
func checkResourceURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return fmt.Errorf("%q is not an absolute http(s) URL", raw)
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return fmt.Errorf("%q has a fragment; a resource URL has none", raw)
	}
	return nil
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// validName accepts names that are safe as a principal's ID or tenant:
// Principal.Key joins them with '/', so neither may contain one.
func validName(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case strings.ContainsRune("-_.@:", r):
		default:
			return false
		}
	}
	return true
}

// isB64Token reports whether s has the syntax of a bearer token
// (RFC 6750 §2.1: b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" /
// "+" / "/" ) *"=").
func isB64Token(s string) bool {
	body := strings.TrimRight(s, "=")
	if body == "" {
		return false
	}
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '-', c == '.', c == '_', c == '~', c == '+', c == '/':
		default:
			return false
		}
	}
	return true
}

// isScopeToken reports whether s is one scope-token (RFC 6749 §3.3:
// 1*( %x21 / %x23-5B / %x5D-7E )).
func isScopeToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x21 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}
