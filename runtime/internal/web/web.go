// Package web is the small web-platform globals agent code reaches for that
// goja lacks and that need no network or clock beyond the run: crypto
// (randomUUID, getRandomValues, subtle.digest), performance (now,
// timeOrigin), TextEncoder and TextDecoder (UTF-8), structuredClone, atob and
// btoa, and a fetch that says where network access is. Each Install function
// is one family of the runtime's globals table (runtime/globals.go), built in
// Go on the standard library, on the run's fresh VM, from values captured
// before any user code ran; no source is evaluated. Behaviour follows Node 22
// for the inputs agents use (runtime/testdata/nodediff holds the differential
// cases). URL is in weburl, AbortController in abort.
package web

import (
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"fmt"
	"hash"
	"strings"
	"unicode/utf8"

	"github.com/dop251/goja"

	"github.com/sandboxrt/sandbox/runtime/internal/jsenv"
)

// InstallCrypto defines crypto: randomUUID, getRandomValues and
// subtle.digest (SHA-1, SHA-256, SHA-384, SHA-512).
func InstallCrypto(env *jsenv.Env) error {
	vm := env.VM
	g := vm.GlobalObject()
	env.CaptureError()
	c := vm.NewObject()
	if err := jsenv.DefineFunc(vm, c, "randomUUID", func(goja.FunctionCall) goja.Value {
		var b [16]byte
		env.RandomBytes(b[:])
		b[6] = b[6]&0x0f | 0x40
		b[8] = b[8]&0x3f | 0x80
		return vm.ToValue(fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16]))
	}); err != nil {
		return err
	}
	if err := jsenv.DefineFunc(vm, c, "getRandomValues", func(call goja.FunctionCall) goja.Value {
		arg := call.Argument(0)
		switch arg.Export().(type) {
		case []int8, []uint8, []int16, []uint16, []int32, []uint32, []int64, []uint64:
		default:
			panic(env.DOMError("TypeMismatchError", "crypto.getRandomValues: the argument must be an integer TypedArray (Uint8Array, Uint32Array, ...)"))
		}
		b := env.BytesOf(arg, "crypto.getRandomValues' argument")
		if len(b) > 65536 {
			panic(env.DOMError("QuotaExceededError", fmt.Sprintf("crypto.getRandomValues: the array is %d bytes, over the 65536 one call may fill; fill it in parts", len(b))))
		}
		env.RandomBytes(b)
		return arg
	}); err != nil {
		return err
	}
	subtle := vm.NewObject()
	if err := jsenv.DefineFunc(vm, subtle, "digest", func(call goja.FunctionCall) goja.Value {
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
			_ = reject(env.DOMError("NotSupportedError", fmt.Sprintf("crypto.subtle.digest: unrecognized algorithm name %q; use SHA-1, SHA-256, SHA-384 or SHA-512", alg.String())))
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
			h.Write(env.BytesOf(call.Argument(1), "crypto.subtle.digest's data"))
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

// InstallPerformance defines performance.now and performance.timeOrigin,
// from the moment of the install (before the snippet starts).
func InstallPerformance(env *jsenv.Env) error {
	vm := env.VM
	g := vm.GlobalObject()
	origin := env.Time()
	p := vm.NewObject()
	_ = p.Set("timeOrigin", float64(origin.UnixMicro())/1000)
	if err := jsenv.DefineFunc(vm, p, "now", func(goja.FunctionCall) goja.Value {
		return vm.ToValue(float64(env.Time().Sub(origin).Nanoseconds()) / 1e6)
	}); err != nil {
		return err
	}
	return g.DefineDataProperty("performance", p, goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_TRUE)
}

// InstallTextCoding defines TextEncoder and TextDecoder for UTF-8, the one
// encoding Node's TextEncoder has and the one agents decode.
func InstallTextCoding(env *jsenv.Env) error {
	vm := env.VM
	g := vm.GlobalObject()
	// encode makes Uint8Arrays: console.log and structuredClone must know them.
	if err := env.CaptureTypedArrays(); err != nil {
		return err
	}
	encProto := vm.NewObject()
	_ = encProto.DefineDataProperty("encoding", vm.ToValue("utf-8"), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE)
	if err := jsenv.DefineFunc(vm, encProto, "encode", func(call goja.FunctionCall) goja.Value {
		s := ""
		if !goja.IsUndefined(call.Argument(0)) {
			s = call.Argument(0).String()
		}
		return env.Uint8Array([]byte(jsenv.WellFormed(s)))
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
			panic(vm.NewTypeError(fmt.Sprintf("TextDecoder: the %q encoding is not supported here; only utf-8 is", label)))
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
	if err := jsenv.DefineFunc(vm, decProto, "decode", func(call goja.FunctionCall) goja.Value {
		this := call.This.ToObject(vm)
		var b []byte
		if a := call.Argument(0); !goja.IsUndefined(a) {
			b = env.BytesOf(a, "TextDecoder.decode's input")
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

// InstallFetch defines a fetch that rejects with a TypeError saying where
// outside systems are: the tools of the configured MCP servers.
func InstallFetch(env *jsenv.Env) error {
	vm := env.VM
	g := vm.GlobalObject()
	return jsenv.DefineFunc(vm, g, "fetch", func(goja.FunctionCall) goja.Value {
		p, _, reject := vm.NewPromise()
		_ = reject(vm.NewTypeError("fetch is not available in the sandbox: it has no network access. Reach outside systems through the tools of the configured MCP servers (find them with search_tools)"))
		return vm.ToValue(p)
	})
}

// maxCloneDepth bounds structuredClone's recursion (a deeper value is
// refused, not a stack overflow of the worker).
const maxCloneDepth = 2000

// InstallStructuredClone defines structuredClone for what agents clone:
// primitives, arrays, plain objects, Date, RegExp, Map, Set, Error,
// ArrayBuffer and typed arrays, with shared references and cycles kept.
// Functions and symbols throw DataCloneError, as in Node. Getters are read
// (the clone holds values), prototypes are not kept (plain objects), as the
// HTML structured clone does.
func InstallStructuredClone(env *jsenv.Env) error {
	vm := env.VM
	g := vm.GlobalObject()
	env.CaptureError()
	dateCtor, regexpCtor := g.Get("Date").ToObject(vm), g.Get("RegExp").ToObject(vm)
	getTime, _ := goja.AssertFunction(dateCtor.Get("prototype").ToObject(vm).Get("getTime"))
	return jsenv.DefineFunc(vm, g, "structuredClone", func(call goja.FunctionCall) goja.Value {
		seen := map[*goja.Object]*goja.Object{}
		var clone func(v goja.Value, depth int) goja.Value
		clone = func(v goja.Value, depth int) goja.Value {
			if depth > maxCloneDepth {
				panic(env.DOMError("DataCloneError", "structuredClone: the value is nested too deeply"))
			}
			obj, ok := v.(*goja.Object)
			if !ok {
				if _, isSym := v.(*goja.Symbol); isSym {
					panic(env.DOMError("DataCloneError", fmt.Sprintf("%s could not be cloned.", v.String())))
				}
				return v
			}
			if c, ok := seen[obj]; ok {
				return c
			}
			if _, isFn := goja.AssertFunction(obj); isFn {
				panic(env.DOMError("DataCloneError", "a function could not be cloned: structuredClone copies data only"))
			}
			var out *goja.Object
			switch cls := obj.ClassName(); {
			case env.IsArray(obj):
				out = vm.NewArray()
				seen[obj] = out
				n := jsenv.IntOf(obj.Get("length"))
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
			case env.Is(obj, env.MapCtor):
				m, _ := vm.New(env.MapCtor)
				seen[obj] = m
				it, err := env.MapEntries(obj)
				if err != nil {
					panic(err)
				}
				pairs, err := env.ArrayFrom(goja.Undefined(), it)
				if err != nil {
					panic(err)
				}
				po := pairs.ToObject(vm)
				for i := int64(0); i < jsenv.IntOf(po.Get("length")); i++ {
					kv := po.Get(fmt.Sprint(i)).ToObject(vm)
					if _, err := env.MapSet(m, clone(kv.Get("0"), depth+1), clone(kv.Get("1"), depth+1)); err != nil {
						panic(err)
					}
				}
				return m
			case env.Is(obj, env.SetCtor):
				set, _ := vm.New(env.SetCtor)
				seen[obj] = set
				it, err := env.SetValues(obj)
				if err != nil {
					panic(err)
				}
				items, err := env.ArrayFrom(goja.Undefined(), it)
				if err != nil {
					panic(err)
				}
				add, _ := goja.AssertFunction(env.SetCtor.Get("prototype").ToObject(vm).Get("add"))
				io := items.ToObject(vm)
				for i := int64(0); i < jsenv.IntOf(io.Get("length")); i++ {
					if _, err := add(set, clone(io.Get(fmt.Sprint(i)), depth+1)); err != nil {
						panic(err)
					}
				}
				return set
			case cls == "Error" || env.Is(obj, env.ErrorCtor):
				ctor := env.ErrorCtor
				if c, ok := g.Get(obj.Get("name").String()).(*goja.Object); ok && env.Is(obj, c) {
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
			if env.Is(obj, env.TypedArrayCtor) {
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
