package prestart

import (
	"strings"
	"testing"
)

// TestTakeIsForItsExecutableOnce: the early worker goes to a pool started
// with the same executable, once; another command gets none.
func TestTakeIsForItsExecutableOnce(t *testing.T) {
	p, err := Start([]string{"/bin/sh", "-c", "echo started >&2; read line"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Cmd.Process.Kill(); _ = p.Cmd.Wait() })
	mu.Lock()
	early, exe = p, "/bin/sh"
	mu.Unlock()
	if Take([]string{"/usr/bin/other"}) != nil {
		t.Fatal("another executable took the early worker")
	}
	if Take([]string{"/bin/sh"}) != p {
		t.Fatal("its executable did not get the early worker")
	}
	if Take([]string{"/bin/sh"}) != nil {
		t.Fatal("the early worker was taken twice")
	}
	_ = p.Stdin.Close()
	_ = p.Cmd.Wait()
	if !strings.Contains(p.Stderr.String(), "started") {
		t.Fatalf("stderr kept: %q", p.Stderr.String())
	}
	if env := p.Cmd.Env; len(env) != 1 || env[0] != WorkerEnv+"=1" {
		t.Fatalf("a worker's environment: %q", env)
	}
}
