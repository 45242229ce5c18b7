package runtime

import (
	"crypto/sha256"
	"fmt"
	"regexp"
	"strings"

	"github.com/dop251/goja/ast"
	"github.com/evanw/esbuild/pkg/api"

	"github.com/sandboxrt/sandbox/internal/bytesize"
	"github.com/sandboxrt/sandbox/runtime/internal/lru"
)

// The snippet is wrapped in an async function before transpiling: esbuild's
// script formats reject top-level await and top-level return, both of which
// agent snippets use all the time. The prefix shares the snippet's first line,
// so every line number stays the agent's own; only columns on line 1 shift, by
// len(wrapPrefix), and errors are corrected for that.
const (
	wrapPrefix = "(async () => {"
	wrapSuffix = "\n})()"
)

// goja lacks these (design notes): have esbuild lower them. Async generators
// and for-await are rewritten into generators and promises. (Unicode property
// escapes in regexps are expanded by this package: see regexp_literals.go.)
var unsupportedFeatures = map[string]bool{
	"async-generator": false,
	"for-await":       false,
	"top-level-await": false,
	"using":           false,
	"decorators":      false,
}

// transpiled is the JavaScript for one snippet, with an inline source map that
// points back at the TypeScript.
type transpiled struct {
	JS    string   `json:"js"`
	Hash  [32]byte `json:"hash"`  // of JS: the worker's compiled-program cache key
	Lines int      `json:"lines"` // of the TypeScript: stack frames past it are the wrapper's
}

// transpileCache remembers transpiles by a hash of the source, bounded in
// bytes: agents re-run the same snippet often, and a large snippet must not
// pin memory that later runs are charged for.
var transpileCache = lru.New[[32]byte, transpileResult](256, 16<<20)

type transpileResult struct {
	t   *transpiled
	err *Error
}

// transpileCached is transpile with the cache. In worker mode it runs in the
// worker: esbuild's parser recurses on nesting, and a snippet nested deeply
// enough overflows the Go stack, a fatal error that must end a worker, never
// the host.
func transpileCached(filename, code string) (*transpiled, *Error) {
	key := sha256.Sum256([]byte(filename + "\x00" + code))
	if tr, ok := transpileCache.Get(key); ok {
		if tr.err != nil {
			e := *tr.err
			return nil, &e
		}
		return tr.t, nil
	}
	t, e := transpile(filename, code)
	cost := len(code)
	if t != nil {
		cost += len(t.JS)
	}
	transpileCache.Put(key, transpileResult{t: t, err: e}, cost)
	if e != nil {
		c := *e
		return nil, &c
	}
	return t, nil
}

func transformOptions(filename string) api.TransformOptions {
	return api.TransformOptions{
		Loader:         api.LoaderTS,
		Target:         api.ES2022,
		Supported:      unsupportedFeatures,
		Sourcemap:      api.SourceMapInline,
		SourcesContent: api.SourcesContentExclude,
		Sourcefile:     filename,
		LogLevel:       api.LogLevelSilent,
	}
}

// transpile turns a snippet's TypeScript into JavaScript goja can run.
//
// Text can close the wrapper: `return 1\n})(); evil(); (() => {` is valid
// once wrapped, and would run outside the snippet's function. Such code
// that still transpiles is refused where the program is compiled (see
// checkWrapper: the parse is there anyway); code that does not transpile
// is explained here, at the snippet's own line.
func transpile(filename, code string) (*transpiled, *Error) {
	res := api.Transform(wrapPrefix+code+wrapSuffix, transformOptions(filename))
	if len(res.Errors) > 0 {
		return nil, explainCompileErrors(filename, code, res.Errors)
	}
	js := string(res.Code)
	return &transpiled{JS: js, Hash: sha256.Sum256([]byte(js)), Lines: strings.Count(code, "\n") + 1}, nil
}

// closesWrapper is the error for a snippet that closes the function it runs
// in.
const closesWrapper = "this `}` closes the function the snippet runs in: a snippet is the body of an async function, " +
	"so every `}` must close a `{` of the snippet's own; remove the extra `}` (or add the `{` it should close)"

// explainCompileErrors turns esbuild's errors on the wrapped snippet into
// one error at the snippet's own line. The wrapper hides two kinds of
// mistakes: an extra `}` closes the wrapper's function (esbuild then
// complains about whatever follows, or about the wrapper's own tail), and a
// `{`, comment or template left open swallows the tail (esbuild points past
// the end of the snippet). For those, the snippet is transformed again on
// its own, unwrapped, where an extra `}` is an error exactly where it is and
// an unclosed one ends at the snippet's end.
func explainCompileErrors(filename, code string, errs []api.Message) *Error {
	lines := strings.Count(code, "\n") + 1
	first := errs[0]
	if m, ok := unwrappedError(filename, code); ok {
		switch {
		case m.Text == `Unexpected "}"`:
			e := compileError(filename, code, m, 0, 1)
			e.Message = closesWrapper
			return e
		case first.Location == nil || first.Location.Line > lines:
			e := compileError(filename, code, m, 0, 1)
			if m.Text == "Unexpected end of file" {
				e.Message = "the snippet ends with a `{`, `(` or `[` that is never closed"
			}
			return e
		}
	}
	return compileError(filename, code, first, len(wrapPrefix), len(errs))
}

// unwrappedError is the first syntax error esbuild finds in the snippet on
// its own, ignoring what only the missing wrapper causes (top-level await
// and return).
func unwrappedError(filename, code string) (api.Message, bool) {
	opts := transformOptions(filename)
	opts.Sourcemap = api.SourceMapNone
	for _, m := range api.Transform(code, opts).Errors {
		if m.Location != nil && !strings.HasPrefix(m.Text, "Top-level") {
			return m, true
		}
	}
	return api.Message{}, false
}

// compileError locates an esbuild error in the snippet. shift is how many
// columns the text had in front of the snippet's first line (the wrapper's
// prefix, or none). An error past the snippet's end (in the wrapper's tail)
// is put at its end. A note that says where the offending construct starts
// (an unterminated comment) gives the location instead.
func compileError(filename, code string, m api.Message, shift, count int) *Error {
	e := &Error{Kind: KindCompile, File: filename, Message: m.Text}
	loc := m.Location
	for _, n := range m.Notes {
		if n.Location != nil && strings.Contains(n.Text, "starts here") {
			loc = n.Location
			e.Message += " (" + strings.TrimSuffix(strings.ToLower(n.Text[:1])+n.Text[1:], ":") + ")"
			break
		}
	}
	if loc != nil {
		line, col := loc.Line, loc.Column
		if line == 1 {
			col -= shift
		}
		if lines := strings.Count(code, "\n") + 1; line > lines {
			line, col = lines, len(strings.TrimRight(sourceLine(code, lines), "\r"))
		}
		e.Line = line
		e.Column = max(col, 0) + 1
		if hint := snippetHint(sourceLine(code, line)); hint != "" {
			e.Message = hint
		}
		e.Stack = codeFrame(code, e.Line, e.Column)
	}
	if count > 1 {
		e.Message += fmt.Sprintf(" (and %d more errors)", count-1)
	}
	return e
}

var (
	importExportRE = regexp.MustCompile(`^\s*(import\s*[\w{*'"]|import\s*$|export\s)`)
	namespaceRE    = regexp.MustCompile(`^\s*(declare\s+)?(namespace|module|global)\s+[\w"'{.]`)
)

// snippetHint explains the mistakes that come from writing a snippet as if it
// were a module: the generic parser message ("Unexpected \"fs\"") says nothing
// useful about them.
func snippetHint(line string) string {
	switch {
	case importExportRE.MatchString(line):
		return "import and export are not available: a snippet is not a module and cannot load any. " +
			"The tools bound to this run are globals (e.g. `await server.toolName({...})`); " +
			"return the result with `return value` instead of exporting it"
	case namespaceRE.MatchString(line):
		return "TypeScript namespaces and module declarations cannot be written in a snippet; " +
			"use a plain object or functions instead"
	}
	return ""
}

func sourceLine(code string, line int) string {
	for i := 1; i < line; i++ {
		nl := strings.IndexByte(code, '\n')
		if nl < 0 {
			return ""
		}
		code = code[nl+1:]
	}
	if nl := strings.IndexByte(code, '\n'); nl >= 0 {
		code = code[:nl]
	}
	return code
}

// codeFrame shows the offending line with a caret, as compilers do.
func codeFrame(code string, line, col int) string {
	text := strings.TrimRight(sourceLine(code, line), "\r")
	if text == "" || col < 1 {
		return ""
	}
	const maxWidth = 160
	start := 0
	if col > maxWidth-20 {
		start = col - (maxWidth - 20)
	}
	if start > len(text) {
		start = len(text)
	}
	shown := text[start:]
	if len(shown) > maxWidth {
		shown = shown[:maxWidth]
	}
	caret := col - 1 - start
	if caret < 0 {
		caret = 0
	}
	if caret > len(shown) {
		caret = len(shown)
	}
	prefix := fmt.Sprintf("%5d | ", line)
	return prefix + shown + "\n" + strings.Repeat(" ", len(prefix)-2) + "| " + strings.Repeat(" ", caret) + "^"
}

// checkCode applies the limits that hold before transpiling.
func checkCode(code string, limits Limits) *Error {
	if len(code) > limits.CodeBytes {
		return &Error{Kind: KindLimit, Limit: LimitCodeSize, Message: fmt.Sprintf(
			"the snippet is %s, over the %s code size limit; split the work into smaller snippets"+RaiseLimitAdvice,
			bytesize.Format(int64(len(code))), bytesize.Format(int64(limits.CodeBytes)))}
	}
	if strings.TrimSpace(code) == "" {
		return &Error{Kind: KindCompile, Message: "the snippet is empty; write TypeScript that returns a value, e.g. `return 1 + 1`"}
	}
	if strings.ContainsRune(code, 0) {
		return &Error{Kind: KindCompile, Message: "the snippet contains a NUL byte; send it as UTF-8 text"}
	}
	return nil
}

// sanitizeFilename keeps error locations and stack parsing unambiguous: a
// base name of safe characters.
func sanitizeFilename(name string) string {
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	var b strings.Builder
	for _, r := range name {
		if r == '.' || r == '-' || r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		}
	}
	s := b.String()
	if s == "" || strings.Trim(s, ".") == "" {
		return "snippet.ts"
	}
	if len(s) > 64 {
		s = s[:64]
	}
	return s
}

// checkWrapper makes sure the snippet stayed inside its wrapper: the program
// must be esbuild's helpers (var __name = ...) and then exactly one
// statement, the call of the wrapper's async function with no arguments.
// Text that closes the wrapper and opens something new before its tail
// (`})(); evil(); (() => {`) always breaks that shape: after the wrapper's
// `}` only `)()` and the end may follow, and the end of the text is the
// wrapper's own `})()`. The error points at the `}` that closed the
// wrapper, through the source map.
func checkWrapper(prog *ast.Program) error {
	i := 0
	for i < len(prog.Body) && isHelper(prog.Body[i]) {
		i++
	}
	if i == len(prog.Body)-1 && isWrapperCall(prog.Body[i]) {
		return nil
	}
	err := &located{msg: closesWrapper}
	if i < len(prog.Body) {
		if arrow := leftmostArrow(prog.Body[i]); arrow != nil {
			if b, ok := arrow.Body.(*ast.BlockStatement); ok {
				err.pos = prog.File.Position(int(b.RightBrace) - prog.File.Base())
			}
		}
	}
	return &wrapperError{err}
}

// wrapperError is checkWrapper's error: compileFailure reports it as it is.
type wrapperError struct{ *located }

func isHelper(st ast.Statement) bool {
	v, ok := st.(*ast.VariableStatement)
	if !ok {
		return false
	}
	for _, b := range v.List {
		id, ok := b.Target.(*ast.Identifier)
		if !ok || !strings.HasPrefix(string(id.Name), "__") {
			return false
		}
	}
	return true
}

func isWrapperCall(st ast.Statement) bool {
	es, ok := st.(*ast.ExpressionStatement)
	if !ok {
		return false
	}
	call, ok := es.Expression.(*ast.CallExpression)
	if !ok || len(call.ArgumentList) != 0 {
		return false
	}
	arrow, ok := call.Callee.(*ast.ArrowFunctionLiteral)
	if !ok || !arrow.Async {
		return false
	}
	_, block := arrow.Body.(*ast.BlockStatement)
	return block
}

// leftmostArrow finds the function an expression statement starts with:
// the wrapper's, in a program whose wrapper was closed early.
func leftmostArrow(st ast.Statement) *ast.ArrowFunctionLiteral {
	es, ok := st.(*ast.ExpressionStatement)
	if !ok {
		return nil
	}
	e := es.Expression
	for {
		switch x := e.(type) {
		case *ast.ArrowFunctionLiteral:
			return x
		case *ast.CallExpression:
			e = x.Callee
		case *ast.SequenceExpression:
			if len(x.Sequence) == 0 {
				return nil
			}
			e = x.Sequence[0]
		case *ast.BinaryExpression:
			e = x.Left
		case *ast.AssignExpression:
			e = x.Left
		case *ast.ConditionalExpression:
			e = x.Test
		case *ast.DotExpression:
			e = x.Left
		case *ast.BracketExpression:
			e = x.Left
		case *ast.TemplateLiteral:
			e = x.Tag
		default:
			return nil
		}
	}
}
