// Package jsenv is what the runtime's built-ins get from the run they are
// installed in: the run's fresh goja VM and the language's built-ins captured
// from it before any user code ran, with the few helpers every family of
// built-ins needs (native functions defined like the language's own, the
// DOMException-named errors of the web platform, bytes from a TypedArray).
//
// The families (runtime/internal/web, weburl, abort, lang, jsregexp, intl)
// import this package and never the runtime; the runtime hands each family
// an *Env through its Install function and nothing else. The event loop and
// the clock stay the run's: a family that needs a timer calls the VM's own
// setTimeout, which the run installed before any family.
package jsenv

import (
	"crypto/rand"
	"errors"
	"reflect"
	"strings"
	"time"

	"github.com/dop251/goja"
)

// Env is one run's VM and the built-ins taken from it before user code ran,
// so that a snippet replacing globals (Map = ..., Array.from = ...) cannot
// confuse the Go code that works on its values.
//
// Capturing a built-in makes goja build it: its constructor, prototype and
// every method (Map, Set and the typed arrays ~15-22 µs each), and a trivial
// run builds none of them otherwise. So only what every run needs
// (Promise.prototype.then: the run is an async function, which builds
// Promise anyway) is captured by New; Array.from when a family is
// installed (CaptureArray: only families use it), the rest when the
// snippet's code names them (CaptureFor) or a family that uses them is
// installed, still before any of the code runs. A field left nil is a kind of object the
// snippet can only have reached through a name built at run time
// (globalThis[["Ma", "p"].join("")]; esbuild folds "Ma" + "p"): Is is false
// for it, and the object is shown and serialised as a plain object.
//
// Every method runs on the VM's goroutine.
type Env struct {
	VM *goja.Runtime

	ArrayFrom   goja.Callable // nil until CaptureArray
	PromiseThen goja.Callable

	MapCtor        *goja.Object // nil until CaptureMap
	MapGet, MapSet goja.Callable
	SetCtor        *goja.Object // nil until CaptureSet
	TypedArrayCtor *goja.Object // %TypedArray%, nil until CaptureTypedArrays
	ErrorCtor      *goja.Object // nil until CaptureError
	// MapEntries and SetValues start an iteration: f(collection) -> iterator.
	MapEntries, SetValues func(goja.Value) (goja.Value, error)

	// Now and Random are the run's clock and randomness, for the families
	// that read them (performance, crypto, Intl's dates). Nil: the wall
	// clock and crypto/rand. A run that keeps a journal sets both, so a
	// replay of it reads the same values (runtime/journal.go).
	Now    func() time.Time
	Random func([]byte)
}

// Time is the run's clock (Now, or the wall clock).
func (env *Env) Time() time.Time {
	if env.Now != nil {
		return env.Now()
	}
	return time.Now()
}

// RandomBytes fills b from the run's randomness (Random, or crypto/rand).
func (env *Env) RandomBytes(b []byte) {
	if env.Random != nil {
		env.Random(b)
		return
	}
	_, _ = rand.Read(b)
}

var errMissingBuiltin = errors.New("runtime: the VM lacks a built-in the runtime relies on")

// New captures the built-ins every run's host code uses from a fresh VM.
func New(vm *goja.Runtime) (*Env, error) {
	env := &Env{VM: vm}
	env.PromiseThen = method(env.global("Promise").Get("prototype").ToObject(vm), "then")
	if env.PromiseThen == nil {
		return nil, errMissingBuiltin
	}
	return env, nil
}

// CaptureArray takes Array.from, which goja builds with the Array
// constructor (~8 µs, 2% of a worker's CPU on a five-call run, for runs
// that never call it). The run calls it before it installs a family, the
// only code that uses it.
func (env *Env) CaptureArray() error {
	if env.ArrayFrom == nil {
		if env.ArrayFrom = method(env.global("Array"), "from"); env.ArrayFrom == nil {
			return errMissingBuiltin
		}
	}
	return nil
}

// capturedWhenNamed are the built-ins CaptureFor takes for code that names
// them.
var capturedWhenNamed = []struct {
	names   []string
	capture func(*Env) error
}{
	{[]string{"Map"}, (*Env).CaptureMap},
	{[]string{"Set"}, (*Env).CaptureSet},
	{[]string{"Int8Array", "Uint8Array", "Uint8ClampedArray", "Int16Array", "Uint16Array", "Int32Array", "Uint32Array",
		"Float32Array", "Float64Array", "BigInt64Array", "BigUint64Array"}, (*Env).CaptureTypedArrays},
}

// CaptureFor takes the collections and typed arrays if the code names them
// (see Env): host code meets one only if the snippet made it, with its
// constructor or with a global that makes or takes one (whose install
// captures what it uses). It runs before any of the code does.
func (env *Env) CaptureFor(code Mentioned) error {
	for _, c := range capturedWhenNamed {
		if code.Any(c.names) {
			if err := c.capture(env); err != nil {
				return err
			}
		}
	}
	return nil
}

// CaptureMap, CaptureSet, CaptureTypedArrays and CaptureError take a kind
// of built-in the first time they are called; only the run's setup and the
// families' Install functions call them, before user code runs.
func (env *Env) CaptureMap() error {
	if env.MapCtor != nil {
		return nil
	}
	ctor := env.global("Map")
	proto := ctor.Get("prototype").ToObject(env.VM)
	get, set, entries := method(proto, "get"), method(proto, "set"), method(proto, "entries")
	if get == nil || set == nil || entries == nil {
		return errMissingBuiltin
	}
	env.MapCtor, env.MapGet, env.MapSet = ctor, get, set
	env.MapEntries = func(c goja.Value) (goja.Value, error) { return entries(c) }
	return nil
}

func (env *Env) CaptureSet() error {
	if env.SetCtor != nil {
		return nil
	}
	ctor := env.global("Set")
	values := method(ctor.Get("prototype").ToObject(env.VM), "values")
	if values == nil {
		return errMissingBuiltin
	}
	env.SetCtor = ctor
	env.SetValues = func(c goja.Value) (goja.Value, error) { return values(c) }
	return nil
}

func (env *Env) CaptureTypedArrays() error {
	if env.TypedArrayCtor == nil {
		env.TypedArrayCtor = env.global("Uint8Array").Prototype() // %TypedArray%
		if env.TypedArrayCtor == nil {
			return errMissingBuiltin
		}
	}
	return nil
}

func (env *Env) CaptureError() {
	if env.ErrorCtor == nil {
		env.ErrorCtor = env.global("Error")
	}
}

func (env *Env) global(name string) *goja.Object { return env.VM.Get(name).ToObject(env.VM) }

// method is obj[name] if it is a function, else nil.
func method(obj *goja.Object, name string) goja.Callable {
	f, _ := goja.AssertFunction(obj.Get(name))
	return f
}

// IsArray is Array.isArray: true for arrays and proxies of arrays.
func (env *Env) IsArray(obj *goja.Object) bool {
	if obj.ClassName() == "Array" {
		return true
	}
	// Only a proxy can be an array without being of class Array: one of an
	// array, through any number of proxies (goja's own isArray). Followed
	// here rather than by calling Array.isArray for every object the
	// runtime serializes or shows, which cost more than the answer and
	// needed the Array constructor built. A proxy's target is fixed when
	// it is made, so the chain ends.
	for obj.ExportType() == proxyType {
		p, _ := obj.Export().(goja.Proxy)
		if obj = p.Target(); obj == nil {
			return false // revoked: Array.isArray throws, which this reported as false
		}
	}
	return obj.ClassName() == "Array"
}

// Is reports whether obj is an instance of ctor (subclasses included); never
// of a built-in that was not captured (nil).
func (env *Env) Is(obj *goja.Object, ctor *goja.Object) bool {
	if ctor == nil {
		return false
	}
	proto, _ := ctor.Get("prototype").(*goja.Object)
	return HasProto(obj, proto)
}

// maxProtoChain bounds walks up a prototype chain: a Proxy can make the
// chain endless.
const maxProtoChain = 10000

// HasProto reports whether proto is on obj's prototype chain.
func HasProto(obj, proto *goja.Object) bool {
	p := obj.Prototype()
	for i := 0; p != nil && i < maxProtoChain; i++ {
		if p == proto {
			return true
		}
		p = p.Prototype()
	}
	return false
}

var proxyType = reflect.TypeOf(goja.Proxy{})

// IntOf reads a length or size that user code may have deleted or replaced.
func IntOf(v goja.Value) int64 {
	if v == nil {
		return 0
	}
	return v.ToInteger()
}

// DOMError is an Error whose name is a DOMException name
// (QuotaExceededError, DataCloneError, ...), as Node's are by name. The
// family that throws one captures Error when it is installed (CaptureError).
func (env *Env) DOMError(name, msg string) *goja.Object {
	obj, err := env.VM.New(env.ErrorCtor, env.VM.ToValue(msg))
	if err != nil {
		panic(err)
	}
	_ = obj.DefineDataProperty("name", env.VM.ToValue(name), goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_TRUE)
	return obj
}

// RangeError makes a RangeError with the constructor the global RangeError
// names when it is called.
func (env *Env) RangeError(msg string) *goja.Object {
	vm := env.VM
	err, _ := vm.New(vm.Get("RangeError").ToObject(vm), vm.ToValue(msg))
	return err
}

// BytesOf is the bytes an ArrayBuffer, a TypedArray or a DataView views
// (shared, not copied); anything else throws a TypeError naming what.
func (env *Env) BytesOf(v goja.Value, what string) []byte {
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
	panic(env.VM.NewTypeError(what + " must be an ArrayBuffer, a TypedArray or a DataView"))
}

// Uint8Array makes a Uint8Array over b.
func (env *Env) Uint8Array(b []byte) goja.Value {
	vm := env.VM
	ctor := vm.Get("Uint8Array").ToObject(vm)
	arr, err := vm.New(ctor, vm.ToValue(vm.NewArrayBuffer(b)))
	if err != nil {
		panic(err)
	}
	return arr
}

// NativeFunc makes a function with a proper name: without one, goja shows the
// Go symbol of the closure (a path inside this module) in String(fn).
func NativeFunc(vm *goja.Runtime, name string, fn func(goja.FunctionCall) goja.Value) *goja.Object {
	f := vm.ToValue(fn).(*goja.Object)
	_ = f.DefineDataProperty("name", vm.ToValue(name), goja.FLAG_FALSE, goja.FLAG_TRUE, goja.FLAG_FALSE)
	return f
}

// DefineFunc defines obj[name] as a native function, non-enumerable like the
// language's own built-ins.
func DefineFunc(vm *goja.Runtime, obj *goja.Object, name string, fn func(goja.FunctionCall) goja.Value) error {
	return obj.DefineDataProperty(name, NativeFunc(vm, name, fn), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
}

// Mentions reports whether code names any of names: as a whole identifier
// for a plain name (so the sourceMappingURL comment is not URL), as written
// for a pattern with punctuation (".values()", "function*"). It is the test
// of the install-when-named rule: a run gets a family of built-ins only if
// its code (after esbuild, whose helpers name what they use) mentions it.
func Mentions(code string, names []string) bool {
	for _, n := range names {
		plain := !strings.ContainsAny(n, ".(*")
		for i := 0; ; {
			j := strings.Index(code[i:], n)
			if j < 0 {
				break
			}
			j += i
			end := j + len(n)
			if !plain || ((j == 0 || !isIdentByte(code[j-1])) && (end == len(code) || !isIdentByte(code[end]))) {
				return true
			}
			i = j + 1
		}
	}
	return false
}

// Vocabulary is the plain names (identifiers) a run asks Mentions about,
// so that one pass over the code answers for all of them: asked name by
// name, Mentions scanned a trivial snippet ~100 times (~15 µs a run).
type Vocabulary struct {
	index          map[string]int // name -> its bit in Mentioned.found
	minLen, maxLen int
}

// NewVocabulary is a vocabulary of the identifiers among lists (the names
// Mentioned.Any answers from its one pass) and of the built-ins CaptureFor
// takes; a pattern (".values()") or any other name is answered by Mentions.
func NewVocabulary(lists ...[]string) *Vocabulary {
	v := &Vocabulary{index: map[string]int{}}
	for _, c := range capturedWhenNamed {
		lists = append(lists, c.names)
	}
	for _, names := range lists {
		for _, n := range names {
			if _, dup := v.index[n]; dup || !isIdentifier(n) {
				continue
			}
			if len(v.index) == 0 || len(n) < v.minLen {
				v.minLen = len(n)
			}
			v.maxLen = max(v.maxLen, len(n))
			v.index[n] = len(v.index)
		}
	}
	return v
}

// Scan reads code once for the vocabulary's names.
func (v *Vocabulary) Scan(code string) Mentioned {
	m := Mentioned{v: v, code: code, found: make([]uint64, (len(v.index)+63)/64)}
	for i := 0; i < len(code); {
		if !isIdentByte(code[i]) {
			i++
			continue
		}
		j := i + 1
		for j < len(code) && isIdentByte(code[j]) {
			j++
		}
		// A whole identifier is a maximal run of identifier bytes: exactly
		// where Mentions finds a plain name.
		if n := j - i; n >= v.minLen && n <= v.maxLen {
			if k, ok := v.index[code[i:j]]; ok {
				m.found[k/64] |= 1 << (k % 64)
			}
		}
		i = j
	}
	return m
}

// Mentioned is a code read once by Vocabulary.Scan.
type Mentioned struct {
	v     *Vocabulary
	code  string
	found []uint64
}

// Any is Mentions(code, names), from the one pass for the vocabulary's
// names.
func (m Mentioned) Any(names []string) bool {
	for _, n := range names {
		if k, ok := m.v.index[n]; ok {
			if m.found[k/64]&(1<<(k%64)) != 0 {
				return true
			}
			continue
		}
		if Mentions(m.code, []string{n}) {
			return true
		}
	}
	return false
}

func isIdentByte(c byte) bool {
	return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func isIdentifier(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isIdentByte(s[i]) {
			return false
		}
	}
	return s != ""
}

// WellFormed is a JS string as the web platform encodes it to UTF-8: each
// lone surrogate (which goja keeps in strings as UTF-16) becomes U+FFFD, as
// String.prototype.toWellFormed makes it.
func WellFormed(s string) string {
	return strings.ToValidUTF8(s, "\uFFFD")
}
