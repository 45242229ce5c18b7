package console

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/codemode"
	"github.com/sandboxrt/sandbox/gateway"
	"github.com/sandboxrt/sandbox/runtime"
)

func TestMain(m *testing.M) {
	runtime.ServeWorkerIfChild()
	os.Exit(m.Run())
}

// hostile is what an upstream may put in front of an operator: markup and
// script in its tool names' descriptions, its instructions and its
// answers.
const hostile = `<script>window.pwned=1</script><img src=x onerror="window.pwned=2">`

// hostileServer is an upstream whose words carry HTML, with one tool a
// policy sends to a person.
func hostileServer() *server.MCPServer {
	s := server.NewMCPServer("evil"+hostile, "1", server.WithInstructions("Instructions "+hostile))
	s.AddTool(mcp.NewTool("lookup", mcp.WithDescription("Looks up "+hostile), mcp.WithReadOnlyHintAnnotation(true),
		mcp.WithString("q")), func(_ context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("found " + hostile), nil
	})
	s.AddTool(mcp.NewTool("drop_table", mcp.WithDescription("Drops a table."), mcp.WithDestructiveHintAnnotation(true),
		mcp.WithString("table")), func(_ context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("dropped"), nil
	})
	return s
}

// widgetServer is a second upstream, which the agent may not use.
func widgetServer() *server.MCPServer {
	s := server.NewMCPServer("widgets", "1")
	s.AddTool(mcp.NewTool("list_widgets", mcp.WithDescription("List the widgets in stock."), mcp.WithReadOnlyHintAnnotation(true)),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("[]"), nil
		})
	return s
}

// keys are the test's credentials: the operator's and an agent's.
var keys = map[string]auth.Principal{
	"ops-key":   {ID: "ops", Tenant: "ops", Operates: true},
	"agent-key": {ID: "agent", Tenant: "agent", Scopes: []string{auth.ServerScope("evil")}},
}

// testAuth stands for serve's authentication: a bearer key from keys, or 401.
func testAuth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := keys[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")]
		if !ok {
			w.Header().Set("WWW-Authenticate", "Bearer")
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r.WithContext(auth.WithPrincipal(r.Context(), p)))
	})
}

type world struct {
	g         *gateway.Gateway
	engine    *codemode.Engine
	console   *Console
	url       string // the console's root, ".../ui/"
	auditPath string
}

func newWorld(t *testing.T) *world {
	t.Helper()
	return newWorldWith(t, nil)
}

// newWorldWith is newWorld with the gateway's servers from cfg too (nil:
// the in-process ones only).
func newWorldWith(t *testing.T, cfg *gateway.Config) *world {
	t.Helper()
	settings := gateway.DefaultSettings()
	if cfg != nil {
		settings = cfg.Settings
	}
	settings.Policy = &gateway.Policy{ApprovalTimeout: 20 * time.Second, OperatorApprovals: true, Rules: []gateway.PolicyRule{
		{Tools: "evil:drop_table", Action: gateway.PolicyApprove},
	}}
	auditPath := filepath.Join(t.TempDir(), "audit.jsonl")
	settings.Audit = &gateway.AuditConfig{Path: auditPath}
	servers := map[string]*gateway.ServerConfig{}
	if cfg != nil {
		servers = cfg.Servers
	}
	g, err := gateway.New(&gateway.Config{Servers: servers, Settings: settings}, gateway.WithInProcessServer("evil", hostileServer(), nil),
		gateway.WithInProcessServer("widgets", widgetServer(), nil))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := g.Start(ctx); err != nil {
		t.Fatal(err)
	}
	rt, err := runtime.New(runtime.Options{Isolation: runtime.InProcess, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	engine, err := codemode.New(g, rt, codemode.Options{Audit: g})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { engine.Close() })
	c, err := New(Options{Gateway: g, Engine: engine, Authenticate: testAuth, Principals: []auth.Principal{keys["agent-key"]}, AuditPath: auditPath})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	mux := http.NewServeMux()
	mux.Handle("/ui/", http.StripPrefix("/ui", c))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return &world{g: g, engine: engine, console: c, url: srv.URL + "/ui/", auditPath: auditPath}
}

// get fetches a console path with a key ("" for none), not following
// redirects.
func (w *world) get(t *testing.T, key, path string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", w.url+path, nil)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	return do(t, noRedirects, req)
}

var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func do(t *testing.T, c *http.Client, req *http.Request) (*http.Response, string) {
	t.Helper()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

func (w *world) post(t *testing.T, key, path string, form url.Values, origin string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", w.url+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", "Bearer "+key)
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	return do(t, noRedirects, req)
}

var csrfField = regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)

// TestConsoleIsForOperatorsAndEscapesUpstreams: every page answers an
// operator, with a strict CSP and the upstream's words escaped; another
// principal gets 403, a request without a credential is sent to sign in.
func TestConsoleIsForOperatorsAndEscapesUpstreams(t *testing.T) {
	w := newWorld(t)
	// A run, so that the runs pages have one with the upstream's answer.
	res, err := w.engine.Execute(context.Background(), codemode.ExecuteRequest{Code: `console.log("said: " + await evil.lookup({q: "x"})); throw new Error("` + strings.ReplaceAll(hostile, `"`, `\"`) + `")`,
		Caller: auth.Caller{Principal: keys["agent-key"], Session: "s1"}})
	if err != nil || res.OK {
		t.Fatalf("the run: %+v, %v", res, err)
	}
	runs := w.engine.RunStats()
	if runs.Outcomes["runtime"] != 1 {
		t.Fatalf("run stats: %+v", runs)
	}
	_, list := w.get(t, "ops-key", "runs")
	id := regexp.MustCompile(`href="run\?id=([0-9a-f]+)"`).FindStringSubmatch(list)
	if id == nil {
		t.Fatalf("the runs page lists no run:\n%s", list)
	}

	for _, path := range []string{"", "servers", "runs", "run?id=" + id[1], "approvals", "runs?principal=agent/agent&outcome=runtime", "servers?fragment=1",
		"audit", "scripts", "store", "search?intent=look+something+up", "login"} {
		resp, body := w.get(t, "ops-key", path)
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s: %d\n%s", path, resp.StatusCode, body)
			continue
		}
		csp := resp.Header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") || !strings.Contains(csp, "frame-ancestors 'none'") {
			t.Errorf("%s: CSP %q", path, csp)
		}
		// Every link is relative: the console works behind a proxy's prefix.
		if m := regexp.MustCompile(`(href|src|action)="/`).FindString(body); m != "" {
			t.Errorf("%s: an absolute link (%s...): it would miss a proxy's prefix", path, m)
		}
		if rp := resp.Header.Get("Referrer-Policy"); rp != "same-origin" { // no-referrer makes a form's POST say Origin: null
			t.Errorf("%s: Referrer-Policy %q", path, rp)
		}
		if strings.Contains(body, "<script>window") || strings.Contains(body, "<img src=x") {
			t.Errorf("%s: an upstream's markup is in the page unescaped:\n%s", path, body)
		}
	}
	_, servers := w.get(t, "ops-key", "servers")
	for _, want := range []string{"Looks up &lt;script&gt;window.pwned=1&lt;/script&gt;", "Instructions &lt;script&gt;", "drop_table"} {
		if !strings.Contains(servers, want) {
			t.Errorf("the servers page lacks %q", want)
		}
	}
	_, detail := w.get(t, "ops-key", "run?id="+id[1])
	for _, want := range []string{"said: found &lt;script&gt;", "evil:lookup", "error-line", "runtime: Error at snippet.ts:1:", "\n&lt;script&gt;window.pwned=1"} {
		if !strings.Contains(detail, want) {
			t.Errorf("the run's page lacks %q:\n%s", want, detail)
		}
	}
	_, overview := w.get(t, "ops-key", "")
	if !strings.Contains(overview, "1 runtime") {
		t.Errorf("the overview does not count the run:\n%s", overview)
	}

	if resp, _ := w.get(t, "agent-key", ""); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a principal that may not operate: %d", resp.StatusCode)
	}
	if resp, _ := w.get(t, "agent-key", "events?topic=runs"); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a principal that may not operate, on the event stream: %d", resp.StatusCode)
	}
	if resp, _ := w.get(t, "", "runs"); resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "login" {
		t.Errorf("no credential: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	if resp, _ := w.get(t, "wrong-key", "runs"); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a wrong key: %d", resp.StatusCode)
	}
}

// TestConsoleSignInKeepsTheCredentialInACookie: a browser cannot send a
// bearer header, so the sign-in form takes the key, checks it with the
// same authentication, and keeps it in an HttpOnly cookie; an agent's key
// is refused there too.
func TestConsoleSignInKeepsTheCredentialInACookie(t *testing.T) {
	w := newWorld(t)
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar}
	signIn := func(key string) (*http.Response, string) {
		req, _ := http.NewRequest("POST", w.url+"login", strings.NewReader(url.Values{"credential": {key}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		return do(t, browser, req)
	}
	if resp, _ := signIn("agent-key"); resp.StatusCode != http.StatusForbidden {
		t.Errorf("an agent's key signs in: %d", resp.StatusCode)
	}
	if resp, _ := signIn("no-such-key"); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a wrong key signs in: %d", resp.StatusCode)
	}
	resp, body := signIn("ops-key")
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "<h1>Overview</h1>") {
		t.Fatalf("the operator's sign-in did not lead to the overview: %d\n%s", resp.StatusCode, body)
	}
	u, _ := url.Parse(w.url)
	cookies := jar.Cookies(u)
	if len(cookies) != 1 || cookies[0].Name != cookieName {
		t.Fatalf("cookies: %+v", cookies)
	}
	// The cookie holds the key sealed: another service on the host (a
	// cookie reaches every port) learns nothing it can use against /mcp.
	if v := cookies[0].Value; strings.Contains(v, "ops-key") || strings.Contains(v, base64.RawURLEncoding.EncodeToString([]byte("ops-key"))) {
		t.Errorf("the cookie holds the key: %q", v)
	}
	req, _ := http.NewRequest("GET", w.url+"servers", nil)
	if resp, _ := do(t, browser, req); resp.StatusCode != http.StatusOK {
		t.Errorf("with the cookie: %d", resp.StatusCode)
	}
	// A kept credential no longer accepted (a key removed from the config)
	// sends the person to sign in again, and the cookie is forgotten.
	// So does a cookie this process did not seal (a raw key, a forgery, one
	// from before a restart) and one past its life.
	for name, v := range map[string]string{
		"a removed key":  w.console.sealCredential("a-key-since-removed", time.Now()),
		"a raw key":      "ops-key",
		"another seal":   (&Console{secret: make([]byte, 32)}).sealCredential("ops-key", time.Now()),
		"an expired one": w.console.sealCredential("ops-key", time.Now().Add(-cookieLife-time.Minute)),
	} {
		jar.SetCookies(u, []*http.Cookie{{Name: cookieName, Value: v, Path: "/ui"}})
		req, _ = http.NewRequest("GET", w.url+"servers", nil)
		resp, _ = do(t, noRedirects, withCookies(req, jar))
		if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "login?expired=1" || !strings.Contains(resp.Header.Get("Set-Cookie"), "Max-Age=0") {
			t.Errorf("%s: %d %q %q", name, resp.StatusCode, resp.Header.Get("Location"), resp.Header.Get("Set-Cookie"))
		}
	}

	// A cross-site sign-in (login CSRF) is refused.
	req, _ = http.NewRequest("POST", w.url+"login", strings.NewReader("credential=ops-key"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	if resp, _ := do(t, noRedirects, req); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a cross-site sign-in: %d", resp.StatusCode)
	}
}

// TestConsoleApprovesACallThatCouldNotBeAsked: a call from a caller no
// one can ask waits at the desk; the approvals page shows the question,
// refuses a POST without the CSRF token or from another origin, and an
// operator's approval lets the call run.
func TestConsoleApprovesACallThatCouldNotBeAsked(t *testing.T) {
	w := newWorld(t)
	done := make(chan error, 1)
	args, _ := json.Marshal(map[string]string{"table": "users" + hostile})
	go func() {
		_, err := w.g.Call(context.Background(), gateway.CallRequest{Tool: "evil:drop_table", Arguments: args,
			Caller: auth.Caller{Principal: keys["agent-key"]}})
		done <- err
	}()
	var page string
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(page, "evil:drop_table"); {
		if time.Now().After(deadline) {
			t.Fatalf("the call is not on the approvals page:\n%s", page)
		}
		select {
		case err := <-done:
			t.Fatalf("the call ended before anyone decided: %v", err)
		default:
		}
		time.Sleep(20 * time.Millisecond)
		_, page = w.get(t, "ops-key", "approvals")
	}
	if !strings.Contains(page, `table: &#34;users&lt;script&gt;`) || !strings.Contains(page, "An agent wants to call evil:drop_table.") {
		t.Errorf("the approvals page does not show the question, escaped:\n%s", page)
	}
	id := regexp.MustCompile(`name="id" value="([0-9a-f]+)"`).FindStringSubmatch(page)
	token := csrfField.FindStringSubmatch(page)
	if id == nil || token == nil {
		t.Fatalf("no form:\n%s", page)
	}
	if resp, body := w.post(t, "ops-key", "approvals", url.Values{"id": {id[1]}, "decision": {"approve"}}, ""); resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "CSRF") {
		t.Errorf("without the CSRF token: %d %s", resp.StatusCode, body)
	}
	for _, origin := range []string{"http://evil.example", "null"} { // null: a sandboxed frame's
		if resp, _ := w.post(t, "ops-key", "approvals", url.Values{"id": {id[1]}, "decision": {"approve"}, "csrf": {token[1]}}, origin); resp.StatusCode != http.StatusForbidden {
			t.Errorf("from origin %s: %d", origin, resp.StatusCode)
		}
	}
	if resp, _ := w.post(t, "agent-key", "approvals", url.Values{"id": {id[1]}, "decision": {"approve"}, "csrf": {token[1]}}, ""); resp.StatusCode != http.StatusForbidden {
		t.Errorf("an agent with the operator's token: %d", resp.StatusCode)
	}
	select {
	case err := <-done:
		t.Fatalf("the call ended before anyone decided: %v", err)
	default:
	}
	if resp, body := w.post(t, "ops-key", "approvals", url.Values{"id": {id[1]}, "decision": {"approve"}, "csrf": {token[1]}}, ""); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("approving: %d %s", resp.StatusCode, body)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the approved call: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the approved call did not finish")
	}
	// The audit log says who decided, and the audit page shows it.
	if _, body := w.get(t, "ops-key", "audit?kind=approval"); !strings.Contains(body, "approved by operator ops/ops (by ops/ops)") {
		t.Errorf("the audit page does not show the operator's decision:\n%s", body)
	}
	if resp, body := w.post(t, "ops-key", "approvals", url.Values{"id": {id[1]}, "decision": {"deny"}, "csrf": {token[1]}}, ""); resp.StatusCode != http.StatusOK || !strings.Contains(body, "no longer waiting") {
		t.Errorf("deciding again: %d %s", resp.StatusCode, body)
	}
}

// TestSearchPlaygroundAnswersAsTheAgentWould: the playground's answer is
// search_tools' for the chosen principal: the agent's scope hides a server
// the operator's search shows.
func TestSearchPlaygroundAnswersAsTheAgentWould(t *testing.T) {
	w := newWorld(t)
	search := func(principal string) string {
		t.Helper()
		resp, body := w.get(t, "ops-key", "search?"+url.Values{"principal": {principal}, "intent": {"list the widgets in stock"}}.Encode())
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("search as %q: %d\n%s", principal, resp.StatusCode, body)
		}
		return body
	}
	operator := search("")
	if !strings.Contains(operator, "widgets:list_widgets") || !strings.Contains(operator, "declare namespace widgets") {
		t.Errorf("the operator's search does not find the widgets:\n%s", operator)
	}
	want, err := w.engine.Search(context.Background(), codemode.SearchRequest{Intent: "list the widgets in stock", Caller: auth.Caller{Principal: keys["agent-key"], Session: "another"}})
	if err != nil {
		t.Fatal(err)
	}
	agent := search("agent/agent")
	if strings.Contains(agent, "widgets:") || strings.Contains(agent, "namespace widgets") {
		t.Errorf("the agent's search shows a server outside its scope:\n%s", agent)
	}
	if !strings.Contains(agent, html.EscapeString(want.Text())) {
		t.Errorf("the agent's answer is not search_tools' answer:\n%s\nwant (escaped) within:\n%s", agent, want.Text())
	}
	if resp, body := w.get(t, "ops-key", "search?principal=nobody&intent=x"); resp.StatusCode != http.StatusOK || !strings.Contains(body, "unknown principal") {
		t.Errorf("an unknown principal: %d %s", resp.StatusCode, body)
	}
}

// TestScriptsPageSharesAndDeletesAsTheOperator: an agent's saved script is
// listed with its code and description escaped; the operator shares it
// and deletes it, with the CSRF token, and the audit log names the
// operator.
func TestScriptsPageSharesAndDeletesAsTheOperator(t *testing.T) {
	w := newWorld(t)
	agent := auth.Caller{Principal: keys["agent-key"], Session: "s1"}
	if err := w.engine.SaveScript(context.Background(), agent, codemode.Script{Name: "report", Description: "Reports. " + hostile, Code: `return "` + "<b>bold</b>" + `"`}); err != nil {
		t.Fatal(err)
	}
	_, page := w.get(t, "ops-key", "scripts")
	if !strings.Contains(page, "scripts.report</code> of agent/agent") || !strings.Contains(page, "Reports. &lt;script&gt;") || !strings.Contains(page, "&lt;b&gt;bold") || strings.Contains(page, "<script>window") {
		t.Fatalf("the scripts page:\n%s", page)
	}
	token := csrfField.FindStringSubmatch(page)
	if token == nil {
		t.Fatal("no CSRF token on the scripts page")
	}
	act := func(action string, withToken bool) int {
		t.Helper()
		form := url.Values{"owner": {"agent/agent"}, "name": {"report"}, "action": {action}}
		if withToken {
			form.Set("csrf", token[1])
		}
		resp, _ := w.post(t, "ops-key", "scripts", form, "")
		return resp.StatusCode
	}
	shared := func() bool {
		all, err := w.engine.Scripts(context.Background())
		if err != nil || len(all) != 1 {
			t.Fatalf("scripts: %+v, %v", all, err)
		}
		return all[0].Shared
	}
	if code := act("share", false); code != http.StatusForbidden || shared() {
		t.Errorf("sharing without the CSRF token: %d, shared %v", code, shared())
	}
	if code := act("share", true); code != http.StatusSeeOther || !shared() {
		t.Errorf("sharing: %d, shared %v", code, shared())
	}
	if code := act("delete", true); code != http.StatusSeeOther {
		t.Errorf("deleting: %d", code)
	}
	if all, _ := w.engine.Scripts(context.Background()); len(all) != 0 {
		t.Errorf("left after deleting: %+v", all)
	}
	data, _ := os.ReadFile(w.auditPath)
	for _, want := range []string{`"principal":"ops/ops","session":"console","tool":"share_script","outcome":"OK"`,
		`"principal":"ops/ops","session":"console","tool":"delete_script","outcome":"OK"`, `"name":"agent/agent/report"`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("the audit log lacks %s:\n%s", want, data)
		}
	}
}

// TestStorePageShowsValuesOnlyWhenAskedAndAudits: a principal's keys are
// listed with sizes and expiry but no value; the value shows after a POST
// with the CSRF token, escaped, and the read is in the audit log.
func TestStorePageShowsValuesOnlyWhenAskedAndAudits(t *testing.T) {
	w := newWorld(t)
	caller := auth.Caller{Principal: keys["agent-key"], Session: "s1"}
	res, err := w.engine.Execute(context.Background(), codemode.ExecuteRequest{Caller: caller, Code: `
		await sandbox.store.set("secret", {note: "the value ` + strings.ReplaceAll(hostile, `"`, `\"`) + `"}, {scope: "principal", ttlSeconds: 3600})
		await sandbox.store.set("draft", "session's own")
		return 1`})
	if err != nil || !res.OK {
		t.Fatalf("storing: %+v %v", res, err)
	}
	_, page := w.get(t, "ops-key", "store?principal=agent/agent")
	if !strings.Contains(page, "<code>secret</code>") || !strings.Contains(page, "<code>draft</code>") || strings.Contains(page, "the value") ||
		!strings.Contains(page, "<td>"+time.Now().Add(time.Hour).UTC().Format("2006-01-02 15:")) {
		t.Fatalf("the store page (keys, no values):\n%s", page)
	}
	token := csrfField.FindStringSubmatch(page)
	if token == nil {
		t.Fatal("no CSRF token on the store page")
	}
	form := url.Values{"principal": {"agent/agent"}, "key": {"secret"}}
	if resp, body := w.post(t, "ops-key", "store", form, ""); resp.StatusCode != http.StatusForbidden || strings.Contains(body, "the value") {
		t.Errorf("reading without the CSRF token: %d", resp.StatusCode)
	}
	form.Set("csrf", token[1])
	resp, body := w.post(t, "ops-key", "store", form, "")
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "the value &lt;script&gt;") || strings.Contains(body, "<script>window") {
		t.Fatalf("reading the value: %d\n%s", resp.StatusCode, body)
	}
	data, _ := os.ReadFile(w.auditPath)
	if !strings.Contains(string(data), `"kind":"store","principal":"ops/ops","session":"console","tool":"read_store_value","outcome":"OK"`) ||
		!strings.Contains(string(data), `"name":"agent/agent: secret"`) {
		t.Errorf("the read is not in the audit log:\n%s", data)
	}
}

// TestOpenConsoleOnLoopbackRefusesRebinding: without authentication (a
// loopback serve) the console is the anonymous principal's, and the
// DNS-rebinding check of /mcp applies: a page of another site that
// resolved its name to 127.0.0.1 gets 403.
func TestOpenConsoleOnLoopbackRefusesRebinding(t *testing.T) {
	g, err := gateway.New(&gateway.Config{Servers: map[string]*gateway.ServerConfig{}, Settings: gateway.DefaultSettings()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	c, err := New(Options{Gateway: g, Open: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	srv := httptest.NewServer(http.StripPrefix("/ui", c)) // on 127.0.0.1
	t.Cleanup(srv.Close)
	get := func(host string) int {
		req, _ := http.NewRequest("GET", srv.URL+"/ui/servers", nil)
		req.Host = host
		resp, _ := do(t, noRedirects, req)
		return resp.StatusCode
	}
	if code := get(strings.TrimPrefix(srv.URL, "http://")); code != http.StatusOK {
		t.Errorf("the anonymous principal on loopback: %d", code)
	}
	if code := get("evil.example:80"); code != http.StatusForbidden {
		t.Errorf("a rebound name: %d", code)
	}
	// Not open: the anonymous principal is not an operator.
	closed, err := New(Options{Gateway: g})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(closed.Close)
	rec := httptest.NewRecorder()
	closed.ServeHTTP(rec, httptest.NewRequest("GET", "/servers", nil))
	if rec.Code != http.StatusForbidden {
		t.Errorf("a console neither open nor authenticated: %d", rec.Code)
	}
}

// TestRunLogBoundsWhatItKeeps: a chatty run keeps at most keptTextPerRun
// of console text, counting the rest, and long code is cut.
func TestRunLogBoundsWhatItKeeps(t *testing.T) {
	l := newRunLog(newHub())
	l.RunStarted(codemode.RunInfo{ID: "r1", Code: strings.Repeat("é", keptCodeBytes), Started: time.Now()})
	line := strings.Repeat("x", 10<<10)
	for range 100 {
		l.RunEvent("r1", runtime.Event{Log: &runtime.LogEntry{Level: "log", Message: line}})
	}
	r, ok := l.get("r1")
	if !ok {
		t.Fatal("the run is not kept")
	}
	text := 0
	for _, e := range r.Events {
		text += len(e.Text)
		if len(e.Text) > keptLineBytes+len("…") {
			t.Fatalf("a line of %d bytes is kept", len(e.Text))
		}
	}
	if text > keptTextPerRun || r.Dropped == 0 || len(r.Events)+r.Dropped != 100 {
		t.Errorf("kept %d bytes in %d events, dropped %d", text, len(r.Events), r.Dropped)
	}
	if !r.CodeCut || len(r.Code) > keptCodeBytes || !utf8.ValidString(r.Code) {
		t.Errorf("the code: %d bytes, cut %v, valid %v", len(r.Code), r.CodeCut, utf8.ValidString(r.Code))
	}
}

// TestConsoleBehindAPathPrefix: a proxy serves the console under a prefix
// of its own; the redirects, the sign-in and its cookie all stay under it.
func TestConsoleBehindAPathPrefix(t *testing.T) {
	w := newWorld(t)
	u, _ := url.Parse(w.url)
	backend := u.Scheme + "://" + u.Host
	proxy := httptest.NewServer(http.StripPrefix("/prefix", http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		req, _ := http.NewRequest(r.Method, backend+r.URL.RequestURI(), r.Body)
		req.Header = r.Header.Clone()
		resp, err := noRedirects.Do(req)
		if err != nil {
			http.Error(rw, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			rw.Header()[k] = v
		}
		rw.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(rw, resp.Body)
	})))
	t.Cleanup(proxy.Close)

	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar}
	resp, body := do(t, browser, mustRequest(t, "GET", proxy.URL+"/prefix/ui/runs", ""))
	if resp.Request.URL.Path != "/prefix/ui/login" || !strings.Contains(body, "<h1>Sign in</h1>") {
		t.Fatalf("without a cookie: at %s\n%s", resp.Request.URL, body)
	}
	req := mustRequest(t, "POST", proxy.URL+"/prefix/ui/login", url.Values{"credential": {"ops-key"}}.Encode())
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, body = do(t, browser, req)
	if resp.Request.URL.Path != "/prefix/ui/" || !strings.Contains(body, "<h1>Overview</h1>") {
		t.Fatalf("after signing in: at %s\n%s", resp.Request.URL, body)
	}
	pu, _ := url.Parse(proxy.URL + "/prefix/ui/runs")
	if cookies := jar.Cookies(pu); len(cookies) != 1 {
		t.Errorf("the cookie is not sent under the prefix: %v", cookies)
	}
	if resp, _ := do(t, browser, mustRequest(t, "GET", proxy.URL+"/prefix/ui/servers", "")); resp.StatusCode != http.StatusOK || resp.Request.URL.Path != "/prefix/ui/servers" {
		t.Errorf("a page under the prefix: %d at %s", resp.StatusCode, resp.Request.URL)
	}
}

func mustRequest(t *testing.T, method, url, body string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// withCookies adds the jar's cookies for the request's URL.
func withCookies(req *http.Request, jar http.CookieJar) *http.Request {
	for _, c := range jar.Cookies(req.URL) {
		req.AddCookie(c)
	}
	return req
}
