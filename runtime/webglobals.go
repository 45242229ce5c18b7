package runtime

import (
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"fmt"
	"hash"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/dop251/goja"
)

// installWebGlobals adds the web-platform globals agent code reaches for
// that goja lacks and that need no network or clock beyond the run:
// crypto (randomUUID, getRandomValues, subtle.digest), performance.now,
// TextEncoder and TextDecoder (UTF-8), structuredClone,
// String.prototype.isWellFormed and toWellFormed, and a fetch that says
// where network access is. Each is built in Go on the standard library, on
// the run's fresh VM, from values captured before any user code ran; no
// source is evaluated. Behaviour follows Node 22 for the inputs agents use
// (runtime/testdata/nodediff holds the differential cases).
func (e *execution) installWebGlobals(code string) error {
	vm := e.vm
	g := vm.GlobalObject()
	e.errorCtor = g.Get("Error").ToObject(vm)
	// A run pays only for what its code names: each family is installed when
	// the snippet's text mentions one of its names (typeof checks and
	// globalThis["URL"] included), and is absent otherwise. Building all of
	// them for every run cost ~100 µs (~60 function objects) that a
	// `return 6*7` never needs; the one miss is a name assembled at run time
	// from pieces, which agent code does not do.
	on := func(install func(*goja.Object) error) func() error { return func() error { return install(g) } }
	if err := installNamed(code, []named{
		{[]string{"crypto"}, on(e.installCrypto)},
		{[]string{"performance"}, on(e.installPerformance)},
		{[]string{"TextEncoder", "TextDecoder"}, on(e.installTextCoding)},
		{[]string{"structuredClone"}, on(e.installStructuredClone)},
		{[]string{"fetch"}, on(e.installFetch)},
		{[]string{"URL"}, on(e.installURL)}, // URLSearchParams contains URL
		{[]string{"AbortController", "AbortSignal"}, on(e.installAbort)},
		{[]string{"WeakRef", "FinalizationRegistry"}, on(e.installWeakRef)},
		{[]string{"Intl"}, on(e.installIntl)},
		{[]string{"Iterator", "function*", ".values()", ".keys()", ".entries()", "matchAll", "Symbol.iterator", ".toArray(", ".take(", ".drop("}, on(e.installIteratorHelpers)},
		{[]string{"fromAsync"}, on(e.installFromAsync)},
		{[]string{"isWellFormed", "toWellFormed"}, on(e.installWellFormed)},
		{[]string{"localeCompare", "Collator"}, on(e.installCollation)}, // after Intl
	}); err != nil {
		return err
	}
	if strings.Contains(code, "toLocale") {
		if err := e.installNumberToLocaleString(); err != nil {
			return err
		}
		return e.installDateLocale()
	}
	return nil
}

// named is something a run gets only if its code mentions one of names.
type named struct {
	names   []string
	install func() error
}

// installNamed installs, in order, each of list that code mentions.
func installNamed(code string, list []named) error {
	for _, n := range list {
		if mentions(code, n.names) {
			if err := n.install(); err != nil {
				return err
			}
		}
	}
	return nil
}

// mentions reports whether code names any of names: as a whole identifier
// for a plain name (so the sourceMappingURL comment is not URL), as written
// for a pattern with punctuation (".values()", "function*").
func mentions(code string, names []string) bool {
	ident := func(c byte) bool {
		return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
	}
	for _, n := range names {
		plain := !strings.ContainsAny(n, ".(*")
		for i := 0; ; {
			j := strings.Index(code[i:], n)
			if j < 0 {
				break
			}
			j += i
			end := j + len(n)
			if !plain || ((j == 0 || !ident(code[j-1])) && (end == len(code) || !ident(code[end]) || n == "URL" && strings.HasPrefix(code[end:], "SearchParams"))) {
				return true
			}
			i = j + 1
		}
	}
	return false
}

// domError is an Error whose name is a DOMException name
// (QuotaExceededError, DataCloneError, ...), as Node's are by name.
func (e *execution) domError(name, msg string) *goja.Object {
	obj, err := e.vm.New(e.errorCtor, e.vm.ToValue(msg))
	if err != nil {
		panic(err)
	}
	_ = obj.DefineDataProperty("name", e.vm.ToValue(name), goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_TRUE)
	return obj
}

func (e *execution) bytesOf(v goja.Value, what string) []byte {
	switch x := v.Export().(type) {
	case goja.ArrayBuffer:
		return x.Bytes()
	case []byte:
		return x
	}
	if obj, ok := v.(*goja.Object); ok {
		if buf, ok := obj.Get("buffer").Export().(goja.ArrayBuffer); ok {
			off, n := obj.Get("byteOffset").ToInteger(), obj.Get("byteLength").ToInteger()
			b := buf.Bytes()
			if off >= 0 && n >= 0 && off+n <= int64(len(b)) {
				return b[off : off+n]
			}
		}
	}
	panic(e.vm.NewTypeError(what + " must be an ArrayBuffer, a TypedArray or a DataView"))
}

func (e *execution) uint8Array(b []byte) goja.Value {
	ctor := e.vm.Get("Uint8Array").ToObject(e.vm)
	arr, err := e.vm.New(ctor, e.vm.ToValue(e.vm.NewArrayBuffer(b)))
	if err != nil {
		panic(err)
	}
	return arr
}

func (e *execution) installCrypto(g *goja.Object) error {
	vm := e.vm
	c := vm.NewObject()
	if err := defineFunc(vm, c, "randomUUID", func(goja.FunctionCall) goja.Value {
		var b [16]byte
		_, _ = rand.Read(b[:])
		b[6] = b[6]&0x0f | 0x40
		b[8] = b[8]&0x3f | 0x80
		return vm.ToValue(fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16]))
	}); err != nil {
		return err
	}
	if err := defineFunc(vm, c, "getRandomValues", func(call goja.FunctionCall) goja.Value {
		arg := call.Argument(0)
		switch arg.Export().(type) {
		case []int8, []uint8, []int16, []uint16, []int32, []uint32, []int64, []uint64:
		default:
			panic(e.domError("TypeMismatchError", "crypto.getRandomValues: the argument must be an integer TypedArray (Uint8Array, Uint32Array, ...)"))
		}
		b := e.bytesOf(arg, "crypto.getRandomValues' argument")
		if len(b) > 65536 {
			panic(e.domError("QuotaExceededError", fmt.Sprintf("crypto.getRandomValues: the array is %d bytes, over the 65536 one call may fill; fill it in parts", len(b))))
		}
		_, _ = rand.Read(b)
		return arg
	}); err != nil {
		return err
	}
	subtle := vm.NewObject()
	if err := defineFunc(vm, subtle, "digest", func(call goja.FunctionCall) goja.Value {
		p, resolve, reject := vm.NewPromise()
		alg := call.Argument(0)
		if obj, ok := alg.(*goja.Object); ok && obj.ClassName() == "Object" {
			alg = obj.Get("name")
		}
		var h hash.Hash
		switch strings.ToUpper(alg.String()) {
		case "SHA-1":
			h = sha1.New()
		case "SHA-256":
			h = sha256.New()
		case "SHA-384":
			h = sha512.New384()
		case "SHA-512":
			h = sha512.New()
		default:
			_ = reject(e.domError("NotSupportedError", fmt.Sprintf("crypto.subtle.digest: unrecognized algorithm name %q; use SHA-1, SHA-256, SHA-384 or SHA-512", alg.String())))
			return vm.ToValue(p)
		}
		func() {
			defer func() {
				if r := recover(); r != nil {
					if v, ok := r.(goja.Value); ok {
						_ = reject(v)
						return
					}
					panic(r)
				}
			}()
			h.Write(e.bytesOf(call.Argument(1), "crypto.subtle.digest's data"))
			_ = resolve(vm.ToValue(vm.NewArrayBuffer(h.Sum(nil))))
		}()
		return vm.ToValue(p)
	}); err != nil {
		return err
	}
	if err := c.DefineDataProperty("subtle", subtle, goja.FLAG_FALSE, goja.FLAG_TRUE, goja.FLAG_TRUE); err != nil {
		return err
	}
	return g.DefineDataProperty("crypto", c, goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_TRUE)
}

func (e *execution) installPerformance(g *goja.Object) error {
	vm := e.vm
	origin := time.Now()
	p := vm.NewObject()
	_ = p.Set("timeOrigin", float64(origin.UnixMicro())/1000)
	if err := defineFunc(vm, p, "now", func(goja.FunctionCall) goja.Value {
		return vm.ToValue(float64(time.Since(origin).Nanoseconds()) / 1e6)
	}); err != nil {
		return err
	}
	return g.DefineDataProperty("performance", p, goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_TRUE)
}

// installTextCoding defines TextEncoder and TextDecoder for UTF-8, the one
// encoding Node's TextEncoder has and the one agents decode.
func (e *execution) installTextCoding(g *goja.Object) error {
	vm := e.vm
	// encode makes Uint8Arrays: console.log and structuredClone must know them.
	if err := e.intrinsics.captureTypedArrays(); err != nil {
		return err
	}
	encProto := vm.NewObject()
	_ = encProto.DefineDataProperty("encoding", vm.ToValue("utf-8"), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE)
	if err := defineFunc(vm, encProto, "encode", func(call goja.FunctionCall) goja.Value {
		s := ""
		if !goja.IsUndefined(call.Argument(0)) {
			s = call.Argument(0).String()
		}
		return e.uint8Array([]byte(toWellFormed(s)))
	}); err != nil {
		return err
	}
	enc := vm.ToValue(func(call goja.ConstructorCall) *goja.Object {
		return call.This
	}).(*goja.Object)
	_ = enc.Set("prototype", encProto)
	_ = encProto.DefineDataProperty("constructor", enc, goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_TRUE)

	decProto := vm.NewObject()
	dec := vm.ToValue(func(call goja.ConstructorCall) *goja.Object {
		label := "utf-8"
		if a := call.Argument(0); !goja.IsUndefined(a) {
			label = strings.ToLower(strings.TrimSpace(a.String()))
		}
		if label != "utf-8" && label != "utf8" && label != "unicode-1-1-utf-8" {
			panic(e.vm.NewTypeError(fmt.Sprintf("TextDecoder: the %q encoding is not supported here; only utf-8 is", label)))
		}
		fatal, ignoreBOM := false, false
		if opts, ok := call.Argument(1).(*goja.Object); ok {
			fatal = opts.Get("fatal") != nil && opts.Get("fatal").ToBoolean()
			ignoreBOM = opts.Get("ignoreBOM") != nil && opts.Get("ignoreBOM").ToBoolean()
		}
		_ = call.This.DefineDataProperty("encoding", vm.ToValue("utf-8"), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE)
		_ = call.This.DefineDataProperty("fatal", vm.ToValue(fatal), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE)
		_ = call.This.DefineDataProperty("ignoreBOM", vm.ToValue(ignoreBOM), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE)
		return call.This
	}).(*goja.Object)
	if err := defineFunc(vm, decProto, "decode", func(call goja.FunctionCall) goja.Value {
		this := call.This.ToObject(vm)
		var b []byte
		if a := call.Argument(0); !goja.IsUndefined(a) {
			b = e.bytesOf(a, "TextDecoder.decode's input")
		}
		ignoreBOM := this.Get("ignoreBOM") != nil && this.Get("ignoreBOM").ToBoolean()
		if !ignoreBOM && len(b) >= 3 && b[0] == 0xEF && b[1] == 0xBB && b[2] == 0xBF {
			b = b[3:]
		}
		if this.Get("fatal") != nil && this.Get("fatal").ToBoolean() && !utf8.Valid(b) {
			panic(vm.NewTypeError("The encoded data was not valid for encoding utf-8"))
		}
		return vm.ToValue(strings.ToValidUTF8(string(b), "\uFFFD"))
	}); err != nil {
		return err
	}
	_ = dec.Set("prototype", decProto)
	_ = decProto.DefineDataProperty("constructor", dec, goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_TRUE)
	if err := g.DefineDataProperty("TextEncoder", enc, goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_TRUE); err != nil {
		return err
	}
	return g.DefineDataProperty("TextDecoder", dec, goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_TRUE)
}

// toWellFormed replaces lone surrogates (which goja keeps in strings as
// UTF-16) with U+FFFD, as String.prototype.toWellFormed does.
func toWellFormed(s string) string {
	return strings.ToValidUTF8(s, "\uFFFD")
}

func (e *execution) installWellFormed(g *goja.Object) error {
	vm := e.vm
	proto := g.Get("String").ToObject(vm).Get("prototype").ToObject(vm)
	str := func(this goja.Value) goja.String {
		if goja.IsUndefined(this) || goja.IsNull(this) {
			panic(vm.NewTypeError("String.prototype.isWellFormed and toWellFormed need a string, not null or undefined"))
		}
		return this.ToString().(goja.String)
	}
	if err := defineFunc(vm, proto, "isWellFormed", func(call goja.FunctionCall) goja.Value {
		return vm.ToValue(!hasLoneSurrogate(str(call.This)))
	}); err != nil {
		return err
	}
	return defineFunc(vm, proto, "toWellFormed", func(call goja.FunctionCall) goja.Value {
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

func (e *execution) installFetch(g *goja.Object) error {
	vm := e.vm
	return defineFunc(vm, g, "fetch", func(goja.FunctionCall) goja.Value {
		p, _, reject := vm.NewPromise()
		_ = reject(vm.NewTypeError("fetch is not available in the sandbox: it has no network access. Reach outside systems through the tools of the configured MCP servers (find them with search_tools)"))
		return vm.ToValue(p)
	})
}

// maxCloneDepth bounds structuredClone's recursion (a deeper value is
// refused, not a stack overflow of the worker).
const maxCloneDepth = 2000

// installStructuredClone defines structuredClone for what agents clone:
// primitives, arrays, plain objects, Date, RegExp, Map, Set, Error,
// ArrayBuffer and typed arrays, with shared references and cycles kept.
// Functions and symbols throw DataCloneError, as in Node. Getters are read
// (the clone holds values), prototypes are not kept (plain objects), as the
// HTML structured clone does.
func (e *execution) installStructuredClone(g *goja.Object) error {
	vm := e.vm
	intr := e.intrinsics
	global := vm.GlobalObject() // g is where structuredClone goes; the built-ins are global
	dateCtor, regexpCtor := global.Get("Date").ToObject(vm), global.Get("RegExp").ToObject(vm)
	getTime, _ := goja.AssertFunction(dateCtor.Get("prototype").ToObject(vm).Get("getTime"))
	return defineFunc(vm, g, "structuredClone", func(call goja.FunctionCall) goja.Value {
		seen := map[*goja.Object]*goja.Object{}
		var clone func(v goja.Value, depth int) goja.Value
		clone = func(v goja.Value, depth int) goja.Value {
			if depth > maxCloneDepth {
				panic(e.domError("DataCloneError", "structuredClone: the value is nested too deeply"))
			}
			obj, ok := v.(*goja.Object)
			if !ok {
				if _, isSym := v.(*goja.Symbol); isSym {
					panic(e.domError("DataCloneError", fmt.Sprintf("%s could not be cloned.", v.String())))
				}
				return v
			}
			if c, ok := seen[obj]; ok {
				return c
			}
			if _, isFn := goja.AssertFunction(obj); isFn {
				panic(e.domError("DataCloneError", "a function could not be cloned: structuredClone copies data only"))
			}
			var out *goja.Object
			switch cls := obj.ClassName(); {
			case intr.isArray(obj):
				out = vm.NewArray()
				seen[obj] = out
				n := intOf(obj.Get("length"))
				for i := int64(0); i < n; i++ {
					k := fmt.Sprint(i)
					if item := obj.Get(k); item != nil {
						_ = out.Set(k, clone(item, depth+1))
					}
				}
				return out
			case cls == "Date":
				t, _ := getTime(obj)
				d, err := vm.New(dateCtor, t)
				if err != nil {
					panic(err)
				}
				seen[obj] = d
				return d
			case cls == "RegExp":
				r, err := vm.New(regexpCtor, obj.Get("source"), obj.Get("flags"))
				if err != nil {
					panic(err)
				}
				seen[obj] = r
				return r
			case intr.is(obj, intr.mapCtor):
				m, _ := vm.New(intr.mapCtor)
				seen[obj] = m
				it, err := intr.mapEntries(obj)
				if err != nil {
					panic(err)
				}
				pairs, err := intr.arrayFrom(goja.Undefined(), it)
				if err != nil {
					panic(err)
				}
				po := pairs.ToObject(vm)
				for i := int64(0); i < intOf(po.Get("length")); i++ {
					kv := po.Get(fmt.Sprint(i)).ToObject(vm)
					if _, err := intr.mapSet(m, clone(kv.Get("0"), depth+1), clone(kv.Get("1"), depth+1)); err != nil {
						panic(err)
					}
				}
				return m
			case intr.is(obj, intr.setCtor):
				set, _ := vm.New(intr.setCtor)
				seen[obj] = set
				it, err := intr.setValues(obj)
				if err != nil {
					panic(err)
				}
				items, err := intr.arrayFrom(goja.Undefined(), it)
				if err != nil {
					panic(err)
				}
				add, _ := goja.AssertFunction(intr.setCtor.Get("prototype").ToObject(vm).Get("add"))
				io := items.ToObject(vm)
				for i := int64(0); i < intOf(io.Get("length")); i++ {
					if _, err := add(set, clone(io.Get(fmt.Sprint(i)), depth+1)); err != nil {
						panic(err)
					}
				}
				return set
			case cls == "Error" || intr.is(obj, e.errorCtor):
				ctor := e.errorCtor
				if c, ok := global.Get(obj.Get("name").String()).(*goja.Object); ok && intr.is(obj, c) {
					ctor = c
				}
				out, err := vm.New(ctor, obj.Get("message"))
				if err != nil {
					panic(err)
				}
				seen[obj] = out
				return out
			}
			if buf, ok := obj.Export().(goja.ArrayBuffer); ok {
				c := vm.ToValue(vm.NewArrayBuffer(append([]byte(nil), buf.Bytes()...))).(*goja.Object)
				seen[obj] = c
				return c
			}
			if intr.is(obj, intr.typedArrayCtor) {
				ctor := obj.Get("constructor").ToObject(vm)
				c, err := vm.New(ctor, obj)
				if err != nil {
					panic(err)
				}
				seen[obj] = c
				return c
			}
			out = vm.NewObject()
			seen[obj] = out
			for _, k := range obj.Keys() {
				_ = out.Set(k, clone(obj.Get(k), depth+1))
			}
			return out
		}
		return clone(call.Argument(0), 0)
	})
}
