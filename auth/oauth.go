package auth

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
)

// oauthVerifier accepts JWT access tokens (RFC 9068) of one issuer, for
// one audience, as an OAuth 2.1 resource server must (MCP authorization
// spec, "Token Handling"): the signature by one of the issuer's published
// keys with an allowed algorithm, "iss", "aud", "exp", "nbf" and "iat".
//
// go-oidc does the signature (through keySet), the algorithm allow-list,
// "iss" and "aud"; this file checks the times (go-oidc allows five minutes
// on "nbf" and none on "exp"; here both get Options.Leeway), reads the
// subject, tenant and scopes, and says why a token was refused.
type oauthVerifier struct {
	cfg  OAuthConfig
	opts Options

	mu       sync.Mutex
	verifier *oidc.IDTokenVerifier // nil until the key set URL is known
	tried    time.Time             // the last discovery attempt
	err      error                 // its failure
}

func newOAuth(cfg OAuthConfig, opts Options) *oauthVerifier {
	// Its own copy: the caller's configuration may change afterwards.
	cfg.Scopes = slices.Clone(cfg.Scopes)
	cfg.RequiredScopes = slices.Clone(cfg.RequiredScopes)
	cfg.Algorithms = slices.Clone(cfg.Algorithms)
	return &oauthVerifier{cfg: cfg, opts: opts}
}

// tokenVerifier returns go-oidc's verifier, discovering the key set URL
// first when it was not configured (again at most once per MinRefetch
// while discovery fails).
func (o *oauthVerifier) tokenVerifier() (*oidc.IDTokenVerifier, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.verifier != nil {
		return o.verifier, nil
	}
	jwksURL := o.cfg.JWKSURL
	if jwksURL == "" {
		if !o.tried.IsZero() && time.Since(o.tried) < o.opts.MinRefetch {
			return nil, o.err
		}
		o.tried = time.Now()
		// Not the request's context: the result serves every request.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		jwksURL, o.err = discoverKeys(ctx, o.opts.HTTPClient, o.cfg.Issuer)
		if o.err != nil {
			return nil, o.err
		}
	}
	o.verifier = oidc.NewVerifier(o.cfg.Issuer, newKeySet(jwksURL, o.opts.HTTPClient, o.opts), &oidc.Config{
		ClientID:             o.cfg.Audience,
		SupportedSigningAlgs: o.cfg.algorithms(),
		SkipExpiryCheck:      true, // checked below, with the leeway
	})
	return o.verifier, nil
}

// accessClaims are the claims read from a verified token.
type accessClaims struct {
	Issuer    string          `json:"iss"`
	Subject   string          `json:"sub"`
	Audience  json.RawMessage `json:"aud"`
	Expiry    *json.Number    `json:"exp"`
	NotBefore *json.Number    `json:"nbf"`
	IssuedAt  *json.Number    `json:"iat"`
	Scope     *string         `json:"scope"`
	Scp       json.RawMessage `json:"scp"`
}

func (o *oauthVerifier) Verify(ctx context.Context, token string) (Principal, error) {
	if alg, ok := jwsAlgorithm(token); !ok {
		return Principal{}, invalidToken("malformed token", nil)
	} else if !slices.Contains(o.cfg.algorithms(), alg) {
		return Principal{}, invalidToken("token signing algorithm not accepted", nil)
	}
	tv, err := o.tokenVerifier()
	if err != nil {
		return Principal{}, &Error{Code: CodeInvalidToken, Description: "the authorization server's metadata is unavailable", Unavailable: true, cause: err}
	}
	note := &verifyNote{}
	verified, err := tv.Verify(context.WithValue(ctx, noteKey{}, note), token)
	if err != nil {
		switch {
		case note.unavailable:
			return Principal{}, &Error{Code: CodeInvalidToken, Description: "the authorization server's keys are unavailable", Unavailable: true, cause: err}
		case !note.signatureChecked:
			return Principal{}, invalidToken("malformed token", err)
		case note.payload == nil:
			return Principal{}, invalidToken("token signature does not verify with the issuer's keys", err)
		}
		return Principal{}, invalidToken(o.claimsProblem(note.payload), err)
	}

	var c accessClaims
	var all map[string]json.RawMessage
	if err := verified.Claims(&c); err != nil {
		return Principal{}, invalidToken("malformed token claims", err)
	}
	if err := verified.Claims(&all); err != nil {
		return Principal{}, invalidToken("malformed token claims", err)
	}
	if problem := o.timeProblem(c); problem != "" {
		return Principal{}, invalidToken(problem, nil)
	}
	if c.Subject == "" {
		return Principal{}, invalidToken("token has no subject", nil)
	}
	tenant := c.Subject
	if o.cfg.TenantClaim != "" {
		var s string
		if json.Unmarshal(all[o.cfg.TenantClaim], &s) != nil || s == "" || strings.Contains(s, "/") {
			return Principal{}, invalidToken("token lacks the tenant claim", nil)
		}
		tenant = s
	}
	scopes, ok := c.scopes()
	if !ok {
		return Principal{}, invalidToken("malformed token scope", nil)
	}
	for _, s := range o.cfg.RequiredScopes {
		if !slices.Contains(scopes, s) {
			return Principal{}, &Error{Code: CodeInsufficientScope, Description: "token lacks a required scope", Scopes: o.cfg.RequiredScopes}
		}
	}
	operates := false
	if o.cfg.OperatorClaim != "" {
		// Only the boolean true: a string "true", "false" or "no" must not
		// pass for a grant by accident of a truthiness rule.
		var b bool
		operates = json.Unmarshal(all[o.cfg.OperatorClaim], &b) == nil && b
	}
	return Principal{ID: c.Subject, Tenant: tenant, Scopes: scopes, Operates: operates}, nil
}

// timeProblem checks "exp" (required), "nbf" and "iat" against the clock,
// each with the leeway.
func (o *oauthVerifier) timeProblem(c accessClaims) string {
	now := o.opts.Now()
	exp, ok := numericDate(c.Expiry)
	switch {
	case c.Expiry == nil:
		return "token has no expiry"
	case !ok:
		return "malformed token expiry"
	case !now.Before(exp.Add(o.opts.Leeway)):
		return "token expired"
	}
	if c.NotBefore != nil {
		nbf, ok := numericDate(c.NotBefore)
		if !ok {
			return "malformed token not-before"
		}
		if now.Add(o.opts.Leeway).Before(nbf) {
			return "token not valid yet"
		}
	}
	if c.IssuedAt != nil {
		iat, ok := numericDate(c.IssuedAt)
		if !ok {
			return "malformed token issue time"
		}
		if now.Add(o.opts.Leeway).Before(iat) {
			return "token issued in the future"
		}
	}
	return ""
}

// claimsProblem says which claim go-oidc refused in a token whose
// signature verified.
func (o *oauthVerifier) claimsProblem(payload []byte) string {
	var c accessClaims
	if json.Unmarshal(payload, &c) != nil {
		return "malformed token claims"
	}
	if c.Issuer != o.cfg.Issuer {
		return "token issuer is not the configured issuer"
	}
	var one string
	var many []string
	if len(c.Audience) == 0 {
		return "token audience is not this server"
	} else if json.Unmarshal(c.Audience, &one) == nil {
		many = []string{one}
	} else if json.Unmarshal(c.Audience, &many) != nil {
		return "malformed token audience"
	}
	if !slices.Contains(many, o.cfg.Audience) {
		return "token audience is not this server"
	}
	return "token claims not accepted"
}

// scopes reads "scope" (a space-separated string, RFC 9068) or, as some
// issuers send it, "scp" (an array or a string).
func (c accessClaims) scopes() ([]string, bool) {
	if c.Scope != nil {
		return strings.Fields(*c.Scope), true
	}
	if len(c.Scp) == 0 || string(c.Scp) == "null" {
		return nil, true
	}
	var s string
	if json.Unmarshal(c.Scp, &s) == nil {
		return strings.Fields(s), true
	}
	var list []string
	if json.Unmarshal(c.Scp, &list) != nil {
		return nil, false
	}
	return list, true
}

// numericDate reads a JWT NumericDate (seconds since the epoch, maybe
// fractional).
func numericDate(n *json.Number) (time.Time, bool) {
	if n == nil {
		return time.Time{}, false
	}
	f, err := n.Float64()
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 || f > 1<<40 {
		return time.Time{}, false
	}
	sec, frac := math.Modf(f)
	return time.Unix(int64(sec), int64(frac*1e9)), true
}

// jwsAlgorithm returns the "alg" of a compact JWS's protected header.
func jwsAlgorithm(token string) (string, bool) {
	header, _, ok := strings.Cut(token, ".")
	if !ok {
		return "", false
	}
	b, err := base64.RawURLEncoding.DecodeString(header)
	if err != nil {
		return "", false
	}
	var h struct {
		Alg string `json:"alg"`
	}
	if json.Unmarshal(b, &h) != nil {
		return "", false
	}
	return h.Alg, true
}
