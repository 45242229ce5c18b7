package main

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestConsoleAcrossReplicas: two `sandbox serve` replicas on one
// redis-server, behind no sticky balancer. An operator signed in on one is
// signed in on the other, and a form of one posts to the other (the
// console's keys derive from the shared encryption key); a task started on
// one replica is on the other's runs page, and cancelled from there; a
// sign-out on one ends the cookie on both.
func TestConsoleAcrossReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("starts redis-server and two replicas")
	}
	srv := startSharedRedis(t)
	cfg := writeConfig(t, fmt.Sprintf(`{"mcpServers": {"demo": {"command": %q}},
  "gateway": {"redis": {"url": %q, "encryptionKey": "${SANDBOX_REDIS_KEY}", "keyPrefix": "console:"},
    "auth": {"apiKeys": [{"name": "agent-a", "key": "${SANDBOX_TEST_AGENT_KEY}"}, {"name": "ops", "key": %q, "operator": true}]}}}`,
		exampleServerBinary(t), srv.URL(), consoleOpsKey))
	var ui []string
	for range 2 {
		cmd := exec.Command(sandboxBinary(t), "serve", "-c", cfg, "--http", "127.0.0.1:0", "--log-level", "warn")
		ui = append(ui, strings.TrimSuffix(startLogged(t, cmd, listening), "/mcp")+"/ui/")
	}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	send := func(method, target, cookie string, form url.Values) (int, string) {
		t.Helper()
		var body io.Reader
		if form != nil {
			body = strings.NewReader(form.Encode())
		}
		req, _ := http.NewRequest(method, target, body)
		if form != nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		if cookie != "" {
			req.AddCookie(&http.Cookie{Name: "sandbox_console", Value: cookie})
		}
		resp, err := noFollow.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode == http.StatusSeeOther {
			for _, ck := range resp.Cookies() {
				if ck.Name == "sandbox_console" && ck.Value != "" {
					return resp.StatusCode, ck.Value
				}
			}
			return resp.StatusCode, resp.Header.Get("Location")
		}
		return resp.StatusCode, string(b)
	}
	code, cookie := send("POST", ui[0]+"login", "", url.Values{"credential": {consoleOpsKey}})
	if code != http.StatusSeeOther || cookie == "" {
		t.Fatalf("signing in on replica 1: %d %s", code, cookie)
	}

	// A task on replica 1, listed and shown on replica 2.
	id := startTask(t, strings.TrimSuffix(ui[0], "/ui/")+"/mcp", `console.log("waiting on replica 1"); await new Promise(r => setTimeout(r, 20000)); return 1`)
	var page string
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if code, page = send("GET", ui[1]+"runs", cookie, nil); code == http.StatusOK && strings.Contains(page, id) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if code != http.StatusOK || !strings.Contains(page, id) || !strings.Contains(page, ">working<") {
		t.Fatalf("replica 2's runs page (with replica 1's cookie): %d\n%s", code, page)
	}
	taskPage := ui[1] + "task?" + url.Values{"owner": {"agent-a/agent-a"}, "id": {id}}.Encode()
	deadline = time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) { // console lines are stored at the run's next look, within a second
		if _, page = send("GET", taskPage, cookie, nil); strings.Contains(page, "waiting on replica 1") {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	csrf := regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`).FindStringSubmatch(page)
	if !strings.Contains(page, "waiting on replica 1") || csrf == nil {
		t.Fatalf("replica 2's page of replica 1's task:\n%s", page)
	}

	// Replica 2's form, posted to replica 1: the cancel.
	code, _ = send("POST", ui[0]+"task", cookie, url.Values{"csrf": {csrf[1]}, "owner": {"agent-a/agent-a"}, "id": {id}, "action": {"cancel"}})
	if code != http.StatusSeeOther {
		t.Fatalf("replica 2's CSRF token on replica 1: %d", code)
	}
	res := pollTask(t, []string{strings.TrimSuffix(ui[1], "/ui/") + "/mcp"}, id, 10*time.Second, "cancelled", "completed", "failed")
	if res["status"] != "cancelled" || !strings.Contains(fmt.Sprint(res["statusMessage"]), "cancelled by the operator ops") {
		t.Fatalf("the task after the operator's cancel: %v", res)
	}

	// Signing out on replica 2 ends the cookie on replica 1 too.
	if code, _ := send("POST", ui[1]+"logout", cookie, url.Values{}); code != http.StatusSeeOther {
		t.Fatalf("signing out: %d", code)
	}
	if code, where := send("GET", ui[0]+"servers", cookie, nil); code != http.StatusSeeOther || where != "login?expired=1" {
		t.Fatalf("replica 1 after the sign-out on replica 2: %d %s", code, where)
	}
}
