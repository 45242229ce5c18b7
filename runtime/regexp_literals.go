package runtime

import (
	"reflect"
	"strings"

	"github.com/dop251/goja/ast"
)

// rewriteRegExpLiterals expands \p{...} in the program's u-flag regexp
// literals (goja would silently mis-match them) before it is compiled. It
// walks the AST by reflection, and only when the source has a property escape
// at all, so ordinary snippets pay nothing. A property Go has no table for is
// reported as a compile error.
func rewriteRegExpLiterals(prog *ast.Program, js string) error {
	if !strings.Contains(js, `\p{`) && !strings.Contains(js, `\P{`) {
		return nil
	}
	var firstErr error
	seen := map[uintptr]bool{}
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Pointer:
			if v.IsNil() || seen[v.Pointer()] {
				return
			}
			seen[v.Pointer()] = true
			if re, ok := v.Interface().(*ast.RegExpLiteral); ok {
				if strings.ContainsAny(re.Flags, "uv") && (strings.Contains(re.Pattern, `\p{`) || strings.Contains(re.Pattern, `\P{`)) {
					out, err := expandUnicodeProperties(re.Pattern)
					if err != nil && firstErr == nil {
						firstErr = &located{pos: prog.File.Position(int(re.Idx) - prog.File.Base()), msg: err.Error()}
					}
					if err == nil {
						re.Pattern = out
						re.Literal = "/" + out + "/" + re.Flags
					}
				}
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
	walk(reflect.ValueOf(prog))
	return firstErr
}
