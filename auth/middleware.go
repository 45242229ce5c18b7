package auth

import (
	"errors"
	"net/http"
	"strings"
)

// Middleware authenticates every request with v before next sees it.
//
// The credential is "Authorization: Bearer <credential>" (the only method
// accepted: never the URL's query, never the body, which is not read). When
// it is missing, malformed or refused, the request ends here with the status
// of RFC 6750 §3.1 and the MCP authorization spec: 401 (no or a bad
// credential), 400 invalid_request (malformed), 403 insufficient_scope, or
// 503 when the verifier could not reach the authorization server. Each
// refusal carries "WWW-Authenticate: Bearer" with resource_metadata (when
// resourceMetadataURL is not empty: pass MetadataURL(resource) when OAuth is
// configured, "" for API keys only), error and a short error_description.
// The credential is never logged nor written back.
//
// On success next runs with the principal in the request's context
// (PrincipalFrom), and without the Authorization header: nothing past
// authentication can log or pass the credential on.
//
// onRefuse, when given, hears every refused request and why (never the
// credential), for an audit log.
func Middleware(v Verifier, resourceMetadataURL string, onRefuse ...func(r *http.Request, reason string)) func(http.Handler) http.Handler {
	var required []string
	if s, ok := v.(interface{ RequiredScopes() []string }); ok {
		required = s.RequiredScopes()
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			credential, refusal := bearer(r)
			if refusal == nil {
				p, err := v.Verify(r.Context(), credential)
				if err == nil {
					r2 := r.WithContext(WithPrincipal(r.Context(), p))
					r2.Header = r.Header.Clone()
					r2.Header.Del("Authorization")
					next.ServeHTTP(w, r2)
					return
				}
				if !errors.As(err, &refusal) {
					refusal = invalidToken("credential not accepted", err)
				}
			}
			for _, f := range onRefuse {
				reason := refusal.Code
				if reason == "" {
					reason = "no credential"
				}
				if refusal.Description != "" {
					reason += ": " + refusal.Description
				}
				f(r, reason)
			}
			refuse(w, refusal, resourceMetadataURL, required)
		})
	}
}

// bearer returns the request's bearer credential, or the refusal of a
// request without one (a nil-Code Error: no credential at all).
func bearer(r *http.Request) (string, *Error) {
	if r.URL.Query().Has("access_token") {
		return "", &Error{Code: CodeInvalidRequest, Description: "send the access token in the Authorization header, not in the URL"}
	}
	values := r.Header.Values("Authorization")
	switch {
	case len(values) == 0 || values[0] == "":
		return "", &Error{Description: "authentication required: send Authorization: Bearer <token>"}
	case len(values) > 1:
		return "", &Error{Code: CodeInvalidRequest, Description: "more than one Authorization header"}
	}
	scheme, credential, _ := strings.Cut(values[0], " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return "", &Error{Description: "authentication required: the Bearer scheme is the one accepted"}
	}
	credential = strings.Trim(credential, " ")
	if !isB64Token(credential) {
		return "", &Error{Code: CodeInvalidRequest, Description: "malformed bearer credential"}
	}
	return credential, nil
}

// refuse writes the refusal: its status, the challenge, and the description
// as a plain-text body.
func refuse(w http.ResponseWriter, e *Error, resourceMetadataURL string, required []string) {
	status := http.StatusUnauthorized
	if e.Code != "" {
		status = e.Status()
	}
	var params []string
	if resourceMetadataURL != "" {
		params = append(params, `resource_metadata="`+quoted(resourceMetadataURL)+`"`)
	}
	scopes := e.Scopes
	if len(scopes) == 0 && status == http.StatusUnauthorized {
		scopes = required
	}
	if len(scopes) > 0 {
		params = append(params, `scope="`+quoted(strings.Join(scopes, " "))+`"`)
	}
	// RFC 6750 §3.1: no error code when the request had no credential; 503
	// is not a bearer-token error, so it carries none either.
	if e.Code != "" && !e.Unavailable {
		params = append(params, `error="`+e.Code+`"`)
		if e.Description != "" {
			params = append(params, `error_description="`+quoted(e.Description)+`"`)
		}
	}
	challenge := "Bearer"
	if len(params) > 0 {
		challenge += " " + strings.Join(params, ", ")
	}
	h := w.Header()
	if e.Unavailable {
		h.Set("Retry-After", "10")
	} else {
		h.Set("WWW-Authenticate", challenge)
	}
	h.Set("Cache-Control", "no-store")
	http.Error(w, http.StatusText(status)+": "+e.Description, status)
}

// quoted makes s safe inside a quoted-string of an auth-param: RFC 6750
// allows %x20-21 / %x23-5B / %x5D-7E in error_description and scope, so
// anything else (quotes, backslashes, control and non-ASCII bytes) becomes
// a space.
func quoted(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			b[i] = ' '
		}
	}
	return string(b)
}
