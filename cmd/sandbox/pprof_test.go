package main

import (
	"net/http"
	"strings"
	"testing"
)

// TestServePprofIsOffUnlessAsked: /debug/pprof/ is not served by default;
// with "gateway.pprof" (or --pprof) it is, to the principals that may read
// /metrics and nobody else.
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
	config := strings.Replace(authConfig(t), `"gateway": {`, `"gateway": {"pprof": true, `, 1)
	on := strings.TrimSuffix(serveHTTP(t, config, "--code-mode=false"), "/mcp")
	for key, want := range map[string]int{"": http.StatusUnauthorized, agentKey: http.StatusForbidden, adminKey: http.StatusOK} {
		for _, path := range []string{"/debug/pprof/", "/debug/pprof/cmdline", "/debug/pprof/heap"} {
			if got := status(on+path, key); got != want {
				t.Errorf("%s with key %.5q: %d, want %d", path, key, got, want)
			}
		}
	}
}
