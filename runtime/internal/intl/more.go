package intl

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/dop251/goja"

	"github.com/sandboxrt/sandbox/runtime/internal/jsenv"
)

// Intl.PluralRules, Intl.ListFormat and Intl.RelativeTimeFormat, the rules
// agents use to write "1 item" / "2 items", "a, b, and c" and "3 days
// ago", in the locales of intldata.json (others fall back to their
// language, then en-US). Plural rules are CLDR 48's, written out below;
// list and relative-time patterns are ICU's, recorded by intlgen.

func optString(env *jsenv.Env, o goja.Value, name, def string, allowed ...string) string {
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
	panic(env.RangeError(fmt.Sprintf("Value %s out of range for options property %s", s, name)))
}

// pluralCategory is CLDR's cardinal or ordinal category of the number
// written as digits (no sign, "1.50" keeps its visible zeros) in a
// locale's language.
func pluralCategory(lang, digits string, ordinal bool) string {
	intPart, frac, _ := strings.Cut(digits, ".")
	i, _ := strconv.ParseInt(intPart, 10, 64)
	v := len(frac)
	n, _ := strconv.ParseFloat(digits, 64)
	i10, i100 := i%10, i%100
	million := v == 0 && i != 0 && i%1000000 == 0
	if ordinal {
		switch lang {
		case "en":
			if v != 0 {
				return "other"
			}
			switch {
			case i10 == 1 && i100 != 11:
				return "one"
			case i10 == 2 && i100 != 12:
				return "two"
			case i10 == 3 && i100 != 13:
				return "few"
			}
		case "fr":
			if n == 1 {
				return "one"
			}
		case "it":
			if n == 11 || n == 8 || n == 80 || n == 800 {
				return "many"
			}
		case "hi":
			switch n {
			case 1:
				return "one"
			case 2, 3:
				return "two"
			case 4:
				return "few"
			case 6:
				return "many"
			}
		}
		return "other"
	}
	switch lang {
	case "en", "de", "nl", "it":
		if i == 1 && v == 0 {
			return "one"
		}
		if lang == "it" && million {
			return "many"
		}
	case "es":
		if n == 1 {
			return "one"
		}
		if million {
			return "many"
		}
	case "fr", "pt":
		if i <= 1 {
			return "one"
		}
		if million {
			return "many"
		}
	case "ru":
		switch {
		case v != 0:
			return "other"
		case i10 == 1 && i100 != 11:
			return "one"
		case i10 >= 2 && i10 <= 4 && (i100 < 12 || i100 > 14):
			return "few"
		}
		return "many"
	case "hi":
		if i == 0 || n == 1 {
			return "one"
		}
	}
	return "other"
}

// listPattern joins items with a locale's recorded list patterns.
func listPattern(l *intlLocale, lang string, items []string, typ, style string) string {
	p := l.Lists[typ+"-"+style]
	join := func(tmpl, a, b string) string {
		if lang == "es" {
			tmpl = spanishConjunction(tmpl, b)
		}
		return strings.Replace(strings.Replace(tmpl, "{0}", a, 1), "{1}", b, 1)
	}
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	case 2:
		return join(p[0], items[0], items[1])
	}
	n := len(items)
	out := join(p[3], items[n-2], items[n-1])
	for i := n - 3; i >= 1; i-- {
		out = join(p[2], items[i], out)
	}
	return join(p[1], items[0], out)
}

// spanishConjunction is ICU's rule for Spanish lists: "y" becomes "e"
// before an "i" sound ("Juan e Inés") and "o" becomes "u" before an "o"
// sound ("siete u ocho").
func spanishConjunction(tmpl, next string) string {
	w := strings.ToLower(next)
	switch {
	case strings.Contains(tmpl, " y ") && (strings.HasPrefix(w, "i") || (strings.HasPrefix(w, "hi") && !strings.HasPrefix(w, "hia") && !strings.HasPrefix(w, "hie"))):
		return strings.Replace(tmpl, " y ", " e ", 1)
	case strings.Contains(tmpl, " o ") && (strings.HasPrefix(w, "o") || strings.HasPrefix(w, "ho") || strings.HasPrefix(w, "8") || w == "11" || strings.HasPrefix(w, "11 ")):
		return strings.Replace(tmpl, " o ", " u ", 1)
	}
	return tmpl
}

var relativeUnits = map[string]string{"year": "year", "years": "year", "quarter": "quarter", "quarters": "quarter",
	"month": "month", "months": "month", "week": "week", "weeks": "week", "day": "day", "days": "day",
	"hour": "hour", "hours": "hour", "minute": "minute", "minutes": "minute", "second": "second", "seconds": "second"}

// relativeTime formats n units from now in a locale, as
// RelativeTimeFormat's format does.
func relativeTime(num *localeNumbers, n float64, unit, numeric, style string) string {
	l := localeData(num.tag)
	entry := l.Relative[unit+"-"+style]
	past := n < 0 || (n == 0 && math.Signbit(n))
	if numeric == "auto" && !(n == 0 && past) {
		if s, ok := entry.Auto[strconv.FormatFloat(n, 'f', -1, 64)]; ok {
			return s
		}
	}
	nf := numberFormat{loc: num, style: "decimal", grouping: true, minFrac: 0, maxFrac: 3}
	abs := math.Abs(n)
	digits := roundHalfExpand(strconv.FormatFloat(abs, 'f', -1, 64), 3) // as the number is shown
	if strings.Contains(digits, ".") {
		digits = strings.TrimRight(strings.TrimRight(digits, "0"), ".")
	}
	forms := entry.Future
	if past {
		forms = entry.Past
	}
	tmpl, ok := forms[pluralCategory(langOf(num.tag), digits, false)]
	if !ok {
		tmpl = forms["other"]
	}
	return strings.Replace(tmpl, "{0}", nf.format(abs), 1)
}

func langOf(tag string) string {
	lang, _, _ := strings.Cut(tag, "-")
	return lang
}

// installIntlMore adds PluralRules, ListFormat and RelativeTimeFormat to an
// Intl object.
func installIntlMore(env *jsenv.Env, intl *goja.Object) error {
	vm := env.VM
	class := func(name string, ctor func(call goja.ConstructorCall) *goja.Object, methods map[string]func(goja.FunctionCall) goja.Value) error {
		c := vm.ToValue(ctor).(*goja.Object)
		proto := vm.NewObject()
		for m, fn := range methods {
			if err := jsenv.DefineFunc(vm, proto, m, fn); err != nil {
				return err
			}
		}
		_ = c.Set("prototype", proto)
		_ = proto.DefineDataProperty("constructor", c, goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_TRUE)
		return intl.DefineDataProperty(name, c, goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_TRUE)
	}
	type opts struct {
		a, b string
		num  *localeNumbers
	}
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
		state[call.This] = opts{a: optString(env, call.Argument(1), "type", "cardinal", "cardinal", "ordinal"), num: numberLocale(call.Argument(0))}
		return call.This
	}, map[string]func(goja.FunctionCall) goja.Value{
		"select": func(c goja.FunctionCall) goja.Value {
			o := of(c.This, "PluralRules")
			n := c.Argument(0).ToFloat()
			if math.IsNaN(n) || math.IsInf(n, 0) {
				return vm.ToValue("other")
			}
			digits := strconv.FormatFloat(math.Abs(n), 'f', -1, 64)
			return vm.ToValue(pluralCategory(langOf(o.num.tag), digits, o.a == "ordinal"))
		},
	}); err != nil {
		return err
	}
	if err := class("ListFormat", func(call goja.ConstructorCall) *goja.Object {
		state[call.This] = opts{
			a:   optString(env, call.Argument(1), "type", "conjunction", "conjunction", "disjunction", "unit"),
			b:   optString(env, call.Argument(1), "style", "long", "long", "short", "narrow"),
			num: numberLocale(call.Argument(0)),
		}
		return call.This
	}, map[string]func(goja.FunctionCall) goja.Value{
		"format": func(c goja.FunctionCall) goja.Value {
			o := of(c.This, "ListFormat")
			arr, err := env.ArrayFrom(goja.Undefined(), c.Argument(0))
			if err != nil {
				panic(err)
			}
			ao := arr.ToObject(vm)
			var items []string
			for i := int64(0); i < jsenv.IntOf(ao.Get("length")); i++ {
				v := ao.Get(strconv.FormatInt(i, 10))
				if _, ok := v.Export().(string); !ok {
					panic(vm.NewTypeError("Iterable yielded " + v.String() + " which is not a string"))
				}
				items = append(items, v.String())
			}
			return vm.ToValue(listPattern(localeData(o.num.tag), langOf(o.num.tag), items, o.a, o.b))
		},
	}); err != nil {
		return err
	}
	return class("RelativeTimeFormat", func(call goja.ConstructorCall) *goja.Object {
		state[call.This] = opts{
			a:   optString(env, call.Argument(1), "numeric", "always", "always", "auto"),
			b:   optString(env, call.Argument(1), "style", "long", "long", "short", "narrow"),
			num: numberLocale(call.Argument(0)),
		}
		return call.This
	}, map[string]func(goja.FunctionCall) goja.Value{
		"format": func(c goja.FunctionCall) goja.Value {
			o := of(c.This, "RelativeTimeFormat")
			unit, ok := relativeUnits[c.Argument(1).String()]
			if !ok {
				panic(env.RangeError("Invalid unit argument for format() '" + c.Argument(1).String() + "'"))
			}
			n := c.Argument(0).ToFloat()
			if math.IsNaN(n) || math.IsInf(n, 0) {
				panic(env.RangeError("Invalid value"))
			}
			return vm.ToValue(relativeTime(o.num, n, unit, o.a, o.b))
		},
	})
}
