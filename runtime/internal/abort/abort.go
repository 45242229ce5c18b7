// Package abort defines AbortController and AbortSignal, one family of the
// runtime's globals table (runtime/globals.go).
package abort

import (
	"strconv"

	"github.com/dop251/goja"

	"github.com/sandboxrt/sandbox/runtime/internal/jsenv"
)

// signalState is one AbortSignal's state and listeners.
type signalState struct {
	aborted   bool
	reason    goja.Value
	onabort   goja.Value // the onabort handler, called in its listener slot
	listeners []abortListener
}

// abortListener is an added listener, or (handler) the slot onabort took
// when first set, as EventTarget orders event handler attributes.
type abortListener struct {
	fn      goja.Value
	once    bool
	handler bool
}

// Install defines AbortController and AbortSignal (abort, timeout, any,
// throwIfAborted, abort events), as Node has them, for snippets that pass a
// signal around or give up on slow work; AbortSignal.timeout runs on the
// run's own timers, so it never outlives the run.
func Install(env *jsenv.Env) error {
	vm := env.VM
	g := vm.GlobalObject()
	env.CaptureError()
	signals := map[*goja.Object]*signalState{}
	setTimeout, _ := goja.AssertFunction(vm.GlobalObject().Get("setTimeout"))
	sigProto := vm.NewObject()
	stateOf := func(this goja.Value) *signalState {
		if o, ok := this.(*goja.Object); ok {
			if s := signals[o]; s != nil {
				return s
			}
		}
		panic(vm.NewTypeError("Value of \"this\" must be of type AbortSignal"))
	}
	newSignal := func() (*goja.Object, *signalState) {
		o := vm.NewObject()
		_ = o.SetPrototype(sigProto)
		s := &signalState{reason: goja.Undefined()}
		signals[o] = s
		return o, s
	}
	abort := func(o *goja.Object, s *signalState, reason goja.Value) {
		if s.aborted {
			return
		}
		s.aborted, s.reason = true, reason
		ev := vm.NewObject()
		_ = ev.Set("type", "abort")
		_ = ev.Set("target", o)
		ls := s.listeners
		s.listeners = nil
		for _, l := range ls {
			if l.handler {
				l.fn = s.onabort
			}
			if fn, ok := goja.AssertFunction(l.fn); ok {
				if _, err := fn(o, ev); err != nil {
					panic(err)
				}
			}
		}
	}
	abortError := func(name, msg string) goja.Value { return env.DOMError(name, msg) }
	reasonOr := func(v goja.Value) goja.Value {
		if goja.IsUndefined(v) {
			return abortError("AbortError", "This operation was aborted")
		}
		return v
	}
	_ = sigProto.DefineAccessorProperty("aborted", vm.ToValue(func(c goja.FunctionCall) goja.Value { return vm.ToValue(stateOf(c.This).aborted) }), nil, goja.FLAG_TRUE, goja.FLAG_TRUE)
	_ = sigProto.DefineAccessorProperty("reason", vm.ToValue(func(c goja.FunctionCall) goja.Value { return stateOf(c.This).reason }), nil, goja.FLAG_TRUE, goja.FLAG_TRUE)
	_ = sigProto.DefineAccessorProperty("onabort",
		vm.ToValue(func(c goja.FunctionCall) goja.Value {
			if h := stateOf(c.This).onabort; h != nil {
				return h
			}
			return goja.Null()
		}),
		vm.ToValue(func(c goja.FunctionCall) goja.Value {
			s := stateOf(c.This)
			if s.onabort == nil {
				s.listeners = append(s.listeners, abortListener{handler: true})
			}
			s.onabort = c.Argument(0)
			return goja.Undefined()
		}), goja.FLAG_TRUE, goja.FLAG_TRUE)
	if err := jsenv.DefineFunc(vm, sigProto, "throwIfAborted", func(c goja.FunctionCall) goja.Value {
		if s := stateOf(c.This); s.aborted {
			panic(s.reason)
		}
		return goja.Undefined()
	}); err != nil {
		return err
	}
	if err := jsenv.DefineFunc(vm, sigProto, "addEventListener", func(c goja.FunctionCall) goja.Value {
		s := stateOf(c.This)
		if c.Argument(0).String() != "abort" {
			return goja.Undefined()
		}
		once := false
		if opts, ok := c.Argument(2).(*goja.Object); ok {
			once = opts.Get("once") != nil && opts.Get("once").ToBoolean()
		}
		for _, l := range s.listeners {
			if !l.handler && l.fn.SameAs(c.Argument(1)) {
				return goja.Undefined()
			}
		}
		s.listeners = append(s.listeners, abortListener{fn: c.Argument(1), once: once})
		return goja.Undefined()
	}); err != nil {
		return err
	}
	if err := jsenv.DefineFunc(vm, sigProto, "removeEventListener", func(c goja.FunctionCall) goja.Value {
		s := stateOf(c.This)
		for i, l := range s.listeners {
			if !l.handler && l.fn.SameAs(c.Argument(1)) {
				s.listeners = append(s.listeners[:i], s.listeners[i+1:]...)
				break
			}
		}
		return goja.Undefined()
	}); err != nil {
		return err
	}
	sigCtor := vm.ToValue(func(goja.ConstructorCall) *goja.Object {
		panic(vm.NewTypeError("Illegal constructor"))
	}).(*goja.Object)
	_ = sigCtor.Set("prototype", sigProto)
	_ = sigProto.DefineDataProperty("constructor", sigCtor, goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_TRUE)
	if err := jsenv.DefineFunc(vm, sigCtor, "abort", func(c goja.FunctionCall) goja.Value {
		o, s := newSignal()
		abort(o, s, reasonOr(c.Argument(0)))
		return o
	}); err != nil {
		return err
	}
	if err := jsenv.DefineFunc(vm, sigCtor, "timeout", func(c goja.FunctionCall) goja.Value {
		o, s := newSignal()
		fire := vm.ToValue(func(goja.FunctionCall) goja.Value {
			abort(o, s, abortError("TimeoutError", "The operation was aborted due to timeout"))
			return goja.Undefined()
		})
		if _, err := setTimeout(goja.Undefined(), fire, c.Argument(0)); err != nil {
			panic(err)
		}
		return o
	}); err != nil {
		return err
	}
	if err := jsenv.DefineFunc(vm, sigCtor, "any", func(c goja.FunctionCall) goja.Value {
		o, s := newSignal()
		arr, err := env.ArrayFrom(goja.Undefined(), c.Argument(0))
		if err != nil {
			panic(err)
		}
		ao := arr.ToObject(vm)
		n := jsenv.IntOf(ao.Get("length"))
		for i := int64(0); i < n; i++ {
			src, ok := ao.Get(strconv.FormatInt(i, 10)).(*goja.Object)
			ss := signals[src]
			if !ok || ss == nil {
				panic(vm.NewTypeError("AbortSignal.any takes AbortSignals"))
			}
			if ss.aborted {
				abort(o, s, ss.reason)
				return o
			}
		}
		for i := int64(0); i < n; i++ {
			src := ao.Get(strconv.FormatInt(i, 10)).(*goja.Object)
			ss := signals[src]
			ss.listeners = append(ss.listeners, abortListener{fn: vm.ToValue(func(goja.FunctionCall) goja.Value {
				abort(o, s, ss.reason)
				return goja.Undefined()
			})})
		}
		return o
	}); err != nil {
		return err
	}
	ctrlProto := vm.NewObject()
	ctrlCtor := vm.ToValue(func(call goja.ConstructorCall) *goja.Object {
		o, _ := newSignal()
		_ = call.This.DefineDataProperty("signal", o, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE)
		return call.This
	}).(*goja.Object)
	if err := jsenv.DefineFunc(vm, ctrlProto, "abort", func(c goja.FunctionCall) goja.Value {
		sig, _ := c.This.ToObject(vm).Get("signal").(*goja.Object)
		s := signals[sig]
		if s == nil {
			panic(vm.NewTypeError("Value of \"this\" must be of type AbortController"))
		}
		abort(sig, s, reasonOr(c.Argument(0)))
		return goja.Undefined()
	}); err != nil {
		return err
	}
	_ = ctrlCtor.Set("prototype", ctrlProto)
	_ = ctrlProto.DefineDataProperty("constructor", ctrlCtor, goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_TRUE)
	if err := g.DefineDataProperty("AbortController", ctrlCtor, goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_TRUE); err != nil {
		return err
	}
	return g.DefineDataProperty("AbortSignal", sigCtor, goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_TRUE)
}
