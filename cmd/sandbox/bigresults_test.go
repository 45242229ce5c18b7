package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/sandboxrt/sandbox/internal/testpeers"
)

// bigServerEnv makes the test binary a stdio MCP server whose one tool
// answers with a result of any size, as server-filesystem answers a file
// read as text: the JSON text of {"count", "items"} in a text block and
// again in structuredContent {"content"}, with "jsonrpc" and "id" last, as
// the TypeScript SDK writes them. The answer is written as it is made,
// never held: a 300 MB result costs the server nothing.
const bigServerEnv = "SANDBOX_TEST_BIGSERVER"

// serveBigResultsIfAsked is called first thing in TestMain.
func serveBigResultsIfAsked() {
	if os.Getenv(bigServerEnv) == "" {
		return
	}
	in := bufio.NewReader(os.Stdin)
	out := bufio.NewWriterSize(os.Stdout, 256<<10)
	reply := func(id json.RawMessage, result string) {
		fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", id, result)
		out.Flush()
	}
	for {
		line, err := in.ReadBytes('\n')
		if err != nil {
			os.Exit(0)
		}
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Arguments struct {
					Items int `json:"items"`
				} `json:"arguments"`
			} `json:"params"`
		}
		if json.Unmarshal(line, &req) != nil || req.ID == nil {
			continue
		}
		switch req.Method {
		case "initialize":
			reply(req.ID, `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"big","version":"1"}}`)
		case "tools/list":
			reply(req.ID, `{"tools":[{"name":"export_items","description":"Export the items as JSON text.","inputSchema":{"type":"object","properties":{"items":{"type":"integer"}},"required":["items"]}}]}`)
		case "tools/call":
			n := req.Params.Arguments.Items
			out.WriteString(`{"result":{"content":[{"type":"text","text":"`)
			writeBigItems(out, n)
			out.WriteString(`"}],"structuredContent":{"content":"`)
			writeBigItems(out, n)
			fmt.Fprintf(out, `"}},"jsonrpc":"2.0","id":%s}`+"\n", req.ID)
			out.Flush()
		case "ping":
			reply(req.ID, `{}`)
		default: // server/discover included: a 2025 server
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`+"\n", req.ID)
			out.Flush()
		}
	}
}

// bigItem is one item of the big server's export, as JSON inside a JSON
// string (quotes escaped), its pad making every item 100 bytes.
const bigItem = `{\"id\":%d,\"name\":\"item %09d\",\"pad\":\"%s\"}`

var bigPad = strings.Repeat("p", 46)

// bigItemBytes is the size of one item in the escaped text, with its comma.
var bigItemBytes = len(fmt.Sprintf(bigItem, 0, 0, bigPad[1:])) + 1

// writeBigItems writes {"count": n, "items": [...]} as escaped JSON text
// (bigItem each, built without fmt: the server must not be what a
// benchmark of serve measures).
func writeBigItems(w *bufio.Writer, n int) {
	fmt.Fprintf(w, `{\"count\":%d,\"items\":[`, n)
	var b []byte
	for i := range n {
		b = b[:0]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{\"id\":`...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, `,\"name\":\"item `...)
		digits := len(b)
		b = strconv.AppendInt(b, int64(i), 10)
		pad := 9 - (len(b) - digits)
		b = append(b[:digits], "000000000"[:max(pad, 0)]...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, `\",\"pad\":\"`...)
		b = append(b, bigPad[len(strconv.Itoa(i)):]...)
		b = append(b, `\"}`...)
		w.Write(b)
	}
	w.WriteString(`]}`)
}

// bigServerConfig is an mcp.json server entry running the big server.
func bigServerConfig(t testing.TB) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf(`{"command": %q, "env": {%q: "1"}}`, exe, bigServerEnv)
}

// writeBigJSONFile writes a one-line JSON file of about size bytes:
// {"count": n, "items": [{"id": 0, "name": ..., "tags": [...]}, ...]}.
func writeBigJSONFile(t testing.TB, path string, size int) int {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	const item = `{"id":%d,"name":"item %d","tags":["alpha","beta"],"done":false,"pad":"%s"}`
	pad := strings.Repeat("q", 40)
	n := size / (len(fmt.Sprintf(item, 1000000, 1000000, pad)) + 1)
	fmt.Fprintf(w, `{"count":%d,"items":[`, n)
	for i := range n {
		if i > 0 {
			w.WriteByte(',')
		}
		fmt.Fprintf(w, item, i, i, pad)
	}
	w.WriteString("]}")
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return n
}

// serveWithPID starts `sandbox serve --http` on config with args, and
// returns the /mcp URL and serve's process id (to read its memory).
func serveWithPID(t testing.TB, config string, args ...string) (string, int) {
	t.Helper()
	// Runs may take minutes: a 300 MB result is a few seconds of disk.
	cmd := exec.Command(sandboxBinary(t), append([]string{"serve", "-c", writeConfig(t, config), "--http", "127.0.0.1:0", "--log-level", "warn", "--max-timeout", "3m"}, args...)...)
	url := startLogged(t, cmd, listening)
	return url, cmd.Process.Pid
}

// runCode runs execute_code and decodes the snippet's value into v; it
// returns the report's text when the run failed.
func runCode(t testing.TB, c *client.Client, code string, v any) string {
	t.Helper()
	failed, _ := runCodeCalls(t, c, code, v)
	return failed
}

// runCall is one tool call of a run as execute_code reports it.
type runCall struct {
	Tool string  `json:"tool"`
	Ms   float64 `json:"ms"`
}

// runCodeCalls is runCode, with the run's calls.
func runCodeCalls(t testing.TB, c *client.Client, code string, v any) (string, []runCall) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	res, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "execute_code",
		Arguments: map[string]any{"code": code, "limits": map[string]any{"timeoutMs": 120000}}}})
	if err != nil {
		t.Fatal(err)
	}
	var report struct {
		OK    bool            `json:"ok"`
		Value json.RawMessage `json:"value"`
		Calls []runCall       `json:"calls"`
	}
	if err := json.Unmarshal([]byte(toolText(res)), &report); err != nil {
		t.Fatalf("execute_code's report: %v: %.500s", err, toolText(res))
	}
	if !report.OK {
		return toolText(res), report.Calls
	}
	if err := json.Unmarshal(report.Value, v); err != nil {
		t.Fatalf("the snippet's value: %v: %.500s", err, report.Value)
	}
	return "", report.Calls
}

// serveRSSBudget is the most serve's peak RSS may reach while it spills a
// big result: twice its request budget (--request-budget-mb, 64 MiB by
// default; docs/codemode.md).
const serveRSSBudget = 2 * 64 << 20

// TestServeReadsA38MBJSONFileAsAHandle is issue 26's case through the real
// `sandbox serve`: a 38 MB one-line JSON file read through server-filesystem
// at the default caps. The server sends its text twice (content and
// structuredContent, 88 MB on one line); the run receives a handle to it,
// counted once, and reaches into the JSON the text holds.
func TestServeReadsA38MBJSONFileAsAHandle(t *testing.T) {
	if testing.Short() {
		t.Skip("runs server-filesystem with a 38 MB file")
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "export.json")
	n := writeBigJSONFile(t, file, 38_000_000)
	node := testpeers.Node(t)
	script := filepath.Join(testpeers.Package(t, "@modelcontextprotocol/server-filesystem"), "dist", "index.js")
	url, pid := serveWithPID(t, fmt.Sprintf(`{"mcpServers": {"files": {"command": %q, "args": [%q, %q]}}}`, node, script, dir))
	c := keylessClient(t, url)
	var got struct {
		Keys  []string
		Bytes int64
		Note  string
		First struct{ ID int }
		Last  struct{ ID int }
		Count int
		Lines string
	}
	t0 := time.Now()
	if failed := runCode(t, c, fmt.Sprintf(`
		const r: any = await files.readTextFile({ path: %q });
		const count = await sandbox.results.json(r.handle, "content.count");
		const first = await sandbox.results.json(r.handle, "content.items.0");
		const last = await sandbox.results.json(r.handle, "content.items." + (count - 1));
		const lines = await sandbox.results.lines(r.handle, { path: "content" }).catch((e: any) => e.code);
		return { keys: Object.keys(r), bytes: r.bytes, note: r.note, first, last, count, lines }`, file), &got); failed != "" {
		t.Fatalf("the run failed: %.1000s", failed)
	}
	t.Logf("38 MB file through server-filesystem: a handle to %d bytes in %v; serve's peak RSS %d MiB", got.Bytes, time.Since(t0).Round(time.Millisecond), statusKB(t, pid, "VmHWM")>>10)
	if fmt.Sprint(got.Keys) != "[handle bytes preview tool note]" || got.Count != n || got.First.ID != 0 || got.Last.ID != n-1 || got.Lines != "RESULT_TOO_LARGE" {
		t.Errorf("%+v", got)
	}
	// Counted once: the file's text as a JSON string (its quotes escaped)
	// in {"content": ...}, not the 88 MB the server sent.
	if got.Bytes < 38_000_000 || got.Bytes > 50_000_000 {
		t.Errorf("the handle counts %d bytes", got.Bytes)
	}
	if !strings.Contains(got.Note, `sandbox.results.json(handle, "content.count")`) {
		t.Errorf("note: %s", got.Note)
	}
	if peak := statusKB(t, pid, "VmHWM") << 10; peak > serveRSSBudget {
		t.Errorf("serve's peak RSS %d MiB is over twice its request budget (%d MiB)", peak>>20, serveRSSBudget>>20)
	}
}

// TestServeRefusesA300MBResultAtTheCeiling reads 300 MB one-line JSON
// files through `sandbox serve`.
//
// Through server-filesystem, the file cannot come back at all: the server
// would send its text twice in one JSON line of about 700 MB, over V8's
// longest string (2^29 - 24 characters); its JSON.stringify throws, it logs
// "Failed to send response" and never answers. serve is not hurt: the call
// ends at its timeout, and serve answers the next at once.
//
// Through a server that can send it (the same answer shape, streamed), a
// result of 300 MB is over the default ceiling (maxSpilledResultBytes, 256
// MiB) and is refused with the real maximum, serve holding none of it; with
// the ceiling raised to 512 MiB it reaches the snippet as a handle, and
// serve's peak RSS stays under twice its request budget throughout.
func TestServeRefusesA300MBResultAtTheCeiling(t *testing.T) {
	if testing.Short() {
		t.Skip("moves 300 MB results")
	}
	t.Run("server-filesystem cannot send it", func(t *testing.T) {
		dir := t.TempDir()
		file := filepath.Join(dir, "export.json")
		writeBigJSONFile(t, file, 300_000_000)
		node := testpeers.Node(t)
		script := filepath.Join(testpeers.Package(t, "@modelcontextprotocol/server-filesystem"), "dist", "index.js")
		url, pid := serveWithPID(t, fmt.Sprintf(`{"mcpServers": {"files": {"command": %q, "args": [%q, %q], "timeout": "20s"}}}`, node, script, dir))
		c := keylessClient(t, url)
		var got string
		t0 := time.Now()
		if failed := runCode(t, c, fmt.Sprintf(`
			try { await files.readTextFile({ path: %q }); return "answered" } catch (e: any) { return e.code + ": " + e.message }`, file), &got); failed != "" {
			t.Fatalf("the run failed: %.1000s", failed)
		}
		t.Logf("300 MB file through server-filesystem: %q after %v", got, time.Since(t0).Round(time.Millisecond))
		if !strings.HasPrefix(got, "TIMEOUT: ") {
			t.Errorf("got %q, want the call's TIMEOUT (server-filesystem never answers)", got)
		}
		var small int
		if failed := runCode(t, c, `return (await files.listAllowedDirectories({})) ? 1 : 0`, &small); failed != "" || small != 1 {
			t.Errorf("serve's next call: %.500s", failed)
		}
		if peak := statusKB(t, pid, "VmHWM") << 10; peak > serveRSSBudget {
			t.Errorf("serve's peak RSS %d MiB is over %d MiB", peak>>20, serveRSSBudget>>20)
		}
	})
	items := 300_000_000 / bigItemBytes
	call := fmt.Sprintf(`const r: any = await big.exportItems({ items: %d });`, items)
	t.Run("over the ceiling it is refused with the real maximum", func(t *testing.T) {
		url, pid := serveWithPID(t, `{"mcpServers": {"big": `+bigServerConfig(t)+`}}`)
		c := keylessClient(t, url)
		var got string
		if failed := runCode(t, c, `try { `+call+` return "answered" } catch (e: any) { return e.code + ": " + e.message }`, &got); failed != "" {
			t.Fatalf("the run failed: %.1000s", failed)
		}
		if !strings.HasPrefix(got, "RESULT_TOO_LARGE: ") || !strings.Contains(got, "256.0 MiB (268435456 bytes), the most one tool call can return here") {
			t.Errorf("got %q", got)
		}
		if peak := statusKB(t, pid, "VmHWM") << 10; peak > serveRSSBudget {
			t.Errorf("serve's peak RSS %d MiB is over %d MiB", peak>>20, serveRSSBudget>>20)
		}
	})
	t.Run("under a raised ceiling it is a handle", func(t *testing.T) {
		dataDir := t.TempDir()
		url, pid := serveWithPID(t, `{"mcpServers": {"big": `+bigServerConfig(t)+`}, "gateway": {"maxSpilledResultBytes": 536870912},
			"codeMode": {"dataDir": `+strconv.Quote(dataDir)+`}}`)
		c := keylessClient(t, url)
		var got struct {
			Bytes int64
			Last  struct{ ID int }
		}
		t0 := time.Now()
		if failed := runCode(t, c, call+`
			const last = await sandbox.results.json(r.handle, "content.items.`+strconv.Itoa(items-1)+`");
			return { bytes: r.bytes, last }`, &got); failed != "" {
			t.Fatalf("the run failed: %.1000s", failed)
		}
		t.Logf("a 300 MB result as a handle: %v; serve's peak RSS %d MiB", time.Since(t0).Round(time.Millisecond), statusKB(t, pid, "VmHWM")>>10)
		if got.Bytes < 299_000_000 || got.Last.ID != items-1 {
			t.Errorf("%+v", got)
		}
		if peak := statusKB(t, pid, "VmHWM") << 10; peak > serveRSSBudget {
			t.Errorf("serve's peak RSS %d MiB is over %d MiB", peak>>20, serveRSSBudget>>20)
		}
		// The answer staged on its way is gone; the result is in the store.
		if spill, _ := filepath.Glob(filepath.Join(dataDir, "sandbox-spill-*", "[^.]*")); len(spill) != 0 { // .owner is the folder's lock
			t.Errorf("staged files left: %v", spill)
		}
		if held, _ := filepath.Glob(filepath.Join(dataDir, "results", "res_*")); len(held) != 1 {
			t.Errorf("the store holds %v", held)
		}
	})
}

// BenchmarkSpillServe measures `sandbox serve` (its own process, the
// default --request-budget-mb of 64) receiving a result of 256 MiB counted
// once (the server sends it twice, as server-filesystem does: a 512 MiB
// line) and handing it to a snippet as a handle, whose last item the
// snippet then reads by path (a walk through the whole result). Reported:
// the time of the run, of the tool call (the server writing 512 MiB, serve
// staging it, keeping the value and storing it) and of the path to the
// last item, and serve's peak RSS, whose target is under twice the request
// budget (128 MiB).
func BenchmarkSpillServe(b *testing.B) {
	items := (256<<20 - 64) / bigItemBytes
	url, pid := serveWithPID(b, `{"mcpServers": {"big": `+bigServerConfig(b)+`}, "codeMode": {"dataDir": `+strconv.Quote(b.TempDir())+`}}`)
	c := httpClient(b, url, nil)
	code := fmt.Sprintf(`const r: any = await big.exportItems({ items: %d });
		const last = await sandbox.results.json(r.handle, "content.items.%d");
		return { bytes: r.bytes, last }`, items, items-1)
	var spillMs, walkMs float64
	for b.Loop() {
		var got struct {
			Bytes int64
			Last  struct{ ID int }
		}
		failed, calls := runCodeCalls(b, c, code, &got)
		if failed != "" {
			b.Fatalf("the run failed: %.1000s", failed)
		}
		if got.Bytes < 255<<20 || got.Bytes > 256<<20 || got.Last.ID != items-1 || len(calls) != 2 {
			b.Fatalf("%+v %+v", got, calls)
		}
		spillMs += calls[0].Ms
		walkMs += calls[1].Ms
	}
	b.ReportMetric(spillMs/float64(b.N), "ms-call/op")
	b.ReportMetric(walkMs/float64(b.N), "ms-path-to-last/op")
	b.ReportMetric(float64(statusKB(b, pid, "VmHWM"))/1024, "MiB-peak-rss")
	b.ReportMetric(float64(serveRSSBudget>>20), "MiB-target")
}

// TestReplicasShareBigResults: with Redis, a handle one replica made of a
// spilled result is read on another, and another principal's handle is
// nobody's there either.
func TestReplicasShareBigResults(t *testing.T) {
	if testing.Short() {
		t.Skip("starts redis-server and two replicas")
	}
	srv := startSharedRedis(t)
	cfg := fmt.Sprintf(`{"mcpServers": {"big": %s},
  "gateway": {"redis": {"url": %q, "encryptionKey": "${SANDBOX_REDIS_KEY}", "keyPrefix": "big:"},
    "auth": {"apiKeys": [{"name": "agent-a", "key": "${SANDBOX_TEST_AGENT_KEY}"}, {"name": "agent-b", "key": "agent-b-secret-0123456789abcdef"}]}}}`,
		bigServerConfig(t), srv.URL())
	a := keyClient(t, serveHTTP(t, cfg), agentKey)
	otherReplica := serveHTTP(t, cfg)
	b := keyClient(t, otherReplica, agentKey)
	// 50,000 items: 5 MB counted once, over a 16 MiB run's budget of 4 MiB.
	var made struct{ Handle string }
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := a.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "execute_code", Arguments: map[string]any{
		"code":   `const r: any = await big.exportItems({ items: 50000 }); return { handle: r.handle }`,
		"limits": map[string]any{"memoryMB": 16}}}})
	if err != nil {
		t.Fatal(err)
	}
	var report struct {
		OK    bool
		Value json.RawMessage
	}
	if json.Unmarshal([]byte(toolText(res)), &report); !report.OK || json.Unmarshal(report.Value, &made) != nil || !strings.HasPrefix(made.Handle, "res_") {
		t.Fatalf("replica 1: %.500s", toolText(res))
	}
	var id int
	if failed := runCode(t, b, fmt.Sprintf(`return await sandbox.results.json(%q, "content.items.49999.id")`, made.Handle), &id); failed != "" || id != 49999 {
		t.Fatalf("replica 2: %d %.500s", id, failed)
	}
	other := keyClient(t, otherReplica, "agent-b-secret-0123456789abcdef")
	var refused string
	if failed := runCode(t, other, fmt.Sprintf(`try { await sandbox.results.read(%q); return "read" } catch (e: any) { return e.code }`, made.Handle), &refused); failed != "" || refused != "VALIDATION_FAILED" {
		t.Fatalf("another principal: %q %.500s", refused, failed)
	}
}
