package typegen

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/sandboxrt/sandbox/internal/testpeers"
)

// tscDiagnostics type-checks files (name -> source) together with the real
// TypeScript compiler from peers/ (tsc --noEmit --strict, default libs, which
// include the DOM: the most crowded global scope an agent script could meet)
// and returns the diagnostics per file name.
func tscDiagnostics(t *testing.T, files map[string]string) map[string][]string {
	t.Helper()
	tsc := testpeers.Bin(t, "tsc")
	dir := t.TempDir()
	var names []string
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	sort.Strings(names)
	args := append([]string{"--noEmit", "--strict", "--pretty", "false"}, names...)
	cmd := exec.Command(tsc, args...)
	cmd.Dir = dir
	cmd.Env = testpeers.Env(t)
	out, err := cmd.CombinedOutput()
	diags := map[string][]string{}
	line := regexp.MustCompile(`^(\S+?)\(\d+,\d+\): error (TS\d+): `)
	for _, l := range strings.Split(string(out), "\n") {
		if m := line.FindStringSubmatch(l); m != nil {
			diags[m[1]] = append(diags[m[1]], l)
		}
	}
	if err != nil && len(diags) == 0 {
		t.Fatalf("tsc failed without diagnostics: %v\n%s", err, out)
	}
	return diags
}

// requireCompiles fails the test with tsc's diagnostics if any file has errors.
func requireCompiles(t *testing.T, files map[string]string) {
	t.Helper()
	diags := tscDiagnostics(t, files)
	var all []string
	for _, ds := range diags {
		all = append(all, ds...)
	}
	sort.Strings(all)
	if len(all) > 0 {
		if len(all) > 40 {
			all = append(all[:40], "...")
		}
		t.Fatalf("tsc reported %d errors:\n%s", len(all), strings.Join(all, "\n"))
	}
}
