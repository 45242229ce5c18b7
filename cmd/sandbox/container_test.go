package main

import (
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sandboxrt/sandbox/config"
	"github.com/sandboxrt/sandbox/internal/testpeers"
	"github.com/sandboxrt/sandbox/internal/testwait"
)

// dockerfile is what the tests below need of the Dockerfile: the config it
// copies in, serve's command line and the health check's.
type dockerfile struct {
	configSrc, configDst string   // COPY <configSrc> <configDst>
	cmd, healthcheck     []string // exec-form CMD and HEALTHCHECK CMD, ENTRYPOINT dropped
}

var (
	copyConfigLine  = regexp.MustCompile(`(?m)^COPY (\S+\.json) (\S+)$`)
	cmdLine         = regexp.MustCompile(`(?m)^CMD (\[.*\])$`)
	healthcheckLine = regexp.MustCompile(`(?m)^\s+CMD (\[.*\])$`) // the continuation line of HEALTHCHECK
)

func readDockerfile(t *testing.T) dockerfile {
	t.Helper()
	text, err := os.ReadFile(filepath.Join(testpeers.RepoRoot(t), "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	var d dockerfile
	m := copyConfigLine.FindStringSubmatch(string(text))
	if m == nil {
		t.Fatal("the Dockerfile copies no sample config (COPY deploy/... /etc/sandbox/mcp.json)")
	}
	d.configSrc, d.configDst = m[1], m[2]
	for re, into := range map[*regexp.Regexp]*[]string{cmdLine: &d.cmd, healthcheckLine: &d.healthcheck} {
		m := re.FindStringSubmatch(string(text))
		if m == nil {
			t.Fatalf("the Dockerfile has no line matching %s", re)
		}
		if err := json.Unmarshal([]byte(m[1]), into); err != nil {
			t.Fatalf("%s: %v", m[1], err)
		}
	}
	if len(d.healthcheck) == 0 || !strings.HasSuffix(d.healthcheck[0], "/sandbox") {
		t.Fatalf("HEALTHCHECK runs %v, not the sandbox binary", d.healthcheck)
	}
	d.healthcheck = d.healthcheck[1:]
	return d
}

// freePort is a TCP port nothing listens on now (the container's 8808 may
// be taken on the test machine).
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

// TestDockerfileSampleConfigParses: the config the image serves by default
// loads, holds one API key read from SANDBOX_AGENT_KEY, and without that
// variable is refused saying which to set.
func TestDockerfileSampleConfigParses(t *testing.T) {
	d := readDockerfile(t)
	path := filepath.Join(testpeers.RepoRoot(t), d.configSrc)
	t.Setenv("SANDBOX_AGENT_KEY", "k-0123456789abcdef")
	file, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if keys := file.Auth.APIKeys; len(keys) != 1 || keys[0].Key != "k-0123456789abcdef" {
		t.Fatalf("api keys %+v", keys)
	}
	os.Unsetenv("SANDBOX_AGENT_KEY")
	if _, err := config.Load(path); err == nil || !strings.Contains(err.Error(), "SANDBOX_AGENT_KEY is not set") {
		t.Fatalf("without the key: %v", err)
	}
}

// TestDockerfileCommandServes runs the image's command line as the
// Dockerfile writes it (the sample config in place of its copy in the
// image, a free port in place of 8808, on every interface as in the
// container): serve starts, the HEALTHCHECK command says healthy, a request
// without the key gets 401 and one with it is served; once serve is gone the
// health check fails, saying so. No container engine needed.
func TestDockerfileCommandServes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts sandbox serve")
	}
	d := readDockerfile(t)
	port := freePort(t)
	swap := func(args []string) []string {
		out := make([]string, len(args))
		for i, a := range args {
			a = strings.ReplaceAll(a, d.configDst, filepath.Join(testpeers.RepoRoot(t), d.configSrc))
			out[i] = strings.ReplaceAll(a, ":8808", ":"+port)
		}
		return out
	}
	const key = "docker-quickstart-key-0123456789"
	serve := exec.Command(sandboxBinary(t), swap(d.cmd)...)
	serve.Env = append(os.Environ(), "SANDBOX_AGENT_KEY="+key)
	startLogged(t, serve, listening)

	health := exec.Command(sandboxBinary(t), swap(d.healthcheck)...)
	if out, err := health.CombinedOutput(); err != nil || !strings.Contains(string(out), "/healthz: ok") {
		t.Fatalf("healthcheck %v: %v\n%s", health.Args[1:], err, out)
	}

	url := "http://127.0.0.1:" + port + "/mcp"
	post := func(authorization string) *http.Response {
		req, _ := http.NewRequest("POST", url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if authorization != "" {
			req.Header.Set("Authorization", authorization)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	// API keys alone: a bare Bearer challenge. resource_metadata points
	// clients at an authorization server, and with API keys there is none
	// (docs/serve.md).
	if r := post(""); r.StatusCode != http.StatusUnauthorized || r.Header.Get("WWW-Authenticate") != "Bearer" {
		t.Fatalf("without the key: %d %q", r.StatusCode, r.Header.Get("WWW-Authenticate"))
	}
	if r := post("Bearer " + key); r.StatusCode != http.StatusOK {
		t.Fatalf("with the key: %d", r.StatusCode)
	}

	stopProcess(serve, 10*time.Second)
	health = exec.Command(sandboxBinary(t), swap(d.healthcheck)...)
	out, err := health.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), "no answer from http://127.0.0.1:"+port+"/healthz") {
		t.Fatalf("healthcheck with serve gone: %v\n%s", err, out)
	}
}

// TestHealthcheckReadyAndBadAddress: --ready asks /readyz; an address
// healthcheck cannot ask is a usage error (2) that says what to give.
func TestHealthcheckReadyAndBadAddress(t *testing.T) {
	if testing.Short() {
		t.Skip("starts sandbox serve")
	}
	url := serveHTTP(t, `{"mcpServers": {}}`)
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/mcp")
	// Ready once the code-mode workers are warm; until then --ready exits 1
	// saying why (/readyz's reason class), never 0.
	var r cliResult
	testwait.Until(t, 30*time.Second, "healthcheck --ready to pass", func() bool {
		r = runCLI(t, "", "healthcheck", "--http", addr, "--ready")
		if r.code == 1 && strings.Contains(r.stderr, "not ready") {
			return false
		}
		return true
	})
	if r.code != 0 || !strings.Contains(r.stdout, "/readyz: ready") {
		t.Fatalf("--ready: %+v", r)
	}
	for _, bad := range []string{"8808", "127.0.0.1:0"} {
		if r := runCLI(t, "", "healthcheck", "--http", bad); r.code != 2 || !strings.Contains(r.stderr, "--http "+bad+": give ") {
			t.Errorf("--http %s: %+v", bad, r)
		}
	}
}

func TestHealthURL(t *testing.T) {
	for addr, want := range map[string]string{
		"0.0.0.0:8808":   "http://127.0.0.1:8808/healthz",
		":8808":          "http://127.0.0.1:8808/healthz",
		"[::]:8808":      "http://[::1]:8808/healthz",
		"10.0.0.7:9000":  "http://10.0.0.7:9000/healthz",
		"localhost:8808": "http://localhost:8808/healthz",
	} {
		if got, err := healthURL(addr, false); err != nil || got != want {
			t.Errorf("healthURL(%q) = %q, %v; want %q", addr, got, err, want)
		}
	}
}
