package bindings

import (
	"strings"
	"testing"

	"github.com/dop251/goja"
)

func noInvoke(Tool, goja.Value) goja.Value { return goja.Undefined() }

func TestInstallRejectsNamesThatWouldBreakTheVM(t *testing.T) {
	cases := []struct {
		tool Tool
		msg  string
	}{
		{Tool{ID: "s:t", Namespace: "console", Function: "log"}, "replace a JavaScript global"},
		{Tool{ID: "s:t", Namespace: "JSON", Function: "parse"}, "replace a JavaScript global"},
		{Tool{ID: "s:t", Namespace: "srv", Function: "then"}, "thenable"},
		{Tool{ID: "s:t", Namespace: "my-srv", Function: "x"}, "not JavaScript identifiers"},
		{Tool{ID: "s:t", Namespace: "srv", Function: "delete"}, "not JavaScript identifiers"},
		{Tool{ID: "s:t", Namespace: "srv", Function: "1x"}, "not JavaScript identifiers"},
		{Tool{ID: "s:t", Namespace: "", Function: "x"}, "not JavaScript identifiers"},
	}
	for _, c := range cases {
		_, err := Install(goja.New(), []Tool{c.tool}, noInvoke)
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%+v: err = %v, want %q", c.tool, err, c.msg)
		}
	}
	_, err := Install(goja.New(), []Tool{{ID: "a:x", Namespace: "a", Function: "x"}, {ID: "b:x", Namespace: "a", Function: "x"}}, noInvoke)
	if err == nil || !strings.Contains(err.Error(), "both named a.x") {
		t.Errorf("two tools with one name: err = %v", err)
	}
	if _, err := Install(goja.New(), []Tool{{ID: "a:x", Namespace: "a", Function: "x"}, {ID: "a:x", Namespace: "a", Function: "x"}}, noInvoke); err != nil {
		t.Errorf("the same tool twice is harmless: %v", err)
	}
}

func TestStubsCallInvokeWithTheirTool(t *testing.T) {
	vm := goja.New()
	var got []string
	invoke := func(tool Tool, args goja.Value) goja.Value {
		got = append(got, tool.ID+" "+args.ToObject(vm).Get("q").String())
		return vm.ToValue("sent")
	}
	if _, err := Install(vm, []Tool{{ID: "search:web_search", Namespace: "search", Function: "webSearch"}}, invoke); err != nil {
		t.Fatal(err)
	}
	v, err := vm.RunString(`[search.webSearch({ q: "goja" }), search.webSearch.name, typeof search.other, Object.isFrozen(search)]`)
	if err != nil {
		t.Fatal(err)
	}
	if s := v.String(); s != "sent,webSearch,function,true" {
		t.Errorf("got %s", s)
	}
	if len(got) != 1 || got[0] != "search:web_search goja" {
		t.Errorf("invoke saw %v", got)
	}
	// Promise resolution reads `then`: it must not look like a tool.
	if v, _ := vm.RunString(`typeof search.then`); v.String() != "undefined" {
		t.Errorf("typeof search.then = %s", v)
	}
}

func TestMCPToolErrorClass(t *testing.T) {
	vm := goja.New()
	in, err := Install(vm, nil, noInvoke)
	if err != nil {
		t.Fatal(err)
	}
	e := in.NewError(ErrorInfo{Tool: "gh:x", Code: "UPSTREAM_ERROR", Message: "rate limited", Data: []byte(`{"retryAfter":3}`)}, "")
	_ = vm.Set("e", e)
	v, err := vm.RunString(`class Sub extends MCPToolError {}
		[e instanceof MCPToolError, e instanceof Error, e.name, e.code, e.tool, e.data.retryAfter, e.message, String(e),
		new MCPToolError("own", { code: "X", tool: "t" }).code, new Sub("s") instanceof MCPToolError, new Sub("s") instanceof Sub].join("|")`)
	if err != nil {
		t.Fatal(err)
	}
	want := "true|true|MCPToolError|UPSTREAM_ERROR|gh:x|3|rate limited|MCPToolError: rate limited|X|true|true"
	if v.String() != want {
		t.Errorf("got  %s\nwant %s", v, want)
	}
}
