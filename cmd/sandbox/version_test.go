package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestVersionStamped: the version make and the Dockerfile stamp in with
// -ldflags -X is the one --version and `sandbox version` print (a build in
// a clone, or in a container without .git, records none of its own).
func TestVersionStamped(t *testing.T) {
	if testing.Short() {
		t.Skip("links a second binary")
	}
	bin := filepath.Join(t.TempDir(), "sandbox")
	const v = "v0.9.9-test.1"
	if out, err := exec.Command("go", "build", "-ldflags", "-X main.buildVersion="+v, "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, args := range [][]string{{"--version"}, {"version"}} {
		out, err := exec.Command(bin, args...).Output()
		if err != nil || !strings.HasPrefix(string(out), "sandbox "+v+" (") {
			t.Errorf("sandbox %s: %q %v", args[0], out, err)
		}
	}
}
