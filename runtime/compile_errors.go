package runtime

import (
	"encoding/base64"
	"errors"
	"regexp"
	"strconv"
	"strings"

	"github.com/dop251/goja"
	"github.com/dop251/goja/file"
	"github.com/dop251/goja/parser"
	"github.com/go-sourcemap/sourcemap"
)

// located is an error at a position of the transpiled program.
type located struct {
	pos file.Position // source-mapped when the map covered it
	msg string
}

func (l *located) Error() string { return l.msg }

// compileFailure explains why goja could not compile what esbuild produced:
// a construct goja lacks that esbuild passed through (dynamic import()), or a
// regexp property escape with no Unicode table. It locates the problem in the
// TypeScript through the inline source map.
func (e *execution) compileFailure(t *transpiled, err error) *Error {
	out := &Error{Kind: KindCompile, File: e.filename}
	msg := err.Error()
	var pos file.Position
	var list parser.ErrorList
	var single *parser.Error
	var cse *goja.CompilerSyntaxError
	var loc *located
	var wrapper *wrapperError
	switch {
	case errors.As(err, &wrapper):
		pos, msg = wrapper.pos, wrapper.msg
	case errors.As(err, &loc):
		pos, msg = loc.pos, loc.msg
	case errors.As(err, &list) && len(list) > 0:
		pos, msg = mapGenerated(t.JS, list[0].Position), list[0].Message
	case errors.As(err, &single):
		pos, msg = mapGenerated(t.JS, single.Position), single.Message
	case errors.As(err, &cse) && cse.File != nil:
		pos, msg = cse.File.Position(cse.Offset), cse.Message
	case errors.As(err, &cse):
		// goja.Parse flattens parser errors into "file: Line L:C message".
		msg = cse.Message
		if m := parserMessageRE.FindStringSubmatch(msg); m != nil {
			line, _ := strconv.Atoi(m[1])
			col, _ := strconv.Atoi(m[2])
			pos, msg = mapGenerated(t.JS, file.Position{Line: line, Column: col}), m[3]
		}
	}
	if pos.Filename == e.filename && pos.Line > 0 && pos.Line <= t.Lines {
		out.Line = pos.Line
		out.Column = pos.Column + 1
		if pos.Line == 1 {
			out.Column = max(out.Column-len(wrapPrefix), 1)
		}
	}
	switch {
	case wrapper != nil: // written for the agent already
	case strings.Contains(t.JS, "import(") && strings.Contains(msg, "reserved word"):
		msg = "import() is not available: a snippet cannot load modules. The tools bound to this run are globals (e.g. `await server.toolName({...})`)"
	case !strings.Contains(msg, "regular expression"):
		msg = "the snippet uses syntax this runtime cannot run: " + msg
	}
	out.Message = msg
	return out
}

var parserMessageRE = regexp.MustCompile(`Line (\d+):(\d+) (.*)$`)

// mapGenerated maps a position in the transpiled JavaScript back to the
// TypeScript with the inline source map (goja maps runtime positions itself,
// but not the parser's).
func mapGenerated(js string, p file.Position) file.Position {
	const marker = "//# sourceMappingURL=data:application/json;base64,"
	i := strings.LastIndex(js, marker)
	if i < 0 {
		return p
	}
	data, err := base64.StdEncoding.DecodeString(strings.TrimSpace(js[i+len(marker):]))
	if err != nil {
		return p
	}
	sm, err := sourcemap.Parse("", data)
	if err != nil {
		return p
	}
	// goja hands the map 1-based columns, and so do we, for the same answers.
	if source, _, line, col, ok := sm.Source(p.Line, p.Column); ok {
		return file.Position{Filename: source, Line: line, Column: col}
	}
	return p
}
