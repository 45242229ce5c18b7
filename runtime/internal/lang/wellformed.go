package lang

import (
	"unicode/utf16"

	"github.com/dop251/goja"

	"github.com/sandboxrt/sandbox/runtime/internal/jsenv"
)

// InstallWellFormed adds String.prototype.isWellFormed and toWellFormed
// (ES2024): whether a string has lone surrogates (which goja keeps in strings
// as UTF-16), and the string with each replaced by U+FFFD.
func InstallWellFormed(env *jsenv.Env) error {
	vm := env.VM
	g := vm.GlobalObject()
	proto := g.Get("String").ToObject(vm).Get("prototype").ToObject(vm)
	str := func(this goja.Value) goja.String {
		if goja.IsUndefined(this) || goja.IsNull(this) {
			panic(vm.NewTypeError("String.prototype.isWellFormed and toWellFormed need a string, not null or undefined"))
		}
		return this.ToString().(goja.String)
	}
	if err := jsenv.DefineFunc(vm, proto, "isWellFormed", func(call goja.FunctionCall) goja.Value {
		return vm.ToValue(!hasLoneSurrogate(str(call.This)))
	}); err != nil {
		return err
	}
	return jsenv.DefineFunc(vm, proto, "toWellFormed", func(call goja.FunctionCall) goja.Value {
		s := str(call.This)
		if !hasLoneSurrogate(s) {
			return s
		}
		return vm.ToValue(replaceLoneSurrogates(s))
	})
}

// hasLoneSurrogate reports whether a JS string has an unpaired surrogate
// code unit.
func hasLoneSurrogate(s goja.String) bool {
	n := s.Length()
	for i := 0; i < n; i++ {
		c := s.CharAt(i)
		switch {
		case c >= 0xD800 && c <= 0xDBFF:
			if i+1 < n && s.CharAt(i+1) >= 0xDC00 && s.CharAt(i+1) <= 0xDFFF {
				i++
				continue
			}
			return true
		case c >= 0xDC00 && c <= 0xDFFF:
			return true
		}
	}
	return false
}

func replaceLoneSurrogates(s goja.String) string {
	n := s.Length()
	units := make([]uint16, 0, n)
	for i := 0; i < n; i++ {
		c := s.CharAt(i)
		switch {
		case c >= 0xD800 && c <= 0xDBFF && i+1 < n && s.CharAt(i+1) >= 0xDC00 && s.CharAt(i+1) <= 0xDFFF:
			units = append(units, c, s.CharAt(i+1))
			i++
		case c >= 0xD800 && c <= 0xDFFF:
			units = append(units, 0xFFFD)
		default:
			units = append(units, c)
		}
	}
	return string(utf16.Decode(units))
}
