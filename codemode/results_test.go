package codemode

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/gateway"
	"github.com/sandboxrt/sandbox/runtime"
)

// jsonAt is the JSON text of the value at path in data, as
// sandbox.results.json finds it.
func jsonAt(data []byte, path string) ([]byte, error) {
	read := func(textAtEnd bool) ([]byte, bool, error) {
		p, err := walk(bytes.NewReader(data), parsePath(path), textAtEnd)
		if err != nil {
			return nil, false, err
		}
		src, closer, err := p.open(func(off int64) (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data[off:])), nil }, false)
		if err != nil {
			return nil, false, err
		}
		defer closer.Close()
		b, err := io.ReadAll(src)
		return b, p.entered, err
	}
	b, entered, err := read(false)
	if err == nil && entered && !json.Valid(b) {
		b, _, err = read(true)
	}
	return b, err
}

func TestJSONAt(t *testing.T) {
	doc := []byte(`{"items": [{"name": "a", "tags": ["x", "y"]}, {"name": "b/c"}], "a/b": {"~k": 1}, "n": 3,
		"file": "{\"rows\": [{\"id\": 1}, {\"id\": 2, \"note\": \"{\\\"deep\\\": true}\"}]}\n",
		"notjson": "{} and then words", "text": "hello", "broken": "[1, tru]"}`)
	for path, want := range map[string]string{
		"":              string(doc),
		"n":             "3",
		"items.1.name":  `"b/c"`,
		"/items/0/tags": `["x", "y"]`,
		"/a~1b/~0k":     "1",
		// Text that holds JSON is walked into, and is that JSON at the end.
		"file.rows.1.id":    "2",
		"file.rows":         `[{"id": 1}, {"id": 2, "note": "{\"deep\": true}"}]`,
		"file":              `{"rows": [{"id": 1}, {"id": 2, "note": "{\"deep\": true}"}]}`,
		"file.rows.1.note":  `{"deep": true}`,
		"/file/rows/1/note": `{"deep": true}`,
		// Text that only starts like JSON is text.
		"notjson": `"{} and then words"`,
		"broken":  `"[1, tru]"`,
		"text":    `"hello"`,
	} {
		got, err := jsonAt(doc, path)
		if err != nil || string(got) != want {
			t.Errorf("%q: %s, %v; want %s", path, got, err, want)
		}
	}
	for path, want := range map[string]string{
		"items.9":     "index 9 is past the end of the array at items (2 items)",
		"items.x":     "items is an array: the step \"x\" must be an index",
		"nope":        `no key "nope" at the top (its keys: "items", "a/b", "n", "file", "notjson", "text", "broken")`,
		"n.deeper":    "n is neither an object nor an array",
		"text.x":      `text is text, not JSON: the path cannot go on to "x"`,
		"file.rows.7": "index 7 is past the end of the array at file.rows (2 items)",
	} {
		_, err := jsonAt(doc, path)
		var ask *askError
		if !errors.As(err, &ask) || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", path, err, want)
		}
	}
	if _, err := jsonAt([]byte(`{"a": [1, 2`), "a.5"); err == nil || !strings.Contains(err.Error(), "not valid JSON where the path goes") {
		t.Errorf("broken JSON: %v", err)
	}
}

func TestExamplePathGoesThroughTextHoldingJSON(t *testing.T) {
	for preview, want := range map[string]string{
		`{"content":"{\"items\":[{\"id\":0,\"na`: "content.items.0",
		`[{"id": 1}, {"id": 2`:                   "0.id",
		`"{\"rows\": [`:                          "rows",
		`"just text"`:                            "",
		`42`:                                     "",
	} {
		if got := examplePath([]byte(preview)); got != want {
			t.Errorf("%s: %q, want %q", preview, got, want)
		}
	}
}

// A held result read as text by bytes and by lines, through a path.
func TestResultsReadAsTextByBytesAndLines(t *testing.T) {
	t.Parallel()
	store, err := NewFileResultStore(t.TempDir(), ResultLimits{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	b := &resultBook{store: store}
	ctx := context.Background()
	var log strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&log, "line %d: é\r\n", i)
	}
	longLine := strings.Repeat("z", resultReadMax+10)
	doc, _ := json.Marshal(map[string]any{"log": log.String(), "long": "a\n" + longLine + "\nb", "obj": map[string]any{"k": "v"}})
	caller := auth.Caller{Principal: auth.Principal{ID: "alice"}}
	h, err := b.hold(ctx, caller.Principal.Key(), "logs:tail", int64(len(doc)), bytes.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	var handle struct{ Handle string }
	json.Unmarshal(h, &handle)
	held, ok, err := store.Get(ctx, caller.Principal.Key(), handle.Handle)
	if !ok || err != nil {
		t.Fatalf("not held: %v", err)
	}
	at := func(path string) part {
		p, err := b.locate(ctx, held, path, false)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	// A string's text, escapes undone, from any offset.
	if got, err := b.readText(ctx, held, at("log"), 0, 20); err != nil || got != "line 0: é\r\nline 1: " {
		t.Errorf("read log: %q %v", got, err)
	}
	if got, _ := b.readText(ctx, held, at("log"), int64(len(log.String())-7), 100); got != "9: é\r\n" {
		t.Errorf("read the log's end: %q", got)
	}
	if got, _ := b.readText(ctx, held, at("log"), int64(len(log.String())), 100); got != "" {
		t.Errorf("read past the end: %q", got)
	}
	// Other values' JSON text; the whole result's from its own bytes.
	if got, _ := b.readText(ctx, held, at("obj"), 0, 100); got != `{"k":"v"}` {
		t.Errorf("read obj: %q", got)
	}
	if got, _ := b.readText(ctx, held, at(""), 2, 3); got != `log` {
		t.Errorf("read the whole: %q", got)
	}
	// Lines, without their line ends, from any line; none past the end.
	lines, err := b.readLines(ctx, held, at("log"), 4998, 10)
	if err != nil || fmt.Sprint(lines) != "[line 4998: é line 4999: é]" {
		t.Errorf("lines: %q %v", lines, err)
	}
	if lines, err := b.readLines(ctx, held, at("log"), 5000, 10); err != nil || len(lines) != 0 {
		t.Errorf("lines past the end: %q %v", lines, err)
	}
	// A line longer than one answer: the lines before it, then an error
	// that says where it is.
	lines, err = b.readLines(ctx, held, at("long"), 0, 10)
	if err != nil || fmt.Sprint(lines) != "[a]" {
		t.Errorf("lines before a long one: %q %v", lines, err)
	}
	_, err = b.readLines(ctx, held, at("long"), 1, 10)
	var ask *askError
	if !errors.As(err, &ask) || !strings.Contains(err.Error(), "it starts at offset 2 and is 1048587 bytes") {
		t.Errorf("a long line: %v", err)
	}
	if lines, err := b.readLines(ctx, held, at("long"), 2, 10); err != nil || fmt.Sprint(lines) != "[b]" {
		t.Errorf("the line after a long one: %q %v", lines, err)
	}
}

// bigServer has a tool whose result is about size bytes of JSON.
func bigServer(size int) *server.MCPServer {
	srv := server.NewMCPServer("big", "1")
	srv.AddTool(mcp.NewTool("export_all", mcp.WithDescription("Export everything.")), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText(bigJSON(size)), nil
	})
	srv.AddTool(mcp.NewTool("read_file", mcp.WithDescription("Read a file as text, as server-filesystem does: in content and again in structuredContent.")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			text := bigJSON(size)
			return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(text)}, StructuredContent: map[string]any{"content": text}}, nil
		})
	return srv
}

func bigJSON(size int) string {
	var items []string
	for i := 0; len(items)*60 < size; i++ {
		items = append(items, fmt.Sprintf(`{"id": %d, "name": "item number %d", "pad": "%s"}`, i, i, strings.Repeat("p", 20)))
	}
	return fmt.Sprintf(`{"count": %d, "items": [%s]}`, len(items), strings.Join(items, ","))
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

// A tool's refusal carries its content as the error's data: counted as a
// result is, so that a refusal longer than what is left of the run's budget
// comes without its data (saying so) and the snippet can catch it, rather
// than the run ending at its memory limit.
func TestAToolErrorsDataCountsAgainstTheBudget(t *testing.T) {
	t.Parallel()
	s := server.NewMCPServer("t", "1")
	s.AddTool(mcp.NewTool("fail", mcp.WithDescription("Fail at length.")), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultError(strings.Repeat("x", 12<<20)), nil
	})
	s.AddTool(mcp.NewTool("refuse", mcp.WithDescription("Fail briefly.")), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultError("no such project"), nil
	})
	e := newEngineWith(t, map[string]*server.MCPServer{"t": s}, runtime.Options{Isolation: runtime.IsolateWorkers, Workers: 1})
	res := execute(t, e, ExecuteRequest{Caller: caller("alice", "s1"), Limits: runtime.Limits{MemoryBytes: 32 << 20}, Code: `
		const out: any[] = [];
		for (const call of [() => t.fail({}), () => t.refuse({})]) {
			try { await call() } catch (e: any) { out.push({ code: e.code, message: e.message.slice(-80), data: e.data === undefined ? "none" : JSON.stringify(e.data).slice(0, 60) }) }
		}
		return out`})
	if !res.OK {
		t.Fatalf("%+v", res.Error)
	}
	var got []struct{ Code, Message, Data string }
	if err := json.Unmarshal(res.Value, &got); err != nil || len(got) != 2 {
		t.Fatalf("%s: %v", res.Value, err)
	}
	if got[0].Code != "TOOL_ERROR" || !strings.Contains(got[0].Message, "left out") || got[0].Data != "none" {
		t.Errorf("the long refusal: %+v", got[0])
	}
	if got[1].Code != "TOOL_ERROR" || got[1].Message != "no such project" || !strings.Contains(got[1].Data, "no such project") {
		t.Errorf("the short refusal: %+v", got[1])
	}
}

// A result over the gateway's memory cap is spilled to a file, counted
// once, and reaches the snippet as a handle whose paths go into the text
// it holds; lines read it as text. The gateway's spill folder and the
// engine's store folder are the test's, to see that nothing is left.
func TestSpilledResultsArriveAsHandles(t *testing.T) {
	t.Parallel()
	settings := gateway.DefaultSettings()
	settings.MaxResultBytes = 1 << 20 // the 2 x 3 MB answer is spilled
	dataDir := t.TempDir()
	e := newEngineFull(t, map[string]*server.MCPServer{"files": bigServer(3 << 20)}, settings, runtime.Options{Isolation: runtime.IsolateWorkers, Workers: 1},
		Options{DataDir: dataDir})
	res := execute(t, e, ExecuteRequest{Caller: caller("alice", "s1"), Limits: runtime.Limits{MemoryBytes: 16 << 20}, Code: `
		const r: any = await files.readFile({});
		const first = await sandbox.results.json(r.handle, "content.items.0");
		const count = await sandbox.results.json(r.handle, "content.count");
		// A one-line file has one line too long for an answer: where it is.
		const lines = await sandbox.results.lines(r.handle, { path: "content", count: 5 }).catch((e: any) => e.code + ": " + e.message);
		const text = await sandbox.results.read(r.handle, { path: "content", offset: 0, length: 12 });
		return { bytes: r.bytes, note: r.note, first, count, lines, text }`})
	if !res.OK {
		t.Fatalf("%+v", res.Error)
	}
	var got struct {
		Bytes int64
		Note  string
		First map[string]any
		Count int
		Lines string
		Text  string
	}
	if err := json.Unmarshal(res.Value, &got); err != nil {
		t.Fatal(err)
	}
	// Counted once: about 4.4 MB of text (3 MB escaped), not the 8.8 MB answer.
	if got.Bytes < 3<<20 || got.Bytes > 5<<20 || got.First["id"] != float64(0) || got.Count < 50000 || !strings.HasPrefix(got.Lines, "RESULT_TOO_LARGE: sandbox.results.lines: line 0 is longer") || got.Text != `{"count": 52` {
		t.Errorf("%+v", got)
	}
	if !strings.Contains(got.Note, `sandbox.results.json(handle, "content.count")`) {
		t.Errorf("the note does not show a path into the text: %s", got.Note)
	}
	if left, _ := os.ReadDir(dataDir + "/results"); len(left) != 1 {
		t.Errorf("the store holds %d files, want the one result", len(left))
	}
}

// BenchmarkWalkIntoText walks to the last item of a 32 MB array held as
// text in a string, as a path into a file read through server-filesystem
// does: the speed of sandbox.results.json on a big handle.
func BenchmarkWalkIntoText(b *testing.B) {
	inner := bigJSON(32 << 20)
	doc, _ := json.Marshal(map[string]string{"content": inner})
	var count struct{ Count int }
	json.Unmarshal([]byte(inner), &count)
	path := fmt.Sprintf("content.items.%d.id", count.Count-1)
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		got, err := jsonAt(doc, path)
		if err != nil || string(got) != fmt.Sprint(count.Count-1) {
			b.Fatalf("%s %v", got, err)
		}
	}
}
