package runtime

import (
	"fmt"
	"math"
	"strings"
	"time"
	_ "time/tzdata" // IANA time zones by name, whatever the machine has installed

	"github.com/dop251/goja"
)

// Dates in en-US, as Intl.DateTimeFormat and Date.prototype.toLocaleString,
// toLocaleDateString and toLocaleTimeString: the fields agents ask for
// (weekday, year, month, day, hour, minute, second, hour12, timeZoneName),
// dateStyle and timeStyle, and timeZone by IANA name (an unknown one is a
// RangeError). Patterns are ICU's en-US ones as Node 22 prints them (its ICU
// 78 has a plain space before AM/PM again, where ICU 72-73 had U+202F).

type dateFormat struct {
	weekday, year, month, day, hour, minute, second, tzName string
	dateStyle, timeStyle                                    string
	hour12                                                  bool
	loc                                                     *time.Location
}

const amPmSeparator = " "

func (e *execution) dateFormatFrom(opts goja.Value, defaults string) dateFormat {
	vm := e.vm
	df := dateFormat{hour12: true, loc: time.Local}
	rangeErr := func(msg string) {
		err, _ := vm.New(vm.Get("RangeError").ToObject(vm), vm.ToValue(msg))
		panic(err)
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
		if h := o.Get("hour12"); h != nil && !goja.IsUndefined(h) {
			df.hour12 = h.ToBoolean()
		}
		if hc := o.Get("hourCycle"); hc != nil && !goja.IsUndefined(hc) {
			df.hour12 = hc.String() == "h12" || hc.String() == "h11"
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
	if (df.dateStyle != "" || df.timeStyle != "") && (df.weekday != "" || df.year != "" || df.month != "" || df.day != "" || df.hour != "" || df.minute != "" || df.second != "") {
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
	for _, f := range []struct{ name, v string }{{"weekday", df.weekday}, {"year", df.year}, {"month", df.month}, {"day", df.day}, {"hour", df.hour}, {"minute", df.minute}, {"second", df.second}} {
		if f.v != "" {
			return f.name
		}
	}
	return ""
}

func (df dateFormat) format(ms float64) (string, bool) {
	if math.IsNaN(ms) || math.IsInf(ms, 0) {
		return "Invalid Date", false
	}
	t := time.UnixMilli(int64(ms)).In(df.loc)
	switch {
	case df.dateStyle != "" || df.timeStyle != "":
		var parts []string
		switch df.dateStyle {
		case "full":
			parts = append(parts, t.Format("Monday, January 2, 2006"))
		case "long":
			parts = append(parts, t.Format("January 2, 2006"))
		case "medium":
			parts = append(parts, t.Format("Jan 2, 2006"))
		case "short":
			parts = append(parts, t.Format("1/2/06"))
		}
		var tm string
		switch df.timeStyle {
		case "full":
			tm = df.clock(t, true, true) + " " + longZoneName(t)
		case "long":
			tm = df.clock(t, true, true) + " " + shortZoneName(t)
		case "medium":
			tm = df.clock(t, true, true)
		case "short":
			tm = df.clock(t, true, false)
		}
		if tm != "" {
			sep := ", "
			if df.dateStyle == "full" || df.dateStyle == "long" {
				sep = " at "
			}
			if len(parts) == 0 {
				return tm, true
			}
			return parts[0] + sep + tm, true
		}
		return parts[0], true
	}
	var date string
	textMonth := df.month == "long" || df.month == "short" || df.month == "narrow"
	wd := ""
	switch df.weekday {
	case "long":
		wd = t.Format("Monday")
	case "short":
		wd = t.Format("Mon")
	case "narrow":
		wd = t.Format("Mon")[:1]
	}
	year := ""
	switch df.year {
	case "numeric":
		year = t.Format("2006")
	case "2-digit":
		year = t.Format("06")
	}
	day := ""
	switch df.day {
	case "numeric":
		day = t.Format("2")
	case "2-digit":
		day = t.Format("02")
	}
	if textMonth {
		month := map[string]string{"long": t.Format("January"), "short": t.Format("Jan"), "narrow": t.Format("Jan")[:1]}[df.month]
		date = month
		if day != "" {
			date += " " + day
		}
		if year != "" {
			if day != "" {
				date += ", " + year
			} else {
				date += " " + year
			}
		}
		if wd != "" {
			date = wd + ", " + date
		}
	} else {
		var nums []string
		switch df.month {
		case "numeric":
			nums = append(nums, t.Format("1"))
		case "2-digit":
			nums = append(nums, t.Format("01"))
		}
		if day != "" {
			nums = append(nums, day)
		}
		if year != "" {
			nums = append(nums, year)
		}
		date = strings.Join(nums, "/")
		if wd != "" {
			if date == "" {
				date = wd
			} else {
				date = wd + ", " + date
			}
		}
	}
	tm := ""
	if df.hour != "" || df.minute != "" || df.second != "" {
		tm = df.fieldsClock(t)
		switch df.tzName {
		case "short":
			tm += " " + shortZoneName(t)
		case "long":
			tm += " " + longZoneName(t)
		}
	} else if df.tzName != "" && date != "" {
		name := shortZoneName(t)
		if df.tzName == "long" {
			name = longZoneName(t)
		}
		date += ", " + name
	}
	switch {
	case date != "" && tm != "":
		return date + ", " + tm, true
	case date != "":
		return date, true
	}
	return tm, true
}

// clock is h:mm[:ss] AM/PM (or HH:mm[:ss] on a 24-hour clock).
func (df dateFormat) clock(t time.Time, minutes, seconds bool) string {
	s := ""
	if df.hour12 {
		s = t.Format("3:04")
	} else {
		s = t.Format("15:04")
	}
	if seconds {
		s += t.Format(":05")
	}
	if df.hour12 {
		s += amPmSeparator + t.Format("PM")
	}
	return s
}

// fieldsClock formats the hour, minute and second fields asked for.
func (df dateFormat) fieldsClock(t time.Time) string {
	var s string
	h := t.Hour()
	if df.hour12 {
		h = h % 12
		if h == 0 {
			h = 12
		}
	}
	switch {
	case df.hour == "2-digit" || (!df.hour12 && df.hour != ""):
		s = fmt.Sprintf("%02d", h)
	case df.hour == "numeric":
		s = fmt.Sprint(h)
	}
	if df.minute != "" {
		m := fmt.Sprintf("%02d", t.Minute())
		if df.hour == "" && df.minute == "numeric" && df.second == "" {
			m = fmt.Sprint(t.Minute())
		}
		if s != "" {
			s += ":"
		}
		s += m
	}
	if df.second != "" {
		sec := fmt.Sprintf("%02d", t.Second())
		if df.hour == "" && df.minute == "" && df.second == "numeric" {
			sec = fmt.Sprint(t.Second())
		}
		if s != "" {
			s += ":"
		}
		s += sec
	}
	if df.hour != "" && df.hour12 {
		s += amPmSeparator + t.Format("PM")
	}
	return s
}

// shortZoneName is ICU's en-US short zone name: the US abbreviations and
// UTC; elsewhere GMT with the offset.
func shortZoneName(t time.Time) string {
	abbr, off := t.Zone()
	switch abbr {
	case "UTC":
		return "UTC"
	case "EST", "EDT", "CST", "CDT", "MST", "MDT", "PST", "PDT", "AKST", "AKDT", "HST":
		return abbr
	}
	if off == 0 {
		return "GMT"
	}
	sign := "+"
	if off < 0 {
		sign, off = "-", -off
	}
	s := fmt.Sprintf("GMT%s%d", sign, off/3600)
	if m := off % 3600 / 60; m != 0 {
		s += fmt.Sprintf(":%02d", m)
	}
	return s
}

func longZoneName(t time.Time) string {
	abbr, _ := t.Zone()
	names := map[string]string{"UTC": "Coordinated Universal Time", "EST": "Eastern Standard Time", "EDT": "Eastern Daylight Time",
		"CST": "Central Standard Time", "CDT": "Central Daylight Time", "MST": "Mountain Standard Time", "MDT": "Mountain Daylight Time",
		"PST": "Pacific Standard Time", "PDT": "Pacific Daylight Time"}
	if n, ok := names[abbr]; ok {
		return n
	}
	return shortZoneName(t)
}

// installDateLocale makes Date.prototype.toLocaleString,
// toLocaleDateString and toLocaleTimeString format as en-US does.
func (e *execution) installDateLocale() error {
	vm := e.vm
	proto := vm.GlobalObject().Get("Date").ToObject(vm).Get("prototype").ToObject(vm)
	getTime, _ := goja.AssertFunction(proto.Get("getTime"))
	for name, defaults := range map[string]string{"toLocaleString": "all", "toLocaleDateString": "date", "toLocaleTimeString": "time"} {
		defaults := defaults
		if err := defineFunc(vm, proto, name, func(c goja.FunctionCall) goja.Value {
			ms, err := getTime(c.This)
			if err != nil {
				panic(err)
			}
			df := e.dateFormatFrom(c.Argument(1), defaults)
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
func (e *execution) installDateTimeFormat(intl *goja.Object) error {
	vm := e.vm
	proto := vm.NewObject()
	formats := map[*goja.Object]dateFormat{}
	ctor := vm.ToValue(func(call goja.ConstructorCall) *goja.Object {
		formats[call.This] = e.dateFormatFrom(call.Argument(1), "date")
		return call.This
	}).(*goja.Object)
	getTime, _ := goja.AssertFunction(vm.GlobalObject().Get("Date").ToObject(vm).Get("prototype").ToObject(vm).Get("getTime"))
	if err := defineFunc(vm, proto, "format", func(c goja.FunctionCall) goja.Value {
		o, _ := c.This.(*goja.Object)
		df, ok := formats[o]
		if !ok {
			panic(vm.NewTypeError("Intl.DateTimeFormat.prototype.format called on an object that is not a DateTimeFormat"))
		}
		ms := float64(time.Now().UnixMilli())
		if a := c.Argument(0); !goja.IsUndefined(a) {
			if d, ok := a.(*goja.Object); ok && d.ClassName() == "Date" {
				v, _ := getTime(d)
				ms = v.ToFloat()
			} else {
				ms = a.ToFloat()
			}
		}
		s, ok := df.format(ms)
		if !ok {
			err, _ := vm.New(vm.Get("RangeError").ToObject(vm), vm.ToValue("Invalid time value"))
			panic(err)
		}
		return vm.ToValue(s)
	}); err != nil {
		return err
	}
	if err := defineFunc(vm, proto, "resolvedOptions", func(c goja.FunctionCall) goja.Value {
		o, _ := c.This.(*goja.Object)
		df := formats[o]
		out := vm.NewObject()
		_ = out.Set("locale", "en-US")
		_ = out.Set("calendar", "gregory")
		_ = out.Set("numberingSystem", "latn")
		_ = out.Set("timeZone", df.loc.String())
		return out
	}); err != nil {
		return err
	}
	_ = ctor.Set("prototype", proto)
	_ = proto.DefineDataProperty("constructor", ctor, goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_TRUE)
	return intl.DefineDataProperty("DateTimeFormat", ctor, goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_TRUE)
}
