package codemode

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/examples/mcpserver"
	"github.com/sandboxrt/sandbox/gateway"
	"github.com/sandboxrt/sandbox/gateway/toolspec"
	"github.com/sandboxrt/sandbox/runtime"
)

const countProjects = `
const projects: any = await demo.listProjects({ status: input.status });
console.log("counted", projects.length);
await sandbox.store.set("last_count", projects.length, { scope: "principal" });
return { status: input.status, count: projects.length };`

func TestSavedScripts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// One worker: the snippet holds it while its scripts run, on extra ones.
	e := newEngineWith(t, map[string]*server.MCPServer{"demo": mcpserver.New()}, runtime.Options{Isolation: runtime.IsolateWorkers, Workers: 1})
	e.scripts, _ = OpenScripts(dir)
	alice, bob := caller("alice", "s1"), caller("bob", "s1")
	ctx := context.Background()
	schema := json.RawMessage(`{"type": "object", "properties": {"status": {"type": "string", "enum": ["active", "archived"]}}, "required": ["status"]}`)
	if err := e.SaveScript(ctx, alice, Script{Name: "count_projects", Description: "Count the projects in a status and remember the count.", Code: countProjects, InputSchema: schema}); err != nil {
		t.Fatal(err)
	}
	run := func(c auth.Caller, code string) *ExecuteResult {
		t.Helper()
		return execute(t, e, ExecuteRequest{Code: code, Caller: c})
	}
	res := run(alice, `const [a, b, c] = await Promise.all([scripts.countProjects({ status: "active" }), scripts.countProjects({ status: "archived" }), scripts.countProjects({ status: "active" })]);
		return [a, b.status, c.count === a.count, await sandbox.store.get("last_count", { scope: "principal" }) !== null]`)
	if !res.OK {
		t.Fatalf("%+v", res.Error)
	}
	if got := string(res.Value); !strings.HasPrefix(got, `[{"status":"active","count":`) || !strings.HasSuffix(got, `"archived",true,true]`) {
		t.Errorf("value %s", got)
	}
	for _, bad := range []struct{ code, want string }{
		{`return await scripts.countProjects({ status: "lost" })`, "VALIDATION_FAILED"},
		{`return await scripts.nothing({})`, "there is no saved script scripts.nothing; you have scripts.countProjects"},
	} {
		res := run(alice, `try { `+bad.code+` } catch (e: any) { return e.code + " " + e.message }`)
		if !res.OK || !strings.Contains(string(res.Value), bad.want) {
			t.Errorf("%s: %s %+v", bad.code, res.Value, res.Error)
		}
	}
	// Bob does not see Alice's script until the operator shares it.
	res = run(bob, `try { return await scripts.countProjects({ status: "active" }) } catch (e: any) { return e.code + " " + e.message }`)
	if !res.OK || !strings.Contains(string(res.Value), "UNKNOWN_TOOL there is no saved script scripts.countProjects; save one") {
		t.Errorf("bob: %s %+v", res.Value, res.Error)
	}
	if err := e.scripts.Share(context.Background(), "alice", "count_projects", true); err != nil {
		t.Fatal(err)
	}
	res = run(bob, `return (await scripts.countProjects({ status: "active" })).status`)
	if !res.OK || string(res.Value) != `"active"` {
		t.Errorf("bob after sharing: %s %+v", res.Value, res.Error)
	}

	// The script's console lines show in the caller's output; its calls
	// count against the caller's budget (1 script call + 2 calls inside it).
	if len(res.Logs) != 1 || !strings.HasPrefix(res.Logs[0].Message, "[scripts.countProjects] counted ") {
		t.Errorf("the scripts' console lines in the caller's logs: %+v", res.Logs)
	}
	res = execute(t, e, ExecuteRequest{Caller: alice, Limits: runtime.Limits{ToolCalls: 4}, Code: `
		await scripts.countProjects({ status: "active" });
		try { await demo.listProjects({}); await demo.listProjects({}); return "not stopped" } catch (e: any) { return e.code }`})
	if !res.OK || string(res.Value) != `"LIMIT_TOOL_CALLS"` {
		t.Errorf("the calls a script made did not count against the caller's limit: %s %+v", res.Value, res.Error)
	}

	// search_tools finds the script by its description, declared with its
	// input and the result type learned from its calls.
	found, err := e.Search(ctx, SearchRequest{Intent: "count projects by status", Caller: alice, K: 3})
	if err != nil {
		t.Fatal(err)
	}
	if found.Tools[0].Call != "scripts.countProjects" || !strings.Contains(found.Declarations, `function countProjects(input: { status: "active" | "archived" })`) ||
		!strings.Contains(found.Declarations, "@inferred from") || !strings.Contains(found.Declarations, "count: number") {
		t.Errorf("search: %+v\n%s", found.Tools, found.Declarations)
	}

	// Saving checks the name, the description and that the code compiles.
	for _, bad := range []struct {
		s    Script
		want string
	}{
		{Script{Name: "Bad Name", Description: "x", Code: "return 1"}, "use 1 to 63 lower-case letters"},
		{Script{Name: "ok", Description: " ", Code: "return 1"}, "description is empty"},
		{Script{Name: "ok", Description: "x", Code: "return 1 +\n\n  )"}, "the code does not compile"},
		{Script{Name: "ok", Description: "x", Code: "return 1", InputSchema: json.RawMessage(`{"type": "string"}`)}, "inputSchema must describe an object"},
	} {
		if err := e.SaveScript(ctx, alice, bad.s); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%+v: %v, want %q", bad.s, err, bad.want)
		}
	}

	// A script that calls itself stops at the depth bound; a failing one
	// says where it failed.
	if err := e.SaveScript(ctx, alice, Script{Name: "forever", Description: "Calls itself.", Code: "return await scripts.forever({})"}); err != nil {
		t.Fatal(err)
	}
	if err := e.SaveScript(ctx, alice, Script{Name: "broken", Description: "Throws.", Code: "const x = 1;\nthrow new RangeError('no ' + x)"}); err != nil {
		t.Fatal(err)
	}
	res = run(alice, `const out: string[] = [];
		for (const f of [() => scripts.forever({}), () => scripts.broken({})]) { try { await f(); } catch (e: any) { out.push(e.code + " " + e.message); } }
		return out`)
	if got := string(res.Value); !res.OK || !strings.Contains(got, "scripts call scripts at most 3 deep") || !strings.Contains(got, `SCRIPT_FAILED scripts.broken failed: broken.ts:2`) || !strings.Contains(got, "RangeError: no 1") {
		t.Errorf("failures: %s %+v", got, res.Error)
	}

	// Kept across restarts.
	again, err := OpenScripts(dir)
	if err != nil {
		t.Fatal(err)
	}
	if visible, _ := again.Visible(context.Background(), "alice"); len(visible) != 3 {
		n := len(visible)
		t.Errorf("%d scripts after reopening, want 3", n)
	}
}

// TestDeniedToolsAreNotSearched: a tool the policy always denies is not
// shown by search_tools, and a call from a snippet is DENIED.
func TestDeniedToolsAreNotSearched(t *testing.T) {
	t.Parallel()
	settings := gateway.DefaultSettings()
	settings.Policy = &gateway.Policy{Rules: []gateway.PolicyRule{{Tools: "demo:delete_*", Action: gateway.PolicyDeny}}}
	e := newEngineFull(t, map[string]*server.MCPServer{"demo": mcpserver.New()}, settings, runtime.Options{Isolation: runtime.InProcess}, Options{})
	ctx := context.Background()
	res, err := e.Search(ctx, SearchRequest{Intent: "delete a task", K: 50})
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range res.Tools {
		if strings.HasPrefix(tool.ID, "demo:delete_") {
			t.Errorf("search shows the denied %s", tool.ID)
		}
	}
	run := execute(t, e, ExecuteRequest{Code: `try { await demo.deleteTask({ task_id: "T-106" }) } catch (e: any) { return e.code + " " + e.message }`})
	if !run.OK || !strings.Contains(string(run.Value), `DENIED the gateway's policy denies demo:delete_task`) {
		t.Errorf("%s %+v", run.Value, run.Error)
	}
}

// BenchmarkSavedScriptCall: calling a saved script from a snippet beside
// running the same code inline, in the same run of the benchmark. A script
// call is a nested run on another worker, so the difference is that run's
// start (worker hand-over, transpile from cache, VM setup).
func BenchmarkSavedScriptCall(b *testing.B) {
	e := newEngineWith(b, map[string]*server.MCPServer{"demo": mcpserver.New()}, runtime.Options{Isolation: runtime.IsolateWorkers, Workers: 2})
	body := `const projects: any = await demo.listProjects({ status: input.status }); return projects.length`
	if err := e.SaveScript(context.Background(), caller("bench", "s"), Script{Name: "count", Description: "Count projects.", Code: body}); err != nil {
		b.Fatal(err)
	}
	cases := map[string]string{
		"inline": `const input = { status: "active" }; ` + body,
		"script": `return await scripts.count({ status: "active" })`,
	}
	per := map[string]float64{}
	for _, name := range []string{"inline", "script"} {
		b.Run(name, func(b *testing.B) {
			var total time.Duration
			for b.Loop() {
				res := execute(b, e, ExecuteRequest{Code: cases[name], Caller: caller("bench", "s")})
				if !res.OK {
					b.Fatal(res.Error)
				}
				total += res.Duration
			}
			per[name] = float64(total.Microseconds()) / float64(b.N)
			b.ReportMetric(per[name], "µs/run")
			if name == "script" {
				b.ReportMetric(per["script"]-per["inline"], "µs-overhead")
			}
		})
	}
}

// TestScriptChangesAreAnnounced: OnScriptsChanged hears each save with its
// owner, each delete, and a save by a principal who may call a shared
// script, with "" (every principal's list may have changed); a failed save
// or a delete of nothing is not news.
func TestScriptChangesAreAnnounced(t *testing.T) {
	t.Parallel()
	e := newEngineWith(t, map[string]*server.MCPServer{"demo": mcpserver.New()}, runtime.Options{Isolation: runtime.InProcess, Workers: 1})
	e.scripts, _ = OpenScripts("")
	var heard []string
	e.OnScriptsChanged(func(principal string) { heard = append(heard, "1:"+principal) })
	e.OnScriptsChanged(func(principal string) { heard = append(heard, "2:"+principal) })
	ctx := context.Background()
	alice, bob := caller("alice", "s1"), caller("bob", "s1")
	save := func(c auth.Caller, name, code string) error {
		return e.SaveScript(ctx, c, Script{Name: name, Description: "Return one.", Code: code})
	}
	if err := save(alice, "one", "return 1"); err != nil {
		t.Fatal(err)
	}
	if err := save(alice, "broken", "return ("); err == nil {
		t.Fatal("code that does not compile was saved")
	}
	if err := e.scripts.Share(ctx, alice.Principal.Key(), "one", true); err != nil {
		t.Fatal(err)
	}
	if err := save(bob, "two", "return 2"); err != nil { // bob may call alice's shared one
		t.Fatal(err)
	}
	if deleted, err := e.DeleteScript(ctx, bob, "nothing"); deleted || err != nil {
		t.Fatalf("deleting nothing: %v %v", deleted, err)
	}
	if deleted, err := e.DeleteScript(ctx, bob, "two"); !deleted || err != nil {
		t.Fatalf("deleting: %v %v", deleted, err)
	}
	want := "1:" + alice.Principal.Key() + " 2:" + alice.Principal.Key() + " 1: 2: 1: 2:"
	if got := strings.Join(heard, " "); got != want {
		t.Errorf("heard %q, want %q", got, want)
	}
}

// TestSaveScriptCheck: save_script with "check": true compiles the code,
// shows the declaration later snippets would see and what saving would do,
// and saves nothing; a script that does not compile is refused as a save
// would be.
func TestSaveScriptCheck(t *testing.T) {
	t.Parallel()
	e := newEngine(t, map[string]*server.MCPServer{"demo": mcpserver.New()}, runtime.InProcess)
	alice := caller("alice", "s1")
	ctx := context.Background()
	save := func(args map[string]any) (string, error) {
		raw, _ := json.Marshal(args)
		res, err := e.handleSaveScript(ctx, toolspec.Request{Arguments: raw, Caller: alice})
		if err != nil {
			return "", err
		}
		var block struct{ Text string }
		_ = json.Unmarshal(res.Content[0], &block)
		return block.Text, nil
	}
	script := map[string]any{"name": "active_ids", "description": "Ids of the active projects.", "check": true,
		"code":        `const p: any = await demo.listProjects({ status: "active" }); return p.map((x: any) => x.id).slice(0, input.max ?? 10);`,
		"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"max": map[string]any{"type": "integer", "description": "At most this many."}}}}
	text, err := save(script)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Checked; nothing was saved.", "`await scripts.activeIds({...})`",
		"declare namespace scripts {\n\t/** Ids of the active projects. */\n\tfunction activeIds(input?: {\n\t\t/** At most this many. @integer */ max?: number;\n\t}): Promise<ToolResult>;\n}\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("the check's answer lacks %q:\n%s", want, text)
		}
	}
	if visible, _ := e.scripts.Visible(ctx, "alice"); len(visible) != 0 {
		t.Fatalf("a check saved the script: %+v", visible)
	}
	// saved, then checked again: the answer says it would replace it
	delete(script, "check")
	if _, err := save(script); err != nil {
		t.Fatal(err)
	}
	script["check"] = true
	if text, err := save(script); err != nil || !strings.Contains(text, "Saving it would replace your script active_ids (saved ") {
		t.Errorf("%v %s", err, text)
	}
	script["code"] = "return (1 +;"
	if _, err := save(script); err == nil || !strings.Contains(err.Error(), "the code does not compile") {
		t.Errorf("a check of code that does not compile: %v", err)
	}
	// at the most scripts a principal keeps: a new one would be refused
	for i := range MaxScriptsPerPrincipal - 1 { // with active_ids, the most
		if err := e.scripts.Put(ctx, Script{Owner: "alice", Name: fmt.Sprintf("s%03d", i), Description: "x", Code: "return 1"}); err != nil {
			t.Fatal(err)
		}
	}
	script["name"], script["code"] = "one_more", "return 1"
	if text, err := save(script); err != nil || !strings.Contains(text, "Saving it now would be refused: you have 200 saved scripts") {
		t.Errorf("%v %s", err, text)
	}
}
