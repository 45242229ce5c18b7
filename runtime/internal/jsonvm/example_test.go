package jsonvm_test

import (
	"fmt"

	"github.com/dop251/goja"

	"github.com/sandboxrt/sandbox/runtime/internal/jsonvm"
)

// A tool's result becomes the values JSON.parse would give, in the VM that
// runs the snippet: key order kept, "__proto__" an own key, -0 kept.
func Example() {
	vm := goja.New()
	p := jsonvm.NewParser(vm)
	v, err := p.Parse([]byte(`{"b":1,"a":[-0,"\u00e9"],"__proto__":{"x":1}}`))
	if err != nil {
		panic(err)
	}
	vm.Set("result", v)
	out, _ := vm.RunString(`[Object.keys(result).join(), Object.is(result.a[0], -0), result.a[1], typeof result.x].join(" ")`)
	fmt.Println(out)

	_, err = p.Parse([]byte(`{"a":1,}`))
	fmt.Println(err)
	// Output:
	// b,a,__proto__ true é undefined
	// jsonvm: expected a string key at byte 7
}
