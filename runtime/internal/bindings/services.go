package bindings

import (
	"fmt"

	"github.com/dop251/goja"
)

// service is one family of the sandbox global: its methods, and how each
// turns its positional arguments into the named arguments the host gets.
type service struct {
	methods map[string][]string // method -> argument names, in order; "...options" spreads an object
}

// services are the families the sandbox global can have.
var services = map[string]service{
	// sandbox.store: JSON values kept between runs (codemode implements it).
	"store": {methods: map[string][]string{
		"get":    {"key", "...options"},
		"set":    {"key", "value", "...options"},
		"delete": {"key", "...options"},
		"keys":   {"prefix", "...options"},
	}},
	// sandbox.results: parts of a tool result too large to hand over whole.
	"results": {methods: map[string][]string{
		"json":  {"handle", "path"},
		"read":  {"handle", "...options"},
		"lines": {"handle", "...options"},
	}},
}

// IsServiceMethod reports whether sandbox.<family>.<method> exists.
func IsServiceMethod(family, method string) bool {
	_, ok := services[family].methods[method]
	return ok
}

// InstallServices defines the global sandbox object with the families
// named (nothing when none): sandbox.store.get("k") calls invoke with
// Target{Kind: KindService, Namespace: "store", Function: "get"} and the
// arguments {key: "k"}. The objects
// are frozen, so a run cannot swap a method for the next call.
func InstallServices(vm *goja.Runtime, families []string, invoke Invoke) error {
	if len(families) == 0 {
		return nil
	}
	freeze, ok := goja.AssertFunction(vm.Get("Object").ToObject(vm).Get("freeze"))
	if !ok {
		return fmt.Errorf("bindings: Object.freeze is missing")
	}
	root := vm.NewObject()
	for _, family := range families {
		svc, ok := services[family]
		if !ok {
			return fmt.Errorf("bindings: no sandbox service %q", family)
		}
		obj := vm.NewObject()
		for method, params := range svc.methods {
			t := Target{Kind: KindService, Namespace: family, Function: method}
			fn := vm.ToValue(func(call goja.FunctionCall) goja.Value {
				args := vm.NewObject()
				for i, name := range params {
					v := call.Argument(i)
					if name == "...options" {
						if o, ok := v.(*goja.Object); ok {
							for _, k := range o.Keys() {
								_ = args.Set(k, o.Get(k))
							}
						}
						continue
					}
					if !goja.IsUndefined(v) {
						_ = args.Set(name, v)
					}
				}
				return invoke(t, args)
			}).(*goja.Object)
			_ = fn.DefineDataProperty("name", vm.ToValue(method), goja.FLAG_FALSE, goja.FLAG_TRUE, goja.FLAG_FALSE)
			if err := obj.DefineDataProperty(method, fn, goja.FLAG_FALSE, goja.FLAG_TRUE, goja.FLAG_TRUE); err != nil {
				return err
			}
		}
		if _, err := freeze(goja.Undefined(), obj); err != nil {
			return err
		}
		if err := root.DefineDataProperty(family, obj, goja.FLAG_FALSE, goja.FLAG_TRUE, goja.FLAG_TRUE); err != nil {
			return err
		}
	}
	if _, err := freeze(goja.Undefined(), root); err != nil {
		return err
	}
	return vm.GlobalObject().DefineDataProperty("sandbox", root, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE)
}
