package bindings

import (
	"fmt"
	"strings"
	"testing"

	"github.com/dop251/goja"

	"github.com/sandboxrt/sandbox/runtime/internal/jsonvm"
)

// TestParseJSONErrorsAsJSONParse: a malformed result fails with the VM's own
// SyntaxError, word for word (the runtime puts its message in the
// MCPToolError an agent reads), even after a snippet replaced JSON.parse.
func TestParseJSONErrorsAsJSONParse(t *testing.T) {
	vm := goja.New()
	in, err := Install(vm, nil, noInvoke)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := vm.RunString(`JSON.parse = () => ({ replaced: true })`); err != nil {
		t.Fatal(err)
	}
	fresh := goja.New()
	parse, _ := goja.AssertFunction(fresh.Get("JSON").ToObject(fresh).Get("parse"))
	for _, bad := range []string{`{"a":1,}`, `[1 2]`, `1e400`, `"\ud800\u00zz"`, ``, `{"a":tru}`, "\"\x01\""} {
		_, got := in.ParseJSON([]byte(bad))
		_, want := parse(goja.Undefined(), fresh.ToValue(bad))
		if got == nil || want == nil || got.Error() != want.Error() {
			t.Errorf("%q: error %v, JSON.parse's %v", bad, got, want)
		}
		if ex, ok := got.(*goja.Exception); !ok || !strings.HasPrefix(ex.Value().String(), "SyntaxError") {
			t.Errorf("%q: %T %v, want a SyntaxError", bad, got, got)
		}
	}
	v, err := in.ParseJSON([]byte(`{"b":[1,-0,"é"],"a":null}`))
	if err != nil {
		t.Fatal(err)
	}
	vm.Set("v", v)
	got, err := vm.RunString(`Object.keys(v).join() + " " + Object.is(v.b[1], -0) + " " + JSON.stringify(v) + " " + ("replaced" in v)`)
	if err != nil || got.String() != `b,a true {"b":[1,0,"é"],"a":null} false` {
		t.Fatalf("got %v, %v", got, err)
	}
}

// TestParseJSONPastMaxDepth: nesting jsonvm does not take is parsed by the
// VM's JSON.parse as before, not refused.
func TestParseJSONPastMaxDepth(t *testing.T) {
	vm := goja.New()
	in, err := Install(vm, nil, noInvoke)
	if err != nil {
		t.Fatal(err)
	}
	depth := jsonvm.MaxDepth + 5
	v, err := in.ParseJSON([]byte(strings.Repeat(`[`, depth) + `7` + strings.Repeat(`]`, depth)))
	if err != nil {
		t.Fatal(err)
	}
	vm.Set("v", v)
	got, err := vm.RunString(`let d = 0; let x = v; while (Array.isArray(x)) { x = x[0]; d++ } d + ":" + x`)
	if err != nil || got.String() != fmt.Sprintf("%d:7", depth) {
		t.Fatalf("got %v, %v", got, err)
	}
}

// TestParseJSONRefusesWhatWouldOverflow: nesting past MaxJSONDepth, which
// JSON.parse would recurse through until the stack overflowed (a fatal
// error, not a panic), is refused with a message that says why.
func TestParseJSONRefusesWhatWouldOverflow(t *testing.T) {
	vm := goja.New()
	in, err := Install(vm, nil, noInvoke)
	if err != nil {
		t.Fatal(err)
	}
	depth := MaxJSONDepth + 1
	_, err = in.ParseJSON([]byte(strings.Repeat(`[`, depth) + strings.Repeat(`]`, depth)))
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%d levels deep, more than the %d", depth, MaxJSONDepth)) {
		t.Fatalf("got %v", err)
	}
	if _, err := in.ParseJSON([]byte(`{"ok":true}`)); err != nil {
		t.Fatalf("after refusing: %v", err)
	}
}
