package auth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
)

// maxDocument caps a fetched metadata document or key set.
const maxDocument = 1 << 20

// errKeysUnavailable: the issuer's keys could not be fetched and none were
// fetched before.
var errKeysUnavailable = errors.New("the issuer's keys are unavailable")

// keySet is the issuer's signing keys, as go-oidc's RemoteKeySet keeps
// them: cached, and fetched again when a token names a key not in the cache
// (the issuer rotated its keys). Around it:
//
//   - fetches go through a throttle, so tokens naming made-up keys cause at
//     most one fetch per Options.MinRefetch; in between, a fetch answers
//     with the last key set fetched;
//   - the RemoteKeySet is replaced after Options.MaxKeyAge (it never drops
//     a cached key on its own), so a key the issuer withdrew stops working;
//   - what happened is noted for the verifier (verifyNote), which turns it
//     into the refusal's description.
type keySet struct {
	url    string
	client *http.Client
	maxAge time.Duration

	mu      sync.Mutex
	remote  *oidc.RemoteKeySet
	created time.Time
}

func newKeySet(jwksURL string, base *http.Client, opts Options) *keySet {
	transport := base.Transport
	if transport == nil {
		transport = http.DefaultTransport
	}
	client := &http.Client{
		Transport: &throttle{url: jwksURL, base: transport, every: opts.MinRefetch},
		Timeout:   base.Timeout,
	}
	return &keySet{url: jwksURL, client: client, maxAge: opts.MaxKeyAge}
}

func (k *keySet) current() *oidc.RemoteKeySet {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.remote == nil || time.Since(k.created) > k.maxAge {
		// The context is go-oidc's configuration bag (its HTTP client);
		// its cancellation is ignored.
		k.remote = oidc.NewRemoteKeySet(oidc.ClientContext(context.Background(), k.client), k.url)
		k.created = time.Now()
	}
	return k.remote
}

// VerifySignature implements oidc.KeySet.
func (k *keySet) VerifySignature(ctx context.Context, jwt string) ([]byte, error) {
	payload, err := k.current().VerifySignature(ctx, jwt)
	if n, ok := ctx.Value(noteKey{}).(*verifyNote); ok {
		n.signatureChecked = true
		n.payload = payload
		n.unavailable = errors.Is(err, errKeysUnavailable)
	}
	return payload, err
}

// verifyNote is what the key set saw of one verification.
type verifyNote struct {
	signatureChecked bool   // the token parsed and its algorithm is allowed
	payload          []byte // the verified payload; nil when the signature failed
	unavailable      bool   // no keys could be fetched
}

type noteKey struct{}

// throttle is the key set's transport: a request to the key set URL goes
// out at most once per every; in between, and when a fetch fails, it is
// answered with the last key set fetched (stale keys beat none while the
// issuer is unreachable). Any status but 200 is a failure: redirects are
// not followed (the key set URL is the one the issuer's metadata names).
type throttle struct {
	url   string
	base  http.RoundTripper
	every time.Duration

	mu   sync.Mutex
	last time.Time // the last request that went out
	body []byte    // the last key set fetched
}

func (t *throttle) RoundTrip(req *http.Request) (*http.Response, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.last.IsZero() && time.Since(t.last) < t.every {
		return t.cached(req, fmt.Errorf("%w: fetched less than %v ago and failed", errKeysUnavailable, t.every))
	}
	t.last = time.Now()
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return t.cached(req, fmt.Errorf("%w: %v", errKeysUnavailable, err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDocument+1))
	switch {
	case err != nil:
		return t.cached(req, fmt.Errorf("%w: reading %s: %v", errKeysUnavailable, t.url, err))
	case len(body) > maxDocument:
		return t.cached(req, fmt.Errorf("%w: %s is over %d bytes", errKeysUnavailable, t.url, maxDocument))
	case resp.StatusCode != http.StatusOK:
		return t.cached(req, fmt.Errorf("%w: %s answered %s", errKeysUnavailable, t.url, resp.Status))
	}
	t.body = body
	return t.cached(req, nil)
}

// cached answers with the last key set fetched, or fails with err when
// there is none.
func (t *throttle) cached(req *http.Request, err error) (*http.Response, error) {
	if t.body == nil {
		if err == nil {
			err = errKeysUnavailable
		}
		return nil, err
	}
	return &http.Response{
		Status: "200 OK", StatusCode: http.StatusOK, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:        http.Header{"Content-Type": {"application/json"}},
		Body:          io.NopCloser(bytes.NewReader(t.body)),
		ContentLength: int64(len(t.body)),
		Request:       req,
	}, nil
}

// discoverKeys finds the issuer's key set URL in its metadata, trying the
// locations the MCP authorization spec has clients try, in its order:
// OAuth 2.0 Authorization Server Metadata (RFC 8414, the well-known path
// inserted before the issuer's path), then OpenID Connect Discovery
// (inserted, then appended). The document must name the issuer itself
// (RFC 8414 §3.3), or a server could pass off another's keys.
func discoverKeys(ctx context.Context, client *http.Client, issuer string) (string, error) {
	u, err := url.Parse(issuer)
	if err != nil {
		return "", err
	}
	origin := u.Scheme + "://" + u.Host
	path := strings.TrimSuffix(u.Path, "/")
	candidates := []string{origin + "/.well-known/oauth-authorization-server" + path}
	if path != "" {
		candidates = append(candidates, origin+"/.well-known/openid-configuration"+path)
	}
	candidates = append(candidates, origin+path+"/.well-known/openid-configuration")
	var tried []string
	for _, c := range candidates {
		doc, status, err := getJSON(ctx, client, c)
		if err != nil {
			return "", fmt.Errorf("issuer metadata %s: %w", c, err)
		}
		if status != http.StatusOK {
			tried = append(tried, fmt.Sprintf("%s: %d", c, status))
			continue
		}
		var m struct {
			Issuer  string `json:"issuer"`
			JWKSURI string `json:"jwks_uri"`
		}
		if err := json.Unmarshal(doc, &m); err != nil {
			return "", fmt.Errorf("issuer metadata %s: not JSON: %v", c, err)
		}
		if m.Issuer != issuer {
			return "", fmt.Errorf("issuer metadata %s names issuer %q, not %q", c, m.Issuer, issuer)
		}
		if m.JWKSURI == "" {
			return "", fmt.Errorf("issuer metadata %s has no jwks_uri", c)
		}
		if err := checkServerURL(m.JWKSURI); err != nil {
			return "", fmt.Errorf("issuer metadata %s: jwks_uri: %v", c, err)
		}
		return m.JWKSURI, nil
	}
	return "", fmt.Errorf("no issuer metadata found (%s); set oauth.jwksUrl", strings.Join(tried, ", "))
}

// getJSON fetches a document of at most maxDocument bytes; a status other
// than 200 is returned without the body.
func getJSON(ctx context.Context, client *http.Client, u string) ([]byte, int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, 0, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, resp.StatusCode, nil
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDocument+1))
	if err != nil {
		return nil, 0, err
	}
	if len(body) > maxDocument {
		return nil, 0, fmt.Errorf("over %d bytes", maxDocument)
	}
	return body, http.StatusOK, nil
}
