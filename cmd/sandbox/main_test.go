package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"sync"
	"testing"

	"github.com/sandboxrt/sandbox/runtime"
)

// TestMain lets the test binary serve as a runtime worker, for commands run
// in-process through newRootCmd, and as the big-result MCP server
// (bigresults_test.go).
func TestMain(m *testing.M) {
	runtime.ServeWorkerIfChild()
	serveBigResultsIfAsked()
	serveLeakyIfAsked()
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

var (
	buildOnce sync.Once
	binDir    string
	binPath   string
	buildErr  error
)

// sandboxBinary builds bin/sandbox once per test run, so tests can drive the
// real CLI as a user does: its exit codes, stdin, stdout and stderr.
func sandboxBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "sandbox-cli-test")
		if buildErr != nil {
			return
		}
		// serve keeps what agents save in a per-user state directory by
		// default (statedir.go): no test may write into the real one.
		// runCLI and startLogged give each command a fresh one; this
		// catches the rest (an MCP client starting serve, say). Every
		// test starts the binary after this, and TestMain removes binDir.
		if buildErr = os.Setenv("XDG_STATE_HOME", filepath.Join(binDir, "state")); buildErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "sandbox")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			buildErr = err
			binPath = string(out)
		}
	})
	if buildErr != nil {
		t.Fatalf("building the CLI: %v\n%s", buildErr, binPath)
	}
	return binPath
}

// cliResult is what one CLI invocation did.
type cliResult struct {
	stdout, stderr string
	code           int
}

// runCLI runs the built binary with args and stdin.
func runCLI(t testing.TB, stdin string, args ...string) cliResult {
	t.Helper()
	return runCmd(t, stdin, "", withFreshState(t, nil), args...)
}

// runCLIIn runs the built binary in dir, with env added to this process's.
func runCLIIn(t testing.TB, dir string, env []string, args ...string) cliResult {
	t.Helper()
	return runCmd(t, "", dir, append(os.Environ(), env...), args...)
}

func runCmd(t testing.TB, stdin, dir string, env []string, args ...string) cliResult {
	t.Helper()
	cmd := exec.Command(sandboxBinary(t), args...)
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdin = bytes.NewBufferString(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running sandbox %v: %v", args, err)
	}
	return cliResult{stdout: out.String(), stderr: errb.String(), code: code}
}

// TestVersion: `sandbox --version` and `sandbox version` print the same
// line: the module version and the Go toolchain (and the commit when the
// build recorded one).
func TestVersion(t *testing.T) {
	a, b := runCLI(t, "", "--version"), runCLI(t, "", "version")
	if a.code != 0 || b.code != 0 || a.stdout != b.stdout || !strings.HasPrefix(a.stdout, "sandbox ") || !strings.Contains(a.stdout, goruntime.Version()) {
		t.Fatalf("--version: %+v\nversion: %+v", a, b)
	}
}

// TestServersWithNoneConfigured: an empty "mcpServers" is said, with what
// to add, rather than an empty table alone.
func TestServersWithNoneConfigured(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcp.json")
	if err := os.WriteFile(path, []byte(`{"mcpServers": {}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, "", "servers", "-c", path)
	if r.code != 0 || !strings.Contains(r.stderr, `no MCP servers are configured: add them under "mcpServers"`) {
		t.Fatalf("%+v", r)
	}
}

// TestOneLogFormat: every command logs as --log-format says (JSON lines
// when stderr is not a terminal and no format is given).
func TestOneLogFormat(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcp.json")
	if err := os.WriteFile(path, []byte(`{"mcpServers": {"gone": {"command": "/nonexistent/server"}}, "gateway": {"startupTimeout": "2s"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	script := writeScript(t, "one.ts", "return 1")
	for _, args := range [][]string{{"run", script, "-c", path}, {"servers", "-c", path}} {
		for format, want := range map[string]string{"": `{"time":`, "json": `{"time":`, "text": `time=`} {
			a := append(append([]string{}, args...), "--log-level", "warn")
			if format != "" {
				a = append(a, "--log-format", format)
			}
			r := runCLI(t, "", a...)
			if !strings.HasPrefix(r.stderr, want) {
				t.Errorf("sandbox %v: stderr starts %.80q, want %q", a, r.stderr, want)
			}
		}
	}
}

// withFreshState is env (nil: this process's) with a per-user state
// directory of its own, so that what one command saves by default is not
// the next one's.
func withFreshState(t testing.TB, env []string) []string {
	if env == nil {
		env = os.Environ()
	}
	return append(env, "XDG_STATE_HOME="+t.TempDir())
}
