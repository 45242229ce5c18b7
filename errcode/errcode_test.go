package errcode

import (
	"flag"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the generated table in docs/errors.md")

var codeShape = regexp.MustCompile(`^[A-Z][A-Z]*(_[A-Z]+)*$`)

// TestTable: every row is complete, and no code is listed twice.
func TestTable(t *testing.T) {
	seen := map[Code]bool{}
	for _, info := range All() {
		switch {
		case !codeShape.MatchString(string(info.Code)):
			t.Errorf("%q is not an UPPER_SNAKE code", info.Code)
		case seen[info.Code]:
			t.Errorf("%s is listed twice", info.Code)
		case info.RaisedBy == 0:
			t.Errorf("%s: no source raises it", info.Code)
		case !strings.HasSuffix(info.Meaning, "."):
			t.Errorf("%s: the meaning must be a sentence: %q", info.Code, info.Meaning)
		case info.Advice.String() == "unknown advice":
			t.Errorf("%s: advice %d has no text", info.Code, info.Advice)
		}
		seen[info.Code] = true
		if got, ok := Lookup(info.Code); !ok || got.Code != info.Code {
			t.Errorf("Lookup(%s) = %v, %v", info.Code, got, ok)
		}
	}
	if _, ok := Lookup("NO_SUCH_CODE"); ok {
		t.Error("Lookup found a code the table lacks")
	}
	if len(seen) < 26 {
		t.Errorf("the table has %d codes; the project raises at least 26", len(seen))
	}
}

// markdown is the table as docs/errors.md shows it.
func markdown() string {
	var b strings.Builder
	b.WriteString("| code | raised by | a snippet can catch it | what it means | what to do |\n|---|---|---|---|---|\n")
	for _, info := range All() {
		catch := "no"
		if info.InSnippet {
			catch = "yes"
		}
		b.WriteString("| `" + string(info.Code) + "` | " + info.RaisedBy.String() + " | " + catch + " | " +
			strings.ReplaceAll(info.Meaning, "|", `\|`) + " | " + info.Advice.String() + " |\n")
	}
	return b.String()
}

const (
	tableStart = "<!-- generated from errcode's table by `go test ./errcode -update`; do not edit -->\n"
	tableEnd   = "<!-- end of the generated table -->\n"
)

// TestErrorsDocIsTheTable: docs/errors.md shows the table as it is.
func TestErrorsDocIsTheTable(t *testing.T) {
	path := filepath.Join("..", "docs", "errors.md")
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	before, rest, ok1 := strings.Cut(string(doc), tableStart)
	_, after, ok2 := strings.Cut(rest, tableEnd)
	if !ok1 || !ok2 {
		t.Fatalf("%s lacks the markers of the generated table:\n%s%s", path, tableStart, tableEnd)
	}
	want := before + tableStart + markdown() + tableEnd + after
	if *update {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if string(doc) != want {
		t.Errorf("%s's table is not errcode's: run `go test ./errcode -update`", path)
	}
}

// backticked finds the codes a text names as `CODE`.
var backticked = regexp.MustCompile("`([A-Z][A-Z_]+)`")

// TestDocListsAreTheTable: each list of codes in the docs names exactly the
// codes of the table it stands for, so none is missing and none is named
// that the table lacks.
func TestDocListsAreTheTable(t *testing.T) {
	for _, l := range []struct {
		file, from, to string
		of             Source // 0: every code
	}{
		{"ARCHITECTURE.md", "3. **Tool errors.**", "4. **", 0},
		{"docs/gateway.md", "Codes (", "Messages name the tool", Gateway},
	} {
		doc, err := os.ReadFile(filepath.Join("..", l.file))
		if err != nil {
			t.Fatal(err)
		}
		_, section, ok := strings.Cut(string(doc), l.from)
		section, _, ok2 := strings.Cut(section, l.to)
		if !ok || !ok2 {
			t.Errorf("%s: no section from %q to %q", l.file, l.from, l.to)
			continue
		}
		named := map[Code]bool{}
		for _, m := range backticked.FindAllStringSubmatch(section, -1) {
			named[Code(m[1])] = true
			if info, ok := Lookup(Code(m[1])); !ok {
				t.Errorf("%s names %s, which errcode's table lacks", l.file, m[1])
			} else if l.of != 0 && info.RaisedBy&l.of == 0 {
				t.Errorf("%s lists %s among the %s's codes; the table says %s raises it", l.file, m[1], l.of, info.RaisedBy)
			}
		}
		for _, info := range All() {
			if (l.of == 0 || info.RaisedBy&l.of != 0) && !named[info.Code] {
				t.Errorf("%s does not name %s (%s)", l.file, info.Code, info.RaisedBy)
			}
		}
	}
}

// TestNoCodeOutsideTheTable: no package of the module defines a code of
// its own: a constant named Code... whose value is a string literal shaped
// like a code. Each is defined from this table, so a new code is a row here.
func TestNoCodeOutsideTheTable(t *testing.T) {
	fset := token.NewFileSet()
	checked := 0
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); n == "testdata" || n == "node_modules" || n == "peers" || strings.HasPrefix(n, ".") && n != ".." {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || strings.HasPrefix(path, filepath.Join("..", "errcode")) {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		checked++
		for _, decl := range f.Decls {
			g, ok := decl.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if !strings.HasPrefix(name.Name, "Code") || i >= len(vs.Values) {
						continue
					}
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						continue
					}
					if v, _ := strconv.Unquote(lit.Value); codeShape.MatchString(v) {
						t.Errorf("%s: %s = %s is a code outside errcode's table: add a row there and define %s from it", fset.Position(name.Pos()), name.Name, lit.Value, name.Name)
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("checked only %d Go files of the module", checked)
	}
}
