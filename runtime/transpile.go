package runtime

import (
	"crypto/sha256"
	"fmt"
	"regexp"
	"strings"

	"github.com/evanw/esbuild/pkg/api"
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
var transpileCache = newLRU[[32]byte, transpileResult](256, 16<<20)

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
	if tr, ok := transpileCache.get(key); ok {
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
	transpileCache.put(key, transpileResult{t: t, err: e}, cost)
	if e != nil {
		c := *e
		return nil, &c
	}
	return t, nil
}

// transpile turns a snippet's TypeScript into JavaScript goja can run.
func transpile(filename, code string) (*transpiled, *Error) {
	res := api.Transform(wrapPrefix+code+wrapSuffix, api.TransformOptions{
		Loader:         api.LoaderTS,
		Target:         api.ES2022,
		Supported:      unsupportedFeatures,
		Sourcemap:      api.SourceMapInline,
		SourcesContent: api.SourcesContentExclude,
		Sourcefile:     filename,
		LogLevel:       api.LogLevelSilent,
	})
	if len(res.Errors) > 0 {
		return nil, compileError(filename, code, res.Errors[0], len(res.Errors))
	}
	js := string(res.Code)
	return &transpiled{JS: js, Hash: sha256.Sum256([]byte(js)), Lines: strings.Count(code, "\n") + 1}, nil
}

func compileError(filename, code string, m api.Message, count int) *Error {
	e := &Error{Kind: KindCompile, File: filename, Message: m.Text}
	if loc := m.Location; loc != nil {
		e.Line = loc.Line
		col := loc.Column
		if loc.Line == 1 {
			col -= len(wrapPrefix)
		}
		if col < 0 {
			col = 0
		}
		e.Column = col + 1
		if hint := snippetHint(sourceLine(code, loc.Line)); hint != "" {
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
			"The tools bound to this run are globals (e.g. `await github.listCommits({...})`); " +
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
			"the snippet is %s, over the %s code size limit; split the work into smaller snippets or raise the limit",
			formatBytes(int64(len(code))), formatBytes(int64(limits.CodeBytes)))}
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
