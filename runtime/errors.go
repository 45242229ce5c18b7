package runtime

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/dop251/goja"

	"github.com/sandboxrt/sandbox/runtime/internal/inspect"
)

// maxStackFrames is how many of the snippet's own frames an error keeps.
const maxStackFrames = 8

// errorFrom turns an error returned by goja into a run error.
func (e *execution) errorFrom(err error) *Error {
	var own *Error
	if errors.As(err, &own) {
		return own
	}
	var interrupted *goja.InterruptedError
	if errors.As(err, &interrupted) {
		if re, ok := interrupted.Value().(*Error); ok {
			return re
		}
		return &Error{Kind: KindInternal, Message: fmt.Sprint(interrupted.Value())}
	}
	var overflow *goja.StackOverflowError
	if errors.As(err, &overflow) {
		out := &Error{Kind: KindLimit, Limit: LimitStackDepth, Message: fmt.Sprintf(
			"maximum call stack size exceeded (%d nested calls); look for unbounded recursion, or rewrite deep recursion as a loop", e.limits.StackDepth)}
		e.locate(out, framesOf(overflow.Stack()))
		return out
	}
	var ex *goja.Exception
	if errors.As(err, &ex) {
		out := e.errorFromValue(ex.Value())
		if out.Line == 0 {
			e.locate(out, framesOf(ex.Stack()))
		}
		return out
	}
	if se, ok := err.(interface{ Error() string }); ok && strings.Contains(se.Error(), "SyntaxError") {
		return &Error{Kind: KindCompile, File: e.filename, Message: se.Error()}
	}
	return &Error{Kind: KindInternal, Message: err.Error()}
}

// errorFromValue describes a thrown (or rejected-with) value.
func (e *execution) errorFromValue(v goja.Value) *Error {
	out := &Error{Kind: KindRuntime}
	obj, isObj := v.(*goja.Object)
	if !isObj || obj.ClassName() != "Error" {
		// `throw "text"` or `throw {…}`: say what it was, as Node does.
		ins := inspect.New(e.env, 2000)
		out.Name = "Uncaught"
		out.Message = safeString(func() string { return ins.Inspect(v, 0) })
		return out
	}
	out.Name = safeString(func() string { return valueString(obj.Get("name")) })
	out.Message = safeString(func() string {
		if m := obj.Get("message"); m != nil && !goja.IsUndefined(m) {
			return m.String()
		}
		return ""
	})
	if out.Name == "MCPToolError" {
		out.Tool = safeString(func() string { return valueString(obj.Get("tool")) })
		out.Code = safeString(func() string { return valueString(obj.Get("code")) })
		if d := obj.Get("data"); d != nil && !goja.IsUndefined(d) {
			if raw, jerr, err := e.toJSON(d, 64<<10); err == nil && jerr == nil && raw != nil {
				out.Data = json.RawMessage(raw)
			}
		}
	}
	stack := safeString(func() string { return valueString(obj.Get("stack")) })
	// The stack starts "Name: message": a message with lines that look like
	// frames (an upstream's error text, say) must not move the location.
	if out.Message != "" {
		if i := strings.Index(stack, out.Message); i >= 0 {
			stack = stack[i+len(out.Message):]
		}
	}
	e.locate(out, parseStack(stack))
	if out.Name == "TypeError" {
		out.Message = explainEngineTypeError(out.Message, stack)
	}
	return out
}

// Caps on the text of an error: a snippet can throw a 40 MB message, and the
// error travels in the result, past the output and result limits.
const (
	maxErrorMessage = 8 << 10
	maxErrorField   = 256
)

// capError bounds every text field of an error, saying where it was cut.
func capError(e *Error) *Error {
	if e == nil {
		return nil
	}
	cut := func(s string, n int) string {
		if len(s) <= n {
			return s
		}
		return truncateUTF8(s, n) + fmt.Sprintf("… [%d more bytes]", len(s)-n)
	}
	e.Message = cut(e.Message, maxErrorMessage)
	e.Stack = cut(e.Stack, maxErrorMessage)
	e.Name = cut(e.Name, maxErrorField)
	e.Tool = cut(e.Tool, maxErrorField)
	e.Code = cut(e.Code, maxErrorField)
	e.File = cut(e.File, maxErrorField)
	if len(e.Data) > 64<<10 {
		e.Data = nil
	}
	return e
}

func valueString(v goja.Value) string {
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		return ""
	}
	return v.String()
}

// safeString runs f, which may call user code (a getter, a toString), and
// gives "" if that throws a catchable exception. Interrupts propagate.
func safeString(f func() string) (s string) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(*goja.Exception); ok {
				s = ""
				return
			}
			panic(r)
		}
	}()
	return f()
}

// frame is one stack frame in the snippet's TypeScript.
type frame struct {
	fn        string
	file      string
	line, col int
}

func framesOf(stack []goja.StackFrame) []frame {
	out := make([]frame, 0, len(stack))
	for _, f := range stack {
		p := f.Position()
		if p.Filename == "" {
			continue // native
		}
		out = append(out, frame{fn: f.FuncName(), file: p.Filename, line: p.Line, col: p.Column})
	}
	return out
}

// goja writes frames as "at fn (file:line:col(pc))" or "at file:line:col(pc)".
var stackLineRE = regexp.MustCompile(`^\s*at (?:(.*?) \()?([^\s():]+):(\d+):(\d+)\(\d+\)\)?\s*$`)

func parseStack(stack string) []frame {
	var out []frame
	for _, line := range strings.Split(stack, "\n") {
		m := stackLineRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		l, _ := strconv.Atoi(m[3])
		c, _ := strconv.Atoi(m[4])
		out = append(out, frame{fn: m[1], file: m[2], line: l, col: c})
	}
	return out
}

// locate fills the error's position and short stack from the frames that are
// in the snippet itself (the source map already turned them into TypeScript
// positions), correcting line 1 for the async wrapper.
func (e *execution) locate(out *Error, frames []frame) {
	var b strings.Builder
	n := 0
	for _, f := range frames {
		if f.file != e.filename {
			continue // esbuild's helpers, or the wrapper's own lines
		}
		if f.line > e.sourceLines {
			continue // the wrapper's closing line
		}
		col := f.col + 1 // source-mapped columns are 0-based
		if f.line == 1 {
			col -= len(wrapPrefix)
			if col < 1 {
				col = 1
			}
		}
		if n == 0 {
			out.File, out.Line, out.Column = f.file, f.line, col
		}
		if n < maxStackFrames {
			fn := f.fn
			if fn == "" || fn == "<anonymous>" {
				fn = "<snippet>"
			}
			if n > 0 {
				b.WriteByte('\n')
			}
			fmt.Fprintf(&b, "    at %s (%s:%d:%d)", fn, f.file, f.line, col)
		}
		n++
	}
	if n > 0 {
		out.Stack = b.String()
	}
}

// formatStack writes captured frames as goja does, so an MCPToolError created
// later carries its call site in the usual format.
func formatStack(stack []goja.StackFrame) string {
	var b strings.Builder
	for _, f := range stack {
		p := f.Position()
		if p.Filename == "" {
			continue
		}
		b.WriteString("\tat ")
		if fn := f.FuncName(); fn != "" {
			fmt.Fprintf(&b, "%s (%s:%d:%d(0))\n", fn, p.Filename, p.Line, p.Column)
		} else {
			fmt.Fprintf(&b, "%s:%d:%d(0)\n", p.Filename, p.Line, p.Column)
		}
	}
	return b.String()
}

// reportUnhandledRejections adds a warning for each promise that was rejected
// and never handled. The run keeps its result (its work is not thrown away),
// but the agent learns that something failed unobserved.
func (e *execution) reportUnhandledRejections(main *goja.Promise) {
	for _, p := range e.unhandled {
		if p == main || p.State() != goja.PromiseStateRejected {
			continue
		}
		err := e.errorFromValue(p.Result())
		msg := "Unhandled promise rejection: " + err.Error()
		e.console.write(LevelWarn, msg)
	}
}
