package lang

import (
	"github.com/dop251/goja"

	"github.com/sandboxrt/sandbox/runtime/internal/jsenv"
)

// InstallWeakRef defines WeakRef and FinalizationRegistry, which goja lacks.
// A run is short and its VM is dropped whole when it ends, so a WeakRef holds
// its target for the run (deref always answers it) and a registry's
// callbacks never run: both allowed by the language, which promises neither
// collection nor cleanup callbacks at any time. Code that uses them as a
// cache or for clean-up keeps working.
func InstallWeakRef(env *jsenv.Env) error {
	vm := env.VM
	g := vm.GlobalObject()
	canHold := func(v goja.Value) bool {
		if _, ok := v.(*goja.Object); ok {
			return true
		}
		_, ok := v.(*goja.Symbol)
		return ok
	}
	targets := map[*goja.Object]goja.Value{}
	refProto := vm.NewObject()
	refCtor := vm.ToValue(func(call goja.ConstructorCall) *goja.Object {
		if !canHold(call.Argument(0)) {
			panic(vm.NewTypeError("WeakRef: invalid target (an object or a symbol)"))
		}
		targets[call.This] = call.Argument(0)
		return call.This
	}).(*goja.Object)
	if err := jsenv.DefineFunc(vm, refProto, "deref", func(c goja.FunctionCall) goja.Value {
		if o, ok := c.This.(*goja.Object); ok {
			if t, ok := targets[o]; ok {
				return t
			}
		}
		panic(vm.NewTypeError("WeakRef.prototype.deref called on an object that is not a WeakRef"))
	}); err != nil {
		return err
	}
	_ = refCtor.Set("prototype", refProto)
	_ = refProto.DefineDataProperty("constructor", refCtor, goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_TRUE)

	regProto := vm.NewObject()
	regCtor := vm.ToValue(func(call goja.ConstructorCall) *goja.Object {
		if _, ok := goja.AssertFunction(call.Argument(0)); !ok {
			panic(vm.NewTypeError("FinalizationRegistry: the cleanup callback must be a function"))
		}
		return call.This
	}).(*goja.Object)
	if err := jsenv.DefineFunc(vm, regProto, "register", func(c goja.FunctionCall) goja.Value {
		if !canHold(c.Argument(0)) {
			panic(vm.NewTypeError("FinalizationRegistry.prototype.register: invalid target"))
		}
		if c.Argument(0).SameAs(c.Argument(1)) {
			panic(vm.NewTypeError("FinalizationRegistry.prototype.register: the target and the held value must differ"))
		}
		return goja.Undefined()
	}); err != nil {
		return err
	}
	if err := jsenv.DefineFunc(vm, regProto, "unregister", func(c goja.FunctionCall) goja.Value {
		if !canHold(c.Argument(0)) {
			panic(vm.NewTypeError("FinalizationRegistry.prototype.unregister: invalid unregister token"))
		}
		return vm.ToValue(false)
	}); err != nil {
		return err
	}
	_ = regCtor.Set("prototype", regProto)
	_ = regProto.DefineDataProperty("constructor", regCtor, goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_TRUE)
	if err := g.DefineDataProperty("WeakRef", refCtor, goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_TRUE); err != nil {
		return err
	}
	return g.DefineDataProperty("FinalizationRegistry", regCtor, goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_TRUE)
}
