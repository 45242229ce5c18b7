package runtime

import (
	"fmt"
	"math"
	"time"

	"github.com/dop251/goja"

	"github.com/sandboxrt/sandbox/runtime/internal/bindings"
	"github.com/sandboxrt/sandbox/runtime/internal/jsenv"
)

// setup prepares a fresh VM before any user code runs: it removes code
// generation, installs console and timers, the families of globals the code
// names (globals.go), and binds the run's tools. The VM then holds only the
// language's built-ins and what is installed here: no require, no file
// system, network, environment or process.
func (e *execution) setup(tools []Tool, services []string, code string) error {
	vm := e.vm
	if !e.based {
		if err := e.setupBase(); err != nil {
			return err
		}
	}
	e.console.limit = e.limits.OutputBytes // set when the run's limits are known
	e.installInputs()
	mentioned := familyNames.Scan(code)
	if err := e.env.CaptureFor(mentioned); err != nil {
		return err
	}
	if mentioned.Any(consoleNames) {
		if err := e.console.installMethods(); err != nil {
			return err
		}
	}
	if err := e.installNamedFamilies(mentioned); err != nil {
		return err
	}
	if len(e.input) > 0 {
		parse, _ := goja.AssertFunction(vm.Get("JSON").ToObject(vm).Get("parse"))
		v, err := parse(goja.Undefined(), vm.ToValue(string(e.input)))
		if err != nil {
			return fmt.Errorf("the run's input is not JSON: %w", err)
		}
		if err := vm.GlobalObject().DefineDataProperty("input", v, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE); err != nil {
			return err
		}
	}
	// The sandbox global comes before the tools: a namespace never takes
	// its name (typegen reserves it), and opening one must not either.
	if err := bindings.InstallServices(vm, services, e.invoke); err != nil {
		return err
	}
	bind := make([]bindings.Tool, len(tools))
	for i, t := range tools {
		bind[i] = bindings.Tool(t)
	}
	if err := e.tools.Bind(bind, e.invoke); err != nil {
		return err
	}
	vm.SetPromiseRejectionTracker(func(p *goja.Promise, op goja.PromiseRejectionOperation) {
		switch op {
		case goja.PromiseRejectionReject:
			e.unhandled = append(e.unhandled, p)
		case goja.PromiseRejectionHandle:
			for i, q := range e.unhandled {
				if q == p {
					e.unhandled = append(e.unhandled[:i], e.unhandled[i+1:]...)
					break
				}
			}
		}
	})
	return nil
}

func (e *execution) installTimers() error {
	vm := e.vm
	schedule := func(repeat bool) func(goja.FunctionCall) goja.Value {
		return func(call goja.FunctionCall) goja.Value {
			fn, ok := goja.AssertFunction(call.Argument(0))
			if !ok {
				panic(vm.NewTypeError("the first argument of setTimeout/setInterval must be a function (code strings are not evaluated)"))
			}
			ms := call.Argument(1).ToFloat()
			if math.IsNaN(ms) || ms < 1 {
				ms = 1 // as Node: setTimeout(a, 1) then setTimeout(b, 0) runs a first
			}
			delay := time.Duration(math.Min(ms, float64(math.MaxInt32))) * time.Millisecond
			var args []goja.Value
			if len(call.Arguments) > 2 {
				args = append(args, call.Arguments[2:]...)
			}
			return vm.ToValue(e.addTimer(fn, delay, args, repeat))
		}
	}
	clear := func(call goja.FunctionCall) goja.Value {
		e.clearTimer(call.Argument(0).ToInteger())
		return goja.Undefined()
	}
	g := vm.GlobalObject()
	for name, fn := range map[string]func(goja.FunctionCall) goja.Value{
		"setTimeout":    schedule(false),
		"setInterval":   schedule(true),
		"clearTimeout":  clear,
		"clearInterval": clear,
		"queueMicrotask": func(call goja.FunctionCall) goja.Value {
			fn, ok := goja.AssertFunction(call.Argument(0))
			if !ok {
				panic(vm.NewTypeError("queueMicrotask needs a function"))
			}
			// A promise reaction is a microtask: run fn as one.
			p, resolve, _ := vm.NewPromise()
			then := e.env.PromiseThen
			callback := vm.ToValue(func(goja.FunctionCall) goja.Value {
				if _, err := fn(goja.Undefined()); err != nil {
					panic(err)
				}
				return goja.Undefined()
			})
			if _, err := then(vm.ToValue(p), callback); err != nil {
				panic(err)
			}
			_ = resolve(goja.Undefined())
			return goja.Undefined()
		},
	} {
		if err := jsenv.DefineFunc(vm, g, name, fn); err != nil {
			return err
		}
	}
	return nil
}

// setupBase is the part of a run's globals that depends on nothing of the
// run (no code, tools, input or limits): the built-ins every run needs
// (jsenv.New), hardening, the families of globals every VM has (console,
// timers, base64: globals.go) and the MCPToolError class. A worker
// does it for its next run while it waits (prebuilt), so a run starts with
// a VM that is ready; no user code has touched it.
func (e *execution) setupBase() error {
	vm := e.vm
	env, err := jsenv.New(vm)
	if err != nil {
		return err
	}
	e.env = env
	if err := harden(vm); err != nil {
		return err
	}
	// goja's own GoError constructor is not part of the language.
	if err := vm.GlobalObject().Delete("GoError"); err != nil {
		return err
	}
	if err := e.installEveryVMFamilies(); err != nil {
		return err
	}
	if e.tools, err = bindings.Prepare(vm); err != nil {
		return err
	}
	e.based = true
	return nil
}
