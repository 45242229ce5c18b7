package prestart

import (
	"strings"
	"testing"
)

func TestWantsEarlyWorker(t *testing.T) {
	for _, c := range []struct {
		args   []string
		worker string
		want   bool
	}{
		{[]string{"sandbox", "run", "x.ts"}, "", true},
		{[]string{"sandbox", "run", "--json", "x.ts"}, "", true},
		{[]string{"sandbox", "run", "--in-process", "x.ts"}, "", false}, // no worker at all
		{[]string{"sandbox", "run", "--help"}, "", false},
		{[]string{"sandbox", "serve"}, "", false}, // its pool is started by serve
		{[]string{"sandbox"}, "", false},
		{[]string{"sandbox", "run", "x.ts"}, "1", false}, // a worker starts no worker
	} {
		if got := wantsEarlyWorker(c.args, c.worker); got != c.want {
			t.Errorf("%q (worker env %q): %v, want %v", c.args, c.worker, got, c.want)
		}
	}
}

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
