package runtime

import (
	"strings"

	"github.com/dop251/goja/ast"

	"github.com/sandboxrt/sandbox/runtime/internal/jsregexp"
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
	walkAST(prog, func(node any) bool {
		re, ok := node.(*ast.RegExpLiteral)
		if !ok {
			return true
		}
		if strings.ContainsAny(re.Flags, "uv") && (strings.Contains(re.Pattern, `\p{`) || strings.Contains(re.Pattern, `\P{`)) {
			out, err := jsregexp.ExpandUnicodeProperties(re.Pattern)
			if err != nil && firstErr == nil {
				firstErr = &located{pos: prog.File.Position(int(re.Idx) - prog.File.Base()), msg: err.Error()}
			}
			if err == nil {
				re.Pattern = out
				re.Literal = "/" + out + "/" + re.Flags
			}
		}
		return false
	})
	return firstErr
}
