package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/sandboxrt/sandbox/runtime"
)

// TestMain lets the test binary serve as a runtime worker, for commands run
// in-process through newRootCmd.
func TestMain(m *testing.M) {
	runtime.ServeWorkerIfChild()
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
	cmd := exec.Command(sandboxBinary(t), args...)
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
