package bindings_test

import (
	"fmt"

	"github.com/dop251/goja"

	"github.com/sandboxrt/sandbox/runtime/internal/bindings"
)

// Install binds tools as frozen namespace objects; each call goes to invoke,
// which the runtime implements as a message to the host.
func Example() {
	vm := goja.New()
	invoke := func(target bindings.Target, args goja.Value) goja.Value {
		return vm.ToValue(fmt.Sprintf("would call %s with q=%s", target, args.ToObject(vm).Get("q")))
	}
	_, err := bindings.Install(vm, []bindings.Tool{{ID: "github:search_code", Namespace: "github", Function: "searchCode"}}, invoke)
	if err != nil {
		panic(err)
	}
	v, _ := vm.RunString(`github.searchCode({ q: "parseConfig" })`)
	fmt.Println(v)
	// Output: would call github:search_code with q=parseConfig
}
