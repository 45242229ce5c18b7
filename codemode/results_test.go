package codemode

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/sandboxrt/sandbox/runtime"
)

func TestJSONAt(t *testing.T) {
	doc := []byte(`{"items": [{"name": "a", "tags": ["x", "y"]}, {"name": "b/c"}], "a/b": {"~k": 1}, "n": 3}`)
	for path, want := range map[string]string{
		"":              string(doc),
		"n":             "3",
		"items.1.name":  `"b/c"`,
		"/items/0/tags": `["x", "y"]`,
		"/a~1b/~0k":     "1",
	} {
		got, err := jsonAt(doc, path)
		if err != nil || string(got) != want {
			t.Errorf("%q: %s, %v; want %s", path, got, err, want)
		}
	}
	for path, want := range map[string]string{
		"items.9":  "index 9 is past the end of the array at items (2 items)",
		"items.x":  "items is an array: the step \"x\" must be an index",
		"nope":     `no key "nope" at the top`,
		"n.deeper": "n is neither an object nor an array",
	} {
		if _, err := jsonAt(doc, path); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", path, err, want)
		}
	}
}

// bigServer has a tool whose result is about size bytes of JSON.
func bigServer(size int) *server.MCPServer {
	srv := server.NewMCPServer("big", "1")
	srv.AddTool(mcp.NewTool("export_all", mcp.WithDescription("Export everything.")), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var items []string
		for i := 0; len(items)*60 < size; i++ {
			items = append(items, fmt.Sprintf(`{"id": %d, "name": "item number %d", "pad": "%s"}`, i, i, strings.Repeat("p", 20)))
		}
		return mcp.NewToolResultText(fmt.Sprintf(`{"count": %d, "items": [%s]}`, len(items), strings.Join(items, ","))), nil
	})
	return srv
}

func TestBigResultsArriveAsHandles(t *testing.T) {
	t.Parallel()
	e := newEngineWith(t, map[string]*server.MCPServer{"big": bigServer(6 << 20)}, runtime.Options{Isolation: runtime.IsolateWorkers, Workers: 1})
	limits := runtime.Limits{MemoryBytes: 16 << 20} // a 4 MiB budget of tool results
	res := execute(t, e, ExecuteRequest{Caller: caller("alice", "s1"), Limits: limits, Code: `
		const r: any = await big.exportAll({});
		const count = await sandbox.results.json(r.handle, "count");
		const second = await sandbox.results.json(r.handle, "items.1");
		const head = await sandbox.results.read(r.handle, { offset: 0, length: 10 });
		const items: any = await sandbox.results.json(r.handle, "/items");
		return { keys: Object.keys(r), big: r.bytes > 6000000, preview: r.preview.slice(0, 10), count, second, head, itemsIsHandle: typeof items.handle, handle: r.handle }`})
	if !res.OK {
		t.Fatalf("%+v", res.Error)
	}
	got := string(res.Value)
	for _, want := range []string{`"keys":["handle","bytes","preview","tool","note"]`, `"big":true`, `"preview":"{\"count\": "`,
		`"second":{"id":1,"name":"item number 1"`, `"head":"{\"count\": "`, `"itemsIsHandle":"string"`} {
		if !strings.Contains(got, want) {
			t.Errorf("value lacks %s:\n%.600s", want, got)
		}
	}
	if !strings.Contains(got, `"count":`) || strings.Contains(got, `"count":null`) {
		t.Errorf("count: %.300s", got)
	}
	// Another principal cannot read it, whatever the handle.
	handle := got[strings.Index(got, `"handle":"`)+10:]
	handle = handle[:strings.IndexByte(handle, '"')]
	res = execute(t, e, ExecuteRequest{Caller: caller("mallory", "s1"), Code: fmt.Sprintf(`
		try { await sandbox.results.read(%q); return "read" } catch (e: any) { return e.code + ": " + e.message }`, handle)})
	if !res.OK || !strings.Contains(string(res.Value), "VALIDATION_FAILED: sandbox.results.read: no result") {
		t.Errorf("another principal's read: %s %+v", res.Value, res.Error)
	}
	// The same caller can in a later run, within that run's budget.
	res = execute(t, e, ExecuteRequest{Caller: caller("alice", "s2"), Limits: limits, Code: fmt.Sprintf(`return await sandbox.results.json(%q, "items.2.id")`, handle)})
	if !res.OK || string(res.Value) != "2" {
		t.Errorf("a later run: %s %+v", res.Value, res.Error)
	}
}
