package gateway

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/gateway/internal/upstream"
	"github.com/sandboxrt/sandbox/internal/testwait"
)

// TestStartFailuresSayTheirCause: a server that cannot start says why, by
// class (its command was not found, it exited with status N, connection
// refused, it needs authentication), without its command line, path,
// address or what it printed; and once it has failed upstream.FailedAfter
// times in a row, that retrying will not help until the operator acts, in
// its status and in what a call to it answers.
func TestStartFailuresSayTheirCause(t *testing.T) {
	t.Parallel()
	refused := func() string { // a port nothing listens on
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		return "http://" + addr + "/mcp"
	}()
	needsLogin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
	}))
	defer needsLogin.Close()
	g, _ := startGateway(t, fmt.Sprintf(`{"mcpServers": {
		"missing":  {"command": "/nonexistent/dir/mcp-server", "args": ["--token", "hunter2"]},
		"unknown":  {"command": "sandbox-no-such-mcp-server-command"},
		"exits":    {"command": "sh", "args": ["-c", "echo the-secret-it-printed >&2; exit 3"]},
		"refused":  {"url": %q},
		"login":    {"url": %q}},
		"gateway": {"restartBackoff": "5ms", "maxRestartBackoff": "10ms"}}`, refused, needsLogin.URL+"/mcp"))
	want := map[string]string{
		"missing": "its command was not found",
		"unknown": "its command was not found",
		"exits":   "it exited with status 3 before it answered",
		"refused": "connection refused",
		"login":   "it needs authentication (HTTP 401)",
	}
	secrets := []string{"/nonexistent", "hunter2", "sandbox-no-such", "the-secret-it-printed", "127.0.0.1", "sh -c"}
	for name, cause := range want {
		var st ServerStatus
		testwait.Until(t, 20*time.Second, name+" to fail repeatedly", func() bool {
			for _, s := range g.Servers() {
				if s.Name == name {
					st = s
				}
			}
			return st.Failures >= upstream.FailedAfter
		})
		if !strings.HasPrefix(st.Reason, cause) || !strings.Contains(st.Reason, "retrying will not help until the operator acts") || !st.NeedsOperator() {
			t.Errorf("%s: reason %q (state %s, %d failures), want %q and that retrying will not help", name, st.Reason, st.State, st.Failures, cause)
		}
		_, err := g.Call(context.Background(), CallRequest{Tool: name + ":anything", Arguments: []byte(`{}`), Caller: auth.Caller{Principal: auth.Operator()}})
		e := wantCode(t, err, CodeUpstreamUnavailable)
		if !strings.Contains(e.Message, cause) || !strings.Contains(e.Message, "the operator must fix this server") || strings.Contains(e.Message, "call again") {
			t.Errorf("%s: a call says %q", name, e.Message)
		}
		for _, text := range []string{st.Reason, e.Message, string(e.Data)} {
			for _, s := range secrets {
				if strings.Contains(text, s) {
					t.Errorf("%s: %q shows %q", name, text, s)
				}
			}
		}
	}
}
