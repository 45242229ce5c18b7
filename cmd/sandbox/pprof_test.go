package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestServePprofIsOffUnlessAsked: /debug/pprof/ is not served by default;
// with "gateway.pprof" (or --pprof) it is, to operators ("operator": true)
// and nobody else.
func TestServePprofIsOffUnlessAsked(t *testing.T) {
	if testing.Short() {
		t.Skip("starts sandbox serve twice")
	}
	t.Setenv("SANDBOX_TEST_AGENT_KEY", agentKey)
	status := func(url, key string) int {
		t.Helper()
		req, _ := http.NewRequest("GET", url, nil)
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	off := strings.TrimSuffix(serveHTTP(t, authConfig(t), "--code-mode=false"), "/mcp")
	if got := status(off+"/debug/pprof/cmdline", adminKey); got != http.StatusNotFound {
		t.Fatalf("pprof without --pprof: %d, want 404", got)
	}
	// On: operators only (an unrestricted key that is no operator reads
	// /metrics, not the profiler).
	const opsKey = "ops-secret-0123456789abcdef0000"
	config := strings.Replace(authConfig(t), `"gateway": {`, `"gateway": {"pprof": true, `, 1)
	config = strings.Replace(config, `"apiKeys": [`, `"apiKeys": [{"name": "ops", "key": "`+opsKey+`", "operator": true}, `, 1)
	on := strings.TrimSuffix(serveHTTP(t, config, "--code-mode=false"), "/mcp")
	for key, want := range map[string]int{"": http.StatusUnauthorized, agentKey: http.StatusForbidden, adminKey: http.StatusForbidden, opsKey: http.StatusOK} {
		for _, path := range []string{"/debug/pprof/", "/debug/pprof/cmdline", "/debug/pprof/heap"} {
			if got := status(on+path, key); got != want {
				t.Errorf("%s with key %.5q: %d, want %d", path, key, got, want)
			}
		}
	}
}

// TestServeSidePathsRefuseRebinding: on loopback without "gateway.auth",
// /metrics and /debug/pprof/ answer only a loopback Host, as /mcp and the
// console do: a page whose name a browser was tricked into resolving to
// 127.0.0.1 reads neither the metrics nor a goroutine dump, nor starts a
// profile.
func TestServeSidePathsRefuseRebinding(t *testing.T) {
	if testing.Short() {
		t.Skip("starts sandbox serve")
	}
	config := fmt.Sprintf(`{"mcpServers": {"demo": {"command": %q}}, "gateway": {"pprof": true}}`, exampleServerBinary(t))
	base := strings.TrimSuffix(serveHTTP(t, config, "--code-mode=false"), "/mcp")
	get := func(path, host string) int {
		t.Helper()
		req, _ := http.NewRequest("GET", base+path, nil)
		if host != "" {
			req.Host = host
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, path := range []string{"/metrics", "/debug/pprof/", "/debug/pprof/cmdline"} {
		if got := get(path, ""); got != http.StatusOK {
			t.Errorf("%s from loopback: %d, want 200", path, got)
		}
		if got := get(path, "evil.example"); got != http.StatusForbidden {
			t.Errorf("%s with Host evil.example: %d, want 403 (DNS-rebinding protection)", path, got)
		}
	}
}
