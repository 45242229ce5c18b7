package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// deskReplicas starts two replicas of serve sharing state in one
// redis-server, with a policy that sends demo:delete_* to a person and an
// operator's key for the consoles; it returns their base URLs.
func deskReplicas(t *testing.T) (a, b string) {
	t.Helper()
	srv := startSharedRedis(t)
	cfg := fmt.Sprintf(`{"mcpServers": {"demo": {"command": %q}},
  "gateway": {"redis": {"url": %q, "encryptionKey": "${SANDBOX_REDIS_KEY}", "keyPrefix": "desk:"},
    "auth": {"apiKeys": [{"name": "agent-a", "key": "${SANDBOX_TEST_AGENT_KEY}"}, {"name": "admin", "key": %q, "operator": true}]},
    "policy": {"rules": [{"tools": "demo:delete_*", "action": "approve"}], "approvalTimeout": "60s", "operatorApprovals": true}}}`,
		exampleServerBinary(t), srv.URL(), adminKey)
	a = strings.TrimSuffix(serveHTTP(t, cfg, "--expose", "all"), "/mcp")
	b = strings.TrimSuffix(serveHTTP(t, cfg, "--expose", "all"), "/mcp")
	return a, b
}

// browser is a person's browser: it keeps cookies (for every port of
// 127.0.0.1, as browsers do) and does not follow redirects.
func browser() *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func fetchPage(t *testing.T, c *http.Client, method, u string, form url.Values) (int, string) {
	t.Helper()
	var resp *http.Response
	var err error
	if method == http.MethodPost {
		resp, err = c.PostForm(u, form)
	} else {
		resp, err = c.Get(u)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	page, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(page)
}

var (
	csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)
	idField   = regexp.MustCompile(`name="id" value="([0-9a-f]+)"`)
)

// TestApprovalDeskAcrossReplicas: with gateway.redis, a call waiting at
// replica A's desk is listed on replica B's console, the operator's
// decision there lets it run on A, and a second decision (on A's console)
// is told who decided first. Without the shared desk B lists nothing.
func TestApprovalDeskAcrossReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("starts redis-server and two replicas")
	}
	a, b := deskReplicas(t)
	agent := keyClient(t, a+"/mcp", agentKey) // a 2025 session on A that cannot be asked
	done := make(chan *mcp.CallToolResult, 1)
	errc := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		res, err := agent.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "demo__delete_task", Arguments: map[string]any{"task_id": "T-106"}}})
		if err != nil {
			errc <- err
			return
		}
		done <- res
	}()

	ops := browser()
	if status, page := fetchPage(t, ops, http.MethodPost, b+"/ui/login", url.Values{"credential": {adminKey}}); status != http.StatusSeeOther {
		t.Fatalf("signing in to B's console: %d %s", status, page)
	}
	var page string
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(page, "demo:delete_task") {
		if time.Now().After(deadline) {
			t.Fatalf("B's console never listed the call waiting on A: %s", page)
		}
		time.Sleep(100 * time.Millisecond)
		_, page = fetchPage(t, ops, http.MethodGet, b+"/ui/approvals", nil)
	}
	id, csrf := idField.FindStringSubmatch(page), csrfField.FindStringSubmatch(page)
	if id == nil || csrf == nil || !strings.Contains(page, "T-106") {
		t.Fatalf("the approval on B's console: %s", page)
	}
	// A second operator, on A's console, reads it too.
	opsA := browser()
	fetchPage(t, opsA, http.MethodPost, a+"/ui/login", url.Values{"credential": {adminKey}})
	_, pageA := fetchPage(t, opsA, http.MethodGet, a+"/ui/approvals", nil)
	csrfA := csrfField.FindStringSubmatch(pageA)
	if csrfA == nil || !strings.Contains(pageA, id[1]) {
		t.Fatalf("A's console does not list its own waiting call: %s", pageA)
	}
	decided := time.Now()
	if status, page := fetchPage(t, ops, http.MethodPost, b+"/ui/approvals", url.Values{"csrf": {csrf[1]}, "id": {id[1]}, "decision": {"approve"}}); status != http.StatusSeeOther {
		t.Fatalf("approving on B: %d %s", status, page)
	}
	select {
	case res := <-done:
		if res.IsError || !strings.Contains(toolText(res), "T-106") {
			t.Fatalf("the call on A after B's approval: %s", toolText(res))
		}
		// A polls the shared desk every second.
		if took := time.Since(decided); took > 5*time.Second {
			t.Errorf("the decision took %v to reach A", took)
		}
	case err := <-errc:
		t.Fatal(err)
	case <-time.After(30 * time.Second):
		t.Fatal("the call on A did not finish after B's approval")
	}

	// The second operator's decision, on A's console, is told who made
	// the first; neither console lists the call any more.
	if _, page := fetchPage(t, opsA, http.MethodPost, a+"/ui/approvals", url.Values{"csrf": {csrfA[1]}, "id": {id[1]}, "decision": {"deny"}}); !strings.Contains(page, "decided already: approved by admin") {
		t.Fatalf("a second decision on A: %s", page)
	}
	for _, c := range []struct {
		who  *http.Client
		base string
	}{{ops, b}, {opsA, a}} {
		if _, page := fetchPage(t, c.who, http.MethodGet, c.base+"/ui/approvals", nil); strings.Contains(page, "T-106") {
			t.Fatalf("%s's console still lists the decided call: %s", c.base, page)
		}
	}
}

// TestApprovalPageAcrossReplicas: a 2026-07-28 call asked by URL on
// replica A is approved on replica B's page by its principal, who signed
// in on A's page (the page's key is every replica's), and the retry on B
// runs it.
func TestApprovalPageAcrossReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("starts redis-server and two replicas")
	}
	a, b := deskReplicas(t)
	urlOnly := map[string]any{"elicitation": map[string]any{"url": map[string]any{}}}
	args := map[string]any{"task_id": "T-107"}
	first := postModernCallCaps(t, a+"/mcp", agentKey, "demo__delete_task", args, urlOnly, nil, "")
	reqs, _ := first.Result["inputRequests"].(map[string]any)
	ask, _ := reqs["sandbox_approval"].(map[string]any)
	params, _ := ask["params"].(map[string]any)
	link, _ := params["url"].(string)
	state, _ := first.Result["requestState"].(string)
	if params["mode"] != "url" || !strings.HasPrefix(link, a+"/approve/") || state == "" {
		t.Fatalf("not asked by URL: %+v", first)
	}
	person := browser()
	if status, page := fetchPage(t, person, http.MethodPost, link, url.Values{"credential": {agentKey}}); status != http.StatusSeeOther {
		t.Fatalf("signing in on A's page: %d %s", status, page)
	}
	onB := b + strings.TrimPrefix(link, a)
	status, page := fetchPage(t, person, http.MethodGet, onB, nil)
	csrf := csrfField.FindStringSubmatch(page)
	if status != http.StatusOK || csrf == nil || !strings.Contains(page, "T-107") {
		t.Fatalf("the approval on B's page: %d %s", status, page)
	}
	if status, page := fetchPage(t, person, http.MethodPost, onB, url.Values{"decision": {"approve"}, "csrf": {csrf[1]}}); status != http.StatusOK || !strings.Contains(page, "Approved") {
		t.Fatalf("approving on B's page: %d %s", status, page)
	}
	done := postModernCallCaps(t, b+"/mcp", agentKey, "demo__delete_task", args, urlOnly, map[string]any{"sandbox_approval": map[string]any{"action": "accept"}}, state)
	if done.Error != nil || done.Result["resultType"] == "input_required" || done.Result["isError"] == true || !strings.Contains(fmt.Sprint(done.Result["content"]), "T-107") {
		t.Fatalf("the retry on B after approving: %+v", done)
	}
}
