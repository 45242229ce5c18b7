package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/sandboxrt/sandbox/internal/oauthtest"
	"github.com/sandboxrt/sandbox/internal/testwait"
)

// openSignInLink is the person's browser on a sign-in link of serve: it
// gives credential on the page and follows the authorization server's
// login to the end, returning the last page's status and text.
func openSignInLink(t *testing.T, link, credential string) (int, string) {
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 20 * time.Second}
	resp, err := c.PostForm(link, url.Values{"credential": {credential}})
	if err != nil {
		t.Errorf("posting to %s: %v", link, err)
		return 0, ""
	}
	defer resp.Body.Close()
	page, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(page)
}

// signingInPerson answers a URL elicitation: another principal's key is
// refused on the page, the principal's own signs it in; then accept.
type signingInPerson struct {
	t            *testing.T
	key, someone string

	mu    sync.Mutex
	asked []mcp.ElicitationParams
}

func (p *signingInPerson) Elicit(_ context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	p.mu.Lock()
	p.asked = append(p.asked, req.Params)
	p.mu.Unlock()
	if req.Params.Mode != mcp.ElicitationModeURL {
		return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionDecline}}, nil
	}
	go func() {
		if status, page := openSignInLink(p.t, req.Params.URL, p.someone); status != http.StatusForbidden {
			p.t.Errorf("another principal's key on the link: %d %s", status, page)
		}
		if status, page := openSignInLink(p.t, req.Params.URL, p.key); status != http.StatusOK || !strings.Contains(page, "Signed in") {
			p.t.Errorf("the principal's own key on the link: %d %s", status, page)
		}
	}()
	return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionAccept}}, nil
}

// TestServeSignInByURL: through `sandbox serve`, principals without a login
// to an OAuth server sign themselves in from inside their calls, each with
// the real authorization server: a 2025 session from a snippet (asked by
// elicitation/create, told notifications/elicitation/complete, the snippet
// goes on), a 2026-07-28 client's direct call and snippet (asked by
// input_required, the retry goes on). Each ends with its own grant.
func TestServeSignInByURL(t *testing.T) {
	issuer := oauthtest.StartAuthServer(t)
	secure := oauthtest.StartProtectedServer(t, issuer)
	tokens := filepath.Join(t.TempDir(), "tokens.json")
	const carolKey = "carol-secret-0123456789abcdef00"
	cfg := writeConfig(t, fmt.Sprintf(`{"mcpServers": {"secure": {"url": %q}},
  "gateway": {"oauthTokens": %q, "startupTimeout": "5s", "restartBackoff": "100ms", "maxRestartBackoff": "200ms",
    "auth": {"apiKeys": [{"name": "agent-a", "key": %q}, {"name": "admin", "key": %q}, {"name": "carol", "key": %q}]}}}`, secure, tokens, agentKey, adminKey, carolKey))
	// The operator's login carries the connection (listing, health).
	if r := login(t, "secure", "-c", cfg); r.code != 0 {
		t.Fatalf("login: %d\n%s", r.code, r.stderr)
	}
	mcpURL := serveHTTP(t, mustRead(t, cfg), "--expose", "all")
	base := strings.TrimSuffix(mcpURL, "/mcp")

	t.Run("2025 session, from a snippet", func(t *testing.T) {
		person := &signingInPerson{t: t, key: agentKey, someone: adminKey}
		tr, err := transport.NewStreamableHTTP(mcpURL, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + agentKey}))
		if err != nil {
			t.Fatal(err)
		}
		c := client.NewClient(tr, client.WithElicitationHandler(person))
		t.Cleanup(func() { c.Close() })
		var completed sync.Map
		c.OnNotification(func(n mcp.JSONRPCNotification) {
			if n.Method == string(mcp.MethodNotificationElicitationComplete) {
				completed.Store(fmt.Sprint(n.Params.AdditionalFields["elicitationId"]), true)
			}
		})
		if err := c.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Initialize(context.Background(), mcp.InitializeRequest{Params: mcp.InitializeParams{ProtocolVersion: mcp.ProtocolVersion20251125,
			ClientInfo: mcp.Implementation{Name: "t", Version: "1"}, Capabilities: mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{Form: &struct{}{}, URL: &struct{}{}}}}}); err != nil {
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
			t.Fatalf("the snippet after signing in: %s", out)
		}
		person.mu.Lock()
		asked := person.asked
		person.mu.Unlock()
		if len(asked) != 1 || !strings.HasPrefix(asked[0].URL, base+"/oauth/signin/") || asked[0].ElicitationID == "" {
			t.Fatalf("asked %+v", asked)
		}
		testwait.Until(t, 5*time.Second, "notifications/elicitation/complete", func() bool { _, ok := completed.Load(asked[0].ElicitationID); return ok })
	})

	urlCaps := map[string]any{"elicitation": map[string]any{"url": map[string]any{}}}
	inputURL := func(t *testing.T, a modernAnswer) (key, link, state string) {
		t.Helper()
		reqs, _ := a.Result["inputRequests"].(map[string]any)
		state, _ = a.Result["requestState"].(string)
		for k, v := range reqs {
			params, _ := v.(map[string]any)["params"].(map[string]any)
			if params["mode"] == "url" {
				link, _ = params["url"].(string)
				key = k
			}
		}
		if a.Result["resultType"] != "input_required" || link == "" || state == "" || !strings.HasPrefix(link, base+"/oauth/signin/") {
			t.Fatalf("not asked to sign in: HTTP %d %+v", a.Status, a)
		}
		return key, link, state
	}
	for name, c := range map[string]struct {
		key, tool string
		args      map[string]any
	}{
		"2026 direct call": {adminKey, "secure__whoami", map[string]any{}},
		"2026 snippet":     {carolKey, "execute_code", map[string]any{"code": `return await secure.whoami({})`}},
	} {
		t.Run(name, func(t *testing.T) {
			key, link, state := inputURL(t, postModernCallCaps(t, mcpURL, c.key, c.tool, c.args, urlCaps, nil, ""))
			if status, page := openSignInLink(t, link, c.key); status != http.StatusOK {
				t.Fatalf("signing in: %d %s", status, page)
			}
			done := postModernCallCaps(t, mcpURL, c.key, c.tool, c.args, urlCaps, map[string]any{key: map[string]any{"action": "accept"}}, state)
			if done.Error != nil || done.Result["resultType"] == "input_required" || !strings.Contains(fmt.Sprint(done.Result["content"]), "alice") {
				t.Fatalf("the retry after signing in: %+v", done)
			}
		})
	}
}

// TestServeApprovalPage: through `sandbox serve`, a 2026-07-28 client that
// declares URL-mode elicitation and not form mode is asked to approve on
// serve's /approve/ page; its principal signs in there, approves, and the
// retry runs the call.
func TestServeApprovalPage(t *testing.T) {
	if testing.Short() {
		t.Skip("starts sandbox serve")
	}
	const aliceKey = "alice-key-0123456789abcdef0123"
	mcpURL := serveHTTP(t, fmt.Sprintf(`{"mcpServers": {"demo": {"command": %q}},
 "gateway": {"auth": {"apiKeys": [{"name": "alice", "key": %q}]},
             "policy": {"rules": [{"tools": "demo:delete_*", "action": "approve"}]}}}`, exampleServerBinary(t), aliceKey), "--expose", "all")
	urlOnly := map[string]any{"elicitation": map[string]any{"url": map[string]any{}}}
	args := map[string]any{"task_id": "T-106"}
	first := postModernCallCaps(t, mcpURL, aliceKey, "demo__delete_task", args, urlOnly, nil, "")
	reqs, _ := first.Result["inputRequests"].(map[string]any)
	ask, _ := reqs["sandbox_approval"].(map[string]any)
	params, _ := ask["params"].(map[string]any)
	link, _ := params["url"].(string)
	state, _ := first.Result["requestState"].(string)
	if params["mode"] != "url" || !strings.HasPrefix(link, strings.TrimSuffix(mcpURL, "/mcp")+"/approve/") || state == "" {
		t.Fatalf("not asked by URL: %+v", first)
	}
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, Timeout: 10 * time.Second}
	resp, err := browser.PostForm(link, url.Values{"credential": {aliceKey}})
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	token := regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`).FindStringSubmatch(string(page))
	if resp.StatusCode != http.StatusOK || token == nil || !strings.Contains(string(page), "An agent wants to call demo:delete_task.") {
		t.Fatalf("the approval page: %d %s", resp.StatusCode, page)
	}
	resp, err = browser.PostForm(link, url.Values{"decision": {"approve"}, "csrf": {token[1]}})
	if err != nil {
		t.Fatal(err)
	}
	page, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(page), "Approved") {
		t.Fatalf("approving: %d %s", resp.StatusCode, page)
	}
	done := postModernCallCaps(t, mcpURL, aliceKey, "demo__delete_task", args, urlOnly, map[string]any{"sandbox_approval": map[string]any{"action": "accept"}}, state)
	if done.Error != nil || done.Result["resultType"] == "input_required" || done.Result["isError"] == true {
		t.Fatalf("the retry after approving: %+v", done)
	}
}
