package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/sandboxrt/sandbox/internal/oauthtest"
)

// TestURLPagesInABrowser: the pages a client is sent to by URL-mode
// elicitation, in a real browser (headless chromium): a principal signs
// itself in to an OAuth server (its credential on serve's page, the real
// authorization server, the redirect back to serve with the cookie the
// page set) and its call's retry runs with its new login; the principal
// approves its own call on the approval page and the retry runs it.
func TestURLPagesInABrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("starts sandbox serve and a browser")
	}
	chromium := browserPath(t)
	issuer := oauthtest.StartAuthServer(t)
	secure := oauthtest.StartProtectedServer(t, issuer)
	tokens := filepath.Join(t.TempDir(), "tokens.json")
	cfg := writeConfig(t, fmt.Sprintf(`{"mcpServers": {"secure": {"url": %q}, "demo": {"command": %q}},
  "gateway": {"oauthTokens": %q, "startupTimeout": "5s", "restartBackoff": "100ms", "maxRestartBackoff": "200ms",
    "auth": {"apiKeys": [{"name": "agent-a", "key": %q}]},
    "policy": {"rules": [{"tools": "demo:delete_*", "action": "approve"}], "approvalTimeout": "60s"}}}`, secure, exampleServerBinary(t), tokens, agentKey))
	if r := login(t, "secure", "-c", cfg); r.code != 0 { // the operator's, for the connection
		t.Fatalf("login: %d\n%s", r.code, r.stderr)
	}
	mcpURL := serveHTTP(t, mustRead(t, cfg), "--expose", "all")
	browser := startBrowser(t, chromium)
	ctx, cancel := context.WithTimeout(browser, 90*time.Second)
	defer cancel()
	page := tab{t, ctx}
	urlOnly := map[string]any{"elicitation": map[string]any{"url": map[string]any{}}}
	askedURL := func(a modernAnswer, key string) (string, string) {
		t.Helper()
		reqs, _ := a.Result["inputRequests"].(map[string]any)
		ask, _ := reqs[key].(map[string]any)
		params, _ := ask["params"].(map[string]any)
		link, _ := params["url"].(string)
		state, _ := a.Result["requestState"].(string)
		if link == "" || state == "" {
			t.Fatalf("not asked by URL under %s: %+v", key, a)
		}
		return link, state
	}
	giveCredential := func(link string) {
		page.do("giving the credential on "+link, chromedp.Navigate(link), visible(`input[name="credential"]`),
			chromedp.SendKeys(chromedp.CSS(`input[name="credential"]`), agentKey), chromedp.Submit(chromedp.CSS(`input[name="credential"]`)))
	}

	// Signing in to an OAuth server.
	first := postModernCallCaps(t, mcpURL, agentKey, "secure__whoami", map[string]any{}, urlOnly, nil, "")
	link, state := askedURL(first, "sandbox_signin")
	giveCredential(link)
	page.waitFor(`document.readyState === "complete" && document.body.textContent.includes("Signed in to server")`)
	done := postModernCallCaps(t, mcpURL, agentKey, "secure__whoami", map[string]any{}, urlOnly, map[string]any{"sandbox_signin": map[string]any{"action": "accept"}}, state)
	if done.Error != nil || !strings.Contains(fmt.Sprint(done.Result["content"]), "alice") {
		t.Fatalf("the call after signing in: %+v", done)
	}

	// Approving on the approval page.
	args := map[string]any{"task_id": "T-106"}
	first = postModernCallCaps(t, mcpURL, agentKey, "demo__delete_task", args, urlOnly, nil, "")
	link, state = askedURL(first, "sandbox_approval")
	giveCredential(link)
	page.do("reading the question", visible(`button[value="approve"]`))
	if q := page.text(`pre`); !strings.Contains(q, "An agent wants to call demo:delete_task.") || !strings.Contains(q, `task_id: "T-106"`) {
		t.Fatalf("the question:\n%s", q)
	}
	page.do("approving", chromedp.Click(chromedp.CSS(`button[value="approve"]`)))
	page.waitFor(`document.readyState === "complete" && document.body.textContent.includes("Approved: the call goes on")`)
	done = postModernCallCaps(t, mcpURL, agentKey, "demo__delete_task", args, urlOnly, map[string]any{"sandbox_approval": map[string]any{"action": "accept"}}, state)
	if done.Error != nil || done.Result["resultType"] == "input_required" || done.Result["isError"] == true {
		t.Fatalf("the approved call: %+v", done)
	}
}
