package gateway

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"testing"
)

// TestAuditKindsListsEveryKind: every AuditKind constant declared in the
// package (but the refused requests', written apart) is in AuditKinds, so
// a kind added later is searchable in the console without a second edit.
func TestAuditKindsListsEveryKind(t *testing.T) {
	listed := map[AuditKind]bool{}
	for _, k := range AuditKinds() {
		if listed[k] {
			t.Errorf("%q listed twice", k)
		}
		listed[k] = true
	}
	files, _ := filepath.Glob("*.go")
	fset := token.NewFileSet()
	found := 0
	for _, f := range files {
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			vs, ok := n.(*ast.ValueSpec)
			if !ok || vs.Type == nil || len(vs.Values) != len(vs.Names) {
				return true
			}
			if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "AuditKind" {
				return true
			}
			for i, v := range vs.Values {
				lit, ok := v.(*ast.BasicLit)
				if !ok {
					continue
				}
				k, _ := strconv.Unquote(lit.Value)
				found++
				if AuditKind(k) != AuditKindAuth && !listed[AuditKind(k)] {
					t.Errorf("%s (%q) is not in AuditKinds", vs.Names[i].Name, k)
				}
			}
			return true
		})
	}
	if found < len(listed) {
		t.Fatalf("found %d kinds declared, fewer than the %d listed", found, len(listed))
	}
}
