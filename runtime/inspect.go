package runtime

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/dop251/goja"
)

// inspector renders values for console output the way Node's util.inspect
// does (`{ a: 1, b: [ 'x' ] }`), on one line, within a byte budget: logging a
// huge value costs at most the budget, never the whole value.
type inspector struct {
	vm     *goja.Runtime
	in     *intrinsics
	budget int
	b      strings.Builder
	path   []*goja.Object // objects being rendered, for [Circular]
}

const (
	inspectMaxDepth   = 4
	inspectMaxItems   = 100
	inspectMaxStrings = 10000
)

// inspect renders v; depth is how deep v already is (0 at top level).
func (in *inspector) inspect(v goja.Value, depth int) string {
	in.b.Reset()
	in.value(v, depth, true)
	return truncateUTF8(in.b.String(), in.budget)
}

func (in *inspector) full() bool { return in.b.Len() > in.budget }

func (in *inspector) write(s string) {
	if !in.full() {
		in.b.WriteString(s)
	}
}

func (in *inspector) value(v goja.Value, depth int, top bool) {
	if in.full() {
		return
	}
	switch {
	case v == nil || goja.IsUndefined(v):
		in.write("undefined")
		return
	case goja.IsNull(v):
		in.write("null")
		return
	}
	obj, isObj := v.(*goja.Object)
	if !isObj {
		in.primitive(v, top)
		return
	}
	for _, p := range in.path {
		if p == obj {
			in.write("[Circular]")
			return
		}
	}
	in.path = append(in.path, obj)
	defer func() { in.path = in.path[:len(in.path)-1] }()

	switch obj.ClassName() {
	case "Function":
		name := obj.Get("name")
		if name == nil || name.String() == "" {
			in.write("[Function (anonymous)]")
		} else {
			in.write("[Function: " + name.String() + "]")
		}
		return
	case "Error":
		in.errorValue(obj, depth)
		return
	case "Date":
		if t, ok := obj.Export().(time.Time); ok {
			in.write(t.UTC().Format("2006-01-02T15:04:05.000Z"))
		} else {
			in.write("Invalid Date")
		}
		return
	case "RegExp":
		in.write(obj.String())
		return
	case "Number", "Boolean", "BigInt", "Symbol":
		in.write("[" + obj.ClassName() + ": " + obj.String() + "]")
		return
	case "String":
		in.write("[String: ")
		in.primitive(in.vm.ToValue(obj.String()), false)
		in.write("]")
		return
	case "Promise":
		in.promise(obj, depth)
		return
	case "Array":
		in.array(obj, "", depth)
		return
	}
	// goja names Maps, Sets, typed arrays and proxies "Object": ask the
	// prototypes (and Array.isArray, which sees through proxies).
	switch {
	case in.in.isArray(obj):
		in.array(obj, "", depth)
	case in.in.is(obj, in.in.mapCtor):
		in.collection(obj, "Map", depth)
	case in.in.is(obj, in.in.setCtor):
		in.collection(obj, "Set", depth)
	case in.in.is(obj, in.in.typedArrayCtor):
		in.array(obj, constructorName(obj)+"("+strconv.FormatInt(intOf(obj.Get("length")), 10)+") ", depth)
	default:
		in.object(obj, depth)
	}
}

func (in *inspector) primitive(v goja.Value, top bool) {
	switch x := v.Export().(type) {
	case string:
		if len(x) > inspectMaxStrings {
			rest := len(x) - inspectMaxStrings
			x = truncateUTF8(x, inspectMaxStrings)
			in.write(quoteJS(x) + fmt.Sprintf("... %d more characters", rest))
			return
		}
		in.write(quoteJS(x))
	case int64:
		in.write(strconv.FormatInt(x, 10))
	case float64:
		in.write(formatNumber(x))
	case bool:
		in.write(strconv.FormatBool(x))
	case *big.Int:
		in.write(x.String() + "n")
	default:
		in.write(v.String())
	}
}

func (in *inspector) errorValue(obj *goja.Object, depth int) {
	if s := obj.Get("stack"); s != nil && !goja.IsUndefined(s) && s.String() != "" {
		in.write(s.String())
	} else {
		name, msg := obj.Get("name"), obj.Get("message")
		text := "Error"
		if name != nil {
			text = name.String()
		}
		if msg != nil && msg.String() != "" {
			text += ": " + msg.String()
		}
		in.write("[" + text + "]")
	}
	keys := obj.Keys()
	if len(keys) == 0 || depth >= inspectMaxDepth {
		return
	}
	in.write(" ")
	in.properties(obj, keys, depth)
}

func (in *inspector) promise(obj *goja.Object, depth int) {
	p, ok := obj.Export().(*goja.Promise)
	if !ok {
		in.write("Promise {}")
		return
	}
	switch p.State() {
	case goja.PromiseStatePending:
		in.write("Promise { <pending> }")
	case goja.PromiseStateRejected:
		in.write("Promise { <rejected> ")
		in.value(p.Result(), depth+1, false)
		in.write(" }")
	default:
		in.write("Promise { ")
		in.value(p.Result(), depth+1, false)
		in.write(" }")
	}
}

func (in *inspector) collection(obj *goja.Object, kind string, depth int) {
	size := intOf(obj.Get("size"))
	in.write(kind + "(" + strconv.FormatInt(size, 10) + ") ")
	if depth >= inspectMaxDepth {
		in.write("[" + kind + "]")
		return
	}
	if size == 0 {
		in.write("{}")
		return
	}
	// Walk the collection's own iterator for the items shown only: copying a
	// million-entry Map to print 100 would cost the whole copy.
	iterate := in.in.mapEntries
	if kind == "Set" {
		iterate = in.in.setValues
	}
	it, err := iterate(obj)
	if err != nil {
		panic(err)
	}
	itObj, _ := it.(*goja.Object)
	var next goja.Callable
	if itObj != nil {
		next, _ = goja.AssertFunction(itObj.Get("next"))
	}
	if next == nil {
		in.write("{}")
		return
	}
	in.write("{ ")
	shown := 0
	for ; shown < inspectMaxItems && !in.full(); shown++ {
		step, err := next(itObj)
		if err != nil {
			panic(err)
		}
		stepObj, _ := step.(*goja.Object)
		if stepObj == nil || stepObj.Get("done") == nil || stepObj.Get("done").ToBoolean() {
			break
		}
		if shown > 0 {
			in.write(", ")
		}
		item := stepObj.Get("value")
		if kind == "Map" {
			pair, _ := item.(*goja.Object)
			if pair == nil {
				break
			}
			in.value(pair.Get("0"), depth+1, false)
			in.write(" => ")
			in.value(pair.Get("1"), depth+1, false)
		} else {
			in.value(item, depth+1, false)
		}
	}
	if size > int64(shown) && shown == inspectMaxItems {
		in.write(fmt.Sprintf(", ... %d more items", size-int64(shown)))
	}
	in.write(" }")
}

func (in *inspector) array(obj *goja.Object, prefix string, depth int) {
	n := int(intOf(obj.Get("length")))
	in.write(prefix)
	if depth >= inspectMaxDepth && n > 0 {
		in.write("[Array]")
		return
	}
	if n == 0 {
		in.write("[]")
		return
	}
	in.write("[ ")
	for i := 0; i < n && i < inspectMaxItems && !in.full(); i++ {
		if i > 0 {
			in.write(", ")
		}
		in.value(obj.Get(strconv.Itoa(i)), depth+1, false)
	}
	if n > inspectMaxItems {
		in.write(fmt.Sprintf(", ... %d more items", n-inspectMaxItems))
	}
	in.write(" ]")
}

func (in *inspector) object(obj *goja.Object, depth int) {
	prefix := ""
	if obj.Prototype() == nil {
		prefix = "[Object: null prototype] "
	} else if name := constructorName(obj); name != "Object" && name != "" {
		prefix = name + " "
	}
	keys := obj.Keys()
	in.write(prefix)
	if len(keys) == 0 {
		in.write("{}")
		return
	}
	if depth >= inspectMaxDepth {
		in.write("[Object]")
		return
	}
	in.properties(obj, keys, depth)
}

func (in *inspector) properties(obj *goja.Object, keys []string, depth int) {
	in.write("{ ")
	for i, k := range keys {
		if i >= inspectMaxItems || in.full() {
			if i >= inspectMaxItems {
				in.write(fmt.Sprintf(", ... %d more properties", len(keys)-inspectMaxItems))
			}
			break
		}
		if i > 0 {
			in.write(", ")
		}
		if isPlainKey(k) {
			in.write(k)
		} else {
			in.write(quoteJS(k))
		}
		in.write(": ")
		in.value(obj.Get(k), depth+1, false)
	}
	in.write(" }")
}

func isPlainKey(k string) bool {
	if k == "" {
		return false
	}
	for i, r := range k {
		if !(r == '_' || r == '$' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (i > 0 && r >= '0' && r <= '9')) {
			return false
		}
	}
	return true
}

// quoteJS quotes a string as Node's inspect does: single quotes unless the
// string has one and no double quote.
func quoteJS(s string) string {
	q := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		q = '"'
	}
	var b strings.Builder
	b.WriteByte(q)
	for _, r := range s {
		switch {
		case r == rune(q) || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20:
			fmt.Fprintf(&b, `\x%02X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte(q)
	return b.String()
}

func constructorName(obj *goja.Object) string {
	if proto := obj.Prototype(); proto != nil {
		if c, ok := proto.Get("constructor").(*goja.Object); ok {
			if name := c.Get("name"); name != nil {
				return name.String()
			}
		}
	}
	return ""
}

// intrinsics are built-ins captured before user code runs, so that a snippet
// replacing globals (Map = ..., Array.from = ...) cannot confuse the runtime.
//
// Capturing a built-in makes goja build it: its constructor, prototype and
// every method (Map, Set and the typed arrays ~15-22 µs each), and a trivial
// run builds none of them otherwise. So only the ones every run needs
// (Array, Promise) are captured with the VM; the rest when the snippet's code
// names them (captureFor) or a global that uses them is installed, still
// before any of the code runs. A field left nil is a kind of object the
// snippet can only have reached through a name built at run time
// (globalThis[["Ma", "p"].join("")]; esbuild folds "Ma" + "p"): is() is
// false for it, and the object is shown and serialised as a plain object.
type intrinsics struct {
	vm             *goja.Runtime
	mapCtor        *goja.Object
	setCtor        *goja.Object
	typedArrayCtor *goja.Object
	arrayFrom      goja.Callable
	arrayIsArray   goja.Callable
	mapGet, mapSet goja.Callable
	promiseThen    goja.Callable
	// mapEntries and setValues start an iteration: f(collection) -> iterator.
	mapEntries, setValues func(goja.Value) (goja.Value, error)
}

var errMissingBuiltin = fmt.Errorf("runtime: the VM lacks a built-in the runtime relies on")

// captureIntrinsics takes the built-ins every run's host code uses.
func captureIntrinsics(vm *goja.Runtime) (*intrinsics, error) {
	in := &intrinsics{vm: vm}
	array := in.global("Array")
	in.arrayFrom = method(array, "from")
	in.arrayIsArray = method(array, "isArray")
	in.promiseThen = method(in.global("Promise").Get("prototype").ToObject(vm), "then")
	if in.arrayFrom == nil || in.arrayIsArray == nil || in.promiseThen == nil {
		return nil, errMissingBuiltin
	}
	return in, nil
}

// captureFor takes the collections and typed arrays if code names them (see
// intrinsics): host code meets one only if the snippet made it, with its
// constructor or with a global that makes or takes one (whose install
// captures what it uses). It runs before any of the code does.
func (in *intrinsics) captureFor(code string) error {
	return installNamed(code, []named{
		{[]string{"Map"}, in.captureMap},
		{[]string{"Set"}, in.captureSet},
		{[]string{"Int8Array", "Uint8Array", "Uint8ClampedArray", "Int16Array", "Uint16Array", "Int32Array", "Uint32Array",
			"Float32Array", "Float64Array", "BigInt64Array", "BigUint64Array"}, in.captureTypedArrays},
	})
}

// captureMap, captureSet and captureTypedArrays take a kind of built-in the
// first time they are called; only setup calls them, before user code runs.
func (in *intrinsics) captureMap() error {
	if in.mapCtor != nil {
		return nil
	}
	ctor := in.global("Map")
	proto := ctor.Get("prototype").ToObject(in.vm)
	get, set, entries := method(proto, "get"), method(proto, "set"), method(proto, "entries")
	if get == nil || set == nil || entries == nil {
		return errMissingBuiltin
	}
	in.mapCtor, in.mapGet, in.mapSet = ctor, get, set
	in.mapEntries = func(c goja.Value) (goja.Value, error) { return entries(c) }
	return nil
}

func (in *intrinsics) captureSet() error {
	if in.setCtor != nil {
		return nil
	}
	ctor := in.global("Set")
	values := method(ctor.Get("prototype").ToObject(in.vm), "values")
	if values == nil {
		return errMissingBuiltin
	}
	in.setCtor = ctor
	in.setValues = func(c goja.Value) (goja.Value, error) { return values(c) }
	return nil
}

func (in *intrinsics) captureTypedArrays() error {
	if in.typedArrayCtor == nil {
		in.typedArrayCtor = in.global("Uint8Array").Prototype() // %TypedArray%
		if in.typedArrayCtor == nil {
			return errMissingBuiltin
		}
	}
	return nil
}

func (in *intrinsics) global(name string) *goja.Object { return in.vm.Get(name).ToObject(in.vm) }

// method is obj[name] if it is a function, else nil.
func method(obj *goja.Object, name string) goja.Callable {
	f, _ := goja.AssertFunction(obj.Get(name))
	return f
}

// isArray is Array.isArray: true for arrays and proxies of arrays.
func (in *intrinsics) isArray(obj *goja.Object) bool {
	if obj.ClassName() == "Array" {
		return true
	}
	v, err := in.arrayIsArray(goja.Undefined(), obj)
	return err == nil && v.ToBoolean()
}

// maxProtoChain bounds walks up a prototype chain: a Proxy can make the
// chain endless.
const maxProtoChain = 10000

// is reports whether obj is an instance of ctor (subclasses included); never
// of a built-in that was not captured (nil).
func (in *intrinsics) is(obj *goja.Object, ctor *goja.Object) bool {
	if ctor == nil {
		return false
	}
	proto, _ := ctor.Get("prototype").(*goja.Object)
	return hasProto(obj, proto)
}

// hasProto reports whether proto is on obj's prototype chain.
func hasProto(obj, proto *goja.Object) bool {
	p := obj.Prototype()
	for i := 0; p != nil && i < maxProtoChain; i++ {
		if p == proto {
			return true
		}
		p = p.Prototype()
	}
	return false
}

// intOf reads a length or size that user code may have deleted or replaced.
func intOf(v goja.Value) int64 {
	if v == nil {
		return 0
	}
	return v.ToInteger()
}
