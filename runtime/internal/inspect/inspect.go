// Package inspect renders JS values as text the way Node's util.inspect
// does (`{ a: 1, b: [ 'x' ] }`), for console output and for the description
// of a thrown value that is not an Error, and writes numbers as JavaScript
// does.
package inspect

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/dop251/goja"

	"github.com/sandboxrt/sandbox/runtime/internal/jsenv"
)

// Inspector renders values on one line, within a byte budget: logging a
// huge value costs at most the budget, never the whole value. It runs on
// the VM's goroutine.
type Inspector struct {
	env    *jsenv.Env
	budget int
	b      strings.Builder
	path   []*goja.Object // objects being rendered, for [Circular]
}

const (
	maxDepth   = 4
	maxItems   = 100
	maxStrings = 10000
)

// New makes an Inspector of the run's values whose answers are at most
// budget bytes.
func New(env *jsenv.Env, budget int) *Inspector {
	return &Inspector{env: env, budget: budget}
}

// Inspect renders v; depth is how deep v already is (0 at top level; from
// maxDepth on, objects show as [Object]).
func (in *Inspector) Inspect(v goja.Value, depth int) string {
	in.b.Reset()
	in.value(v, depth, true)
	return TruncateUTF8(in.b.String(), in.budget)
}

func (in *Inspector) full() bool { return in.b.Len() > in.budget }

func (in *Inspector) write(s string) {
	if !in.full() {
		in.b.WriteString(s)
	}
}

func (in *Inspector) value(v goja.Value, depth int, top bool) {
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
		in.primitive(in.env.VM.ToValue(obj.String()), false)
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
	case in.env.IsArray(obj):
		in.array(obj, "", depth)
	case in.env.Is(obj, in.env.MapCtor):
		in.collection(obj, "Map", depth)
	case in.env.Is(obj, in.env.SetCtor):
		in.collection(obj, "Set", depth)
	case in.env.Is(obj, in.env.TypedArrayCtor):
		in.array(obj, constructorName(obj)+"("+strconv.FormatInt(jsenv.IntOf(obj.Get("length")), 10)+") ", depth)
	default:
		in.object(obj, depth)
	}
}

func (in *Inspector) primitive(v goja.Value, top bool) {
	switch x := v.Export().(type) {
	case string:
		if len(x) > maxStrings {
			rest := len(x) - maxStrings
			x = TruncateUTF8(x, maxStrings)
			in.write(quoteJS(x) + fmt.Sprintf("... %d more characters", rest))
			return
		}
		in.write(quoteJS(x))
	case int64:
		in.write(strconv.FormatInt(x, 10))
	case float64:
		in.write(Number(x))
	case bool:
		in.write(strconv.FormatBool(x))
	case *big.Int:
		in.write(x.String() + "n")
	default:
		in.write(v.String())
	}
}

func (in *Inspector) errorValue(obj *goja.Object, depth int) {
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
	if len(keys) == 0 || depth >= maxDepth {
		return
	}
	in.write(" ")
	in.properties(obj, keys, depth)
}

func (in *Inspector) promise(obj *goja.Object, depth int) {
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

func (in *Inspector) collection(obj *goja.Object, kind string, depth int) {
	size := jsenv.IntOf(obj.Get("size"))
	in.write(kind + "(" + strconv.FormatInt(size, 10) + ") ")
	if depth >= maxDepth {
		in.write("[" + kind + "]")
		return
	}
	if size == 0 {
		in.write("{}")
		return
	}
	// Walk the collection's own iterator for the items shown only: copying a
	// million-entry Map to print 100 would cost the whole copy.
	iterate := in.env.MapEntries
	if kind == "Set" {
		iterate = in.env.SetValues
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
	for ; shown < maxItems && !in.full(); shown++ {
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
	if size > int64(shown) && shown == maxItems {
		in.write(fmt.Sprintf(", ... %d more items", size-int64(shown)))
	}
	in.write(" }")
}

func (in *Inspector) array(obj *goja.Object, prefix string, depth int) {
	n := int(jsenv.IntOf(obj.Get("length")))
	in.write(prefix)
	if depth >= maxDepth && n > 0 {
		in.write("[Array]")
		return
	}
	if n == 0 {
		in.write("[]")
		return
	}
	in.write("[ ")
	for i := 0; i < n && i < maxItems && !in.full(); i++ {
		if i > 0 {
			in.write(", ")
		}
		in.value(obj.Get(strconv.Itoa(i)), depth+1, false)
	}
	if n > maxItems {
		in.write(fmt.Sprintf(", ... %d more items", n-maxItems))
	}
	in.write(" ]")
}

func (in *Inspector) object(obj *goja.Object, depth int) {
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
	if depth >= maxDepth {
		in.write("[Object]")
		return
	}
	in.properties(obj, keys, depth)
}

func (in *Inspector) properties(obj *goja.Object, keys []string, depth int) {
	in.write("{ ")
	for i, k := range keys {
		if i >= maxItems || in.full() {
			if i >= maxItems {
				in.write(fmt.Sprintf(", ... %d more properties", len(keys)-maxItems))
			}
			break
		}
		if i > 0 {
			in.write(", ")
		}
		if IsPlainKey(k) {
			in.write(k)
		} else {
			in.write(quoteJS(k))
		}
		in.write(": ")
		in.value(obj.Get(k), depth+1, false)
	}
	in.write(" }")
}

// IsPlainKey reports whether a property key can be written without quotes
// (an identifier made of ASCII letters, digits, _ and $).
func IsPlainKey(k string) bool {
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
