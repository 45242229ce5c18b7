package doccheck

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sandboxrt/sandbox/internal/testpeers"
)

func TestQuickStartsParse(t *testing.T) {
	readme := strings.Join([]string{
		"## Install", "```sh", "$ not this one", "```",
		"## Quick starts", "```sh", "$ make install", "installed", "$ sandbox run x.ts", "  \"x\": 4,", "", "```",
		"```json", "$ nor this", "```", "```sh", "$ sandbox types", "```",
		"## Tour", "```sh", "$ nor this either", "```",
	}, "\n")
	got := QuickStarts(readme)
	if len(got) != 3 || got[0].Command != "make install" || got[0].Line != 7 || strings.Join(got[0].Want, "|") != "installed" ||
		got[1].Command != "sandbox run x.ts" || strings.Join(got[1].Want, "|") != `"x": 4,` || got[2].Command != "sandbox types" || got[2].Want != nil {
		t.Fatalf("%+v", got)
	}
}

// npxShim answers the quick starts' npx with the pinned peers (on PATH
// through testpeers.Env), so the commands run as written and never reach
// the network.
const npxShim = `#!/bin/sh
pkg=$1; shift
case "$pkg" in
@modelcontextprotocol/inspector) exec mcp-inspector "$@" ;;
tsc) exec tsc "$@" ;;
esac
echo "npx $pkg: not one of the pinned peers (peers/package.json)" >&2
exit 127
`

// TestReadmeQuickStarts runs README's quick starts as a reader would, from
// the repository's root: make install (into a temporary GOBIN, first on
// PATH), then every command in order, each of which must succeed and print
// the lines the README shows after it.
func TestReadmeQuickStarts(t *testing.T) {
	if testing.Short() {
		t.Skip("installs sandbox and runs the npm peers")
	}
	root := testpeers.RepoRoot(t)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	steps := QuickStarts(string(readme))
	if len(steps) < 6 || steps[0].Command != "make install" {
		t.Fatalf("README's quick starts: %d commands, the first %+v; they begin with make install", len(steps), steps)
	}
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "npx"), []byte(npxShim), 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"GOBIN=" + bin}
	for _, kv := range testpeers.Env(t) {
		if p, ok := strings.CutPrefix(kv, "PATH="); ok {
			kv = "PATH=" + bin + string(os.PathListSeparator) + p
		}
		env = append(env, kv)
	}
	// Files the quick starts write at the root (gitignored) go with the test.
	before := map[string]bool{}
	if ents, err := os.ReadDir(root); err == nil {
		for _, e := range ents {
			before[e.Name()] = true
		}
	}
	t.Cleanup(func() {
		ents, _ := os.ReadDir(root)
		for _, e := range ents {
			if !before[e.Name()] && strings.HasSuffix(e.Name(), ".d.ts") {
				os.Remove(filepath.Join(root, e.Name()))
			}
		}
	})
	for _, s := range steps {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		cmd := exec.CommandContext(ctx, "bash", "-o", "pipefail", "-c", s.Command)
		cmd.Dir, cmd.Env = root, env
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		cancel()
		if err != nil {
			t.Fatalf("README.md:%d: $ %s\n%v\n%s", s.Line, s.Command, err, out.String())
		}
		for _, want := range s.Want {
			if !strings.Contains(out.String(), want) {
				t.Errorf("README.md:%d: $ %s\nprinted no line with %q; it printed:\n%.3000s", s.Line, s.Command, want, out.String())
			}
		}
	}
}
