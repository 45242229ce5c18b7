package lang

import (
	"math"

	"github.com/dop251/goja"

	"github.com/sandboxrt/sandbox/runtime/internal/jsenv"
)

// InstallIteratorHelpers adds ES2025's iterator helpers, which goja lacks,
// to %IteratorPrototype% (so generators, array and map iterators have them)
// and defines the global Iterator with Iterator.from: map, filter, take,
// drop, flatMap (lazy, each returning a helper iterator), and reduce,
// toArray, forEach, some, every, find (eager). Built in Go on the run's
// fresh VM; no source is evaluated.
func InstallIteratorHelpers(env *jsenv.Env) error {
	vm := env.VM
	g := vm.GlobalObject()
	arrayValues, _ := goja.AssertFunction(vm.Get("Array").ToObject(vm).Get("prototype").ToObject(vm).Get("values"))
	it, err := arrayValues(vm.NewArray())
	if err != nil {
		return err
	}
	iterProto := it.ToObject(vm).Prototype().Prototype() // %ArrayIteratorPrototype% -> %IteratorPrototype%
	if iterProto == nil {
		return nil
	}
	helperProto := vm.NewObject()
	_ = helperProto.SetPrototype(iterProto)
	rangeError := g.Get("RangeError").ToObject(vm)

	type source struct {
		obj  *goja.Object
		next goja.Callable
	}
	// step advances a source: its next value, or done.
	step := func(s source) (goja.Value, bool) {
		r, err := s.next(s.obj)
		if err != nil {
			panic(err)
		}
		ro, ok := r.(*goja.Object)
		if !ok {
			panic(vm.NewTypeError("iterator result is not an object"))
		}
		if d := ro.Get("done"); d != nil && d.ToBoolean() {
			return nil, true
		}
		v := ro.Get("value")
		if v == nil {
			v = goja.Undefined()
		}
		return v, false
	}
	sourceOf := func(this goja.Value) source {
		obj, ok := this.(*goja.Object)
		if !ok {
			panic(vm.NewTypeError("Iterator helper called on a non-object"))
		}
		next, ok := goja.AssertFunction(obj.Get("next"))
		if !ok {
			panic(vm.NewTypeError("Iterator helper called on an object without a next method"))
		}
		return source{obj, next}
	}
	callback := func(v goja.Value, name string) goja.Callable {
		fn, ok := goja.AssertFunction(v)
		if !ok {
			panic(vm.NewTypeError(name + ": the argument must be a function"))
		}
		return fn
	}
	result := func(v goja.Value, done bool) goja.Value {
		r := vm.NewObject()
		_ = r.Set("value", v)
		_ = r.Set("done", done)
		return r
	}
	// helper makes a lazy iterator whose next is pull.
	helper := func(pull func() (goja.Value, bool)) goja.Value {
		h := vm.NewObject()
		_ = h.SetPrototype(helperProto)
		finished := false
		_ = h.Set("next", func(goja.FunctionCall) goja.Value {
			if finished {
				return result(goja.Undefined(), true)
			}
			v, done := pull()
			if done {
				finished = true
				return result(goja.Undefined(), true)
			}
			return result(v, false)
		})
		return h
	}
	count := func(v goja.Value, name string) int64 {
		n := v.ToFloat()
		if math.IsNaN(n) || n < 0 {
			err, _ := vm.New(rangeError, vm.ToValue(name+": the limit must be a number, 0 or more"))
			panic(err)
		}
		if math.IsInf(n, 1) {
			return math.MaxInt64
		}
		return int64(n)
	}
	lazy := map[string]func(s source, c goja.FunctionCall) goja.Value{
		"map": func(s source, c goja.FunctionCall) goja.Value {
			fn, i := callback(c.Argument(0), "map"), int64(0)
			return helper(func() (goja.Value, bool) {
				v, done := step(s)
				if done {
					return nil, true
				}
				out, err := fn(goja.Undefined(), v, vm.ToValue(i))
				if err != nil {
					panic(err)
				}
				i++
				return out, false
			})
		},
		"filter": func(s source, c goja.FunctionCall) goja.Value {
			fn, i := callback(c.Argument(0), "filter"), int64(0)
			return helper(func() (goja.Value, bool) {
				for {
					v, done := step(s)
					if done {
						return nil, true
					}
					keep, err := fn(goja.Undefined(), v, vm.ToValue(i))
					if err != nil {
						panic(err)
					}
					i++
					if keep.ToBoolean() {
						return v, false
					}
				}
			})
		},
		"take": func(s source, c goja.FunctionCall) goja.Value {
			left := count(c.Argument(0), "take")
			return helper(func() (goja.Value, bool) {
				if left <= 0 {
					if ret, ok := goja.AssertFunction(s.obj.Get("return")); ok {
						_, _ = ret(s.obj)
					}
					return nil, true
				}
				left--
				return step(s)
			})
		},
		"drop": func(s source, c goja.FunctionCall) goja.Value {
			skip := count(c.Argument(0), "drop")
			return helper(func() (goja.Value, bool) {
				for ; skip > 0; skip-- {
					if _, done := step(s); done {
						return nil, true
					}
				}
				return step(s)
			})
		},
		"flatMap": func(s source, c goja.FunctionCall) goja.Value {
			fn, i := callback(c.Argument(0), "flatMap"), int64(0)
			var inner *source
			return helper(func() (goja.Value, bool) {
				for {
					if inner != nil {
						if v, done := step(*inner); !done {
							return v, false
						}
						inner = nil
					}
					v, done := step(s)
					if done {
						return nil, true
					}
					mapped, err := fn(goja.Undefined(), v, vm.ToValue(i))
					if err != nil {
						panic(err)
					}
					i++
					mo, ok := mapped.(*goja.Object)
					if !ok {
						panic(vm.NewTypeError("flatMap: the function must return an iterable or an iterator"))
					}
					itFn, ok := goja.AssertFunction(mo.GetSymbol(goja.SymIterator))
					var itObj *goja.Object
					if ok {
						r, err := itFn(mo)
						if err != nil {
							panic(err)
						}
						itObj = r.ToObject(vm)
					} else {
						itObj = mo
					}
					src := sourceOf(itObj)
					inner = &src
				}
			})
		},
	}
	eager := map[string]func(s source, c goja.FunctionCall) goja.Value{
		"toArray": func(s source, _ goja.FunctionCall) goja.Value {
			var out []any
			for {
				v, done := step(s)
				if done {
					return vm.NewArray(out...)
				}
				out = append(out, v)
			}
		},
		"forEach": func(s source, c goja.FunctionCall) goja.Value {
			fn := callback(c.Argument(0), "forEach")
			for i := int64(0); ; i++ {
				v, done := step(s)
				if done {
					return goja.Undefined()
				}
				if _, err := fn(goja.Undefined(), v, vm.ToValue(i)); err != nil {
					panic(err)
				}
			}
		},
		"reduce": func(s source, c goja.FunctionCall) goja.Value {
			fn := callback(c.Argument(0), "reduce")
			var acc goja.Value
			i := int64(0)
			if len(c.Arguments) > 1 {
				acc = c.Argument(1)
			} else {
				v, done := step(s)
				if done {
					panic(vm.NewTypeError("Reduce of empty iterator with no initial value"))
				}
				acc, i = v, 1
			}
			for ; ; i++ {
				v, done := step(s)
				if done {
					return acc
				}
				r, err := fn(goja.Undefined(), acc, v, vm.ToValue(i))
				if err != nil {
					panic(err)
				}
				acc = r
			}
		},
	}
	// some, every and find stop at their answer and close the source.
	for _, name := range []string{"some", "every", "find"} {
		name := name
		eager[name] = func(s source, c goja.FunctionCall) goja.Value {
			fn := callback(c.Argument(0), name)
			for i := int64(0); ; i++ {
				v, done := step(s)
				if done {
					switch name {
					case "some":
						return vm.ToValue(false)
					case "every":
						return vm.ToValue(true)
					}
					return goja.Undefined()
				}
				r, err := fn(goja.Undefined(), v, vm.ToValue(i))
				if err != nil {
					panic(err)
				}
				hit := r.ToBoolean()
				if hit != (name == "every") {
					if ret, ok := goja.AssertFunction(s.obj.Get("return")); ok {
						_, _ = ret(s.obj)
					}
					switch name {
					case "some":
						return vm.ToValue(true)
					case "every":
						return vm.ToValue(false)
					}
					return v
				}
			}
		}
	}
	for name, m := range eager {
		lazy[name] = m
	}
	for name, m := range lazy {
		m := m
		if err := jsenv.DefineFunc(vm, iterProto, name, func(c goja.FunctionCall) goja.Value { return m(sourceOf(c.This), c) }); err != nil {
			return err
		}
	}
	// The global Iterator: Iterator.prototype is %IteratorPrototype%, and
	// Iterator.from wraps an iterable or an iterator.
	iterCtor := vm.ToValue(func(goja.ConstructorCall) *goja.Object {
		panic(vm.NewTypeError("Iterator is an abstract class: use Iterator.from or a generator"))
	}).(*goja.Object)
	_ = iterCtor.DefineDataProperty("prototype", iterProto, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE)
	if err := jsenv.DefineFunc(vm, iterCtor, "from", func(c goja.FunctionCall) goja.Value {
		o, ok := c.Argument(0).(*goja.Object)
		if !ok {
			if s, isStr := c.Argument(0).Export().(string); isStr {
				o = vm.ToValue(s).ToObject(vm)
			} else {
				panic(vm.NewTypeError("Iterator.from needs an iterable or an iterator"))
			}
		}
		if itFn, ok := goja.AssertFunction(o.GetSymbol(goja.SymIterator)); ok {
			r, err := itFn(o)
			if err != nil {
				panic(err)
			}
			o = r.ToObject(vm)
		}
		if jsenv.HasProto(o, iterProto) {
			return o
		}
		s := sourceOf(o)
		return helper(func() (goja.Value, bool) { return step(s) })
	}); err != nil {
		return err
	}
	return g.DefineDataProperty("Iterator", iterCtor, goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_TRUE)
}
