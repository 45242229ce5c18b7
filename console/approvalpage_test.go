package console

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/gateway"
)

// urlOnlyPeer is a 2025 session whose client declared URL-mode
// elicitation and not form mode: it hands the link it is asked to open to
// links, answers accept, and records notifications.
type urlOnlyPeer struct {
	links chan string
	mu    sync.Mutex
	notes []string
}

func (p *urlOnlyPeer) Request(_ context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	var m struct{ Mode, URL string }
	_ = json.Unmarshal(params, &m)
	if method != "elicitation/create" || m.Mode != "url" {
		return nil, fmt.Errorf("asked %s %s", method, params)
	}
	p.links <- m.URL
	return json.RawMessage(`{"action":"accept"}`), nil
}

func (p *urlOnlyPeer) Notify(method string, params json.RawMessage) {
	p.mu.Lock()
	p.notes = append(p.notes, method+" "+string(params))
	p.mu.Unlock()
}

func (p *urlOnlyPeer) Supports(c string) bool {
	return c == "elicitation" || c == gateway.CapabilityURLElicitation
}

// pageAuth is serve's authentication for the approval page: the console
// test's keys and one more principal.
func pageAuth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "Bearer other-key" {
			next.ServeHTTP(w, r.WithContext(auth.WithPrincipal(r.Context(), auth.Principal{ID: "other", Tenant: "other"})))
			return
		}
		testAuth(next).ServeHTTP(w, r)
	})
}

// browser is a person's browser on the approval page.
type browser struct {
	t *testing.T
	c *http.Client
}

func newBrowser(t *testing.T) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, c: &http.Client{Jar: jar, Timeout: 10 * time.Second}}
}

func (b *browser) get(link string) (int, string) {
	b.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, link, nil)
	resp, body := do(b.t, b.c, req)
	return resp.StatusCode, body
}

func (b *browser) post(link string, form url.Values, origin string) (int, string) {
	b.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, link, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	resp, body := do(b.t, b.c, req)
	return resp.StatusCode, body
}

// TestApprovalPageDecidesACallAskedByURL: a call whose client can be asked
// only by URL is asked to open the approval page; the page shows nothing
// before its principal signs in, nothing to another principal, and to the
// caller's own the question a form would show, escaped; an Approve without
// the CSRF token or from another origin is refused; the caller's Approve
// lets the call run, the client is told the elicitation completed, and the
// audit log says who approved. A 2026-07-28 request is asked the same way
// by input_required, an operator denies it on the page, and the retry is
// DENIED saying so.
func TestApprovalPageDecidesACallAskedByURL(t *testing.T) {
	w := newWorld(t)
	mux := http.NewServeMux()
	mux.Handle("/gw/approve/", http.StripPrefix("/gw/approve", NewApprovalPage(ApprovalPageOptions{Gateway: w.g, Authenticate: pageAuth})))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	w.g.SetApprovalPage(srv.URL + "/gw/approve")
	agent := keys["agent-key"]
	args, _ := json.Marshal(map[string]string{"table": "users" + hostile})

	t.Run("2025 session", func(t *testing.T) {
		peer := &urlOnlyPeer{links: make(chan string, 1)}
		caller := auth.Caller{Principal: agent, Session: "agent-1"}
		w.g.OpenSession(caller, peer)
		done := make(chan error, 1)
		go func() {
			_, err := w.g.Call(context.Background(), gateway.CallRequest{Tool: "evil:drop_table", Arguments: args, Caller: caller})
			done <- err
		}()
		var link string
		select {
		case link = <-peer.links:
		case err := <-done:
			t.Fatalf("the call ended without asking: %v", err)
		case <-time.After(10 * time.Second):
			t.Fatal("not asked")
		}
		if !strings.HasPrefix(link, srv.URL+"/gw/approve/") {
			t.Fatalf("link %s", link)
		}

		stranger := newBrowser(t)
		if status, page := stranger.get(link); status != http.StatusOK || !strings.Contains(page, `name="credential"`) || strings.Contains(page, "drop_table") {
			t.Errorf("before signing in: %d %s", status, page)
		}
		if status, _ := stranger.post(link, url.Values{"credential": {"not-a-key"}}, ""); status != http.StatusUnauthorized {
			t.Errorf("a wrong credential: %d", status)
		}
		other := newBrowser(t)
		if status, page := other.post(link, url.Values{"credential": {"other-key"}}, ""); status != http.StatusNotFound || strings.Contains(page, "drop_table") {
			t.Errorf("another principal: %d %s", status, page)
		}

		person := newBrowser(t)
		status, page := person.post(link, url.Values{"credential": {"agent-key"}}, "")
		if status != http.StatusOK || !strings.Contains(page, "An agent wants to call evil:drop_table.") || !strings.Contains(page, `table: &#34;users&lt;script&gt;`) {
			t.Fatalf("the caller's page: %d %s", status, page)
		}
		token := csrfField.FindStringSubmatch(page)
		if token == nil {
			t.Fatalf("no CSRF token:\n%s", page)
		}
		if status, _ := person.post(link, url.Values{"decision": {"approve"}}, ""); status != http.StatusForbidden {
			t.Errorf("without the CSRF token: %d", status)
		}
		if status, _ := person.post(link, url.Values{"decision": {"approve"}, "csrf": {token[1]}}, "http://evil.example"); status != http.StatusForbidden {
			t.Errorf("from another origin: %d", status)
		}
		if status, _ := other.post(link, url.Values{"decision": {"approve"}, "csrf": {token[1]}}, ""); status != http.StatusNotFound {
			t.Errorf("another principal with the caller's token: %d", status)
		}
		select {
		case err := <-done:
			t.Fatalf("the call ended before anyone decided: %v", err)
		default:
		}
		if status, page := person.post(link, url.Values{"decision": {"approve"}, "csrf": {token[1]}}, ""); status != http.StatusOK || !strings.Contains(page, "Approved") {
			t.Fatalf("approving: %d %s", status, page)
		}
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("the approved call: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the approved call did not finish")
		}
		peer.mu.Lock()
		notes := peer.notes
		peer.mu.Unlock()
		if len(notes) != 1 || !strings.HasPrefix(notes[0], "notifications/elicitation/complete ") || !strings.Contains(notes[0], link[strings.LastIndex(link, "/")+1:]) {
			t.Errorf("notifications: %v", notes)
		}
		if status, page := person.get(link); status != http.StatusNotFound || !strings.Contains(page, "No call is waiting") {
			t.Errorf("the decided approval: %d %s", status, page)
		}
		audit, _ := os.ReadFile(w.auditPath)
		if !strings.Contains(string(audit), `"decision":"approved by agent/agent (the caller) on the approval page"`) || !strings.Contains(string(audit), `"decidedBy":"agent/agent"`) {
			t.Errorf("the audit log:\n%s", audit)
		}
	})

	t.Run("2026 request, denied by an operator", func(t *testing.T) {
		urlOnly := gateway.Asking{Capabilities: json.RawMessage(`{"elicitation":{"url":{}}}`)}
		res, err := w.g.Call(gateway.WithAsking(context.Background(), urlOnly), gateway.CallRequest{Tool: "evil:drop_table", Arguments: args, Caller: auth.Caller{Principal: agent}})
		if err != nil || res.InputRequired == nil {
			t.Fatalf("first round: %+v %v", res, err)
		}
		var reqs map[string]struct{ Params struct{ Mode, URL string } }
		_ = json.Unmarshal(res.InputRequired.Requests, &reqs)
		link := reqs["sandbox_approval"].Params.URL
		if reqs["sandbox_approval"].Params.Mode != "url" || !strings.HasPrefix(link, srv.URL+"/gw/approve/") {
			t.Fatalf("asked %s", res.InputRequired.Requests)
		}
		// The operator sees it in the list of every pending approval, and denies it.
		ops := newBrowser(t)
		if status, page := ops.post(srv.URL+"/gw/approve/", url.Values{"credential": {"ops-key"}}, ""); status != http.StatusOK || !strings.Contains(page, "evil:drop_table") {
			t.Fatalf("the operator's list: %d %s", status, page)
		}
		_, page := ops.get(link)
		token := csrfField.FindStringSubmatch(page)
		if token == nil {
			t.Fatalf("no form for the operator:\n%s", page)
		}
		if status, page := ops.post(link, url.Values{"decision": {"deny"}, "csrf": {token[1]}}, ""); status != http.StatusOK || !strings.Contains(page, "Denied") {
			t.Fatalf("denying: %d %s", status, page)
		}
		retry := gateway.Asking{Capabilities: urlOnly.Capabilities, InputResponses: json.RawMessage(`{"sandbox_approval":{"action":"accept"}}`), RequestState: res.InputRequired.State}
		_, err = w.g.Call(gateway.WithAsking(context.Background(), retry), gateway.CallRequest{Tool: "evil:drop_table", Arguments: args, Caller: auth.Caller{Principal: agent}})
		var e *gateway.Error
		if !errors.As(err, &e) || e.Code != gateway.CodeDenied || !strings.Contains(e.Message, "operator ops/ops denied it") {
			t.Fatalf("the retry: %v", err)
		}
	})

	t.Run("a client that declares form mode too gets the form", func(t *testing.T) {
		both := gateway.Asking{Capabilities: json.RawMessage(`{"elicitation":{"form":{},"url":{}}}`)}
		res, err := w.g.Call(gateway.WithAsking(context.Background(), both), gateway.CallRequest{Tool: "evil:drop_table", Arguments: args, Caller: auth.Caller{Principal: agent}})
		if err != nil || res.InputRequired == nil || !strings.Contains(string(res.InputRequired.Requests), "requestedSchema") {
			t.Fatalf("asked %+v %v", res, err)
		}
	})
}
