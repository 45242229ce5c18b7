package runtime

import (
	"math"
	"strconv"
	"strings"

	"github.com/dop251/goja"
)

// Intl.NumberFormat and Number.prototype.toLocaleString: decimal, percent
// and currency styles, fraction digits and grouping, as ICU writes them in
// the locales of intllocales.go (others by language, then en-US; never an
// error). goja has no Intl, and its toLocaleString threw ("radix argument
// must be between 2 and 36") for a locale argument. Rounding is ICU's
// default, half away from zero, on the shortest decimal form of the
// number. Dates are in intldate.go, plurals, lists and relative times in
// intlmore.go, collation in collate.go.

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

func (e *execution) numberFormatFrom(locales, opts goja.Value) numberFormat {
	vm := e.vm
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
				err, _ := vm.New(vm.Get("RangeError").ToObject(vm), vm.ToValue(name+" value is out of range."))
				panic(err)
			}
			return int(n)
		}
		if s := str("style"); s != "" {
			nf.style = s
		}
		switch nf.style {
		case "decimal", "percent", "currency":
		default:
			err, _ := vm.New(vm.Get("RangeError").ToObject(vm), vm.ToValue("Value "+nf.style+" out of range for Intl.NumberFormat options property style"))
			panic(err)
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
		err, _ := vm.New(vm.Get("RangeError").ToObject(vm), vm.ToValue("maximumFractionDigits value is out of range."))
		panic(err)
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

// installIntl defines Intl and a Number.prototype.
// toLocaleString that formats as it does.
func (e *execution) installIntl(g *goja.Object) error {
	vm := e.vm
	intl := vm.NewObject()
	nfProto := vm.NewObject()
	formats := map[*goja.Object]numberFormat{}
	nfCtor := vm.ToValue(func(call goja.ConstructorCall) *goja.Object {
		formats[call.This] = e.numberFormatFrom(call.Argument(0), call.Argument(1))
		return call.This
	}).(*goja.Object)
	if err := defineFunc(vm, nfProto, "format", func(c goja.FunctionCall) goja.Value {
		o, _ := c.This.(*goja.Object)
		nf, ok := formats[o]
		if !ok {
			panic(vm.NewTypeError("Intl.NumberFormat.prototype.format called on an object that is not a NumberFormat"))
		}
		return vm.ToValue(nf.format(c.Argument(0).ToFloat()))
	}); err != nil {
		return err
	}
	if err := defineFunc(vm, nfProto, "resolvedOptions", func(c goja.FunctionCall) goja.Value {
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
	if err := e.installDateTimeFormat(intl); err != nil {
		return err
	}
	if err := e.installIntlMore(intl); err != nil {
		return err
	}
	return g.DefineDataProperty("Intl", intl, goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_TRUE)
}

// installNumberToLocaleString makes Number.prototype.toLocaleString format
// as Intl.NumberFormat does.
func (e *execution) installNumberToLocaleString() error {
	vm := e.vm
	numProto := vm.GlobalObject().Get("Number").ToObject(vm).Get("prototype").ToObject(vm)
	return defineFunc(vm, numProto, "toLocaleString", func(c goja.FunctionCall) goja.Value {
		x := c.This.ToFloat()
		if o, ok := c.This.(*goja.Object); ok {
			x = o.ToFloat()
		}
		return vm.ToValue(e.numberFormatFrom(c.Argument(0), c.Argument(1)).format(x))
	})
}
