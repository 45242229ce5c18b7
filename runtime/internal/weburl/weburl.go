// Package weburl defines URL and URLSearchParams, the WHATWG way (as Node
// and browsers do them), one family of the runtime's globals table
// (runtime/globals.go).
package weburl

import (
	"sort"
	"strconv"
	"strings"

	"github.com/dop251/goja"
	wurl "github.com/nlnwa/whatwg-url/url"

	"github.com/sandboxrt/sandbox/runtime/internal/jsenv"
)

// URL parsing and the component setters come from a maintained
// implementation of the WHATWG URL standard (github.com/nlnwa/whatwg-url,
// tested against the web-platform-tests URL data); URLSearchParams'
// application/x-www-form-urlencoded parsing and serializing, a page of the
// same standard, is here, since the library serializes with the URL query
// set instead.

// formPair is one name/value of a URLSearchParams.
type formPair struct{ name, value string }

// searchParams is a URLSearchParams' list, and the URL it belongs to
// (nil for one made with new URLSearchParams).
type searchParams struct {
	pairs []formPair
	url   *wurl.Url
}

func (s *searchParams) update() {
	if s.url != nil {
		q := serializeForm(s.pairs)
		if q == "" && s.url.Search() == "" {
			return
		}
		s.url.SetSearch(q)
	}
}

// parseForm is the application/x-www-form-urlencoded parser.
func parseForm(q string) []formPair {
	var out []formPair
	for _, part := range strings.Split(q, "&") {
		if part == "" {
			continue
		}
		name, value, _ := strings.Cut(part, "=")
		out = append(out, formPair{formDecode(name), formDecode(value)})
	}
	return out
}

func formDecode(s string) string {
	s = strings.ReplaceAll(s, "+", " ")
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			b = append(b, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
			continue
		}
		b = append(b, s[i])
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}

// serializeForm is the application/x-www-form-urlencoded serializer.
func serializeForm(pairs []formPair) string {
	var b strings.Builder
	for i, p := range pairs {
		if i > 0 {
			b.WriteByte('&')
		}
		formEncode(&b, p.name)
		b.WriteByte('=')
		formEncode(&b, p.value)
	}
	return b.String()
}

func formEncode(b *strings.Builder, s string) {
	const hex = "0123456789ABCDEF"
	for _, c := range []byte(jsenv.WellFormed(s)) {
		switch {
		case c == ' ':
			b.WriteByte('+')
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '*', c == '-', c == '.', c == '_':
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		}
	}
}

// Install defines URL and URLSearchParams.
func Install(env *jsenv.Env) error {
	vm := env.VM
	g := vm.GlobalObject()
	urls := map[*goja.Object]*wurl.Url{}
	params := map[*goja.Object]*searchParams{}
	arrayValues, _ := goja.AssertFunction(vm.Get("Array").ToObject(vm).Get("prototype").ToObject(vm).Get("values"))
	iterate := func(items []any) goja.Value {
		it, err := arrayValues(vm.NewArray(items...))
		if err != nil {
			panic(err)
		}
		return it
	}
	invalid := func(input string) *goja.Object {
		err := vm.NewTypeError("Invalid URL: " + input)
		_ = err.Set("code", "ERR_INVALID_URL")
		_ = err.Set("input", input)
		return err
	}
	parse := func(input goja.Value, base goja.Value) (*wurl.Url, bool) {
		in := input.String()
		var u *wurl.Url
		var err error
		if base != nil && !goja.IsUndefined(base) {
			u, err = wurl.ParseRef(base.String(), in)
		} else {
			u, err = wurl.Parse(in)
		}
		return u, err == nil
	}

	// URLSearchParams
	spProto := vm.NewObject()
	var spCtor *goja.Object
	spOf := func(this goja.Value) *searchParams {
		if o, ok := this.(*goja.Object); ok {
			if s := params[o]; s != nil {
				return s
			}
		}
		panic(vm.NewTypeError("Value of \"this\" must be of type URLSearchParams"))
	}
	spCtor = vm.ToValue(func(call goja.ConstructorCall) *goja.Object {
		s := &searchParams{}
		switch init := call.Argument(0).(type) {
		case *goja.Object:
			if other := params[init]; other != nil {
				s.pairs = append(s.pairs, other.pairs...)
			} else if iter := init.GetSymbol(goja.SymIterator); iter != nil && !goja.IsUndefined(iter) {
				arr, err := env.ArrayFrom(goja.Undefined(), init)
				if err != nil {
					panic(err)
				}
				ao := arr.ToObject(vm)
				for i := int64(0); i < jsenv.IntOf(ao.Get("length")); i++ {
					pair, ok := ao.Get(strconv.FormatInt(i, 10)).(*goja.Object)
					if !ok || jsenv.IntOf(pair.Get("length")) != 2 {
						panic(vm.NewTypeError("Each query pair must be an iterable [name, value] tuple"))
					}
					s.pairs = append(s.pairs, formPair{pair.Get("0").String(), pair.Get("1").String()})
				}
			} else {
				for _, k := range init.Keys() {
					s.pairs = append(s.pairs, formPair{k, init.Get(k).String()})
				}
			}
		default:
			if !goja.IsUndefined(init) && !goja.IsNull(init) {
				s.pairs = parseForm(strings.TrimPrefix(init.String(), "?"))
			}
		}
		params[call.This] = s
		return call.This
	}).(*goja.Object)
	methods := map[string]func(s *searchParams, call goja.FunctionCall) goja.Value{
		"append": func(s *searchParams, c goja.FunctionCall) goja.Value {
			s.pairs = append(s.pairs, formPair{c.Argument(0).String(), c.Argument(1).String()})
			s.update()
			return goja.Undefined()
		},
		"delete": func(s *searchParams, c goja.FunctionCall) goja.Value {
			name, withValue := c.Argument(0).String(), !goja.IsUndefined(c.Argument(1))
			kept := s.pairs[:0]
			for _, p := range s.pairs {
				if p.name != name || (withValue && p.value != c.Argument(1).String()) {
					kept = append(kept, p)
				}
			}
			s.pairs = kept
			s.update()
			return goja.Undefined()
		},
		"get": func(s *searchParams, c goja.FunctionCall) goja.Value {
			name := c.Argument(0).String()
			for _, p := range s.pairs {
				if p.name == name {
					return vm.ToValue(p.value)
				}
			}
			return goja.Null()
		},
		"getAll": func(s *searchParams, c goja.FunctionCall) goja.Value {
			name := c.Argument(0).String()
			out := []any{}
			for _, p := range s.pairs {
				if p.name == name {
					out = append(out, p.value)
				}
			}
			return vm.NewArray(out...)
		},
		"has": func(s *searchParams, c goja.FunctionCall) goja.Value {
			name, withValue := c.Argument(0).String(), !goja.IsUndefined(c.Argument(1))
			for _, p := range s.pairs {
				if p.name == name && (!withValue || p.value == c.Argument(1).String()) {
					return vm.ToValue(true)
				}
			}
			return vm.ToValue(false)
		},
		"set": func(s *searchParams, c goja.FunctionCall) goja.Value {
			name, value := c.Argument(0).String(), c.Argument(1).String()
			out, done := s.pairs[:0], false
			for _, p := range s.pairs {
				if p.name != name {
					out = append(out, p)
				} else if !done {
					out = append(out, formPair{name, value})
					done = true
				}
			}
			if !done {
				out = append(out, formPair{name, value})
			}
			s.pairs = out
			s.update()
			return goja.Undefined()
		},
		"sort": func(s *searchParams, _ goja.FunctionCall) goja.Value {
			// By UTF-16 code units of the names, stable, as the standard says.
			sort.SliceStable(s.pairs, func(i, j int) bool { return utf16Less(s.pairs[i].name, s.pairs[j].name) })
			s.update()
			return goja.Undefined()
		},
		"toString": func(s *searchParams, _ goja.FunctionCall) goja.Value { return vm.ToValue(serializeForm(s.pairs)) },
		"forEach": func(s *searchParams, c goja.FunctionCall) goja.Value {
			fn, ok := goja.AssertFunction(c.Argument(0))
			if !ok {
				panic(vm.NewTypeError("URLSearchParams.forEach needs a function"))
			}
			for i := 0; i < len(s.pairs); i++ {
				p := s.pairs[i]
				if _, err := fn(c.Argument(1), vm.ToValue(p.value), vm.ToValue(p.name), c.This); err != nil {
					panic(err)
				}
			}
			return goja.Undefined()
		},
		"keys": func(s *searchParams, _ goja.FunctionCall) goja.Value {
			out := make([]any, len(s.pairs))
			for i, p := range s.pairs {
				out[i] = p.name
			}
			return iterate(out)
		},
		"values": func(s *searchParams, _ goja.FunctionCall) goja.Value {
			out := make([]any, len(s.pairs))
			for i, p := range s.pairs {
				out[i] = p.value
			}
			return iterate(out)
		},
		"entries": func(s *searchParams, _ goja.FunctionCall) goja.Value {
			out := make([]any, len(s.pairs))
			for i, p := range s.pairs {
				out[i] = vm.NewArray(p.name, p.value)
			}
			return iterate(out)
		},
	}
	for name, m := range methods {
		m := m
		if err := jsenv.DefineFunc(vm, spProto, name, func(c goja.FunctionCall) goja.Value { return m(spOf(c.This), c) }); err != nil {
			return err
		}
	}
	_ = spProto.DefineDataPropertySymbol(goja.SymIterator, spProto.Get("entries"), goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_TRUE)
	_ = spProto.DefineAccessorProperty("size", vm.ToValue(func(c goja.FunctionCall) goja.Value { return vm.ToValue(len(spOf(c.This).pairs)) }), nil, goja.FLAG_TRUE, goja.FLAG_FALSE)
	_ = spCtor.Set("prototype", spProto)
	_ = spProto.DefineDataProperty("constructor", spCtor, goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_TRUE)

	// URL
	urlProto := vm.NewObject()
	urlOf := func(this goja.Value) *wurl.Url {
		if o, ok := this.(*goja.Object); ok {
			if u := urls[o]; u != nil {
				return u
			}
		}
		panic(vm.NewTypeError("Value of \"this\" must be of type URL"))
	}
	urlCtor := vm.ToValue(func(call goja.ConstructorCall) *goja.Object {
		u, ok := parse(call.Argument(0), call.Argument(1))
		if !ok {
			panic(invalid(call.Argument(0).String()))
		}
		urls[call.This] = u
		sp, _ := vm.New(spCtor, vm.ToValue(strings.TrimPrefix(u.Search(), "?")))
		params[sp].url = u
		_ = call.This.DefineDataProperty("searchParams", sp, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE)
		return call.This
	}).(*goja.Object)
	href := func(u *wurl.Url) string { return u.Href(false) }
	origin := func(u *wurl.Url) string {
		switch u.Scheme() {
		case "http", "https", "ws", "wss", "ftp":
			return u.Protocol() + "//" + u.Host()
		}
		return "null"
	}
	accessors := []struct {
		name string
		get  func(*wurl.Url) string
		set  func(*wurl.Url, string)
	}{
		{"href", href, nil},
		{"origin", origin, nil},
		{"protocol", (*wurl.Url).Protocol, (*wurl.Url).SetProtocol},
		{"username", (*wurl.Url).Username, (*wurl.Url).SetUsername},
		{"password", (*wurl.Url).Password, (*wurl.Url).SetPassword},
		{"host", (*wurl.Url).Host, (*wurl.Url).SetHost},
		{"hostname", (*wurl.Url).Hostname, (*wurl.Url).SetHostname},
		{"port", (*wurl.Url).Port, (*wurl.Url).SetPort},
		{"pathname", (*wurl.Url).Pathname, (*wurl.Url).SetPathname},
		{"search", (*wurl.Url).Search, nil},
		{"hash", (*wurl.Url).Hash, (*wurl.Url).SetHash},
	}
	for _, a := range accessors {
		a := a
		getter := vm.ToValue(func(c goja.FunctionCall) goja.Value { return vm.ToValue(a.get(urlOf(c.This))) })
		var setter goja.Value
		switch {
		case a.set != nil:
			setter = vm.ToValue(func(c goja.FunctionCall) goja.Value {
				a.set(urlOf(c.This), c.Argument(0).String())
				return goja.Undefined()
			})
		case a.name == "href":
			setter = vm.ToValue(func(c goja.FunctionCall) goja.Value {
				this := c.This.ToObject(vm)
				u, ok := parse(c.Argument(0), nil)
				if !ok {
					panic(invalid(c.Argument(0).String()))
				}
				urls[this] = u
				if sp, ok := this.Get("searchParams").(*goja.Object); ok && params[sp] != nil {
					params[sp].url, params[sp].pairs = u, parseForm(strings.TrimPrefix(u.Search(), "?"))
				}
				return goja.Undefined()
			})
		case a.name == "search":
			setter = vm.ToValue(func(c goja.FunctionCall) goja.Value {
				this := c.This.ToObject(vm)
				u := urlOf(this)
				u.SetSearch(c.Argument(0).String())
				if sp, ok := this.Get("searchParams").(*goja.Object); ok && params[sp] != nil {
					params[sp].pairs = parseForm(strings.TrimPrefix(u.Search(), "?"))
				}
				return goja.Undefined()
			})
		}
		if err := urlProto.DefineAccessorProperty(a.name, getter, setter, goja.FLAG_TRUE, goja.FLAG_TRUE); err != nil {
			return err
		}
	}
	for _, name := range []string{"toString", "toJSON"} {
		if err := jsenv.DefineFunc(vm, urlProto, name, func(c goja.FunctionCall) goja.Value { return vm.ToValue(href(urlOf(c.This))) }); err != nil {
			return err
		}
	}
	_ = urlCtor.Set("prototype", urlProto)
	_ = urlProto.DefineDataProperty("constructor", urlCtor, goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_TRUE)
	if err := jsenv.DefineFunc(vm, urlCtor, "canParse", func(c goja.FunctionCall) goja.Value {
		_, ok := parse(c.Argument(0), c.Argument(1))
		return vm.ToValue(ok)
	}); err != nil {
		return err
	}
	if err := g.DefineDataProperty("URL", urlCtor, goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_TRUE); err != nil {
		return err
	}
	return g.DefineDataProperty("URLSearchParams", spCtor, goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_TRUE)
}

// utf16Less orders strings by UTF-16 code units, as JavaScript compares them.
func utf16Less(a, b string) bool {
	ua, ub := []rune(a), []rune(b)
	for i := 0; i < len(ua) && i < len(ub); i++ {
		if ua[i] != ub[i] {
			return unitOf(ua[i]) < unitOf(ub[i])
		}
	}
	return len(ua) < len(ub)
}

func unitOf(r rune) rune {
	if r >= 0x10000 {
		return 0xD800 + (r-0x10000)>>10
	}
	return r
}
