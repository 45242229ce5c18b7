package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// The operator console in a real browser (issue 31): Debian's chromium,
// headless, driven over the DevTools protocol. One browser serves every
// check, to keep the test quick.

const (
	consoleOpsKey   = "console-ops-0123456789abcdef"
	consoleAgentKey = "console-agent-0123456789abcdef"
	// hostileMarkup is what an upstream or an agent may put in front of the
	// operator; rendered anywhere as markup, it would set window.pwned.
	hostileMarkup = `<img src=x onerror="window.pwned=1"><script>window.pwned=2</script>`
)

// browserPath is the chromium to drive, or "" (the test then skips,
// saying why, unless SANDBOX_REQUIRE_BROWSER=1 requires it).
func browserPath(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("SANDBOX_REQUIRE_BROWSER") == "1" {
		t.Fatal("SANDBOX_REQUIRE_BROWSER=1 and no chromium on PATH: apt-get install -y chromium")
	}
	t.Skip("no chromium on PATH (apt-get install -y chromium; .ci/run installs it and requires this test)")
	return ""
}

// startBrowser starts one headless chromium for the test.
func startBrowser(t *testing.T, path string) context.Context {
	t.Helper()
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("no-default-browser-check", true),
		chromedp.UserDataDir(t.TempDir()))
	t.Cleanup(cancelAlloc)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx); err != nil { // starts the browser, with no timeout (it would end the browser)
		t.Fatalf("starting %s: %v", path, err)
	}
	return ctx
}

// tab drives one browser tab for a test, failing it on any error.
type tab struct {
	t   *testing.T
	ctx context.Context
}

func (b tab) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, steps...); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

// text is what the page shows of sel: its textContent (a closed
// <details> included).
func (b tab) text(sel string) string {
	b.t.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.TextContent(chromedp.CSS(sel)))
	if err != nil {
		b.t.Fatalf("the text of %s: %v", sel, err)
	}
	return s
}

// pwned is window.pwned: "undefined" unless markup ran.
func (b tab) pwned() string {
	b.t.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](`String(window.pwned)`))
	if err != nil {
		b.t.Fatal(err)
	}
	return s
}

// waitFor waits until a JavaScript expression is true in the tab, across
// the page loads a form's submission makes (an evaluation during one
// fails; it is tried again).
func (b tab) waitFor(expr string) {
	b.t.Helper()
	var last error
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		ok, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](expr))
		if err == nil && ok {
			return
		}
		last = err
	}
	b.t.Fatalf("%s did not become true within 20 s (last error: %v)", expr, last)
}

func visible(sel string) chromedp.Action[chromedp.Void] {
	return chromedp.WaitVisible(chromedp.CSS(sel))
}

// hostileUpstream is an MCP server over streamable HTTP whose words carry
// markup: its instructions, a tool's description, and its answers.
func hostileUpstream(t *testing.T) string {
	s := server.NewMCPServer("files", "1.0.0", server.WithInstructions("Files. "+hostileMarkup))
	s.AddTool(mcp.NewTool("read_file", mcp.WithDescription("Read a file. "+hostileMarkup), mcp.WithString("path", mcp.Required())),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("read " + req.GetString("path", "")), nil
		})
	srv := httptest.NewServer(server.NewStreamableHTTPServer(s))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

// TestConsoleInABrowser: as an operator, every page loads and renders the
// upstream's markup as text; a snippet from an MCP client without
// elicitation waits for an approval, which the operator gives on the
// Approvals page, and the snippet finishes; the run's page, open all the
// while, shows its console lines as they happen; a POST without the CSRF
// token fails; an agent's key gets 403.
func TestConsoleInABrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("starts sandbox serve and a browser")
	}
	chromium := browserPath(t)
	upstream := hostileUpstream(t)
	mcpURL := serveHTTP(t, fmt.Sprintf(`{"mcpServers": {"files": {"url": %q}},
 "gateway": {"auth": {"apiKeys": [{"name": "ops", "key": %q, "operator": true}, {"name": "agent", "key": %q}]},
             "policy": {"rules": [{"tools": "files:read_file", "action": "approve"}], "approvalTimeout": "60s", "operatorApprovals": true}}}`,
		upstream, consoleOpsKey, consoleAgentKey))
	ui := strings.TrimSuffix(mcpURL, "/mcp") + "/ui/"
	browser := startBrowser(t, chromium)
	ctx, cancel := context.WithTimeout(browser, 90*time.Second)
	defer cancel()
	page := tab{t, ctx}
	signIn := func(key string) {
		page.do("signing in", chromedp.Navigate(ui), // no cookie yet: to the sign-in page
			visible(`#credential`), chromedp.SendKeys(chromedp.CSS(`#credential`), key), chromedp.Submit(chromedp.CSS(`#credential`)))
		// The sign-in page has an h1 too: wait for the page after it.
		page.waitFor(`document.readyState === "complete" && document.title !== "" && !document.title.startsWith("Sign in")`)
	}

	// An agent's key is not an operator's.
	signIn(consoleAgentKey)
	if h1 := page.text(`h1`); h1 != "Forbidden" {
		t.Fatalf("an agent's key: the page says %q, want Forbidden", h1)
	}

	signIn(consoleOpsKey)
	for _, p := range []struct{ path, h1 string }{{"", "Overview"}, {"servers", "Servers"}, {"runs", "Runs"}, {"approvals", "Approvals"},
		{"search?intent=read+a+file", "Search playground"}, {"audit", "Audit log"}, {"scripts", "Saved scripts"}, {"store", "Stored values"}} {
		page.do("loading "+p.path, chromedp.Navigate(ui+p.path), visible(`main`))
		if h1, pwned := page.text(`h1`), page.pwned(); h1 != p.h1 || pwned != "undefined" {
			t.Errorf("%s: h1 %q, window.pwned %s", p.path, h1, pwned)
		}
	}
	page.do("opening the servers page", chromedp.Navigate(ui+"servers"), visible(`#server-files`))
	if text, pwned := page.text(`#server-files`), page.pwned(); !strings.Contains(text, "Read a file. "+hostileMarkup) || !strings.Contains(text, "Files. "+hostileMarkup) || pwned != "undefined" {
		t.Errorf("the upstream's markup is not shown as text (window.pwned %s):\n%s", pwned, text)
	}

	// A POST without the CSRF token, from the console's own page, fails.
	status, err := chromedp.Run(ctx, chromedp.Evaluate[int](`fetch("approvals", {method: "POST", headers: {"Content-Type": "application/x-www-form-urlencoded"}, body: "id=x&decision=approve"}).then(r => r.status)`,
		chromedp.EvalAwaitPromise))
	if err != nil || status != http.StatusForbidden {
		t.Errorf("a POST without the CSRF token: %d, %v", status, err)
	}

	// The runs page is open before the run starts: it appears there live.
	page.do("opening the runs page", chromedp.Navigate(ui+"runs"), visible(`body[data-live="on"]`))
	agent := keyClient(t, mcpURL, consoleAgentKey) // mcp-go's client without an elicitation handler: it cannot be asked
	done := make(chan string, 1)
	go func() {
		callCtx, cancel := context.WithTimeout(context.Background(), 80*time.Second)
		defer cancel()
		res, err := agent.CallTool(callCtx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "execute_code", Arguments: map[string]any{"code": fmt.Sprintf(
			`console.log("before the approval %s"); const r = await files.readFile({path: "/srv/%s"}); console.log("after the approval: " + r); return r`,
			strings.ReplaceAll(hostileMarkup, `"`, `\"`), strings.ReplaceAll(hostileMarkup, `"`, `\"`))}}})
		if err != nil {
			done <- "error: " + err.Error()
			return
		}
		done <- toolText(res)
	}()
	page.do("following the run from the list", visible(`table.runs a`), chromedp.Click(chromedp.CSS(`table.runs a`)),
		visible(`.console-line`), visible(`body[data-live="on"]`))
	if text := page.text(`#events`); !strings.Contains(text, "before the approval "+hostileMarkup) || strings.Contains(text, "after the approval") {
		t.Fatalf("the run's page before the approval:\n%s", text)
	}

	// The approval, in a second tab of the same browser.
	second, closeSecond := chromedp.NewContext(browser)
	defer closeSecond()
	second, cancelSecond := context.WithTimeout(second, 60*time.Second)
	defer cancelSecond()
	approvals := tab{t, second}
	approvals.do("opening the approvals page", chromedp.Navigate(ui+"approvals"), visible(`pre.question`))
	if q, pwned := approvals.text(`pre.question`), approvals.pwned(); !strings.Contains(q, "An agent wants to call files:read_file.") ||
		!strings.Contains(q, `path: "/srv/<img src=x onerror=\"window.pwned=1\">`) || pwned != "undefined" {
		t.Errorf("the question (window.pwned %s):\n%s", pwned, q)
	}
	approvals.do("approving", chromedp.Click(chromedp.CSS(`button.approve`)), visible(`#no-approvals`))
	select {
	case got := <-done:
		var res struct {
			OK    bool   `json:"ok"`
			Value string `json:"value"`
		}
		if err := json.Unmarshal([]byte(got), &res); err != nil || !res.OK || res.Value != "read /srv/"+hostileMarkup {
			t.Fatalf("the snippet, approved: %s", got)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the approved snippet did not finish")
	}

	// /metrics counts the run among code mode's series.
	req, _ := http.NewRequest("GET", strings.TrimSuffix(mcpURL, "/mcp")+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+consoleOpsKey)
	if resp, err := http.DefaultClient.Do(req); err != nil {
		t.Error(err)
	} else {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		for _, want := range []string{`sandbox_codemode_runs_total{outcome="OK"} 1`, "sandbox_codemode_busy_total 0", "sandbox_codemode_queue_length 0",
			"sandbox_codemode_run_duration_seconds_count 1"} {
			if !strings.Contains(string(body), want) {
				t.Errorf("/metrics lacks %q", want)
			}
		}
	}

	// The run's page, never reloaded, shows the line written after the
	// approval and the outcome.
	page.waitFor(`document.getElementById("outcome") !== null && document.getElementById("outcome").textContent === "OK"`)
	if text, pwned := page.text(`#events`), page.pwned(); !strings.Contains(text, "after the approval: read /srv/"+hostileMarkup) || pwned != "undefined" {
		t.Errorf("the run's page after the approval (window.pwned %s):\n%s", pwned, text)
	}

	// A task: on the runs page, its page shows console lines as the task
	// writes them (the replica stores them every second), and the
	// operator cancels it there.
	args, _ := json.Marshal(map[string]any{"name": "execute_code", "arguments": map[string]any{"code": fmt.Sprintf(
		`for (let i = 0; i < 600; i++) { console.log("task tick " + i + " %s"); await new Promise(r => setTimeout(r, 100)) } return 1`,
		strings.ReplaceAll(hostileMarkup, `"`, `\"`))}})
	started, rpcErr := taskRPC(t, mcpURL, consoleAgentKey, "tools/call", string(args))
	taskID, _ := started["taskId"].(string)
	if rpcErr != nil || taskID == "" {
		t.Fatalf("execute_code as a task: %v %v", started, rpcErr)
	}
	page.do("following the task from the runs page", chromedp.Navigate(ui+"runs"), visible(`table.tasks a`), chromedp.Click(chromedp.CSS(`table.tasks a`)),
		visible(`#status`), visible(`body[data-live="on"]`))
	page.waitFor(`document.getElementById("console") !== null && document.getElementById("console").textContent.includes("task tick 40 ")`) // written seconds after the page loaded
	if text, pwned := page.text(`#console`), page.pwned(); !strings.Contains(text, hostileMarkup) || pwned != "undefined" {
		t.Errorf("the task's console lines (window.pwned %s):\n%s", pwned, text)
	}
	page.do("cancelling the task", chromedp.Click(chromedp.CSS(`#cancel-task`)), visible(`#status`))
	page.waitFor(`document.getElementById("status").textContent === "cancelled"`)
	if msg := page.text(`#message`); !strings.Contains(msg, "cancelled by the operator ops") {
		t.Errorf("the cancelled task's message: %q", msg)
	}
}
