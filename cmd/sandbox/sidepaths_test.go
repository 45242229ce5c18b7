package main

// The side paths of `sandbox serve` and `sandbox login` that a hostile
// review found saying too much or trusting too much (issue 27, item 7):
// /readyz told anyone the Redis address, a login took any authorization
// response, Redis held store values, saved scripts and call streams in
// clear. Each test drives the real binary.

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sandboxrt/sandbox/gateway"
	"github.com/sandboxrt/sandbox/internal/oauthtest"
	"github.com/sandboxrt/sandbox/internal/testwait"
)

// serveLogged starts `sandbox serve --http` at log level info and keeps
// what it logs: it returns the MCP URL and a reader of the log so far.
func serveLogged(t *testing.T, config string) (string, func() string) {
	t.Helper()
	cmd := exec.Command(sandboxBinary(t), "serve", "-c", writeConfig(t, config), "--http", "127.0.0.1:0", "--log-level", "info", "--log-format", "text")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopProcess(cmd, 10*time.Second) })
	var mu sync.Mutex
	var log strings.Builder
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			mu.Lock()
			log.WriteString(sc.Text() + "\n")
			mu.Unlock()
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
		close(found)
	}()
	read := func() string { mu.Lock(); defer mu.Unlock(); return log.String() }
	select {
	case url, ok := <-found:
		if !ok {
			t.Fatalf("serve exited before listening:\n%s", read())
		}
		return url, read
	case <-time.After(60 * time.Second):
		t.Fatalf("serve did not listen within 60 s:\n%s", read())
	}
	return "", nil
}

func getURL(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// TestReadinessTellsAStrangerOnlyAClass: with Redis down, /readyz (which
// needs no credential, for the load balancer) says not ready and why in a
// word, never Redis's address or the error's text; serve's log has the
// detail, once, and says when it is ready again. /healthz says "ok".
func TestReadinessTellsAStrangerOnlyAClass(t *testing.T) {
	if testing.Short() {
		t.Skip("starts redis-server and sandbox serve")
	}
	redisSrv := startSharedRedis(t)
	url, log := serveLogged(t, fmt.Sprintf(`{"mcpServers": {"finance_payroll": {"command": %q}},
  "gateway": {"redis": {"url": %q, "encryptionKey": "${SANDBOX_REDIS_KEY}"},
    "auth": {"apiKeys": [{"name": "agent-a", "key": "${SANDBOX_TEST_AGENT_KEY}"}]}}}`, exampleServerBinary(t), redisSrv.URL()))
	base := strings.TrimSuffix(url, "/mcp")
	testwait.Until(t, 30*time.Second, "/readyz to say ready", func() bool {
		code, body := getURL(t, base+"/readyz")
		return code == http.StatusOK && body == "ready\n"
	})

	redisSrv.Stop()
	port := strconv.Itoa(redisSrv.Port)
	for range 3 { // a balancer probes again and again
		code, body := getURL(t, base+"/readyz")
		if code != http.StatusServiceUnavailable || body != "not ready: "+notReadySharedState+"\n" {
			t.Fatalf("/readyz with Redis down: %d %q", code, body)
		}
	}
	if code, body := getURL(t, base+"/healthz"); code != http.StatusOK || body != "ok\n" {
		t.Fatalf("/healthz: %d %q", code, body)
	}
	said := log()
	if !strings.Contains(said, "not ready: "+notReadySharedState) || !strings.Contains(said, "127.0.0.1:"+port) {
		t.Fatalf("serve's log has no detail of the failure:\n%s", said)
	}
	if n := strings.Count(said, "not ready: "); n != 1 {
		t.Errorf("the same failure was logged %d times for three probes:\n%s", n, said)
	}

	redisSrv.Restart()
	testwait.Until(t, 10*time.Second, "/readyz to recover", func() bool { code, _ := getURL(t, base+"/readyz"); return code == http.StatusOK })
	testwait.Until(t, 5*time.Second, "the log to say ready again", func() bool { return strings.Contains(log(), "ready again") })
}

// TestReadinessNamesNoServer: a server still connecting is counted in the
// class, never named; the log's detail names it.
func TestReadinessNamesNoServer(t *testing.T) {
	servers := []gateway.ServerStatus{{Name: "finance_payroll", State: gateway.StateStarting}, {Name: "demo", State: gateway.StateReady}}
	warm := func() bool { return true }
	class, detail := readiness(t.Context(), servers, warm, nil)
	if class != notReadyServers || strings.Contains(class, "finance") || !strings.Contains(detail, "finance_payroll") {
		t.Fatalf("a server connecting: %q (detail %q)", class, detail)
	}
	if class, _ := readiness(t.Context(), servers[1:], func() bool { return false }, nil); class != notReadyWorkers {
		t.Fatalf("workers starting: %q", class)
	}
	if class, detail := readiness(t.Context(), servers[1:], warm, nil); class != "" || detail != "" {
		t.Fatalf("ready: %q %q", class, detail)
	}
}

// TestLoginChecksTheIssuer: `sandbox login` compares the authorization
// response's iss with the issuer it sent the person to (RFC 9207), and
// requires it of an issuer that promises it: a response naming another
// issuer (a mix-up) or none is refused before its code is exchanged, and
// nothing is kept. An honest issuer, and one that knows nothing of RFC
// 9207, log in. (oidc-provider, the real server of TestLoginThroughTheCLI,
// promises iss and sends it: that login passes the same check.)
func TestLoginChecksTheIssuer(t *testing.T) {
	if testing.Short() {
		t.Skip("runs sandbox login")
	}
	for _, c := range []struct {
		name   string
		as     *oauthtest.FakeAuth
		refuse string // "" when the login succeeds
	}{
		{"honest", &oauthtest.FakeAuth{AdvertiseIss: true}, ""},
		{"knows nothing of iss", &oauthtest.FakeAuth{Iss: func(string) string { return "" }}, ""},
		{"mix-up", &oauthtest.FakeAuth{Iss: func(string) string { return "https://login.trusted.example" }}, `issued by "https://login.trusted.example"`},
		{"mix-up, advertised", &oauthtest.FakeAuth{AdvertiseIss: true, Iss: func(string) string { return "https://login.trusted.example" }}, `issued by "https://login.trusted.example"`},
		{"iss missing", &oauthtest.FakeAuth{AdvertiseIss: true, Iss: func(string) string { return "" }}, "has no iss"},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.as.Start(t)
			tokens := filepath.Join(t.TempDir(), "tokens.json")
			cfg := writeConfig(t, fmt.Sprintf(`{"mcpServers": {"fake": {"url": %q}}, "gateway": {"oauthTokens": %q}}`, c.as.MCPURL, tokens))
			r := login(t, "fake", "-c", cfg)
			kept, _ := os.ReadFile(tokens)
			if c.refuse == "" {
				if r.code != 0 || c.as.Exchanged() != 1 || !strings.Contains(string(kept), "fake-access-token") {
					t.Fatalf("login: %d, %d codes exchanged, kept %q\n%s", r.code, c.as.Exchanged(), kept, r.stderr)
				}
				return
			}
			if r.code != 1 || !strings.Contains(r.stderr, c.refuse) || !strings.Contains(r.stderr, "mix-up attack") {
				t.Fatalf("login: %d\n%s", r.code, r.stderr)
			}
			if n := c.as.Exchanged(); n != 0 {
				t.Fatalf("the code was exchanged %d times", n)
			}
			if strings.Contains(string(kept), "fake-access-token") {
				t.Fatalf("a refused login kept a token: %s", kept)
			}
		})
	}
}
