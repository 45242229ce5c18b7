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

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/redis/go-redis/v9"

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
	if n := strings.Count(said, "not ready: "+notReadySharedState); n != 1 {
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

// TestRedisHoldsNoUsersDataInClear: through serve, what an agent keeps in
// the shared state (a store value, a saved script, the words of a search
// that taught a tool) is in Redis, and on its disk, only sealed (or, for
// the words, as digests); the agent reads it back as it was. A value an
// earlier version left in clear is read, and sealed by serve at start.
func TestRedisHoldsNoUsersDataInClear(t *testing.T) {
	if testing.Short() {
		t.Skip("starts redis-server and sandbox serve")
	}
	redisSrv := startSharedRedis(t)
	raw := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", redisSrv.Port)})
	defer raw.Close()
	const legacy, legacyKey = `{"old":"legacy-secret-4410"}`, "notes"
	base := "sealed:store:{agent-a%2Fagent-a}:" // as an earlier version wrote it
	raw.HSet(t.Context(), base+"values", "\x00"+legacyKey, legacy)
	raw.HSet(t.Context(), base+"counts", "bytes", len(legacyKey)+len(legacy), "keys", 1)
	raw.ZAdd(t.Context(), base+"index:", redis.Z{Member: legacyKey})

	url, log := serveLogged(t, fmt.Sprintf(`{"mcpServers": {"demo": {"command": %q}},
  "gateway": {"redis": {"url": %q, "encryptionKey": "${SANDBOX_REDIS_KEY}", "keyPrefix": "sealed:"},
    "auth": {"apiKeys": [{"name": "agent-a", "key": "${SANDBOX_TEST_AGENT_KEY}"}]}}}`, exampleServerBinary(t), redisSrv.URL()))
	testwait.Until(t, 10*time.Second, "serve to seal what was in clear", func() bool { return strings.Contains(log(), "sealed 1 store values") })
	c := keyClient(t, url, agentKey)
	if out := execute(t, c, `return await sandbox.store.get("notes", {scope: "principal"})`); !strings.Contains(out, "legacy-secret-4410") {
		t.Fatalf("the value written in clear, read after sealing: %s", out)
	}
	const value, body = "alice-diary-entry-7731", "alice-script-body-5519"
	if out := execute(t, c, `await sandbox.store.set("diary", {entry: "`+value+`"}, {scope: "principal"}); return "kept"`); !strings.Contains(out, `"kept"`) {
		t.Fatalf("set: %s", out)
	}
	res, err := c.CallTool(t.Context(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "save_script", Arguments: map[string]any{
		"name": "quarterly", "description": "The quarter's figures", "code": `return "` + body + `"`}}})
	if err != nil || res.IsError {
		t.Fatalf("save_script: %v %s", err, toolText(res))
	}
	if _, err := c.CallTool(t.Context(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "search_tools", Arguments: map[string]any{"intent": "who is swamped in the zymurgy ledger"}}}); err != nil {
		t.Fatal(err)
	}
	if out := execute(t, c, `return typeof (await demo.teamWorkload({}))`); !strings.Contains(out, `"value":"string"`) {
		t.Fatalf("the call after the search: %s", out)
	}
	testwait.Until(t, 10*time.Second, "the search's words to be learnt", func() bool {
		for k := range redisSrv.Contents(t) {
			if strings.Contains(k, ":usage:{usage}:w:") {
				return true
			}
		}
		return false
	})

	// The append-only file still has the value written in clear until Redis
	// rewrites it, as docs/deploy.md says to have it do.
	if err := raw.BgRewriteAOF(t.Context()).Err(); err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, 10*time.Second, "the append-only file to be rewritten", func() bool {
		info := raw.Info(t.Context(), "persistence").Val()
		return strings.Contains(info, "aof_rewrite_in_progress:0") && strings.Contains(info, "aof_rewrite_scheduled:0") && strings.Contains(info, "aof_last_bgrewrite_status:ok")
	})
	held, disk := redisSrv.Contents(t), redisSrv.Disk(t)
	for _, secret := range []string{value, body, "zymur", "legacy-secret"} {
		for k, v := range held {
			if strings.Contains(k, secret) || strings.Contains(v, secret) {
				t.Errorf("%s holds %q in clear: %s", k, secret, v)
			}
		}
		if strings.Contains(string(disk), secret) {
			t.Errorf("Redis wrote %q to disk in clear", secret)
		}
	}
	if out := execute(t, c, `const d = await sandbox.store.get("diary", {scope: "principal"}); return [d.entry, await scripts.quarterly({})]`); !strings.Contains(out, value) || !strings.Contains(out, body) {
		t.Fatalf("read back: %s", out)
	}
}
