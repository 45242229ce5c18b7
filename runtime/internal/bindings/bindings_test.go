package bindings

import (
	"strings"
	"testing"

	"github.com/dop251/goja"
)

func noInvoke(Target, goja.Value) goja.Value { return goja.Undefined() }

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

func TestStubsCallInvokeWithTheirTarget(t *testing.T) {
	vm := goja.New()
	var got []Target
	invoke := func(target Target, args goja.Value) goja.Value {
		got = append(got, target)
		return vm.ToValue("sent " + args.ToObject(vm).Get("q").String())
	}
	in, err := Prepare(vm)
	if err != nil {
		t.Fatal(err)
	}
	if err := InstallServices(vm, []string{"store"}, invoke); err != nil {
		t.Fatal(err)
	}
	if err := in.Bind([]Tool{{ID: "search:web_search", Namespace: "search", Function: "webSearch"}, {Namespace: "gh"}}, invoke); err != nil {
		t.Fatal(err)
	}
	v, err := vm.RunString(`[search.webSearch({ q: "goja" }), search.webSearch.name, typeof search.other, Object.isFrozen(search),
		gh.listCommits({ q: "x" }), sandbox.store.get("k", { q: "y" })]`)
	if err != nil {
		t.Fatal(err)
	}
	if s := v.String(); s != "sent goja,webSearch,function,true,sent x,sent y" {
		t.Errorf("got %s", s)
	}
	// Each stub says what it is: nothing is told apart by its name later.
	want := []struct {
		target       Target
		str, written string
	}{
		{Target{Kind: KindTool, ID: "search:web_search", Namespace: "search", Function: "webSearch"}, "search:web_search", "search.webSearch"},
		{Target{Kind: KindMember, Namespace: "gh", Function: "listCommits"}, "gh.listCommits", "gh.listCommits"},
		{Target{Kind: KindService, Namespace: "store", Function: "get"}, "sandbox:store.get", "sandbox.store.get"},
	}
	if len(got) != len(want) {
		t.Fatalf("invoke saw %+v", got)
	}
	for i, w := range want {
		if got[i] != w.target || got[i].String() != w.str || got[i].Written() != w.written {
			t.Errorf("call %d: %+v (%q, %q), want %+v (%q, %q)", i, got[i], got[i].String(), got[i].Written(), w.target, w.str, w.written)
		}
	}
	if s := (Target{Kind: 99, ID: "x:y"}).String(); s != "" {
		t.Errorf("a kind String does not know is %q, want empty", s)
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
