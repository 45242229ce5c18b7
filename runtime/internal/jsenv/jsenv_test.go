package jsenv

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/dop251/goja"
)

var mentionsCases = []struct {
	code  string
	names []string
	want  bool
}{
	{"new URL(x)", []string{"URL"}, true},
	{"typeof URL", []string{"URL"}, true},
	{`globalThis["URL"]`, []string{"URL"}, true},
	{"URL", []string{"URL"}, true},
	{"//# sourceMappingURL=data:...", []string{"URL"}, false},
	{"const myURL = 1; const URLs = 2", []string{"URL"}, false},
	{"new URLSearchParams()", []string{"URL"}, false},
	{"new URLSearchParams()", []string{"URL", "URLSearchParams"}, true},
	{"$URL + _URL", []string{"URL"}, false},
	{"xs.values().map(f)", []string{".values()"}, true},
	{"function* gen() {}", []string{"function*"}, true},
	{"function gen() {}", []string{"function*"}, false},
	{"d.toLocaleDateString()", []string{"toLocaleString", "toLocaleDateString"}, true},
	{"s.toLocaleUpperCase()", []string{"toLocaleString", "toLocaleDateString"}, false},
	{"", []string{"URL"}, false},
	{"URL URL", nil, false},
	{"x.toArray(y)", []string{"URL", ".toArray("}, true},
	{"Map.groupBy(xs, f)", []string{"Map"}, true},
	{"new Uint8Array(2)", []string{"Int8Array", "Uint8Array"}, true},
	{"new Uint8Arrays(2)", []string{"Int8Array", "Uint8Array"}, false},
	{"a + b", []string{"b", "c"}, true},
}

func TestMentions(t *testing.T) {
	for _, c := range mentionsCases {
		if got := Mentions(c.code, c.names); got != c.want {
			t.Errorf("Mentions(%q, %q) = %v, want %v", c.code, c.names, got, c.want)
		}
	}
}

// TestVocabularyIsMentions: one pass over the code answers as Mentions
// does name by name, for names in the vocabulary, patterns and names
// outside it (which fall back to Mentions).
func TestVocabularyIsMentions(t *testing.T) {
	inVocabulary := []string{"URL", "URLSearchParams", "toLocaleString", "toLocaleDateString", "b", ".values()", "function*", ".toArray("}
	v := NewVocabulary(inVocabulary, []string{"URL", "bad name", ""})
	for _, c := range mentionsCases {
		if got := v.Scan(c.code).Any(c.names); got != c.want {
			t.Errorf("Scan(%q).Any(%q) = %v, want %v", c.code, c.names, got, c.want)
		}
	}
	// Random code over an alphabet that makes identifiers meet and part,
	// asked about every name in and out of the vocabulary.
	pieces := []string{"URL", "Map", "b", "Set", "_", "$", "0", " ", ".", "(", ")", "*", "function", "values", "é", "\n", "Uint8Array", "URLSearch", "Params", "toLocale", "String", "//# sourceMappingURL="}
	asked := append(append([]string{}, inVocabulary...), "Map", "Set", "Uint8Array", "Params", "function", "nope", ".values", "é")
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 5000; i++ {
		var b strings.Builder
		for n := rng.IntN(12); n > 0; n-- {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		code := b.String()
		m := v.Scan(code)
		for _, name := range asked {
			if got, want := m.Any([]string{name}), Mentions(code, []string{name}); got != want {
				t.Fatalf("Scan(%q).Any(%q) = %v, Mentions says %v", code, name, got, want)
			}
		}
	}
}

// TestIsArray: arrays and proxies of arrays (through any number of proxies)
// are arrays; objects, array-likes, functions and proxies of them are not; a
// revoked proxy throws as Array.isArray does.
func TestIsArray(t *testing.T) {
	vm := goja.New()
	env, err := New(vm)
	if err != nil {
		t.Fatal(err)
	}
	v, err := vm.RunString(`const r = Proxy.revocable([], {}); r.revoke();
[[[]], [new Proxy([], {})], [new Proxy(new Proxy([1], {}), {})], [Object.create(Array.prototype)],
 [{ length: 0 }], [new Proxy({}, {})], [function () {}], [new Proxy(function () {}, {})], [new Uint8Array(1)], [r.proxy]]`)
	if err != nil {
		t.Fatal(err)
	}
	want := []bool{true, true, true, false, false, false, false, false, false}
	cases := v.ToObject(vm)
	for i, w := range want {
		obj := cases.Get(strconv.Itoa(i)).ToObject(vm).Get("0").ToObject(vm)
		if got := env.IsArray(obj); got != w {
			t.Errorf("case %d: IsArray = %v, want %v", i, got, w)
		}
	}
	// A proxy of a revoked proxy: Array.isArray throws, IsArray says false.
	behind, err := vm.RunString(`const r2 = Proxy.revocable([], {}); const outer = new Proxy(r2.proxy, {}); r2.revoke(); outer`)
	if err != nil {
		t.Fatal(err)
	}
	if env.IsArray(behind.ToObject(vm)) {
		t.Error("a proxy of a revoked proxy: IsArray = true")
	}
	revoked := cases.Get(strconv.Itoa(len(want))).ToObject(vm).Get("0").ToObject(vm)
	if ex := vm.Try(func() { env.IsArray(revoked) }); ex == nil || !strings.Contains(ex.Error(), "revoked") {
		t.Errorf("a revoked proxy: %v, want a TypeError", ex)
	}
}
