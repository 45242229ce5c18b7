package lang

import (
	"strconv"

	"github.com/dop251/goja"

	"github.com/sandboxrt/sandbox/runtime/internal/jsenv"
)

// InstallWellKnownSymbols adds the symbols goja lacks: Symbol.dispose and
// asyncDispose for `using`, and Symbol.asyncIterator, which esbuild's
// helpers (`using`, async generators) look up as Symbol.for("Symbol.dispose").
func InstallWellKnownSymbols(env *jsenv.Env) error {
	vm := env.VM
	symbol := vm.GlobalObject().Get("Symbol").ToObject(vm)
	symbolFor, _ := goja.AssertFunction(symbol.Get("for"))
	for _, name := range []string{"dispose", "asyncDispose", "asyncIterator"} {
		if v := symbol.Get(name); v != nil && !goja.IsUndefined(v) {
			continue
		}
		sym, err := symbolFor(symbol, vm.ToValue("Symbol."+name))
		if err != nil {
			return err
		}
		if err := symbol.DefineDataProperty(name, sym, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE); err != nil {
			return err
		}
	}
	return nil
}

// InstallGroupBy adds Object.groupBy and Map.groupBy.
func InstallGroupBy(env *jsenv.Env) error {
	vm := env.VM
	g := vm.GlobalObject()
	if err := env.CaptureMap(); err != nil {
		return err
	}
	// groupBy follows the proposal: keys compare by SameValueZero (a Map of
	// the VM's own does the comparing), Object.groupBy turns keys into
	// property keys (symbols stay symbols), groups keep first-seen order.
	groupBy := func(toMap bool) func(goja.FunctionCall) goja.Value {
		return func(call goja.FunctionCall) goja.Value {
			cb, ok := goja.AssertFunction(call.Argument(1))
			if !ok {
				panic(vm.NewTypeError("groupBy: the second argument must be a function"))
			}
			arr, err := env.ArrayFrom(goja.Undefined(), call.Argument(0))
			if err != nil {
				panic(err)
			}
			items := arr.ToObject(vm)
			n := jsenv.IntOf(items.Get("length"))
			index, err := vm.New(env.MapCtor)
			if err != nil {
				panic(err)
			}
			type group struct {
				key   goja.Value
				items []any
			}
			var groups []group
			for i := int64(0); i < n; i++ {
				item := items.Get(strconv.FormatInt(i, 10))
				k, err := cb(goja.Undefined(), item, vm.ToValue(i))
				if err != nil {
					panic(err)
				}
				if !toMap {
					if _, isSym := k.(*goja.Symbol); !isSym {
						k = vm.ToValue(k.String())
					}
				}
				at, err := env.MapGet(index, k)
				if err != nil {
					panic(err)
				}
				if goja.IsUndefined(at) {
					at = vm.ToValue(len(groups))
					if _, err := env.MapSet(index, k, at); err != nil {
						panic(err)
					}
					groups = append(groups, group{key: k})
				}
				g := &groups[at.ToInteger()]
				g.items = append(g.items, item)
			}
			if toMap {
				m, err := vm.New(env.MapCtor)
				if err != nil {
					panic(err)
				}
				for _, g := range groups {
					if _, err := env.MapSet(m, g.key, vm.NewArray(g.items...)); err != nil {
						panic(err)
					}
				}
				return m
			}
			out := vm.CreateObject(nil)
			for _, g := range groups {
				if sym, isSym := g.key.(*goja.Symbol); isSym {
					_ = out.DefineDataPropertySymbol(sym, vm.NewArray(g.items...), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_TRUE)
				} else {
					_ = out.Set(g.key.String(), vm.NewArray(g.items...))
				}
			}
			return out
		}
	}
	if err := jsenv.DefineFunc(vm, g.Get("Object").ToObject(vm), "groupBy", groupBy(false)); err != nil {
		return err
	}
	return jsenv.DefineFunc(vm, env.MapCtor, "groupBy", groupBy(true))
}

// InstallWithResolvers adds Promise.withResolvers.
func InstallWithResolvers(env *jsenv.Env) error {
	vm := env.VM
	return jsenv.DefineFunc(vm, vm.GlobalObject().Get("Promise").ToObject(vm), "withResolvers", func(goja.FunctionCall) goja.Value {
		p, resolve, reject := vm.NewPromise()
		out := vm.NewObject()
		_ = out.Set("promise", p)
		_ = jsenv.DefineFunc(vm, out, "resolve", func(call goja.FunctionCall) goja.Value {
			if err := resolve(call.Argument(0)); err != nil {
				panic(err)
			}
			return goja.Undefined()
		})
		_ = jsenv.DefineFunc(vm, out, "reject", func(call goja.FunctionCall) goja.Value {
			if err := reject(call.Argument(0)); err != nil {
				panic(err)
			}
			return goja.Undefined()
		})
		return out
	})
}
