package typegen

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden .d.ts files in testdata/golden")

// goldenCases reads testdata/golden/*.json: each a JSON array of tools that
// exercises one construct.
func goldenCases(t *testing.T) map[string][]Tool {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "golden", "*.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no golden cases: %v", err)
	}
	cases := map[string][]Tool{}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		tools, err := ReadTools(data, "")
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		cases[strings.TrimSuffix(filepath.Base(p), ".json")] = tools
	}
	return cases
}

// goldenText is what a golden file holds: the declarations after the shared
// preamble, then the problems as comments.
func goldenText(t *testing.T, out *Output) string {
	t.Helper()
	if !strings.HasPrefix(out.DTS, Preamble) {
		t.Fatalf("output does not start with the preamble")
	}
	var b strings.Builder
	b.WriteString(strings.TrimPrefix(out.DTS, Preamble))
	if len(out.Problems) > 0 {
		b.WriteString("\n// Problems:\n")
		for _, p := range out.Problems {
			b.WriteString("// " + p.String() + "\n")
		}
	}
	return b.String()
}

// TestGolden pins the declarations of every construct. Run
// `go test ./typegen -run TestGolden -update` after an intended change and
// review the diff.
func TestGolden(t *testing.T) {
	for name, tools := range goldenCases(t) {
		t.Run(name, func(t *testing.T) {
			out, err := Generate(tools, Options{})
			if err != nil {
				t.Fatal(err)
			}
			got := goldenText(t, out)
			path := filepath.Join("testdata", "golden", name+".d.ts")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("%s differs from the golden file; run with -update and review the diff.\n--- got ---\n%s", path, got)
			}
		})
	}
}

// TestGoldenCompiles type-checks every golden case together in one file.
func TestGoldenCompiles(t *testing.T) {
	if testing.Short() {
		t.Skip("runs tsc")
	}
	var all []Tool
	for _, tools := range goldenCases(t) {
		all = append(all, tools...)
	}
	out, err := Generate(all, Options{})
	if err != nil {
		t.Fatal(err)
	}
	requireCompiles(t, map[string]string{"golden.d.ts": out.DTS})
}
