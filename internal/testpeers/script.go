package testpeers

import (
	"bufio"
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// StartScript runs a Node script (on Node 22, with extra environment
// variables) that prints one JSON line once it is ready, decodes that line
// into hello, and stops the script when the test ends by closing its stdin
// (the script exits when stdin ends), killing it if it lingers.
func StartScript(t testing.TB, script string, env []string, hello any) {
	t.Helper()
	cmd := exec.Command(Node(t), script)
	cmd.Env = append(Env(t), env...)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			line <- sc.Text()
		}
		close(line)
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case l, ok := <-line:
		if err := json.Unmarshal([]byte(l), hello); !ok || err != nil {
			t.Fatalf("%s said %q (%v); stderr:\n%s", script, l, err, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not start; stderr:\n%s", script, stderr.String())
	}
}
