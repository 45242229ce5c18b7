package jsonvm

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/dop251/goja"
)

// edgeCases are inputs written by hand for the corners of JSON.parse in goja:
// numbers, escapes, surrogates, invalid UTF-8, duplicate and odd keys, and
// the malformed inputs around each.
var edgeCases = []string{
	// numbers
	`0`, `-0`, `1`, `-1`, `0.0`, `-0.0`, `1.0`, `1.5`, `-1.5`, `1e2`, `1E2`, `1e+2`, `1e-2`, `-1e-2`, `0e0`, `-0e0`,
	`1e400`, `-1e400`, `1e-400`, `-1e-400`, `1e308`, `1.7976931348623157e308`, `1.7976931348623159e308`,
	`4.9e-324`, `2.4e-324`, `123456789012345`, `1234567890123456`, `12345678901234567`, `-123456789012345`,
	`9007199254740991`, `9007199254740992`, `9007199254740993`, `-9007199254740993`, `18446744073709551616`,
	`100000000000000000000000000000`, `0.1`, `0.30000000000000004`, `5e-1`, `1.0e0`, `999999999999999`,
	`[0,-0,1,-1,2.5]`, `{"a":-0}`,
	`01`, `-`, `-a`, `+1`, `.5`, `1.`, `1.e5`, `1e`, `1e+`, `-01`, `00`, `1..2`, `0x10`, `NaN`, `Infinity`, `-Infinity`,
	// literals
	`true`, `false`, `null`, `tru`, `nul`, `truex`, `True`, `[true1]`, `nulll`,
	// strings and escapes
	`""`, `"a"`, `"\""`, `"\\"`, `"\/"`, `"\b\f\n\r\t"`, `"\u0000"`, `"\u001f"`, `"\u0041"`, `"\u00e9"`, `"\u20AC"`,
	`"\uD83D\uDE00"`, `"\ud83d\ude00"`, `"\ud800"`, `"\udc00"`, `"\ud800x"`, `"\ud800\ud800"`, `"\ud800\udc00\udc00"`,
	`"\ud800\u0041"`, `"\udc00\ud800"`, `"\ud800\u00zz"`, `"\ud800\"`, `"\u12"`, `"\u12g4"`, `"\x41"`, `"\a"`, `"\'"`,
	"\"\t\"", "\"\n\"", "\"\x01\"", "\"\x7f\"", `"é"`, `"日本語"`, `"😀"`, `"a\u0000b"`, `"abc`, `"\`, `"\u`,
	"\"\xff\"", "\"\xc3\"", "\"\xc3\x28\"", "\"\xed\xa0\x80\"", "\"\xf4\x90\x80\x80\"", "\"\xe2\x82\"", "\"a\xffb\xfe\"",
	"\xff", "[\xff]", "{\"\xff\":1}", "\"\xef\xbb\xbf\"", "\xef\xbb\xbf1",
	`"0123456789abcdef"`, `"0123456789abcdefg"`, `"0123456789abcdé"`, `"0123456789abcdeé"`, `"0123456789abcdefé"`,
	// objects and keys
	`{}`, `[]`, `{"a":1}`, `{"a":1,"b":2}`, `{"b":1,"a":2}`, `{"a":1,"a":2}`, `{"a":1,"b":2,"a":3}`,
	`{"2":1,"1":2,"b":3,"0":4,"a":5}`, `{"10":1,"9":2,"-1":3,"1.5":4,"01":5,"4294967295":6,"4294967294":7}`,
	`{"__proto__":{"x":1}}`, `{"__proto__":null}`, `{"__proto__":1,"__proto__":2}`, `{"constructor":1,"toString":2}`,
	`{"hasOwnProperty":1,"valueOf":null}`, `{"":1}`, `{"\u0000":1}`, `{"é":1,"\u00e9":2}`, `{"\ud800":1,"\udc00":2}`,
	`{"length":3}`, `[1,[2,[3,[4]]]]`, `{"a":{"b":{"c":{}}}}`, `[{},[],{"a":[]}]`, `[null,true,false,"",0]`,
	` { "a" : [ 1 , 2 ] } `, "\t\n\r 1 \t\n\r", "\u00a01", "\f1", `{"a":1,}`, `[1,]`, `[,1]`, `{,}`, `{"a"}`,
	`{"a":}`, `{"a" 1}`, `{a:1}`, `{'a':1}`, `['a']`, `[1 2]`, `{"a":1 "b":2}`, `[`, `{`, `]`, `}`, `[1`, `{"a":1`,
	`{"a"`, `{"a":`, `[1]]`, `{}}`, `1 2`, `"a" "b"`, `{} x`, `[] []`, ``, ` `, `/**/1`, `1//`, "1\x00", "\x001",
}

var corpusOnce struct {
	sync.Once
	inputs [][]byte
}

// corpus is the edge cases, the repository's tool corpus (whole and each tool
// alone: real schemas with $refs, unions, unicode) and a github-like list.
func corpus(t testing.TB) [][]byte {
	corpusOnce.Do(func() {
		var in [][]byte
		for _, s := range edgeCases {
			in = append(in, []byte(s))
		}
		dir := filepath.Join("..", "..", "..", "testdata", "toolcorpus")
		for _, name := range []string{"tools.json", "queries-dev.json"} {
			b, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatalf("the tool corpus: %v", err)
			}
			in = append(in, b)
			var items []json.RawMessage
			if err := json.Unmarshal(b, &items); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			for _, it := range items {
				in = append(in, it)
			}
		}
		in = append(in, githubLikeList(30))
		corpusOnce.inputs = in
	})
	return corpusOnce.inputs
}

// githubLikeList is a tool result shaped like a GitHub issue list: objects
// of a dozen keys, nested users and labels, text with escapes and unicode.
func githubLikeList(n int) []byte {
	var b strings.Builder
	b.WriteString(`[`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(`,`)
		}
		fmt.Fprintf(&b, `{"id":%d,"number":%d,"title":"Crash when the config has a trailing comma (#%d)",`+
			`"user":{"login":"octo-%d","id":%d,"site_admin":false,"type":"User"},`+
			`"labels":[{"name":"bug","color":"d73a4a","default":true},{"name":"needs triage","color":"ededed","default":false}],`+
			`"state":"open","locked":false,"comments":%d,"score":%g,"created_at":"2026-11-%02dT10:%02d:00Z",`+
			`"body":"Steps:\n1. run \"sandbox serve\"\n2. see the stack trace \u2014 it says caf\u00e9 \ud83d\ude00\n\tat main.go:%d"}`,
			1_000_000_000+i*7919, 4000+i, i, i%7, 5_000_000+i, i%5, float64(i)/3, 1+i%28, i%60, 10+i)
	}
	b.WriteString(`]`)
	return []byte(b.String())
}

// reference is JSON.parse of the VM under test, taken as goja installs it.
type reference struct {
	vm        *goja.Runtime
	parse     goja.Callable
	stringify goja.Callable
	flags     goja.Callable
	p         *Parser
}

func newReference(t testing.TB) *reference {
	vm := goja.New()
	jsonObj := vm.Get("JSON").ToObject(vm)
	parse, _ := goja.AssertFunction(jsonObj.Get("parse"))
	stringify, _ := goja.AssertFunction(jsonObj.Get("stringify"))
	flags, err := vm.RunString(`(o, k) => { const d = Object.getOwnPropertyDescriptor(o, k);
		return (d.writable ? "w" : "-") + (d.enumerable ? "e" : "-") + (d.configurable ? "c" : "-") + ("get" in d ? "a" : "") }`)
	if err != nil {
		t.Fatal(err)
	}
	fl, _ := goja.AssertFunction(flags)
	return &reference{vm: vm, parse: parse, stringify: stringify, flags: fl, p: NewParser(vm)}
}

// check parses data both ways and reports the first difference.
func (r *reference) check(data []byte) error {
	want, werr := r.parse(goja.Undefined(), r.vm.ToValue(string(data)))
	got, gerr := r.p.Parse(data)
	if errors.Is(gerr, ErrTooDeep) {
		return nil // JSON.parse answers for it (TestDeepNesting)
	}
	var se *SyntaxError
	if gerr != nil && !errors.As(gerr, &se) {
		return fmt.Errorf("an error of type %T: %v", gerr, gerr)
	}
	switch {
	case werr != nil && gerr != nil:
		return nil
	case werr != nil:
		return fmt.Errorf("JSON.parse throws %v; Parse gives %v", werr, got)
	case gerr != nil:
		return fmt.Errorf("JSON.parse gives %v; Parse fails: %v", want, gerr)
	}
	ws, err1 := r.stringify(goja.Undefined(), want)
	gs, err2 := r.stringify(goja.Undefined(), got)
	if err1 != nil || err2 != nil {
		return fmt.Errorf("JSON.stringify: %v, %v", err1, err2)
	}
	if ws.String() != gs.String() {
		return fmt.Errorf("JSON.stringify differs:\n got %s\nwant %s", gs, ws)
	}
	return r.same(nil, got, want)
}

// where spells a path of keys for a message, built only when one is needed
// (a path 10,000 levels deep formatted at every level would be quadratic).
func where(path []string) string {
	if len(path) > 20 {
		return fmt.Sprintf("$%s...(%d levels)...%s", strings.Join(path[:10], ""), len(path)-20, strings.Join(path[len(path)-10:], ""))
	}
	return "$" + strings.Join(path, "")
}

// same compares two values as a snippet could tell them apart: goja's value
// kind (an integer and a float of the same number are different kinds in
// goja and must be made alike), Object.is, typeof, prototypes, own keys in
// order with their attributes, at every level.
func (r *reference) same(path []string, got, want goja.Value) error {
	if gt, wt := fmt.Sprintf("%T", got), fmt.Sprintf("%T", want); gt != wt {
		return fmt.Errorf("%s: a %s, JSON.parse gives a %s (%v)", where(path), gt, wt, want)
	}
	wo, ok := want.(*goja.Object)
	if !ok {
		if !got.SameAs(want) || !got.StrictEquals(want) {
			return fmt.Errorf("%s: %v, JSON.parse gives %v", where(path), got, want)
		}
		return nil
	}
	gotObj := got.(*goja.Object)
	if gotObj.ClassName() != wo.ClassName() {
		return fmt.Errorf("%s: class %s, JSON.parse gives %s", where(path), gotObj.ClassName(), wo.ClassName())
	}
	if gotObj.Prototype() != wo.Prototype() {
		return fmt.Errorf("%s: another prototype", where(path))
	}
	if gotObj.Prototype() == nil {
		return fmt.Errorf("%s: no prototype", where(path))
	}
	gk, wk := gotObj.GetOwnPropertyNames(), wo.GetOwnPropertyNames()
	if strings.Join(gk, "\x00") != strings.Join(wk, "\x00") {
		return fmt.Errorf("%s: own keys %q, JSON.parse gives %q", where(path), gk, wk)
	}
	if len(gotObj.Symbols()) != len(wo.Symbols()) {
		return fmt.Errorf("%s: symbol keys differ", where(path))
	}
	for _, k := range wk {
		gf, err1 := r.flags(goja.Undefined(), gotObj, r.vm.ToValue(k))
		wf, err2 := r.flags(goja.Undefined(), wo, r.vm.ToValue(k))
		if err1 != nil || err2 != nil || gf.String() != wf.String() {
			return fmt.Errorf("%s[%q]: attributes %v, JSON.parse gives %v (%v %v)", where(path), k, gf, wf, err1, err2)
		}
		if k == "length" && wo.ClassName() == "Array" {
			continue
		}
		if err := r.same(append(path, fmt.Sprintf("[%q]", k)), gotObj.Get(k), wo.Get(k)); err != nil {
			return err
		}
	}
	return nil
}

func TestSameAsJSONParse(t *testing.T) {
	r := newReference(t)
	for _, in := range corpus(t) {
		if err := r.check(in); err != nil {
			t.Errorf("%.80q: %v", in, err)
		}
	}
}

// TestChecksCanFail makes sure the comparison sees the differences it exists
// to catch: a float for an integer, a key out of order, a prototype.
func TestChecksCanFail(t *testing.T) {
	r := newReference(t)
	mustDiffer := func(name string, got, want goja.Value) {
		t.Helper()
		if r.same(nil, got, want) == nil {
			t.Errorf("%s: no difference found", name)
		}
	}
	parse := func(s string) goja.Value {
		v, err := r.parse(goja.Undefined(), r.vm.ToValue(s))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	mustDiffer("-0 and 0", parse(`0`), parse(`-0`))
	mustDiffer("key order", parse(`{"a":1,"b":2}`), parse(`{"b":2,"a":1}`))
	mustDiffer("nested value", parse(`[{"a":[1]}]`), parse(`[{"a":[2]}]`))
	mustDiffer("Go string", r.vm.ToValue("0123456789abcdefghij"), parse(`"0123456789abcdefghij"`))
	proto := parse(`{"a":1}`).(*goja.Object)
	_ = proto.SetPrototype(nil)
	mustDiffer("prototype", proto, parse(`{"a":1}`))
	ro := parse(`{"a":1}`).(*goja.Object)
	_ = ro.DefineDataProperty("a", r.vm.ToValue(1), goja.FLAG_FALSE, goja.FLAG_TRUE, goja.FLAG_TRUE)
	mustDiffer("attributes", ro, parse(`{"a":1}`))
}

// TestProtoKeyAndSetters pins the two ways building with Set would differ
// from JSON.parse: "__proto__" and a setter a snippet put on Object.prototype.
func TestProtoKeyAndSetters(t *testing.T) {
	r := newReference(t)
	if _, err := r.vm.RunString(`globalThis.hits = 0;
		Object.defineProperty(Object.prototype, "trap", { set(v) { hits++ }, configurable: true })`); err != nil {
		t.Fatal(err)
	}
	v, err := r.p.Parse([]byte(`{"__proto__":{"x":1},"trap":2}`))
	if err != nil {
		t.Fatal(err)
	}
	r.vm.Set("v", v)
	got, err := r.vm.RunString(`[Object.getPrototypeOf(v) === Object.prototype, Object.keys(v).join(), v.x, hits, v.trap].join(" ")`)
	if err != nil {
		t.Fatal(err)
	}
	if want := "true __proto__,trap  0 2"; got.String() != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// TestDeepNesting: past MaxDepth Parse stops (the caller then uses
// JSON.parse, which recurses in Go as before); up to it, the values agree.
func TestDeepNesting(t *testing.T) {
	r := newReference(t)
	for _, depth := range []int{MaxDepth - 1, MaxDepth} {
		in := []byte(strings.Repeat(`[{"a":`, depth/2) + `1` + strings.Repeat(`}]`, depth/2))
		if err := r.check(in); err != nil {
			t.Fatalf("depth %d: %v", depth, err)
		}
		if _, err := r.p.Parse(in); err != nil {
			t.Fatalf("depth %d: %v", depth, err)
		}
	}
	for _, in := range []string{strings.Repeat(`[`, MaxDepth+1), strings.Repeat(`[`, MaxDepth+1) + strings.Repeat(`]`, MaxDepth+1)} {
		if _, err := r.p.Parse([]byte(in)); !errors.Is(err, ErrTooDeep) {
			t.Fatalf("%d levels: %v, want ErrTooDeep", MaxDepth+1, err)
		}
	}
	// The parser is usable after giving up.
	if err := r.check([]byte(`[1,{"b":[2]}]`)); err != nil {
		t.Fatal(err)
	}
}

func TestSyntaxErrorSaysWhere(t *testing.T) {
	p := NewParser(goja.New())
	_, err := p.Parse([]byte(`{"a":1,}`))
	var se *SyntaxError
	if !errors.As(err, &se) || se.Offset != 7 || !strings.Contains(err.Error(), "byte 7") {
		t.Fatalf("got %v", err)
	}
}

var fuzzRef struct {
	sync.Mutex
	r *reference
}

// FuzzSameAsJSONParse compares Parse with the VM's JSON.parse on any input.
// `go test` runs it on its seeds (the corpus above and testdata/fuzz);
// `go test -fuzz FuzzSameAsJSONParse ./runtime/internal/jsonvm/` searches.
func FuzzSameAsJSONParse(f *testing.F) {
	for _, in := range corpus(f) {
		if len(in) < 4096 {
			f.Add(in)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzRef.Lock()
		defer fuzzRef.Unlock()
		if fuzzRef.r == nil {
			fuzzRef.r = newReference(t)
		}
		if err := fuzzRef.r.check(data); err != nil {
			t.Fatalf("%q: %v", data, err)
		}
	})
}

// BenchmarkParse: tool results through Parse and through the VM's
// JSON.parse, in the same binary: a 30-issue github-like list (~12 KB, a
// typical result), a short list of three projects (the example tracker's
// list_projects, the five-call snippet's result) and {"ok":true}.
func BenchmarkParse(b *testing.B) {
	r := newReference(b)
	inputs := []struct {
		name string
		data []byte
	}{
		{"list30", githubLikeList(30)},
		{"projects3", []byte(`[{"id":"PRJ-1","name":"Website relaunch","status":"active","owner":"ana"},` +
			`{"id":"PRJ-2","name":"Mobile app","status":"active","owner":"ben"},` +
			`{"id":"PRJ-4","name":"Data platform","status":"active","owner":"chen"}]`)},
		{"ok", []byte(`{"ok":true}`)},
	}
	for _, in := range inputs {
		b.Run(in.name+"/jsonvm", func(b *testing.B) {
			b.SetBytes(int64(len(in.data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := r.p.Parse(in.data); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(in.name+"/JSON.parse", func(b *testing.B) {
			b.SetBytes(int64(len(in.data)))
			b.ReportAllocs()
			for b.Loop() {
				// as ParseJSON did: the bytes become a VM string, then JSON.parse
				if _, err := r.parse(goja.Undefined(), r.vm.ToValue(string(in.data))); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestFailedParseLetsValuesGo: the elements of arrays left unfinished by an
// error are not kept alive by the parser's scratch space.
func TestFailedParseLetsValuesGo(t *testing.T) {
	p := NewParser(goja.New())
	if _, err := p.Parse([]byte(`[1,"a",[2,{"b":[3,4,`)); err == nil {
		t.Fatal("no error")
	}
	if len(p.items) != 0 {
		t.Fatalf("%d items left", len(p.items))
	}
	for i, v := range p.items[:cap(p.items)] {
		if v != nil {
			t.Fatalf("item %d still held: %v", i, v)
		}
	}
}
