package runtime

import (
	"reflect"

	"github.com/dop251/goja/ast"
)

// walkAST calls visit for every pointer in a goja AST (nodes and the
// structs they hold), each once, parents before children; visit returns
// false to skip a node's children. goja's ast has no visitor, and the
// passes below need to reach every expression wherever it sits.
//
// The left operands of a chain of binary operators (1+1+...+1, as deep as
// the chain is long) are followed in a loop, not by recursion: a snippet
// can be 256 KB of one chain, and recursing through it by reflection grew
// and copied a stack of tens of megabytes.
func walkAST(root any, visit func(node any) bool) {
	seen := map[uintptr]bool{}
	var walk func(v reflect.Value)
	enter := func(v reflect.Value) bool {
		if v.IsNil() || seen[v.Pointer()] {
			return false
		}
		seen[v.Pointer()] = true
		return visit(v.Interface())
	}
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Pointer:
			if b, ok := v.Interface().(*ast.BinaryExpression); ok && b != nil {
				for b != nil {
					if !enter(reflect.ValueOf(b)) {
						return
					}
					walk(reflect.ValueOf(&b.Right).Elem())
					next, ok := b.Left.(*ast.BinaryExpression)
					if !ok {
						walk(reflect.ValueOf(&b.Left).Elem())
						return
					}
					b = next
				}
				return
			}
			if !enter(v) {
				return
			}
			walk(v.Elem())
		case reflect.Interface:
			if !v.IsNil() {
				walk(v.Elem())
			}
		case reflect.Struct:
			for i := 0; i < v.NumField(); i++ {
				if f := v.Field(i); f.CanInterface() {
					walk(f)
				}
			}
		case reflect.Slice:
			for i := 0; i < v.Len(); i++ {
				walk(v.Index(i))
			}
		}
	}
	walk(reflect.ValueOf(root))
}
