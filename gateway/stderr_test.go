package gateway

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/sandboxrt/sandbox/auth"
)

// nodeCrash prints to stderr what Node prints for a missing module (the
// cause on the fifth line, a long stack below it) and exits 1.
const nodeCrash = `echo "node:internal/modules/cjs/loader:1228" >&2; echo "  throw err;" >&2; echo "  ^" >&2; echo >&2; ` +
	`echo "Error: Cannot find module '/srv/missing/index.js'" >&2; ` +
	`i=0; while [ $i -lt 40 ]; do echo "    at frame $i" >&2; i=$((i+1)); done; echo "Node.js v22.0.0" >&2; exit 1`

// A crashed server's status keeps the first lines of its stderr (where
// Node says "Cannot find module") as well as the last, and the whole of
// what was kept is there for `sandbox servers --logs`.
func TestCrashedServerKeepsFirstStderrLines(t *testing.T) {
	t.Parallel()
	g, _ := startGateway(t, fmt.Sprintf(`{"mcpServers": {"crash": {"command": "sh", "args": ["-c", %q]}},
		"gateway": {"startupTimeout": "5s", "restartBackoff": "1m"}}`, nodeCrash))
	st := g.Servers()[0]
	if st.State != StateFailed {
		t.Fatalf("status = %+v", st)
	}
	for _, want := range []string{"Cannot find module '/srv/missing/index.js'", "node:internal/modules/cjs/loader:1228", "[37 more lines]", "at frame 39", "Node.js v22.0.0"} {
		if !strings.Contains(st.LastError, want) {
			t.Errorf("LastError lacks %q: %s", want, st.LastError)
		}
	}
	if strings.Contains(st.Reason, "Cannot find module") {
		t.Errorf("an agent's reason holds stderr: %s", st.Reason)
	}
	text, ok := g.ServerStderr("crash")
	if !ok || !strings.Contains(text, "Cannot find module") || !strings.Contains(text, "    at frame 20\n") || strings.Contains(text, "not kept") {
		t.Fatalf("ServerStderr = %v %q", ok, text)
	}
	if _, ok := g.ServerStderr("nope"); ok {
		t.Fatal("stderr of an unknown server")
	}
}

// A server that logs a lot keeps its first and last kilobytes and says how
// much went between.
func TestServerStderrKeepsHeadAndTail(t *testing.T) {
	t.Parallel()
	script := `echo "FIRST: missing API key" >&2; i=0; while [ $i -lt 3000 ]; do echo "noise line $i ................................" >&2; i=$((i+1)); done; echo "LAST: giving up" >&2; exit 3`
	g, _ := startGateway(t, fmt.Sprintf(`{"mcpServers": {"chatty": {"command": "sh", "args": ["-c", %q]}},
		"gateway": {"startupTimeout": "5s", "restartBackoff": "1m"}}`, script))
	text, ok := g.ServerStderr("chatty")
	if !ok || !strings.HasPrefix(text, "FIRST: missing API key\n") || !strings.HasSuffix(text, "LAST: giving up\n") || !strings.Contains(text, "bytes of stderr not kept ...]") {
		t.Fatalf("ServerStderr = %v, %d bytes: %.200q ... %.200q", ok, len(text), text, text[max(0, len(text)-200):])
	}
	if len(text) > 13<<10 {
		t.Fatalf("kept %d bytes of stderr", len(text))
	}
	if st := g.Servers()[0]; !strings.Contains(st.LastError, "FIRST: missing API key") || !strings.Contains(st.LastError, "LAST: giving up") {
		t.Fatalf("LastError = %s", st.LastError)
	}
}

// A url server without "oauth" that is down has no login state: "not
// logged in" would send the operator after the wrong cause.
func TestOAuthStateOnlyForServersThatAskForALogin(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now: connection refused
	g, _ := startGateway(t, fmt.Sprintf(`{"mcpServers": {"down": {"url": "http://%s/mcp"}, "withlogin": {"url": "http://%s/mcp", "oauth": {"clientId": "c"}}},
		"gateway": {"startupTimeout": "3s", "restartBackoff": "1m"}}`, addr, addr))
	ctx := context.Background()
	if s := g.OAuthState(ctx, "down", auth.Operator().Key()); s != "" {
		t.Errorf("down: %q, want no login state", s)
	}
	if s := g.OAuthState(ctx, "withlogin", auth.Operator().Key()); s != "not logged in" {
		t.Errorf("withlogin: %q, want \"not logged in\" (its config says it uses OAuth)", s)
	}
	// mcp-go wraps a refused request twice; the operator reads it once.
	down := g.Servers()[0]
	if down.Name != "down" || !strings.Contains(down.LastError, "failed to send request: Post") || strings.Contains(down.LastError, "failed to send request: failed to send request") {
		t.Errorf("down's last error: %s", down.LastError)
	}
}

// A server's status, which the operator console shows to every principal
// marked operator, holds none of the gateway's secrets its stderr printed:
// LastError is redacted as what the server answers is.
func TestLastErrorIsRedacted(t *testing.T) {
	t.Parallel()
	const secret = "ghp_stderrSecret0123456789"
	script := `echo "starting with token ` + secret + `" >&2; echo "auth failed for ` + secret + `" >&2; exit 1`
	g, _ := startGateway(t, fmt.Sprintf(`{"mcpServers": {"leaky": {"command": "sh", "args": ["-c", %q]}},
		"gateway": {"startupTimeout": "5s", "restartBackoff": "1m", "secrets": [%q]}}`, script, secret))
	st := g.Servers()[0]
	if st.State != StateFailed || !strings.Contains(st.LastError, "starting with token") {
		t.Fatalf("status = %+v", st)
	}
	if strings.Contains(st.LastError, secret) || !strings.Contains(st.LastError, redacted) {
		t.Errorf("LastError holds a configured secret the server printed: %s", st.LastError)
	}
}
