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

// TestArchitectureTableListsEveryPackage keeps ARCHITECTURE.md's package
// table the module's real list of packages (as go list ./... sees them):
// every package is named in it, and every folder it names is a package.
func TestArchitectureTableListsEveryPackage(t *testing.T) {
	root := testpeers.RepoRoot(t)
	text, err := os.ReadFile(filepath.Join(root, "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	table := TablePackages(string(text))
	if len(table) < 10 {
		t.Fatalf("ARCHITECTURE.md's package table names %d folders; is the table still headed \"| package |\"?", len(table))
	}
	list := exec.Command("go", "list", "-f", "{{.Dir}}", "./...")
	list.Dir = root
	out, err := list.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dirs := map[string]bool{}
	for _, d := range strings.Fields(string(out)) {
		rel, err := filepath.Rel(root, d)
		if err != nil {
			t.Fatal(err)
		}
		dirs[filepath.ToSlash(rel)] = true
		if !Covers(table, filepath.ToSlash(rel)) {
			t.Errorf("package %s/ is not in ARCHITECTURE.md's package table: add a row (or name it in a row that covers it with /...)", rel)
		}
	}
	for _, f := range table {
		named := dirs[f]
		for d := range dirs {
			named = named || (strings.HasSuffix(f, "/...") && Covers([]string{f}, d))
		}
		if !named {
			t.Errorf("ARCHITECTURE.md's package table names %s, which is no package of the module (go list ./...)", f)
		}
	}
}

func TestTablePackagesExpandsBraces(t *testing.T) {
	arch := "x\n| package | owns |\n|---|---|\n| `a/` | |\n| `b/{c,d}/`, `e/...` | |\n\nafter\n| `f/` | |\n"
	got := strings.Join(TablePackages(arch), ",")
	if got != "a,b/c,b/d,e/..." {
		t.Fatalf("got %s", got)
	}
	if !Covers([]string{"e/..."}, "e/x/y") || !Covers([]string{"e/..."}, "e") || Covers([]string{"e/..."}, "ex") {
		t.Fatal("Covers does not treat /... as the folder and everything below it")
	}
}

// TestDocPathsExist fails for every backticked repository path in the docs
// (`gateway/upstream.go`, `runtime/internal/bindings/`) that is not there:
// files move, and the prose that sends a reader to them must move too.
func TestDocPathsExist(t *testing.T) {
	root := testpeers.RepoRoot(t)
	files, err := Docs(root)
	if err != nil {
		t.Fatal(err)
	}
	exists := func(p string) bool {
		_, err := os.Stat(filepath.Join(root, p))
		return err == nil
	}
	for _, f := range files {
		text, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range CheckPaths(root, f, string(text), exists) {
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
		"`CallRequest{Tool, Arguments, Session}` lists a field the type lacks.",
		"```go",
		"gateway.InsideAFence()",
		"```",
	}, "\n")
	var got []string
	for _, p := range decls.Check("doc.md", doc) {
		got = append(got, p.Name)
	}
	want := []string{"gateway.NoSuchThing", "Gateway.NoSuchMethod", "gateway.Gateway.Nope", "CallRequest{Session}"}
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

// TestPathCheckerCatchesMovedFiles keeps the path rule honest on a made-up
// tree: a moved file fails, a live one, a pattern and prose that only looks
// like a path pass.
func TestPathCheckerCatchesMovedFiles(t *testing.T) {
	tree := map[string]bool{"gateway": true, "gateway/call.go": true, "gateway/internal": true, "gateway/internal/upstream": true,
		"vectorindex": true, "vectorindex/testdata/q.json": true}
	exists := func(p string) bool { return tree[filepath.ToSlash(p)] }
	doc := strings.Join([]string{
		"`gateway/call.go` and `gateway/upstream.go`; `gateway/internal/upstream/` and `gateway/internal/...`.",
		"`server/tool`, `intl*.go`, `gateway/{a,b}.go`, `state/statetest.TestStore` are not checked.",
		"`testdata/q.json` is vectorindex's, named from its doc.",
	}, "\n")
	var got []string
	for _, p := range CheckPaths("/repo", "docs/vectorindex.md", doc, exists) {
		got = append(got, p.Name)
	}
	if strings.Join(got, ",") != "gateway/upstream.go" {
		t.Fatalf("problems %v, want just gateway/upstream.go", got)
	}
}
