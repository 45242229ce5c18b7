package runtime

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/dop251/goja"

	"github.com/sandboxrt/sandbox/internal/bytesize"
	"github.com/sandboxrt/sandbox/runtime/internal/inspect"
	"github.com/sandboxrt/sandbox/runtime/internal/jsenv"
)

// Results and tool arguments become JSON inside the VM, under the run's
// deadline and a size cap: turning a value into JSON runs user code (toJSON,
// getters, Proxy traps), and a value can be far larger than any limit. The
// walk follows JSON.stringify exactly, with these outcomes documented in
// RATIONALE.md:
//   - undefined, functions and symbols: omitted in objects, null in arrays;
//     a top-level undefined is "no value" (Result.Value absent).
//   - NaN and ±Infinity: null. Dates: their ISO string (toJSON).
//   - Map, Set and other objects without enumerable properties: {} (as
//     JSON.stringify); convert them first (Object.fromEntries, [...set]).
//   - Error objects: {"name", "message", ...own enumerable properties} rather
//     than JSON.stringify's {}, so a caught error returned as data keeps its
//     meaning (an MCPToolError keeps tool, code and data).
//   - A cycle, a BigInt, nesting deeper than maxJSONDepth: an error naming the
//     path ($.a.b[2]) and how to fix it.
//   - Over the size cap: an error saying the limit; serialization stops there.

// maxJSONDepth bounds nesting so the Go walk cannot exhaust its own stack.
const maxJSONDepth = 256

// maxArgBytes caps the JSON arguments of one tool call.
const maxArgBytes = 4 << 20

type jsonError struct {
	kind    string // "cycle", "bigint", "depth", "size", "throw"
	path    string
	message string
}

type jsonWriter struct {
	e     *execution
	buf   []byte
	limit int
	stack []*goja.Object
	// path is where the walk is, below "$": spelt out only for an error
	// (pathString), so that a value's walk allocates no path strings.
	path  []pathStep
	steps int
	err   *jsonError
}

// pathStep is one step of jsonWriter.path: an object's key, or an index.
type pathStep struct {
	key     string
	index   int64
	isIndex bool
}

// toJSON serializes v inside the VM. It returns (nil, nil) for a top-level
// undefined (or function, or symbol).
func (e *execution) toJSON(v goja.Value, limit int) (json.RawMessage, *jsonError, error) {
	w := &jsonWriter{e: e, limit: limit}
	var wrote bool
	err := e.callInVM(func() { wrote = w.property(v, "", nil, 0) })
	select {
	case <-e.stopped: // the run is over (deadline, memory, cancel): that is the error
		return nil, nil, e.stopErr
	default:
	}
	if err != nil {
		if ex, ok := err.(*goja.Exception); ok && w.err == nil {
			return nil, &jsonError{kind: "throw", path: w.pathString(), message: ex.Value().String()}, nil
		}
		if w.err == nil {
			return nil, nil, err
		}
	}
	if w.err != nil {
		return nil, w.err, nil
	}
	if !wrote {
		return nil, nil, nil
	}
	return json.RawMessage(w.buf), nil, nil
}

// callInVM runs f inside a native function called through goja, so that
// exceptions from user code (toJSON, getters) and interrupts come back as
// errors. The function is made once a run, not once a call: goja's native
// function objects are costly to build (a property map, the Go symbol's
// name), and toJSON runs for every tool call's arguments. A getter can start
// another call, and so another toJSON, inside f: the job before it is put
// back when f returns.
func (e *execution) callInVM(f func()) error {
	if e.inVM == nil {
		fn := e.vm.ToValue(func(goja.FunctionCall) goja.Value {
			e.inVMJob()
			return goja.Undefined()
		})
		e.inVM, _ = goja.AssertFunction(fn)
	}
	prev := e.inVMJob
	e.inVMJob = f
	defer func() { e.inVMJob = prev }()
	_, err := e.inVM(goja.Undefined())
	return err
}

// pathString is the path as messages show it: $.key, $["a key"], $[3].
func (w *jsonWriter) pathString() string {
	var b strings.Builder
	b.WriteString("$")
	for _, p := range w.path {
		if p.isIndex {
			b.WriteString("[" + strconv.FormatInt(p.index, 10) + "]")
		} else {
			b.WriteString(pathKey(p.key))
		}
	}
	return b.String()
}

func (w *jsonWriter) fail(kind, message string) bool {
	if w.err == nil {
		w.err = &jsonError{kind: kind, path: w.pathString(), message: message}
	}
	return false
}

func (w *jsonWriter) write(s string) bool {
	if len(w.buf)+len(s) > w.limit {
		return w.fail("size", "")
	}
	w.buf = append(w.buf, s...)
	return true
}

// writeQuoted is write(quoteJSON(s)) without the string in between.
func (w *jsonWriter) writeQuoted(s string) bool {
	// Escaping only grows a string: one that cannot fit unescaped is over
	// the cap without building its (up to 6x larger) escaped form.
	if len(w.buf)+len(s)+2 > w.limit {
		return w.fail("size", "")
	}
	mark := len(w.buf)
	w.buf = appendQuoteJSON(w.buf, s)
	if len(w.buf) > w.limit {
		w.buf = w.buf[:mark]
		return w.fail("size", "")
	}
	return true
}

// writeInt is write(strconv.FormatInt(n, 10)) without the string.
func (w *jsonWriter) writeInt(n int64) bool {
	mark := len(w.buf)
	w.buf = strconv.AppendInt(w.buf, n, 10)
	if len(w.buf) > w.limit {
		w.buf = w.buf[:mark]
		return w.fail("size", "")
	}
	return true
}

// property writes the JSON of v (the value of key in holder) and reports
// whether anything was written (false for undefined, functions, symbols) or
// an error stopped the walk (w.err set).
func (w *jsonWriter) property(v goja.Value, key string, holder *goja.Object, depth int) bool {
	if w.err != nil {
		return false
	}
	w.steps++
	if w.steps&1023 == 0 {
		select {
		case <-w.e.stopped: // deadline or memory: stop walking pure-Go loops too
			return w.fail("stopped", "")
		default:
		}
	}
	if obj, ok := v.(*goja.Object); ok {
		if toJSON, ok := goja.AssertFunction(obj.Get("toJSON")); ok {
			nv, err := toJSON(obj, w.e.vm.ToValue(key))
			if err != nil {
				panic(err)
			}
			v = nv
		}
	} else if v != nil && v.ExportType() == typeBigInt {
		// JSON.stringify asks a BigInt for toJSON too (BigInt.prototype.toJSON
		// is a common idiom); without one it is an error.
		toJSON, ok := goja.AssertFunction(v.ToObject(w.e.vm).Get("toJSON"))
		if !ok {
			return w.fail("bigint", "")
		}
		nv, err := toJSON(v, w.e.vm.ToValue(key))
		if err != nil {
			panic(err)
		}
		v = nv
	}
	if v == nil || goja.IsUndefined(v) {
		return false
	}
	if goja.IsNull(v) {
		return w.write("null")
	}
	obj, isObj := v.(*goja.Object)
	if !isObj {
		if _, isSym := v.(*goja.Symbol); isSym {
			return false
		}
		return w.primitiveValue(v)
	}
	switch obj.ClassName() {
	case "Function":
		return false
	case "Number", "Boolean":
		return w.primitive(obj.Export()) // the wrapped primitive
	case "String":
		return w.primitive(obj.String())
	case "BigInt":
		return w.fail("bigint", "")
	}
	for _, o := range w.stack {
		if o == obj {
			return w.fail("cycle", "")
		}
	}
	if depth >= maxJSONDepth {
		return w.fail("depth", "")
	}
	w.stack = append(w.stack, obj)
	defer func() { w.stack = w.stack[:len(w.stack)-1] }()
	if w.e.env.IsArray(obj) { // arrays, and proxies of arrays
		return w.array(obj, depth)
	}
	if w.e.env.Is(obj, w.e.env.TypedArrayCtor) {
		return w.typedArray(obj, depth)
	}
	return w.object(obj, depth)
}

func exportOf(v goja.Value) any {
	if v == nil {
		return nil
	}
	return v.Export()
}

// The types goja exports primitives as (Value.ExportType).
var (
	typeString  = reflect.TypeOf("")
	typeInt64   = reflect.TypeOf(int64(0))
	typeFloat64 = reflect.TypeOf(float64(0))
	typeBool    = reflect.TypeOf(false)
	typeBigInt  = reflect.TypeOf((*big.Int)(nil))
)

// primitiveValue is primitive(v.Export()) without putting v's Go value in
// an interface (an allocation for every string and most numbers of a
// result).
func (w *jsonWriter) primitiveValue(v goja.Value) bool {
	switch v.ExportType() {
	case typeString:
		return w.writeQuoted(v.String())
	case typeInt64:
		return w.writeInt(v.ToInteger())
	case typeFloat64:
		return w.writeFloat(v.ToFloat())
	case typeBool:
		return w.write(strconv.FormatBool(v.ToBoolean()))
	}
	return w.primitive(exportOf(v))
}

func (w *jsonWriter) primitive(x any) bool {
	switch t := x.(type) {
	case string:
		return w.writeQuoted(t)
	case bool:
		return w.write(strconv.FormatBool(t))
	case int64:
		return w.writeInt(t)
	case float64:
		return w.writeFloat(t)
	case *big.Int:
		return w.fail("bigint", "")
	}
	return w.write("null")
}

func (w *jsonWriter) writeFloat(t float64) bool {
	if math.IsNaN(t) || math.IsInf(t, 0) {
		return w.write("null")
	}
	if t == 0 {
		return w.write("0")
	}
	return w.write(inspect.NumberString(t))
}

// typedArray writes {"0":...,"1":...} as JSON.stringify does, index by
// index within the cap (listing the keys of a 30-million-element array first
// would cost more than the limit it is checked against).
func (w *jsonWriter) typedArray(obj *goja.Object, depth int) bool {
	n := jsenv.IntOf(obj.Get("length"))
	if !w.write("{") {
		return false
	}
	for i := int64(0); i < n; i++ {
		k := strconv.FormatInt(i, 10)
		if (i > 0 && !w.write(",")) || !w.write(`"`+k+`":`) {
			return false
		}
		w.path = append(w.path, pathStep{index: i, isIndex: true})
		wrote := w.property(obj.Get(k), k, obj, depth+1)
		w.path = w.path[:len(w.path)-1]
		if w.err != nil {
			return false
		}
		if !wrote && !w.write("null") {
			return false
		}
	}
	return w.write("}")
}

func (w *jsonWriter) array(obj *goja.Object, depth int) bool {
	n := jsenv.IntOf(obj.Get("length"))
	if !w.write("[") {
		return false
	}
	for i := int64(0); i < n; i++ {
		if i > 0 && !w.write(",") {
			return false
		}
		k := strconv.FormatInt(i, 10)
		w.path = append(w.path, pathStep{index: i, isIndex: true})
		wrote := w.property(obj.Get(k), k, obj, depth+1)
		w.path = w.path[:len(w.path)-1]
		if w.err != nil {
			return false
		}
		if !wrote && !w.write("null") {
			return false
		}
	}
	return w.write("]")
}

func (w *jsonWriter) object(obj *goja.Object, depth int) bool {
	keys := obj.Keys()
	if obj.ClassName() == "Error" {
		keys = errorKeys(obj, keys)
	}
	if !w.write("{") {
		return false
	}
	first := true
	for _, k := range keys {
		mark := len(w.buf)
		if !first && !w.write(",") {
			return false
		}
		if !w.writeQuoted(k) || !w.write(":") {
			return false
		}
		w.path = append(w.path, pathStep{key: k})
		wrote := w.property(obj.Get(k), k, obj, depth+1)
		w.path = w.path[:len(w.path)-1]
		if w.err != nil {
			return false
		}
		if !wrote {
			w.buf = w.buf[:mark] // undefined values leave no key behind
			continue
		}
		first = false
	}
	return w.write("}")
}

// errorKeys puts name and message (not enumerable on errors) before the own
// enumerable properties, skipping stack (host detail, noise in data).
func errorKeys(obj *goja.Object, keys []string) []string {
	out := []string{"name", "message"}
	for _, k := range keys {
		if k != "name" && k != "message" && k != "stack" {
			out = append(out, k)
		}
	}
	return out
}

func pathKey(k string) string {
	if inspect.IsPlainKey(k) {
		return "." + k
	}
	return "[" + quoteJSON(k) + "]"
}

// quoteJSON writes a JSON string as JSON.stringify does: only ", \ and
// control characters are escaped; invalid UTF-8 becomes U+FFFD.
func quoteJSON(s string) string { return string(appendQuoteJSON(nil, s)) }

// appendQuoteJSON appends quoteJSON(s) to b.
func appendQuoteJSON(b []byte, s string) []byte {
	b = slices.Grow(b, len(s)+2)
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"':
				b = append(b, `\"`...)
			case c == '\\':
				b = append(b, `\\`...)
			case c == '\n':
				b = append(b, `\n`...)
			case c == '\r':
				b = append(b, `\r`...)
			case c == '\t':
				b = append(b, `\t`...)
			case c == '\b':
				b = append(b, `\b`...)
			case c == '\f':
				b = append(b, `\f`...)
			case c < 0x20:
				b = fmt.Appendf(b, `\u%04x`, c)
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, "\ufffd"...)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

// serializeResult turns the snippet's value into the run's JSON result.
func (e *execution) serializeResult(v goja.Value) (json.RawMessage, *Error) {
	out, jerr, err := e.toJSON(v, e.limits.ResultBytes)
	if err != nil {
		return nil, e.errorFrom(err)
	}
	if jerr != nil {
		return nil, resultError(jerr, e.limits.ResultBytes)
	}
	return out, nil
}

func resultError(j *jsonError, limit int) *Error {
	switch j.kind {
	case "size":
		return &Error{Kind: KindLimit, Limit: LimitResultSize, Message: fmt.Sprintf(
			"the returned value is larger than the %s result limit (stopped at %s); return less (pick the fields you need, slice long arrays, or summarize)"+RaiseLimitAdvice,
			bytesize.Format(int64(limit)), j.path)}
	case "cycle":
		return &Error{Kind: KindResult, Message: fmt.Sprintf("the returned value contains a cycle at %s (an object that contains itself); return a copy without the back-reference", j.path)}
	case "bigint":
		return &Error{Kind: KindResult, Message: fmt.Sprintf("the returned value has a BigInt at %s, which JSON cannot represent; convert it with String(x) or Number(x)", j.path)}
	case "depth":
		return &Error{Kind: KindResult, Message: fmt.Sprintf("the returned value is nested deeper than %d levels at %s; flatten it", maxJSONDepth, j.path)}
	default:
		return &Error{Kind: KindResult, Message: fmt.Sprintf("turning the returned value into JSON threw at %s: %s", j.path, j.message)}
	}
}

// serializeArgs turns a stub's argument into the JSON object sent to the host.
func (e *execution) serializeArgs(v goja.Value) (json.RawMessage, *Error) {
	if v == nil || goja.IsUndefined(v) {
		return json.RawMessage("{}"), nil
	}
	obj, ok := v.(*goja.Object)
	if !ok || goja.IsNull(v) || e.env.IsArray(obj) || obj.ClassName() == "Function" {
		return nil, &Error{Message: "the argument must be an object of named parameters, e.g. ({ owner: \"acme\" }); got " + describeKind(v)}
	}
	out, jerr, err := e.toJSON(v, maxArgBytes)
	if err != nil {
		panic(err) // an interrupt: let it end the run
	}
	if jerr != nil {
		msg := resultError(jerr, maxArgBytes).Message
		msg = strings.Replace(msg, "the returned value", "the argument", 1)
		msg = strings.Replace(msg, "result limit", "argument limit", 1)
		return nil, &Error{Message: msg}
	}
	if len(out) == 0 || out[0] != '{' {
		return nil, &Error{Message: "the argument must serialize to a JSON object; its toJSON returned " + string(out)}
	}
	return out, nil
}

func describeKind(v goja.Value) string {
	switch {
	case v == nil || goja.IsUndefined(v):
		return "undefined"
	case goja.IsNull(v):
		return "null"
	}
	if obj, ok := v.(*goja.Object); ok {
		// Only non-objects reach here: arrays, proxies of arrays ("Object"
		// to goja), functions.
		switch c := obj.ClassName(); c {
		case "Array", "Object":
			return "an array"
		default:
			return "a " + strings.ToLower(c)
		}
	}
	switch v.Export().(type) {
	case string:
		return "a string"
	case int64, float64:
		return "a number"
	case bool:
		return "a boolean"
	case *big.Int:
		return "a bigint"
	}
	return "a " + v.ExportType().String()
}
