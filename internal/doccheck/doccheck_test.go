package doccheck

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandboxrt/sandbox/internal/testpeers"
)

// TestDocNamesResolve fails for every backticked Go name in the docs that
// names one of the module's packages or types but no declaration: the docs
// rot silently when a rename forgets them.
func TestDocNamesResolve(t *testing.T) {
	root := testpeers.RepoRoot(t)
	decls, err := ReadModule(root)
	if err != nil {
		t.Fatal(err)
	}
	// The module's runtime package shares its name with the standard
	// library's; a doc may name either.
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatalf("go env GOROOT: %v", err)
	}
	if err := decls.AddStdlib(strings.TrimSpace(string(goroot)), "runtime"); err != nil {
		t.Fatal(err)
	}
	files, err := Docs(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		text, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range decls.Check(f, string(text)) {
			t.Errorf("%s:%d: `%s`: %s", p.File, p.Line, p.Name, p.Why)
		}
	}
}

// TestCheckerCatchesStaleNames keeps the checker honest: a name that was
// renamed away fails, a live one and names outside the module pass.
func TestCheckerCatchesStaleNames(t *testing.T) {
	decls, err := ReadModule(testpeers.RepoRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.Join([]string{
		"`gateway.New` and `gateway.Gateway.Call` exist; `Gateway.Call` too.",
		"`gateway.NoSuchThing` does not.",
		"`Gateway.NoSuchMethod` does not either, nor `gateway.Gateway.Nope`.",
		"`github.listCommits`, `json.RawMessage`, `server__tool` are not ours.",
		"```go",
		"gateway.InsideAFence()",
		"```",
	}, "\n")
	var got []string
	for _, p := range decls.Check("doc.md", doc) {
		got = append(got, p.Name)
	}
	want := []string{"gateway.NoSuchThing", "Gateway.NoSuchMethod", "gateway.Gateway.Nope"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("problems %v, want %v", got, want)
	}
}

// TestReadmeGoBlockIsTheEmbedExample keeps README's Go API block the
// program examples/embed compiles (go vet and go build of ./... compile it),
// so the block a reader copies is one that builds.
func TestReadmeGoBlockIsTheEmbedExample(t *testing.T) {
	root := testpeers.RepoRoot(t)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	block, ok := GoBlock(string(readme))
	if !ok {
		t.Fatal("README.md has no ```go block")
	}
	program, err := os.ReadFile(filepath.Join(root, "examples", "embed", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	if block != string(program) {
		t.Fatalf("README.md's ```go block differs from examples/embed/main.go; copy the file into the block.\nREADME:\n%s\nexamples/embed/main.go:\n%s", block, program)
	}
}
