package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/sandboxrt/sandbox/internal/oauthtest"
)

// otherReplica is a person's browser behind a balancer that sends every
// request for replica from to replica to; it counts the redirects from the
// authorization server that reached replica to (the redirect URI is the
// public URL of the replica that served the page: each replica's own
// address here, where none is configured).
type otherReplica struct {
	from, to  string // host:port
	callbacks atomic.Int32
}

func (o *otherReplica) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Host == o.from {
		req = req.Clone(req.Context())
		req.URL.Host, req.Host = o.to, o.to
	}
	if req.URL.Host == o.to && strings.HasSuffix(req.URL.Path, "/oauth/callback") {
		o.callbacks.Add(1)
	}
	return http.DefaultTransport.RoundTrip(req)
}

// open gives credential on a sign-in link and follows the flow to its end.
func (o *otherReplica) open(t *testing.T, link, credential string) (int, string) {
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 20 * time.Second, Transport: o}
	resp, err := c.PostForm(link, url.Values{"credential": {credential}})
	if err != nil {
		t.Errorf("posting to %s: %v", link, err)
		return 0, ""
	}
	defer resp.Body.Close()
	page, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(page)
}

// linkOpener answers a 2025 session's URL elicitation by opening the link
// through the other replica.
type linkOpener struct {
	t    *testing.T
	o    *otherReplica
	key  string
	done chan string
}

func (p *linkOpener) Elicit(_ context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	go func() {
		status, page := p.o.open(p.t, req.Params.URL, p.key)
		p.done <- fmt.Sprint(status, " ", page)
	}()
	return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionAccept}}, nil
}

// TestSignInAcrossReplicas: with gateway.redis, a sign-in link a call on
// replica A asked its client to open is opened on replica B, the
// authorization server's redirect comes back to B, and the call on A goes
// on with the new grant (a 2025 session's snippet, which waits on A); a
// 2026-07-28 direct call asked on A is retried on B after signing in on B.
func TestSignInAcrossReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("starts redis-server, an authorization server and two replicas")
	}
	srv := startSharedRedis(t)
	issuer := oauthtest.StartAuthServer(t)
	secure := oauthtest.StartProtectedServer(t, issuer)
	const carolKey = "carol-secret-0123456789abcdef00"
	cfg := writeConfig(t, fmt.Sprintf(`{"mcpServers": {"secure": {"url": %q}},
  "gateway": {"redis": {"url": %q, "encryptionKey": "${SANDBOX_REDIS_KEY}", "keyPrefix": "signin:"},
    "startupTimeout": "5s", "restartBackoff": "100ms", "maxRestartBackoff": "200ms",
    "auth": {"apiKeys": [{"name": "agent-a", "key": %q}, {"name": "carol", "key": %q}]}}}`, secure, srv.URL(), agentKey, carolKey))
	// The operator's login (in Redis too) carries the connection.
	if r := login(t, "secure", "-c", cfg); r.code != 0 {
		t.Fatalf("login: %d\n%s", r.code, r.stderr)
	}
	aURL := serveHTTP(t, mustRead(t, cfg), "--expose", "all")
	bURL := serveHTTP(t, mustRead(t, cfg), "--expose", "all")
	ua, _ := url.Parse(aURL)
	ub, _ := url.Parse(bURL)

	t.Run("2025 session on A, signed in on B", func(t *testing.T) {
		o := &otherReplica{from: ua.Host, to: ub.Host}
		person := &linkOpener{t: t, o: o, key: agentKey, done: make(chan string, 1)}
		tr, err := transport.NewStreamableHTTP(aURL, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + agentKey}))
		if err != nil {
			t.Fatal(err)
		}
		c := client.NewClient(tr, client.WithElicitationHandler(person))
		t.Cleanup(func() { c.Close() })
		if err := c.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Initialize(context.Background(), mcp.InitializeRequest{Params: mcp.InitializeParams{ProtocolVersion: mcp.ProtocolVersion20251125,
			ClientInfo: mcp.Implementation{Name: "t", Version: "1"}, Capabilities: mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{URL: &struct{}{}}}}}); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		res, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "execute_code",
			Arguments: map[string]any{"code": `return await secure.whoami({})`}}})
		if err != nil {
			t.Fatal(err)
		}
		if out := toolText(res); !strings.Contains(out, `"value":"alice"`) {
			t.Fatalf("the snippet on A after signing in on B: %s", out)
		}
		if page := <-person.done; !strings.HasPrefix(page, "200 ") || !strings.Contains(page, "Signed in") {
			t.Fatalf("the sign-in on B: %s", page)
		}
		if o.callbacks.Load() != 1 {
			t.Fatalf("%d redirects came back to B, want 1", o.callbacks.Load())
		}
	})

	t.Run("2026 direct call asked on A, signed in and retried on B", func(t *testing.T) {
		o := &otherReplica{from: ua.Host, to: ub.Host}
		caps := map[string]any{"elicitation": map[string]any{"url": map[string]any{}}}
		first := postModernCallCaps(t, aURL, carolKey, "secure__whoami", map[string]any{}, caps, nil, "")
		reqs, _ := first.Result["inputRequests"].(map[string]any)
		ask, _ := reqs["sandbox_signin"].(map[string]any)
		params, _ := ask["params"].(map[string]any)
		link, _ := params["url"].(string)
		state, _ := first.Result["requestState"].(string)
		if !strings.Contains(link, ua.Host+"/oauth/signin/") || state == "" {
			t.Fatalf("not asked to sign in on A: %+v", first)
		}
		if status, page := o.open(t, link, carolKey); status != http.StatusOK || !strings.Contains(page, "Signed in") {
			t.Fatalf("signing in on B: %d %s", status, page)
		}
		// The link worked once, on any replica.
		if status, page := (&otherReplica{from: "none"}).open(t, link, carolKey); status != http.StatusNotFound && status != http.StatusGone {
			t.Fatalf("the used link on A: %d %s", status, page)
		}
		done := postModernCallCaps(t, bURL, carolKey, "secure__whoami", map[string]any{}, caps, map[string]any{"sandbox_signin": map[string]any{"action": "accept"}}, state)
		if done.Error != nil || done.Result["resultType"] == "input_required" || !strings.Contains(fmt.Sprint(done.Result["content"]), "alice") {
			t.Fatalf("the retry on B after signing in: %+v", done)
		}
	})
}
