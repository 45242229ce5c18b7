package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sandboxrt/sandbox/internal/testpeers"
	"github.com/sandboxrt/sandbox/internal/testwait"
)

// Integration tests against real MCP servers from the npm registry
// (installed by `make peers`, found through internal/testpeers).

func everythingScript(t *testing.T) string {
	return filepath.Join(testpeers.Package(t, "@modelcontextprotocol/server-everything"), "dist", "index.js")
}

// everythingHTTP starts server-everything over HTTP, mode "streamableHttp"
// (URL .../mcp) or "sse" (the 2024-11-05 transport, URL .../sse).
func everythingHTTP(t *testing.T, mode string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(testpeers.Node(t), everythingScript(t), mode)
	cmd.Env = append(testpeers.Env(t), fmt.Sprintf("PORT=%d", port))
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		once := sync.Once{}
		for sc.Scan() {
			if line := sc.Text(); strings.Contains(line, "listening on port") || strings.Contains(line, "running on port") {
				once.Do(func() { close(ready) })
			}
		}
	}()
	select {
	case <-ready:
	case <-time.After(30 * time.Second):
		t.Fatalf("server-everything (%s) did not start", mode)
	}
	if mode == "sse" {
		return fmt.Sprintf("http://127.0.0.1:%d/sse", port)
	}
	return fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
}

func TestServerEverything(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs npm peers")
	}
	node := testpeers.Node(t)
	configs := map[string]string{
		"stdio": fmt.Sprintf(`{"command": %q, "args": [%q, "stdio"]}`, node, everythingScript(t)),
		"http":  fmt.Sprintf(`{"url": %q}`, everythingHTTP(t, "streamableHttp")),
		"sse":   fmt.Sprintf(`{"url": %q, "transport": "sse"}`, everythingHTTP(t, "sse")),
	}
	for name, server := range configs {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			g, _ := startGateway(t, `{"mcpServers": {"ev": `+server+`}}`)
			st := g.Servers()[0]
			if st.State != StateReady {
				t.Fatalf("status = %+v", st)
			}
			// Advertising sampling, elicitation and roots upstream brings the
			// tools that need them (17 rather than 13).
			if st.Tools < 17 {
				t.Fatalf("%d tools; the client-capability tools are missing", st.Tools)
			}
			ctx := context.Background()
			res, err := g.Call(ctx, CallRequest{Tool: "ev:echo", Arguments: json.RawMessage(`{"message":"hi"}`)})
			if err != nil || callText(t, res) != "Echo: hi" {
				t.Fatalf("echo: %v", err)
			}
			res, err = g.Call(ctx, CallRequest{Tool: "ev:get-structured-content", Arguments: json.RawMessage(`{"location":"Chicago"}`)})
			if err != nil || !strings.Contains(string(res.StructuredContent), "temperature") {
				t.Fatalf("structured: %v %+v", err, res)
			}
			_, err = g.Call(ctx, CallRequest{Tool: "ev:get-structured-content", Arguments: json.RawMessage(`{"location":"Atlantis"}`)})
			e := wantCode(t, err, CodeValidationFailed)
			if !strings.Contains(e.Message, `"New York"`) {
				t.Fatalf("the enum is not in the help text:\n%s", e.Message)
			}
			var mu sync.Mutex
			var progress []Progress
			_, err = g.Call(ctx, CallRequest{Tool: "ev:trigger-long-running-operation", Arguments: json.RawMessage(`{"duration": 0.6, "steps": 3}`),
				Progress: func(p Progress) { mu.Lock(); progress = append(progress, p); mu.Unlock() }})
			if err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			if len(progress) != 3 || progress[2].Progress != 3 || progress[2].Total != 3 {
				t.Fatalf("progress = %+v", progress)
			}
			mu.Unlock()
			if rs := g.Resources(); len(rs) == 0 {
				t.Fatal("no resources listed")
			}
			raw, err := g.ReadResource(ctx, operator, g.Resources()[0].URI)
			if err != nil || !strings.Contains(string(raw), `"contents"`) {
				t.Fatalf("read: %v %.200s", err, raw)
			}
			raw, err = g.GetPrompt(ctx, operator, "ev__args-prompt", map[string]string{"city": "Lisbon"})
			if err != nil || !strings.Contains(string(raw), "Lisbon") {
				t.Fatalf("prompt: %v %s", err, raw)
			}
			raw, err = g.Complete(ctx, operator, json.RawMessage(`{"ref":{"type":"ref/prompt","name":"ev__completable-prompt"},"argument":{"name":"department","value":"Eng"}}`))
			if err != nil || !strings.Contains(string(raw), "Engineering") {
				t.Fatalf("complete: %v %s", err, raw)
			}
		})
	}
}

func TestServerFilesystemPathsAndLargeFile(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs npm peers")
	}
	root := t.TempDir()
	root, _ = filepath.EvalSymlinks(root)
	big := strings.Repeat("0123456789abcdef\n", 5<<20/17) // ~5 MB
	if err := os.WriteFile(filepath.Join(root, "big.txt"), []byte(big), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "small.txt"), []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(testpeers.Package(t, "@modelcontextprotocol/server-filesystem"), "dist", "index.js")
	server := fmt.Sprintf(`{"command": %q, "args": [%q, %q], "pathRoots": [%q]}`, testpeers.Node(t), script, root, root)
	g, _ := startGateway(t, `{"mcpServers": {"fs": `+server+`}, "gateway": {"maxResultBytes": 20971520}}`)
	ctx := context.Background()
	call := func(tool, path string) (*CallResult, error) {
		args, _ := json.Marshal(map[string]string{"path": path})
		return g.Call(ctx, CallRequest{Tool: tool, Arguments: args})
	}
	res, err := call("fs:read_text_file", filepath.Join(root, "big.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if got := callText(t, res); len(got) != len(big) {
		t.Fatalf("read %d bytes of %d", len(got), len(big))
	}
	if res, err := call("fs:read_text_file", filepath.Join(root, "small.txt")); err != nil || callText(t, res) != "hello" {
		t.Fatalf("small: %v", err)
	}
	for _, p := range []string{
		root + "/../../etc/passwd",
		root + "/%2e%2e/%2e%2e/etc/passwd",
		"/etc/passwd",
		"../small.txt",
	} {
		_, err := call("fs:read_text_file", p)
		wantCode(t, err, CodePathTraversal)
	}
	// The server's own checks still apply behind ours: a symlink pointing
	// outside the root passes the gateway (it is lexically inside) and is
	// refused by the server as an isError result.
	if err := os.Symlink("/etc", filepath.Join(root, "etc-link")); err == nil {
		_, err := call("fs:read_text_file", filepath.Join(root, "etc-link", "hostname"))
		wantCode(t, err, CodeToolError)
	}
}

func TestResultCapOnRealServer(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs npm peers")
	}
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "big.txt"), []byte(strings.Repeat("x", 3<<20)), 0o600); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(testpeers.Package(t, "@modelcontextprotocol/server-filesystem"), "dist", "index.js")
	g, _ := startGateway(t, fmt.Sprintf(`{"mcpServers": {"fs": {"command": %q, "args": [%q, %q]}}, "gateway": {"maxResultBytes": 1048576}}`, testpeers.Node(t), script, root))
	args, _ := json.Marshal(map[string]string{"path": filepath.Join(root, "big.txt")})
	_, err := g.Call(context.Background(), CallRequest{Tool: "fs:read_text_file", Arguments: args})
	wantCode(t, err, CodeResultTooLarge)
	// Still connected afterwards.
	if _, err := g.Call(context.Background(), CallRequest{Tool: "fs:list_allowed_directories"}); err != nil {
		t.Fatal(err)
	}
}

// TestKillRealServerMidCall kills server-everything (its whole process
// group) while a long operation runs: the call fails at once, the server is
// restarted, and its tools work again.
func TestKillRealServerMidCall(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs npm peers")
	}
	g, _ := startGateway(t, fmt.Sprintf(`{"mcpServers": {"ev": {"command": %q, "args": [%q, "stdio"], "timeout": "60s"}},
		"gateway": {"restartBackoff": "100ms"}}`, testpeers.Node(t), everythingScript(t)))
	ctx := context.Background()
	started := make(chan struct{}, 1)
	done := make(chan error, 1)
	go func() {
		_, err := g.Call(ctx, CallRequest{Tool: "ev:trigger-long-running-operation", Arguments: json.RawMessage(`{"duration": 30, "steps": 30}`),
			Progress: func(Progress) {
				select {
				case started <- struct{}{}:
				default:
				}
			}})
		done <- err
	}()
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("no progress from the long operation")
	}
	pid := g.upstreams["ev"].sup.Conn().ProcessID()
	killed := time.Now()
	if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		wantCode(t, err, CodeUpstreamUnavailable)
		if d := time.Since(killed); d > 2*time.Second {
			t.Fatalf("the in-flight call took %v to fail", d)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the in-flight call did not fail after the server was killed")
	}
	testwait.Until(t, 30*time.Second, "the killed server to be restarted", func() bool {
		res, err := g.Call(ctx, CallRequest{Tool: "ev:echo", Arguments: json.RawMessage(`{"message":"back"}`)})
		if err != nil {
			return false
		}
		if callText(t, res) != "Echo: back" {
			t.Fatal(callText(t, res))
		}
		return true
	})
	if st := g.Servers()[0]; st.Restarts != 1 || !strings.Contains(st.LastError, "signal: killed") {
		t.Fatalf("status = %+v", st)
	}
}
