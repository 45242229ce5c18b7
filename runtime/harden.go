package runtime

import (
	"fmt"

	"github.com/dop251/goja"
)

// harden removes every way to turn a string into code. goja reaches the
// Function constructor from many places (the global, and the `constructor`
// of every function kind's prototype: `(async () => {}).constructor("...")`),
// so each is replaced with one function that throws; Function.prototype stays,
// so `f instanceof Function` and `f.constructor === Function` still hold.
//
// Verified by the escape tests in sandbox_test.go, which try the known
// reach-arounds (Reflect.construct, getPrototypeOf chains, descriptors, bound
// functions, generator and async constructors).
var functionKinds = goja.MustCompile("harden.js", `[async function () {}, function* () {}]`, true)

func harden(vm *goja.Runtime) error {
	global := vm.GlobalObject()
	functionCtor := global.Get("Function").ToObject(vm)
	functionProto := functionCtor.Get("prototype").ToObject(vm)

	disabled := vm.ToValue(func(goja.FunctionCall) goja.Value {
		panic(vm.NewTypeError("code generation from strings is disabled in the sandbox: eval, Function and their relatives are not available"))
	}).(*goja.Object)
	if err := disabled.DefineDataProperty("prototype", functionProto, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE); err != nil {
		return err
	}
	if err := disabled.DefineDataProperty("name", vm.ToValue("Function"), goja.FLAG_FALSE, goja.FLAG_TRUE, goja.FLAG_FALSE); err != nil {
		return err
	}

	// The prototypes of async and generator functions are only reachable from
	// instances. This constant expression is ours, not agent input.
	kinds, err := vm.RunProgram(functionKinds)
	if err != nil {
		return fmt.Errorf("harden: %w", err)
	}
	protos := []*goja.Object{functionProto}
	arr := kinds.ToObject(vm)
	for _, i := range []string{"0", "1"} {
		protos = append(protos, arr.Get(i).ToObject(vm).Prototype())
	}
	for _, p := range protos {
		if err := p.DefineDataProperty("constructor", disabled, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE); err != nil {
			return fmt.Errorf("harden: constructor: %w", err)
		}
	}
	if err := global.DefineDataProperty("Function", disabled, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE); err != nil {
		return fmt.Errorf("harden: Function: %w", err)
	}
	if err := global.Delete("eval"); err != nil {
		return fmt.Errorf("harden: eval: %w", err)
	}
	return nil
}
