package intl

import (
	"fmt"
	"math"
	"strings"
	"time"
	_ "time/tzdata" // IANA time zones by name, whatever the machine has installed

	"github.com/dop251/goja"

	"github.com/sandboxrt/sandbox/runtime/internal/jsenv"
)

// Dates as Intl.DateTimeFormat and Date.prototype.toLocaleString,
// toLocaleDateString and toLocaleTimeString: the fields agents ask for
// (weekday, year, month, day, hour, minute, second, hour12/hourCycle,
// timeZoneName), dateStyle and timeStyle, and timeZone by IANA name (an
// unknown one is a RangeError), in the locales of intldata.json. Which
// pattern ICU picks for a set of options is recorded there, not guessed.

type dateFormat struct {
	locale                                                  *localeNumbers
	data                                                    *intlLocale
	weekday, year, month, day, hour, minute, second, tzName string
	dateStyle, timeStyle                                    string
	hc                                                      string // "", h12 or h23: what the options asked for
	loc                                                     *time.Location
}

func dateFormatFrom(env *jsenv.Env, locales, opts goja.Value, defaults string) dateFormat {
	vm := env.VM
	num := numberLocale(locales)
	df := dateFormat{locale: num, data: localeData(num.tag), loc: time.Local}
	rangeErr := func(msg string) {
		panic(env.RangeError(msg))
	}
	if o, ok := opts.(*goja.Object); ok {
		str := func(name string, allowed ...string) string {
			v := o.Get(name)
			if v == nil || goja.IsUndefined(v) {
				return ""
			}
			s := v.String()
			for _, a := range allowed {
				if s == a {
					return s
				}
			}
			rangeErr(fmt.Sprintf("Value %s out of range for Intl.DateTimeFormat options property %s", s, name))
			return ""
		}
		df.weekday = str("weekday", "long", "short", "narrow")
		df.year = str("year", "numeric", "2-digit")
		df.month = str("month", "numeric", "2-digit", "long", "short", "narrow")
		df.day = str("day", "numeric", "2-digit")
		df.hour = str("hour", "numeric", "2-digit")
		df.minute = str("minute", "numeric", "2-digit")
		df.second = str("second", "numeric", "2-digit")
		df.tzName = str("timeZoneName", "short", "long")
		df.dateStyle = str("dateStyle", "full", "long", "medium", "short")
		df.timeStyle = str("timeStyle", "full", "long", "medium", "short")
		switch str("hourCycle", "h11", "h12", "h23", "h24") {
		case "h11", "h12":
			df.hc = "h12"
		case "h23", "h24":
			df.hc = "h23"
		}
		if h := o.Get("hour12"); h != nil && !goja.IsUndefined(h) {
			df.hc = "h23"
			if h.ToBoolean() {
				df.hc = "h12"
			}
		}
		if tz := o.Get("timeZone"); tz != nil && !goja.IsUndefined(tz) {
			name := tz.String()
			if strings.EqualFold(name, "utc") || strings.EqualFold(name, "gmt") || strings.EqualFold(name, "etc/utc") {
				name = "UTC"
			}
			loc, err := time.LoadLocation(name)
			if err != nil || name == "" || name == "Local" {
				rangeErr("Invalid time zone specified: " + tz.String())
			}
			df.loc = loc
		}
	}
	if (df.dateStyle != "" || df.timeStyle != "") && (df.weekday != "" || df.year != "" || df.month != "" || df.day != "" || df.hour != "" || df.minute != "" || df.second != "" || df.tzName != "") {
		panic(vm.NewTypeError("Can't set option " + firstSet(df) + " when dateStyle or timeStyle is used"))
	}
	hasDate := df.weekday != "" || df.year != "" || df.month != "" || df.day != ""
	hasTime := df.hour != "" || df.minute != "" || df.second != ""
	if df.dateStyle == "" && df.timeStyle == "" && !hasDate && !hasTime {
		if defaults == "date" || defaults == "all" {
			df.year, df.month, df.day = "numeric", "numeric", "numeric"
		}
		if defaults == "time" || defaults == "all" {
			df.hour, df.minute, df.second = "numeric", "numeric", "numeric"
		}
	}
	return df
}

func firstSet(df dateFormat) string {
	for _, f := range []struct{ name, v string }{{"weekday", df.weekday}, {"year", df.year}, {"month", df.month}, {"day", df.day}, {"hour", df.hour}, {"minute", df.minute}, {"second", df.second}, {"timeZoneName", df.tzName}} {
		if f.v != "" {
			return f.name
		}
	}
	return ""
}

// pattern is the recorded pattern for these options.
func (df dateFormat) pattern() string {
	l := df.data
	if df.dateStyle != "" || df.timeStyle != "" {
		key := df.dateStyle + "," + df.timeStyle
		if df.timeStyle != "" && df.hc != "" {
			key += "," + df.hc
		}
		return l.Styles[key]
	}
	dateKey := strings.Join([]string{df.weekday, df.year, df.month, df.day}, ",")
	hc := ""
	if df.hour != "" {
		hc = df.hc
	}
	timeKey := strings.Join([]string{df.hour, df.minute, df.second, hc, df.tzName}, ",")
	switch {
	case timeKey == ",,,,":
		return l.Date[dateKey]
	case dateKey == ",,,":
		return l.Time[timeKey]
	}
	if p, ok := l.Whole[dateKey+"|"+timeKey]; ok {
		return p
	}
	glue, ok := l.GlueFor[dateKey+"|"+timeKey]
	if !ok {
		glue = l.Glue[dateKey]
	}
	return l.Date[dateKey] + strings.Replace(glue, "{0}", l.Time[timeKey], 1)
}

// parts formats ms (milliseconds since the epoch); false for an invalid date.
func (df dateFormat) parts(ms float64) ([]datePart, bool) {
	if math.IsNaN(ms) || math.IsInf(ms, 0) || math.Abs(ms) > 8.64e15 {
		return nil, false
	}
	return df.data.fill(df.pattern(), time.UnixMilli(int64(ms)).In(df.loc)), true
}

func (df dateFormat) format(ms float64) (string, bool) {
	parts, ok := df.parts(ms)
	if !ok {
		return "Invalid Date", false
	}
	return joinParts(parts), true
}

// joinParts is format's answer from formatToParts': V8 writes ICU's
// narrow no-break spaces (before AM/PM, in "à 15:04") as plain spaces
// there, for pages that compared with " ", and keeps them in the parts.
func joinParts(parts []datePart) string {
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(strings.ReplaceAll(p.value, "\u202f", " "))
	}
	return b.String()
}

// hourCycle is the cycle the format uses, as resolvedOptions reports it.
func (df dateFormat) hourCycle() string {
	if df.hc != "" {
		return df.hc
	}
	return df.data.HourCycle
}

// installDateLocale makes Date.prototype.toLocaleString,
// toLocaleDateString and toLocaleTimeString format as en-US does.
func installDateLocale(env *jsenv.Env) error {
	vm := env.VM
	proto := vm.GlobalObject().Get("Date").ToObject(vm).Get("prototype").ToObject(vm)
	getTime, _ := goja.AssertFunction(proto.Get("getTime"))
	for name, defaults := range map[string]string{"toLocaleString": "all", "toLocaleDateString": "date", "toLocaleTimeString": "time"} {
		defaults := defaults
		if err := jsenv.DefineFunc(vm, proto, name, func(c goja.FunctionCall) goja.Value {
			ms, err := getTime(c.This)
			if err != nil {
				panic(err)
			}
			df := dateFormatFrom(env, c.Argument(0), c.Argument(1), defaults)
			if defaults == "date" && df.timeStyle != "" {
				panic(vm.NewTypeError("Invalid option : timeStyle"))
			}
			if defaults == "time" && df.dateStyle != "" {
				panic(vm.NewTypeError("Invalid option : dateStyle"))
			}
			s, _ := df.format(ms.ToFloat())
			return vm.ToValue(s)
		}); err != nil {
			return err
		}
	}
	return nil
}

// installDateTimeFormat adds Intl.DateTimeFormat to an Intl object.
func installDateTimeFormat(env *jsenv.Env, intl *goja.Object) error {
	vm := env.VM
	proto := vm.NewObject()
	formats := map[*goja.Object]dateFormat{}
	ctor := vm.ToValue(func(call goja.ConstructorCall) *goja.Object {
		formats[call.This] = dateFormatFrom(env, call.Argument(0), call.Argument(1), "date")
		return call.This
	}).(*goja.Object)
	getTime, _ := goja.AssertFunction(vm.GlobalObject().Get("Date").ToObject(vm).Get("prototype").ToObject(vm).Get("getTime"))
	formatted := func(c goja.FunctionCall, what string) []datePart {
		o, _ := c.This.(*goja.Object)
		df, ok := formats[o]
		if !ok {
			panic(vm.NewTypeError("Intl.DateTimeFormat.prototype." + what + " called on an object that is not a DateTimeFormat"))
		}
		ms := float64(env.Time().UnixMilli())
		if a := c.Argument(0); !goja.IsUndefined(a) {
			if d, ok := a.(*goja.Object); ok && d.ClassName() == "Date" {
				v, _ := getTime(d)
				ms = v.ToFloat()
			} else {
				ms = a.ToFloat()
			}
		}
		parts, ok := df.parts(ms)
		if !ok {
			panic(env.RangeError("Invalid time value"))
		}
		return parts
	}
	if err := jsenv.DefineFunc(vm, proto, "format", func(c goja.FunctionCall) goja.Value {
		return vm.ToValue(joinParts(formatted(c, "format")))
	}); err != nil {
		return err
	}
	if err := jsenv.DefineFunc(vm, proto, "formatToParts", func(c goja.FunctionCall) goja.Value {
		var out []any
		for _, p := range formatted(c, "formatToParts") {
			o := vm.NewObject()
			_ = o.Set("type", p.typ)
			_ = o.Set("value", p.value)
			out = append(out, o)
		}
		return vm.NewArray(out...)
	}); err != nil {
		return err
	}
	if err := jsenv.DefineFunc(vm, proto, "resolvedOptions", func(c goja.FunctionCall) goja.Value {
		o, _ := c.This.(*goja.Object)
		df, ok := formats[o]
		if !ok {
			panic(vm.NewTypeError("Method Intl.DateTimeFormat.prototype.resolvedOptions called on incompatible receiver"))
		}
		out := vm.NewObject()
		_ = out.Set("locale", df.locale.tag)
		_ = out.Set("calendar", "gregory")
		_ = out.Set("numberingSystem", "latn")
		_ = out.Set("timeZone", zoneID(df.loc))
		if df.hour != "" || df.timeStyle != "" {
			_ = out.Set("hourCycle", df.hourCycle())
			_ = out.Set("hour12", df.hourCycle() == "h12")
		}
		for _, f := range []struct{ name, v string }{{"weekday", df.weekday}, {"year", df.year}, {"month", df.month}, {"day", df.day},
			{"hour", df.hour}, {"minute", df.minute}, {"second", df.second}, {"timeZoneName", df.tzName}, {"dateStyle", df.dateStyle}, {"timeStyle", df.timeStyle}} {
			if f.v != "" {
				_ = out.Set(f.name, f.v)
			}
		}
		return out
	}); err != nil {
		return err
	}
	_ = ctor.Set("prototype", proto)
	_ = proto.DefineDataProperty("constructor", ctor, goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_TRUE)
	return intl.DefineDataProperty("DateTimeFormat", ctor, goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_TRUE)
}
