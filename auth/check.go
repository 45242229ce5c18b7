package auth

import "net/http"

// Check runs credential through authenticate (Middleware, as a server
// wraps its endpoints with it) as the bearer credential of a request like
// r, for a page that takes a credential in a form (the console's sign-in,
// the approval and sign-in pages): the same verifier, the same audit of a
// refusal, and nothing of r but its address and URL. ok is false when the
// credential was refused; p is then the zero Principal. With authentication
// off every credential passes, as the anonymous principal.
func Check(authenticate func(http.Handler) http.Handler, r *http.Request, credential string) (p Principal, ok bool) {
	check := r.Clone(r.Context())
	check.Method = http.MethodGet
	check.Header = http.Header{"Authorization": {"Bearer " + credential}}
	check.Body, check.ContentLength, check.Form, check.PostForm = http.NoBody, 0, nil, nil
	authenticate(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		p, ok = PrincipalFrom(r.Context()), true
	})).ServeHTTP(discardResponse{}, check)
	return p, ok
}

// discardResponse takes a refusal's answer, which the caller words itself.
type discardResponse struct{}

func (discardResponse) Header() http.Header         { return http.Header{} }
func (discardResponse) Write(b []byte) (int, error) { return len(b), nil }
func (discardResponse) WriteHeader(int)             {}
