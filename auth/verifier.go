package auth

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"
)

// Verifier turns the credential of "Authorization: Bearer <credential>"
// into the principal it authenticates. A refusal is an *Error.
type Verifier interface {
	Verify(ctx context.Context, credential string) (Principal, error)
}

// Error codes of a refusal (RFC 6750 §3.1), sent in WWW-Authenticate.
const (
	// CodeInvalidRequest: the request is malformed (400).
	CodeInvalidRequest = "invalid_request"
	// CodeInvalidToken: the credential is unknown, expired, forged or not
	// for this server (401).
	CodeInvalidToken = "invalid_token"
	// CodeInsufficientScope: the credential is valid but lacks a scope (403).
	CodeInsufficientScope = "insufficient_scope"
)

// Error is why a credential was refused.
type Error struct {
	// Code is one of the Code constants.
	Code string
	// Description is short, printable ASCII, and safe to send to the
	// client: it never holds the credential.
	Description string
	// Scopes are the scopes the request needs (insufficient_scope).
	Scopes []string
	// Unavailable: the verifier could not decide (the authorization
	// server's keys could not be fetched). The client should retry later
	// (503) rather than get a new token.
	Unavailable bool

	cause error // for logs; never holds the credential either
}

func (e *Error) Error() string {
	msg := "auth: " + e.Code + ": " + e.Description
	if e.cause != nil {
		msg += ": " + e.cause.Error()
	}
	return msg
}

func (e *Error) Unwrap() error { return e.cause }

// Status is the HTTP status of the refusal.
func (e *Error) Status() int {
	switch {
	case e.Unavailable:
		return http.StatusServiceUnavailable
	case e.Code == CodeInvalidRequest:
		return http.StatusBadRequest
	case e.Code == CodeInsufficientScope:
		return http.StatusForbidden
	default:
		return http.StatusUnauthorized
	}
}

func invalidToken(description string, cause error) *Error {
	return &Error{Code: CodeInvalidToken, Description: description, cause: cause}
}

// Options tune the OAuth verifier; the zero value is the default.
type Options struct {
	// HTTPClient fetches the issuer's metadata and keys (default: a client
	// with a 10 s timeout).
	HTTPClient *http.Client
	// Now is the clock tokens' times are checked against (default time.Now).
	Now func() time.Time
	// Leeway is the clock skew allowed on "exp", "nbf" and "iat" (30 s).
	Leeway time.Duration
	// MinRefetch is the least time between two fetches of the issuer's
	// keys or metadata (10 s). A token signed by a key not yet fetched (the
	// issuer rotated its keys) makes the verifier fetch the keys again, but
	// tokens naming made-up keys cannot make it hammer the issuer.
	MinRefetch time.Duration
	// MaxKeyAge is how long fetched keys are trusted before they are
	// fetched again (1 h), so a key the issuer withdrew stops verifying.
	MaxKeyAge time.Duration
}

func (o Options) withDefaults() Options {
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Leeway == 0 {
		o.Leeway = 30 * time.Second
	}
	if o.MinRefetch == 0 {
		o.MinRefetch = 10 * time.Second
	}
	if o.MaxKeyAge == 0 {
		o.MaxKeyAge = time.Hour
	}
	return o
}

// NewVerifier returns the Verifier for a validated-or-not configuration
// (it validates it): API keys first, then, when OAuth is configured and the
// credential is a JWT, an access token. It fetches nothing yet: the
// issuer's metadata and keys are fetched on the first token.
func NewVerifier(cfg Config, opts Options) (Verifier, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if !cfg.Enabled() {
		return nil, errors.New("auth: no API keys and no oauth: nobody could authenticate")
	}
	v := &verifier{keys: newAPIKeys(cfg.APIKeys)}
	if cfg.OAuth != nil {
		v.oauth = newOAuth(*cfg.OAuth, opts.withDefaults())
	}
	return v, nil
}

type verifier struct {
	keys  *apiKeys
	oauth *oauthVerifier // nil: API keys only
}

func (v *verifier) Verify(ctx context.Context, credential string) (Principal, error) {
	if p, ok := v.keys.lookup(credential); ok {
		return p, nil
	}
	if v.oauth == nil {
		return Principal{}, invalidToken("unknown API key", nil)
	}
	if !looksLikeJWT(credential) {
		return Principal{}, invalidToken("neither an API key nor a JWT access token", nil)
	}
	p, err := v.oauth.Verify(ctx, credential)
	if err != nil {
		return Principal{}, err
	}
	if v.keys.owns(p) {
		// Per-principal state is keyed by Principal.Key: a subject the
		// authorization server let someone choose must not share it
		// with an API key of the same name.
		return Principal{}, invalidToken("token subject is the name of an API key", nil)
	}
	return p, nil
}

// RequiredScopes are the scopes every access token must carry; Middleware
// names them in its challenges.
func (v *verifier) RequiredScopes() []string {
	if v.oauth == nil {
		return nil
	}
	return v.oauth.cfg.RequiredScopes
}

// looksLikeJWT reports whether a credential has the shape of a JWS in
// compact form (three base64url parts) rather than of an API key.
func looksLikeJWT(s string) bool {
	return strings.Count(s, ".") == 2 && !strings.ContainsAny(s, "+/=~")
}
