package intl

import (
	"golang.org/x/text/collate"
	"golang.org/x/text/language"

	"github.com/dop251/goja"

	"github.com/sandboxrt/sandbox/runtime/internal/jsenv"
)

// collatorFor builds the collator String.prototype.localeCompare and
// Intl.Collator use: the Unicode Collation Algorithm with CLDR's data
// (golang.org/x/text/collate), with the options agents pass: numeric
// ("item2" before "item10") and sensitivity (base: a = á = A; accent:
// a = A; case: a = á; variant: all differ).
func collatorFor(env *jsenv.Env, locales, opts goja.Value) *collate.Collator {
	tag := language.English
	if s, ok := locales.Export().(string); ok {
		if t, err := language.Parse(s); err == nil {
			tag = t
		}
	}
	var options []collate.Option
	if o, ok := opts.(*goja.Object); ok {
		if n := o.Get("numeric"); n != nil && n.ToBoolean() {
			options = append(options, collate.Numeric)
		}
		switch optString(env, opts, "sensitivity", "variant", "base", "accent", "case", "variant") {
		case "base":
			options = append(options, collate.IgnoreCase, collate.IgnoreDiacritics)
		case "accent":
			options = append(options, collate.IgnoreCase)
		case "case":
			options = append(options, collate.IgnoreDiacritics)
		}
		if p := o.Get("ignorePunctuation"); p != nil && p.ToBoolean() {
			options = append(options, collate.IgnoreWidth)
		}
	}
	return collate.New(tag, options...)
}

// InstallCollation makes localeCompare honour its locale and options, and
// defines Intl.Collator when Intl is there (it is installed after Install).
func InstallCollation(env *jsenv.Env) error {
	vm := env.VM
	g := vm.GlobalObject()
	proto := g.Get("String").ToObject(vm).Get("prototype").ToObject(vm)
	if err := jsenv.DefineFunc(vm, proto, "localeCompare", func(c goja.FunctionCall) goja.Value {
		if goja.IsUndefined(c.This) || goja.IsNull(c.This) {
			panic(vm.NewTypeError("String.prototype.localeCompare called on null or undefined"))
		}
		return vm.ToValue(collatorFor(env, c.Argument(1), c.Argument(2)).CompareString(c.This.String(), c.Argument(0).String()))
	}); err != nil {
		return err
	}
	intl, ok := g.Get("Intl").(*goja.Object)
	if !ok {
		return nil
	}
	cProto := vm.NewObject()
	collators := map[*goja.Object]*collate.Collator{}
	ctor := vm.ToValue(func(call goja.ConstructorCall) *goja.Object {
		col := collatorFor(env, call.Argument(0), call.Argument(1))
		collators[call.This] = col
		// compare is a bound getter in the standard: a function that can be
		// passed to sort on its own.
		_ = call.This.DefineDataProperty("compare", vm.ToValue(func(c goja.FunctionCall) goja.Value {
			return vm.ToValue(col.CompareString(c.Argument(0).String(), c.Argument(1).String()))
		}), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE)
		return call.This
	}).(*goja.Object)
	_ = ctor.Set("prototype", cProto)
	_ = cProto.DefineDataProperty("constructor", ctor, goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_TRUE)
	return intl.DefineDataProperty("Collator", ctor, goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_TRUE)
}
