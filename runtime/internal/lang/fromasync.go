package lang

import (
	"strconv"

	"github.com/dop251/goja"

	"github.com/sandboxrt/sandbox/runtime/internal/jsenv"
)

// InstallFromAsync defines Array.fromAsync (ES2024), which goja lacks: it
// collects an async iterable, a sync iterable of promises or an array-like
// into an array, awaiting each value (and each mapped value), in order.
// Built in Go as a chain of promise reactions on the run's own event loop.
func InstallFromAsync(env *jsenv.Env) error {
	vm := env.VM
	g := vm.GlobalObject()
	promiseCtor := g.Get("Promise").ToObject(vm)
	promiseResolve, _ := goja.AssertFunction(promiseCtor.Get("resolve"))
	arrayCtor := g.Get("Array").ToObject(vm)
	asyncIterator := g.Get("Symbol").ToObject(vm).Get("asyncIterator")
	return jsenv.DefineFunc(vm, arrayCtor, "fromAsync", func(call goja.FunctionCall) goja.Value {
		promise, resolve, reject := vm.NewPromise()
		p := vm.ToValue(promise)
		fail := func(err any) {
			switch v := err.(type) {
			case *goja.Exception:
				_ = reject(v.Value())
			case goja.Value:
				_ = reject(v)
			default:
				_ = reject(vm.NewGoError(v.(error)))
			}
		}
		// await runs then(v) or caught(reason) once v settles.
		await := func(v goja.Value, then func(goja.Value), caught func(goja.Value)) {
			settled, err := promiseResolve(promiseCtor, v)
			if err != nil {
				fail(err)
				return
			}
			onOK := vm.ToValue(func(c goja.FunctionCall) goja.Value {
				func() {
					defer func() {
						if r := recover(); r != nil {
							fail(r)
						}
					}()
					then(c.Argument(0))
				}()
				return goja.Undefined()
			})
			onErr := vm.ToValue(func(c goja.FunctionCall) goja.Value { caught(c.Argument(0)); return goja.Undefined() })
			if _, err := env.PromiseThen(settled, onOK, onErr); err != nil {
				fail(err)
			}
		}
		rejectWith := func(reason goja.Value) { _ = reject(reason) }
		items := call.Argument(0)
		mapFn, hasMap := goja.AssertFunction(call.Argument(1))
		if !goja.IsUndefined(call.Argument(1)) && !hasMap {
			_ = reject(vm.NewTypeError("Array.fromAsync: the map function must be a function"))
			return p
		}
		thisArg := call.Argument(2)
		src, ok := items.(*goja.Object)
		if !ok {
			if goja.IsUndefined(items) || goja.IsNull(items) {
				_ = reject(vm.NewTypeError("Array.fromAsync needs an iterable, an async iterable or an array-like"))
				return p
			}
			src = items.ToObject(vm)
		}
		var out []any
		add := func(v goja.Value, i int64, next func()) {
			if !hasMap {
				out = append(out, v)
				next()
				return
			}
			mapped, err := mapFn(thisArg, v, vm.ToValue(i))
			if err != nil {
				fail(err)
				return
			}
			await(mapped, func(m goja.Value) { out = append(out, m); next() }, rejectWith)
		}
		finish := func() { _ = resolve(vm.NewArray(out...)) }

		var iterFn goja.Callable
		async := false
		if f, ok := goja.AssertFunction(src.GetSymbol(asyncIterator.(*goja.Symbol))); ok {
			iterFn, async = f, true
		} else if f, ok := goja.AssertFunction(src.GetSymbol(goja.SymIterator)); ok {
			iterFn = f
		}
		if iterFn == nil { // an array-like
			n := jsenv.IntOf(src.Get("length"))
			var step func(i int64)
			step = func(i int64) {
				if i >= n {
					finish()
					return
				}
				await(src.Get(strconv.FormatInt(i, 10)), func(v goja.Value) { add(v, i, func() { step(i + 1) }) }, rejectWith)
			}
			step(0)
			return p
		}
		itv, err := iterFn(src)
		if err != nil {
			fail(err)
			return p
		}
		it := itv.ToObject(vm)
		next, ok := goja.AssertFunction(it.Get("next"))
		if !ok {
			_ = reject(vm.NewTypeError("Array.fromAsync: the iterator has no next method"))
			return p
		}
		var step func(i int64)
		step = func(i int64) {
			r, err := next(it)
			if err != nil {
				fail(err)
				return
			}
			onResult := func(r goja.Value) {
				ro, ok := r.(*goja.Object)
				if !ok {
					_ = reject(vm.NewTypeError("iterator result is not an object"))
					return
				}
				if d := ro.Get("done"); d != nil && d.ToBoolean() {
					finish()
					return
				}
				v := ro.Get("value")
				if v == nil {
					v = goja.Undefined()
				}
				if async {
					add(v, i, func() { step(i + 1) })
					return
				}
				await(v, func(v goja.Value) { add(v, i, func() { step(i + 1) }) }, rejectWith)
			}
			if async {
				await(r, onResult, rejectWith)
			} else {
				onResult(r)
			}
		}
		step(0)
		return p
	})
}
