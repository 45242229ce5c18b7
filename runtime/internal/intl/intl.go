// Package intl is the runtime's Intl: NumberFormat, DateTimeFormat,
// PluralRules, ListFormat, RelativeTimeFormat and Collator, with
// Number.prototype.toLocaleString, the Date toLocale* methods and
// String.prototype.localeCompare formatting and comparing as they do. goja
// has none of it. Output follows Node 22's ICU in the locales of
// locales.go and intldata.json (others by language, then en-US; never an
// error): dates, lists and relative times are ICU's own patterns recorded
// by intlgen (make intldata), filled in here; plural rules and number
// symbols are CLDR's, written out; collation is golang.org/x/text/collate.
// Its three Install functions are families of the runtime's globals table
// (runtime/globals.go).
package intl

import (
	"math"
	"strconv"
	"strings"

	"github.com/dop251/goja"

	"github.com/sandboxrt/sandbox/runtime/internal/jsenv"
)

// Intl.NumberFormat and Number.prototype.toLocaleString: decimal, percent
// and currency styles, fraction digits and grouping, as ICU writes them in
// the locales of locales.go (others by language, then en-US; never an
// error). goja has no Intl, and its toLocaleString threw ("radix argument
// must be between 2 and 36") for a locale argument. Rounding is ICU's
// default, half away from zero, on the shortest decimal form of the
// number. Dates are in date.go, plurals, lists and relative times in
// more.go, collation in collate.go.

type numberFormat struct {
	loc              *localeNumbers
	style            string // decimal, percent, currency
	currency         string
	minFrac, maxFrac int
	grouping         bool
}

// currencySymbols are en-US's symbols; other codes show as "CODE ".
var currencySymbols = map[string]string{"USD": "$", "EUR": "€", "GBP": "£", "JPY": "¥", "CAD": "CA$", "AUD": "A$", "CNY": "CN¥", "INR": "₹", "KRW": "₩", "BRL": "R$", "MXN": "MX$"}

// currencyDigits are the ISO 4217 minor units that differ from 2.
var currencyDigits = map[string]int{"JPY": 0, "KRW": 0, "CLP": 0, "VND": 0, "ISK": 0, "BHD": 3, "KWD": 3, "JOD": 3, "OMR": 3, "TND": 3}

func numberFormatFrom(env *jsenv.Env, locales, opts goja.Value) numberFormat {
	vm := env.VM
	nf := numberFormat{loc: numberLocale(locales), style: "decimal", grouping: true, minFrac: -1, maxFrac: -1}
	o, ok := opts.(*goja.Object)
	if ok {
		str := func(name string) string {
			if v := o.Get(name); v != nil && !goja.IsUndefined(v) {
				return v.String()
			}
			return ""
		}
		digits := func(name string) int {
			v := o.Get(name)
			if v == nil || goja.IsUndefined(v) {
				return -1
			}
			n := v.ToFloat()
			if math.IsNaN(n) || n < 0 || n > 100 {
				panic(env.RangeError(name + " value is out of range."))
			}
			return int(n)
		}
		if s := str("style"); s != "" {
			nf.style = s
		}
		switch nf.style {
		case "decimal", "percent", "currency":
		default:
			panic(env.RangeError("Value " + nf.style + " out of range for Intl.NumberFormat options property style"))
		}
		nf.currency = strings.ToUpper(str("currency"))
		if nf.style == "currency" && nf.currency == "" {
			panic(vm.NewTypeError("Currency code is required with currency style."))
		}
		nf.minFrac, nf.maxFrac = digits("minimumFractionDigits"), digits("maximumFractionDigits")
		if g := o.Get("useGrouping"); g != nil && !goja.IsUndefined(g) {
			nf.grouping = g.ToBoolean() || g.String() == "always" || g.String() == "auto"
		}
	}
	defMin, defMax := 0, 3
	switch nf.style {
	case "percent":
		defMax = 0
	case "currency":
		d, ok := currencyDigits[nf.currency]
		if !ok {
			d = 2
		}
		defMin, defMax = d, d
	}
	switch {
	case nf.minFrac < 0 && nf.maxFrac < 0:
		nf.minFrac, nf.maxFrac = defMin, defMax
	case nf.minFrac < 0:
		nf.minFrac = min(defMin, nf.maxFrac)
	case nf.maxFrac < 0:
		nf.maxFrac = max(defMax, nf.minFrac)
	case nf.minFrac > nf.maxFrac:
		panic(env.RangeError("maximumFractionDigits value is out of range."))
	}
	return nf
}

func (nf numberFormat) format(x float64) string {
	switch {
	case math.IsNaN(x):
		return "NaN"
	case math.IsInf(x, 0):
		s := "∞"
		if x < 0 {
			s = "-∞"
		}
		return s
	}
	neg := x < 0 || (x == 0 && math.Signbit(x))
	dec := strconv.FormatFloat(math.Abs(x), 'f', -1, 64)
	if nf.style == "percent" {
		// Scaled in decimal, as ICU does: 0.0725 is 7.25%, not the
		// 7.249999999999999 that multiplying the double gives.
		dec = shiftDecimal(dec, 2)
	}
	digits := roundHalfExpand(dec, nf.maxFrac)
	intPart, frac, _ := strings.Cut(digits, ".")
	for len(frac) > nf.minFrac && strings.HasSuffix(frac, "0") {
		frac = frac[:len(frac)-1]
	}
	for len(frac) < nf.minFrac {
		frac += "0"
	}
	l := nf.loc
	if nf.grouping {
		intPart = l.groupDigits(intPart)
	}
	out := intPart
	if frac != "" {
		out += l.decimal + frac
	}
	minus := ""
	if neg {
		minus = "-"
	}
	switch nf.style {
	case "percent":
		if l.percentSpace {
			return minus + out + nbsp + "%"
		}
		return minus + out + "%"
	case "currency":
		sym, ok := l.symbol(nf.currency)
		if !ok {
			sym = nf.currency
		}
		switch {
		case l.currencySuffix:
			return minus + out + nbsp + sym
		case l.minusAfterSymbol:
			return sym + nbsp + minus + out
		case l.currencySpace || !ok:
			return minus + sym + nbsp + out
		}
		return minus + sym + out
	}
	return minus + out
}

// shiftDecimal multiplies a non-negative decimal string by 10^n.
func shiftDecimal(s string, n int) string {
	intPart, frac, _ := strings.Cut(s, ".")
	for len(frac) < n {
		frac += "0"
	}
	intPart, frac = strings.TrimLeft(intPart+frac[:n], "0"), frac[n:]
	if intPart == "" {
		intPart = "0"
	}
	if frac == "" {
		return intPart
	}
	return intPart + "." + frac
}

// roundHalfExpand rounds a non-negative decimal string to frac fraction
// digits, half away from zero.
func roundHalfExpand(s string, frac int) string {
	intPart, f, _ := strings.Cut(s, ".")
	if len(f) <= frac {
		return s
	}
	up := f[frac] >= '5'
	digits := []byte(intPart + f[:frac])
	if up {
		i := len(digits) - 1
		for ; i >= 0; i-- {
			if digits[i] == '9' {
				digits[i] = '0'
				continue
			}
			digits[i]++
			break
		}
		if i < 0 {
			digits = append([]byte{'1'}, digits...)
		}
	}
	n := len(digits) - frac
	if frac == 0 {
		return string(digits)
	}
	return string(digits[:n]) + "." + string(digits[n:])
}

// Install defines Intl: NumberFormat, DateTimeFormat, PluralRules,
// ListFormat and RelativeTimeFormat (Collator is InstallCollation's).
func Install(env *jsenv.Env) error {
	vm := env.VM
	g := vm.GlobalObject()
	intl := vm.NewObject()
	nfProto := vm.NewObject()
	formats := map[*goja.Object]numberFormat{}
	nfCtor := vm.ToValue(func(call goja.ConstructorCall) *goja.Object {
		formats[call.This] = numberFormatFrom(env, call.Argument(0), call.Argument(1))
		return call.This
	}).(*goja.Object)
	if err := jsenv.DefineFunc(vm, nfProto, "format", func(c goja.FunctionCall) goja.Value {
		o, _ := c.This.(*goja.Object)
		nf, ok := formats[o]
		if !ok {
			panic(vm.NewTypeError("Intl.NumberFormat.prototype.format called on an object that is not a NumberFormat"))
		}
		return vm.ToValue(nf.format(c.Argument(0).ToFloat()))
	}); err != nil {
		return err
	}
	if err := jsenv.DefineFunc(vm, nfProto, "resolvedOptions", func(c goja.FunctionCall) goja.Value {
		o, _ := c.This.(*goja.Object)
		nf := formats[o]
		out := vm.NewObject()
		_ = out.Set("locale", nf.loc.tag)
		_ = out.Set("numberingSystem", "latn")
		_ = out.Set("style", nf.style)
		if nf.style == "currency" {
			_ = out.Set("currency", nf.currency)
		}
		_ = out.Set("minimumFractionDigits", nf.minFrac)
		_ = out.Set("maximumFractionDigits", nf.maxFrac)
		return out
	}); err != nil {
		return err
	}
	_ = nfCtor.Set("prototype", nfProto)
	_ = nfProto.DefineDataProperty("constructor", nfCtor, goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_TRUE)
	_ = intl.DefineDataProperty("NumberFormat", nfCtor, goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_TRUE)
	if err := installDateTimeFormat(env, intl); err != nil {
		return err
	}
	if err := installIntlMore(env, intl); err != nil {
		return err
	}
	return g.DefineDataProperty("Intl", intl, goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_TRUE)
}

// InstallToLocaleString makes Number.prototype.toLocaleString format as
// Intl.NumberFormat does, and Date.prototype.toLocaleString,
// toLocaleDateString and toLocaleTimeString as Intl.DateTimeFormat does.
func InstallToLocaleString(env *jsenv.Env) error {
	if err := installNumberToLocaleString(env); err != nil {
		return err
	}
	return installDateLocale(env)
}

// installNumberToLocaleString makes Number.prototype.toLocaleString format
// as Intl.NumberFormat does.
func installNumberToLocaleString(env *jsenv.Env) error {
	vm := env.VM
	numProto := vm.GlobalObject().Get("Number").ToObject(vm).Get("prototype").ToObject(vm)
	return jsenv.DefineFunc(vm, numProto, "toLocaleString", func(c goja.FunctionCall) goja.Value {
		x := c.This.ToFloat()
		if o, ok := c.This.(*goja.Object); ok {
			x = o.ToFloat()
		}
		return vm.ToValue(numberFormatFrom(env, c.Argument(0), c.Argument(1)).format(x))
	})
}
