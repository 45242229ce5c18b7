package runtime

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/dop251/goja"

	"github.com/sandboxrt/sandbox/internal/bytesize"
	"github.com/sandboxrt/sandbox/runtime/internal/inspect"
	"github.com/sandboxrt/sandbox/runtime/internal/jsenv"
)

// consoleState captures console output under Limits.OutputBytes. Output never
// reaches the host's stdout: entries go to vmSide.log, in order, with levels.
type consoleState struct {
	e         *execution
	obj       *goja.Object // the global console
	limit     int
	used      int
	truncated bool
	dropped   int // entries dropped past the limit
	indent    int // console.group depth
	counts    map[string]int
	timers    map[string]time.Time
}

// maxEntryBytes caps one console call, so that one huge value cannot take the
// whole output budget in a single entry without a note.
const maxEntryBytes = 64 << 10

// logEntryOverhead is what each console entry costs beyond its text, in the
// output budget: an empty console.log() is not free (it is an entry in the
// result, a frame on the pipe), or a loop of them would never hit the limit.
const logEntryOverhead = 32

// installConsole defines the global console, an object without its methods:
// those (19 native functions, a fifth of a fresh VM's CPU) are added by
// installMethods when the run's code names console, which is the only way
// agent code reaches them (globals.go: a family is installed when named).
// The object itself is there for every run, so the global names a snippet
// sees are the same whether it logs or not.
func (e *execution) installConsole() error {
	c := &consoleState{e: e, limit: e.limits.OutputBytes}
	e.console = c
	vm := e.vm
	c.obj = vm.NewObject()
	return vm.GlobalObject().DefineDataProperty("console", c.obj, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
}

// consoleNames are the names that give a run the console's methods.
var consoleNames = []string{"console"}

// installMethods gives the console object its methods, before any of the
// run's code runs.
func (c *consoleState) installMethods() error {
	vm := c.e.vm
	c.counts, c.timers = map[string]int{}, map[string]time.Time{}
	level := func(l LogLevel) func(goja.FunctionCall) goja.Value {
		return func(call goja.FunctionCall) goja.Value {
			c.emit(l, call.Arguments)
			return goja.Undefined()
		}
	}
	methods := map[string]func(goja.FunctionCall) goja.Value{
		"log":   level(LevelLog),
		"info":  level(LevelInfo),
		"warn":  level(LevelWarn),
		"error": level(LevelError),
		"debug": level(LevelDebug),
		"dir":   level(LevelLog),
		"table": level(LevelLog),
		"trace": func(call goja.FunctionCall) goja.Value {
			msg := c.format(call.Arguments)
			stack := formatStack(vm.CaptureCallStack(10, nil))
			c.write(LevelDebug, "Trace: "+msg+"\n"+stack)
			return goja.Undefined()
		},
		"assert": func(call goja.FunctionCall) goja.Value {
			if call.Argument(0).ToBoolean() {
				return goja.Undefined()
			}
			msg := "Assertion failed"
			if len(call.Arguments) > 1 {
				msg += ": " + c.format(call.Arguments[1:])
			}
			c.write(LevelError, msg)
			return goja.Undefined()
		},
		"group": func(call goja.FunctionCall) goja.Value {
			if len(call.Arguments) > 0 {
				c.emit(LevelLog, call.Arguments)
			}
			c.indent++
			return goja.Undefined()
		},
		"groupEnd": func(goja.FunctionCall) goja.Value {
			if c.indent > 0 {
				c.indent--
			}
			return goja.Undefined()
		},
		"count": func(call goja.FunctionCall) goja.Value {
			label := labelOf(call)
			c.counts[label]++
			c.write(LevelLog, fmt.Sprintf("%s: %d", label, c.counts[label]))
			return goja.Undefined()
		},
		"countReset": func(call goja.FunctionCall) goja.Value {
			delete(c.counts, labelOf(call))
			return goja.Undefined()
		},
		"time": func(call goja.FunctionCall) goja.Value {
			c.timers[labelOf(call)] = time.Now()
			return goja.Undefined()
		},
		"timeLog": func(call goja.FunctionCall) goja.Value { c.timeLog(labelOf(call), false); return goja.Undefined() },
		"timeEnd": func(call goja.FunctionCall) goja.Value { c.timeLog(labelOf(call), true); return goja.Undefined() },
	}
	methods["groupCollapsed"] = methods["group"]
	for name, fn := range methods {
		if err := c.obj.DefineDataProperty(name, jsenv.NativeFunc(vm, name, fn), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_TRUE); err != nil {
			return err
		}
	}
	return nil
}

func labelOf(call goja.FunctionCall) string {
	if a := call.Argument(0); !goja.IsUndefined(a) {
		return a.String()
	}
	return "default"
}

func (c *consoleState) timeLog(label string, end bool) {
	start, ok := c.timers[label]
	if !ok {
		c.write(LevelWarn, fmt.Sprintf("Warning: No such label '%s' for console.time%s()", label, map[bool]string{true: "End", false: "Log"}[end]))
		return
	}
	if end {
		delete(c.timers, label)
	}
	c.write(LevelLog, fmt.Sprintf("%s: %.3fms", label, float64(time.Since(start).Microseconds())/1000))
}

func (c *consoleState) emit(level LogLevel, args []goja.Value) {
	if c.truncated {
		c.dropped++
		return
	}
	c.write(level, c.format(args))
}

func (c *consoleState) write(level LogLevel, msg string) {
	if c.truncated {
		c.dropped++
		return
	}
	if c.indent > 0 {
		pad := strings.Repeat("  ", c.indent)
		msg = pad + strings.ReplaceAll(msg, "\n", "\n"+pad)
	}
	if c.used+len(msg)+logEntryOverhead > c.limit {
		room := c.limit - c.used - logEntryOverhead
		c.truncated = true
		c.dropped++
		if room <= 0 {
			return
		}
		msg = truncateUTF8(msg, room)
	}
	c.used += len(msg) + logEntryOverhead
	c.e.side.log(LogEntry{Level: level, Message: msg})
}

// format renders console arguments as Node does: a leading format string
// with %s %d %i %f %j %o %O %c, then each remaining value, space separated.
func (c *consoleState) format(args []goja.Value) string {
	budget := min(maxEntryBytes, max(c.limit-c.used, 0)+1)
	ins := inspect.New(c.e.env, budget)
	var b strings.Builder
	rest := args
	if len(args) > 0 {
		if s, ok := primitiveString(args[0]); ok && strings.ContainsRune(s, '%') {
			rest = args[1:]
			for i := 0; i < len(s); i++ {
				ch := s[i]
				if ch != '%' || i+1 >= len(s) {
					b.WriteByte(ch)
					continue
				}
				verb := s[i+1]
				if verb == '%' {
					b.WriteByte('%')
					i++
					continue
				}
				if !strings.ContainsRune("sdifjoOc", rune(verb)) || len(rest) == 0 {
					b.WriteByte(ch)
					continue
				}
				arg := rest[0]
				rest = rest[1:]
				i++
				switch verb {
				case 's':
					if str, ok := primitiveString(arg); ok {
						b.WriteString(str)
					} else {
						b.WriteString(ins.Inspect(arg, 1))
					}
				case 'd', 'i':
					n := arg.ToFloat()
					if verb == 'i' {
						n = math.Trunc(n)
					}
					b.WriteString(inspect.Number(n))
				case 'f':
					b.WriteString(inspect.Number(arg.ToFloat()))
				case 'j':
					b.WriteString(ins.Inspect(arg, 4))
				case 'o', 'O':
					b.WriteString(ins.Inspect(arg, 4))
				case 'c': // CSS has no meaning here
				}
				if b.Len() > budget {
					break
				}
			}
		}
	}
	for i, a := range rest {
		if b.Len() > budget {
			break
		}
		if i > 0 || b.Len() > 0 {
			b.WriteByte(' ')
		}
		if s, ok := primitiveString(a); ok {
			b.WriteString(truncateUTF8(s, budget))
			continue
		}
		b.WriteString(ins.Inspect(a, 0))
	}
	out := b.String()
	if len(out) > maxEntryBytes {
		out = truncateUTF8(out, maxEntryBytes) + fmt.Sprintf("… [entry truncated at %s]", bytesize.Format(maxEntryBytes))
	}
	return out
}

// primitiveString returns v's text when v is a string primitive (not a
// String object, which console shows as [String: 'x']).
func primitiveString(v goja.Value) (string, bool) {
	if _, isObj := v.(*goja.Object); isObj || v == nil {
		return "", false
	}
	s, ok := v.Export().(string)
	return s, ok
}

// truncateUTF8 cuts s to at most n bytes without splitting a character: the
// output limits cut text where inspect cuts values.
var truncateUTF8 = inspect.TruncateUTF8
