package runtime

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/dop251/goja"
)

// English plural, list and relative-time formatting (Intl.PluralRules,
// Intl.ListFormat, Intl.RelativeTimeFormat), the rules agents use to
// write "1 item" / "2 items", "a, b, and c" and "3 days ago". Other
// locales use the English rules for now, never an error.

func (e *execution) optString(o goja.Value, name, def string, allowed ...string) string {
	obj, ok := o.(*goja.Object)
	if !ok {
		return def
	}
	v := obj.Get(name)
	if v == nil || goja.IsUndefined(v) {
		return def
	}
	s := v.String()
	for _, a := range allowed {
		if s == a {
			return s
		}
	}
	err, _ := e.vm.New(e.vm.Get("RangeError").ToObject(e.vm), e.vm.ToValue(fmt.Sprintf("Value %s out of range for options property %s", s, name)))
	panic(err)
}

// englishPlural is CLDR's English cardinal or ordinal category of n.
func englishPlural(n float64, ordinal bool) string {
	if ordinal {
		if n != math.Trunc(n) || n < 0 {
			return "other"
		}
		i := int64(n)
		switch {
		case i%10 == 1 && i%100 != 11:
			return "one"
		case i%10 == 2 && i%100 != 12:
			return "two"
		case i%10 == 3 && i%100 != 13:
			return "few"
		}
		return "other"
	}
	if math.Abs(n) == 1 { // plural operands are absolute: -1 is "one"
		return "one"
	}
	return "other"
}

// englishList joins items as CLDR's English list patterns do.
func englishList(items []string, typ, style string) string {
	word := map[string]string{"conjunction": "and", "disjunction": "or"}[typ]
	if typ == "conjunction" && style == "short" {
		word = "&"
	}
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	case 2:
		if typ == "unit" || (typ == "conjunction" && style == "narrow") {
			sep := ", "
			if typ == "unit" && style == "narrow" {
				sep = " "
			}
			return items[0] + sep + items[1]
		}
		return items[0] + " " + word + " " + items[1]
	}
	head := strings.Join(items[:len(items)-1], ", ")
	last := items[len(items)-1]
	switch {
	case typ == "unit" && style == "narrow":
		return strings.Join(items, " ")
	case typ == "unit" || (typ == "conjunction" && style == "narrow"):
		return head + ", " + last
	}
	return head + ", " + word + " " + last
}

var relativeUnits = map[string]string{"year": "year", "years": "year", "quarter": "quarter", "quarters": "quarter",
	"month": "month", "months": "month", "week": "week", "weeks": "week", "day": "day", "days": "day",
	"hour": "hour", "hours": "hour", "minute": "minute", "minutes": "minute", "second": "second", "seconds": "second"}

// englishRelative formats n units from now, as RelativeTimeFormat("en").
func englishRelative(n float64, unit, numeric, style string) string {
	if numeric == "auto" {
		auto := map[string]map[float64]string{
			"day":     {-1: "yesterday", 0: "today", 1: "tomorrow"},
			"year":    {-1: "last year", 0: "this year", 1: "next year"},
			"month":   {-1: "last month", 0: "this month", 1: "next month"},
			"week":    {-1: "last week", 0: "this week", 1: "next week"},
			"quarter": {-1: "last quarter", 0: "this quarter", 1: "next quarter"},
			"hour":    {0: "this hour"},
			"minute":  {0: "this minute"},
			"second":  {0: "now"},
		}
		if s, ok := auto[unit][n]; ok && !(n == 0 && math.Signbit(n) && unit != "second") {
			return s
		}
	}
	abs := math.Abs(n)
	num := numberLocales["en-US"]
	nf := numberFormat{loc: num, style: "decimal", grouping: true, minFrac: 0, maxFrac: 3}
	name := unit
	if style != "long" {
		name = map[string]string{"year": "yr.", "quarter": "qtr.", "month": "mo.", "week": "wk.", "day": "day", "hour": "hr.", "minute": "min.", "second": "sec."}[unit]
		if unit == "day" && abs != 1 {
			name = "days"
		}
		if unit == "quarter" && abs != 1 {
			name = "qtrs."
		}
	} else if abs != 1 {
		name += "s"
	}
	s := nf.format(abs) + " " + name
	if n < 0 || (n == 0 && math.Signbit(n)) {
		return s + " ago"
	}
	return "in " + s
}

// installIntlMore adds PluralRules, ListFormat and RelativeTimeFormat to an
// Intl object.
func (e *execution) installIntlMore(intl *goja.Object) error {
	vm := e.vm
	class := func(name string, ctor func(call goja.ConstructorCall) *goja.Object, methods map[string]func(goja.FunctionCall) goja.Value) error {
		c := vm.ToValue(ctor).(*goja.Object)
		proto := vm.NewObject()
		for m, fn := range methods {
			if err := defineFunc(vm, proto, m, fn); err != nil {
				return err
			}
		}
		_ = c.Set("prototype", proto)
		_ = proto.DefineDataProperty("constructor", c, goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_TRUE)
		return intl.DefineDataProperty(name, c, goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_TRUE)
	}
	type opts struct{ a, b string }
	state := map[*goja.Object]opts{}
	of := func(this goja.Value, what string) opts {
		if o, ok := this.(*goja.Object); ok {
			if s, ok := state[o]; ok {
				return s
			}
		}
		panic(vm.NewTypeError("Method Intl." + what + " called on an incompatible receiver"))
	}
	if err := class("PluralRules", func(call goja.ConstructorCall) *goja.Object {
		state[call.This] = opts{a: e.optString(call.Argument(1), "type", "cardinal", "cardinal", "ordinal")}
		return call.This
	}, map[string]func(goja.FunctionCall) goja.Value{
		"select": func(c goja.FunctionCall) goja.Value {
			return vm.ToValue(englishPlural(c.Argument(0).ToFloat(), of(c.This, "PluralRules").a == "ordinal"))
		},
	}); err != nil {
		return err
	}
	if err := class("ListFormat", func(call goja.ConstructorCall) *goja.Object {
		state[call.This] = opts{
			a: e.optString(call.Argument(1), "type", "conjunction", "conjunction", "disjunction", "unit"),
			b: e.optString(call.Argument(1), "style", "long", "long", "short", "narrow"),
		}
		return call.This
	}, map[string]func(goja.FunctionCall) goja.Value{
		"format": func(c goja.FunctionCall) goja.Value {
			o := of(c.This, "ListFormat")
			arr, err := e.intrinsics.arrayFrom(goja.Undefined(), c.Argument(0))
			if err != nil {
				panic(err)
			}
			ao := arr.ToObject(vm)
			var items []string
			for i := int64(0); i < intOf(ao.Get("length")); i++ {
				v := ao.Get(strconv.FormatInt(i, 10))
				if _, ok := v.Export().(string); !ok {
					panic(vm.NewTypeError("Iterable yielded " + v.String() + " which is not a string"))
				}
				items = append(items, v.String())
			}
			return vm.ToValue(englishList(items, o.a, o.b))
		},
	}); err != nil {
		return err
	}
	return class("RelativeTimeFormat", func(call goja.ConstructorCall) *goja.Object {
		state[call.This] = opts{
			a: e.optString(call.Argument(1), "numeric", "always", "always", "auto"),
			b: e.optString(call.Argument(1), "style", "long", "long", "short", "narrow"),
		}
		return call.This
	}, map[string]func(goja.FunctionCall) goja.Value{
		"format": func(c goja.FunctionCall) goja.Value {
			o := of(c.This, "RelativeTimeFormat")
			unit, ok := relativeUnits[c.Argument(1).String()]
			if !ok {
				err, _ := vm.New(vm.Get("RangeError").ToObject(vm), vm.ToValue("Invalid unit argument for format() '"+c.Argument(1).String()+"'"))
				panic(err)
			}
			n := c.Argument(0).ToFloat()
			if math.IsNaN(n) || math.IsInf(n, 0) {
				err, _ := vm.New(vm.Get("RangeError").ToObject(vm), vm.ToValue("Invalid value"))
				panic(err)
			}
			return vm.ToValue(englishRelative(n, unit, o.a, o.b))
		},
	})
}
