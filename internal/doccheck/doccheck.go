// Package doccheck keeps the project's prose true to its code. Its tests
// read README.md, ARCHITECTURE.md, RATIONALE.md and docs/*.md and fail when a
// backticked Go name (`gateway.New`, `Engine.Search`, `runtime.ToolCall.Kind`)
// no longer resolves to a declaration in the module, and when README's Go API
// block differs from the program examples/embed compiles.
//
// The rule is deliberately narrow: only names written in backticks are
// checked, and only when their first part is one of the module's packages or
// one of its exported types, so prose stays free to name TypeScript
// (`github.listCommits`), MCP wire names (`server__tool`) and other modules.
package doccheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Decls are the exported declarations of a set of Go packages, by package
// name: enough to tell whether a doc's `pkg.Name`, `pkg.Type.Member` or
// `Type.Member` names something that exists.
type Decls struct {
	// pkgs maps a package name to its exported top-level names.
	pkgs map[string]map[string]bool
	// members maps an exported type's name (in any package) to its
	// exported methods and struct fields.
	members map[string]map[string]bool
	// typePkgs maps a "pkg.Type" to true for every exported type.
	typePkgs map[string]bool
}

// ReadModule parses every non-test Go file below root (skipping testdata,
// node_modules and hidden folders) and records its exported declarations.
func ReadModule(root string) (*Decls, error) {
	d := &Decls{pkgs: map[string]map[string]bool{}, members: map[string]map[string]bool{}, typePkgs: map[string]bool{}}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := e.Name()
		if e.IsDir() {
			if path != root && (name == "testdata" || name == "node_modules" || strings.HasPrefix(name, ".") || name == "bin") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if f.Name.Name == "main" {
			return nil // a command's names are not API
		}
		d.addFile(f)
		return nil
	})
	return d, err
}

// AddStdlib records the exported declarations of a standard library package
// (for a doc's `runtime.GC` beside the module's own runtime package).
func (d *Decls) AddStdlib(goroot, importPath string) error {
	dir := filepath.Join(goroot, "src", filepath.FromSlash(importPath))
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	fset := token.NewFileSet()
	for _, e := range entries {
		n := e.Name()
		if !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		d.addTopLevel(f)
	}
	return nil
}

func (d *Decls) addFile(f *ast.File) {
	d.addTopLevel(f)
	pkg := f.Name.Name
	for _, decl := range f.Decls {
		switch decl := decl.(type) {
		case *ast.FuncDecl:
			if decl.Recv == nil || len(decl.Recv.List) == 0 || !decl.Name.IsExported() {
				continue
			}
			if recv := receiverType(decl.Recv.List[0].Type); recv != "" {
				d.member(recv, decl.Name.Name)
			}
		case *ast.GenDecl:
			for _, spec := range decl.Specs {
				ts, ok := spec.(*ast.TypeSpec)
				if !ok || !ts.Name.IsExported() {
					continue
				}
				d.typePkgs[pkg+"."+ts.Name.Name] = true
				d.members[ts.Name.Name] = orNew(d.members[ts.Name.Name])
				switch t := ts.Type.(type) {
				case *ast.StructType:
					for _, field := range t.Fields.List {
						for _, n := range field.Names {
							if n.IsExported() {
								d.member(ts.Name.Name, n.Name)
							}
						}
						if len(field.Names) == 0 { // embedded: its name is a member
							if n := receiverType(field.Type); n != "" {
								d.member(ts.Name.Name, n)
							}
						}
					}
				case *ast.InterfaceType:
					for _, m := range t.Methods.List {
						for _, n := range m.Names {
							d.member(ts.Name.Name, n.Name)
						}
					}
				}
			}
		}
	}
}

func (d *Decls) addTopLevel(f *ast.File) {
	pkg := f.Name.Name
	names := orNew(d.pkgs[pkg])
	d.pkgs[pkg] = names
	for _, decl := range f.Decls {
		switch decl := decl.(type) {
		case *ast.FuncDecl:
			if decl.Recv == nil && decl.Name.IsExported() {
				names[decl.Name.Name] = true
			}
		case *ast.GenDecl:
			for _, spec := range decl.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					if s.Name.IsExported() {
						names[s.Name.Name] = true
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.IsExported() {
							names[n.Name] = true
						}
					}
				}
			}
		}
	}
}

func (d *Decls) member(typ, name string) {
	d.members[typ] = orNew(d.members[typ])
	d.members[typ][name] = true
}

func orNew(m map[string]bool) map[string]bool {
	if m == nil {
		return map[string]bool{}
	}
	return m
}

// receiverType is the type name of a receiver or embedded field: T, *T, T[K].
func receiverType(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.Ident:
		return t.Name
	case *ast.StarExpr:
		return receiverType(t.X)
	case *ast.IndexExpr:
		return receiverType(t.X)
	case *ast.IndexListExpr:
		return receiverType(t.X)
	case *ast.SelectorExpr:
		return t.Sel.Name
	}
	return ""
}

// Problem is a backticked name in a doc that resolves to nothing.
type Problem struct {
	File string
	Line int
	Name string
	Why  string
}

// backticked finds inline code spans; fenced blocks are skipped by the
// caller (their code is checked by compiling it, not by name).
var backticked = regexp.MustCompile("`([^`\n]+)`")

// dotted finds a Go-looking dotted name inside a span: pkg.Name,
// pkg.Type.Member or Type.Member, optionally followed by a call's "(".
var dotted = regexp.MustCompile(`(?:^|[^A-Za-z0-9_.$])([A-Za-z][A-Za-z0-9_]*)\.([A-Z][A-Za-z0-9_]*)(?:\.([A-Z][A-Za-z0-9_]*))?`)

// proseLines yields the lines of a markdown text outside fenced blocks,
// with their 0-based index.
func proseLines(text string) iter.Seq2[int, string] {
	return func(yield func(int, string) bool) {
		fenced := false
		for i, line := range strings.Split(text, "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "```") {
				fenced = !fenced
				continue
			}
			if !fenced && !yield(i, line) {
				return
			}
		}
	}
}

// Check returns the backticked names of text (a markdown file's contents)
// that name one of d's packages or types but resolve to nothing.
func (d *Decls) Check(file, text string) []Problem {
	var out []Problem
	for i, line := range proseLines(text) {
		for _, span := range backticked.FindAllStringSubmatch(line, -1) {
			for _, m := range literal.FindAllStringSubmatch(span[1], -1) {
				out = append(out, d.checkLiteral(file, i+1, m[1], m[2])...)
			}
			for _, m := range dotted.FindAllStringSubmatch(span[1], -1) {
				if why := d.resolve(m[1], m[2], m[3]); why != "" {
					name := m[1] + "." + m[2]
					if m[3] != "" {
						name += "." + m[3]
					}
					out = append(out, Problem{File: file, Line: i + 1, Name: name, Why: why})
				}
			}
		}
	}
	return out
}

// literal finds a composite literal that lists field names:
// `CallRequest{Tool, Arguments, Caller}` (values and nested braces are not
// read: only a plain list of names).
var literal = regexp.MustCompile(`(?:^|[^A-Za-z0-9_])([A-Z][A-Za-z0-9_]*)\{([A-Za-z0-9_]+(?:, *[A-Za-z0-9_]+)*)\}`)

// checkLiteral reports the names of a `Type{A, B}` span that are no field
// or method of an exported struct type of the module named Type.
func (d *Decls) checkLiteral(file string, line int, typ, list string) []Problem {
	members, ok := d.members[typ]
	if !ok || len(members) == 0 {
		return nil
	}
	var out []Problem
	for _, f := range strings.Split(list, ",") {
		f = strings.TrimSpace(f)
		if f == "" || !isUpper(f) {
			continue
		}
		if !members[f] {
			out = append(out, Problem{File: file, Line: line, Name: typ + "{" + f + "}", Why: "type " + typ + " has no field " + f})
		}
	}
	return out
}

func isUpper(s string) bool { return s != "" && s[0] >= 'A' && s[0] <= 'Z' }

// resolve says why first.second(.third) names nothing, or "" when it
// resolves or is not a name of this module at all.
func (d *Decls) resolve(first, second, third string) string {
	if names, ok := d.pkgs[first]; ok && isLower(first) {
		if !names[second] {
			return "package " + first + " declares no exported " + second
		}
		if third == "" {
			return ""
		}
		if !d.typePkgs[first+"."+second] {
			return "" // pkg.Func.X or pkg.Var.X: a value's member is not checked
		}
		if !d.members[second][third] {
			return first + "." + second + " has no method or field " + third
		}
		return ""
	}
	if members, ok := d.members[first]; ok && !isLower(first) {
		if !members[second] {
			return "type " + first + " has no method or field " + second
		}
	}
	return ""
}

func isLower(s string) bool { return s != "" && s[0] >= 'a' && s[0] <= 'z' }

// Docs lists the markdown files whose names are checked, relative to root:
// README.md, ARCHITECTURE.md, RATIONALE.md and docs/*.md.
func Docs(root string) ([]string, error) {
	files := []string{"README.md", "ARCHITECTURE.md", "RATIONALE.md"}
	more, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		return nil, err
	}
	for _, m := range more {
		rel, _ := filepath.Rel(root, m)
		files = append(files, rel)
	}
	sort.Strings(files[3:])
	return files, nil
}

// GoBlock returns the first fenced ```go block of text, without its fences.
func GoBlock(text string) (string, bool) {
	start := strings.Index(text, "```go\n")
	if start < 0 {
		return "", false
	}
	rest := text[start+len("```go\n"):]
	end := strings.Index(rest, "```")
	if end < 0 {
		return "", false
	}
	return rest[:end], true
}

// repoPath matches a backticked span that names a file or folder of the
// repository: it starts with one of its top-level folders (or is a file
// at the top) and holds only path characters.
var repoPath = regexp.MustCompile(`^(?:[a-z][a-z0-9_.-]*/)+[A-Za-z0-9_.-]*$|^[A-Za-z0-9_-]+\.(?:go|md|json|ts|mjs|sh|yaml|conf)$`)

// goName matches a path followed by a Go name: `state/statetest.TestStore`.
var goName = regexp.MustCompile(`\.[A-Z][A-Za-z0-9_]*$`)

// CheckPaths returns the backticked repository paths of text (a markdown
// file's contents, at file relative to root) that do not exist. A path is
// looked for from the repository's root, then from the doc's own folder and
// the folder of the package the doc is named after (docs/vectorindex.md:
// vectorindex/), then,
// for a bare file name, in the folder of the nearest path named before it on
// the same line ("`runtime/globals.go` and `setup.go`"); a bare name with no
// such folder is not checked; a span with a wildcard or braces is a pattern
// and is skipped,
// and only spans whose first folder exists at the root count as paths (so
// `server/tool` in prose is not one).
func CheckPaths(root, file, text string, exists func(string) bool) []Problem {
	var out []Problem
	for i, line := range proseLines(text) {
		lastDir := ""
		for _, span := range backticked.FindAllStringSubmatch(line, -1) {
			p := strings.TrimSuffix(span[1], "/...") // a Go package pattern names its folder
			if strings.ContainsAny(p, "*{}<> ") || !repoPath.MatchString(p) || goName.MatchString(p) {
				continue
			}
			if dir, _, ok := strings.Cut(p, "/"); ok && !exists(dir) {
				continue // not a path of this repository
			}
			// docs/vectorindex.md may name vectorindex's files from its folder
			subject := strings.TrimSuffix(filepath.Base(file), ".md")
			clean := strings.TrimSuffix(p, "/")
			found := exists(clean) || exists(filepath.Join(filepath.Dir(file), clean)) || exists(filepath.Join(subject, clean))
			if !found && !strings.Contains(p, "/") && lastDir != "" {
				found = exists(filepath.Join(lastDir, p))
			}
			if strings.Contains(p, "/") {
				if strings.HasSuffix(p, "/") {
					lastDir = p
				} else {
					lastDir = filepath.Dir(p)
				}
			}
			if !found && !strings.Contains(p, "/") {
				continue // a bare name with no folder to look in: not checked
			}
			if !found {
				out = append(out, Problem{File: file, Line: i + 1, Name: p, Why: "no such file or folder in the repository"})
			}
		}
	}
	return out
}

// TablePackages returns the folders the first column of ARCHITECTURE.md's
// package table names, braces expanded (`runtime/internal/{web,intl}/`),
// without trailing slashes; a folder written with "/..." stands for itself
// and everything below it and keeps that suffix.
func TablePackages(architecture string) []string {
	var out []string
	inTable := false
	for _, line := range strings.Split(architecture, "\n") {
		if strings.HasPrefix(line, "| package |") {
			inTable = true
			continue
		}
		if inTable && !strings.HasPrefix(line, "|") {
			break
		}
		if !inTable || strings.HasPrefix(line, "|---") {
			continue
		}
		cell := strings.Split(line, "|")[1]
		for _, span := range backticked.FindAllStringSubmatch(cell, -1) {
			out = append(out, expandBraces(strings.TrimSuffix(span[1], "/"))...)
		}
	}
	return out
}

func expandBraces(p string) []string {
	open := strings.Index(p, "{")
	end := strings.Index(p, "}")
	if open < 0 || end < open {
		return []string{p}
	}
	var out []string
	for _, alt := range strings.Split(p[open+1:end], ",") {
		out = append(out, expandBraces(p[:open]+strings.TrimSpace(alt)+p[end+1:])...)
	}
	return out
}

// Covers reports whether the table's folders name dir: exactly, or by a
// folder written with "/..." above it.
func Covers(table []string, dir string) bool {
	for _, t := range table {
		if t == dir {
			return true
		}
		if base, ok := strings.CutSuffix(t, "/..."); ok && (dir == base || strings.HasPrefix(dir, base+"/")) {
			return true
		}
	}
	return false
}

// QuickStart is one command of README's quick starts: a `$ ` line of a
// ```sh block under "## Quick starts", and the lines shown after it, each of
// which its output must contain.
type QuickStart struct {
	Line    int    // in README.md, 1-based
	Command string // without the "$ "
	Want    []string
}

// QuickStarts returns README's quick-start commands in order. A command's
// expected lines are matched without their indentation, so a block can show
// a few lines of a long answer as they appear in it.
func QuickStarts(readme string) []QuickStart {
	var out []QuickStart
	inSection, inBlock := false, false
	for i, line := range strings.Split(readme, "\n") {
		switch {
		case strings.HasPrefix(line, "## "):
			inSection = line == "## Quick starts"
		case !inSection:
		case strings.HasPrefix(line, "```"):
			inBlock = !inBlock && line == "```sh"
		case !inBlock:
		case strings.HasPrefix(line, "$ "):
			out = append(out, QuickStart{Line: i + 1, Command: strings.TrimPrefix(line, "$ ")})
		case len(out) > 0 && strings.TrimSpace(line) != "":
			q := &out[len(out)-1]
			q.Want = append(q.Want, strings.TrimSpace(line))
		}
	}
	return out
}
