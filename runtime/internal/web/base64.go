package web

import (
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/dop251/goja"

	"github.com/sandboxrt/sandbox/runtime/internal/jsenv"
)

// InstallBase64 defines atob and btoa, which agents use on tool results
// (base64 file contents, images).
func InstallBase64(env *jsenv.Env) error {
	vm := env.VM
	g := vm.GlobalObject()
	if err := jsenv.DefineFunc(vm, g, "btoa", func(call goja.FunctionCall) goja.Value {
		s := call.Argument(0).String()
		b := make([]byte, 0, len(s))
		for _, r := range s {
			if r > 0xFF {
				panic(vm.NewTypeError("btoa: the string contains characters outside Latin-1; encode it to bytes first"))
			}
			b = append(b, byte(r))
		}
		return vm.ToValue(base64.StdEncoding.EncodeToString(b))
	}); err != nil {
		return err
	}
	return jsenv.DefineFunc(vm, g, "atob", func(call goja.FunctionCall) goja.Value {
		s := strings.Map(func(r rune) rune {
			if r == ' ' || r == '\t' || r == '\n' || r == '\f' || r == '\r' {
				return -1
			}
			return r
		}, call.Argument(0).String())
		s = strings.TrimRight(s, "=")
		b, err := base64.RawStdEncoding.DecodeString(s)
		if err != nil {
			panic(vm.NewTypeError(fmt.Sprintf("atob: the string is not valid base64: %v", err)))
		}
		var out strings.Builder
		for _, c := range b {
			out.WriteRune(rune(c))
		}
		return vm.ToValue(out.String())
	})
}
