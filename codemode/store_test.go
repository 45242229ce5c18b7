package codemode

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/examples/mcpserver"
	"github.com/sandboxrt/sandbox/gateway"
	"github.com/sandboxrt/sandbox/runtime"
)

// storeEngine is an engine over the demo server whose sandbox.store keeps
// its values in dir.
func storeEngine(t *testing.T, dir string, limits StoreLimits) *Engine {
	t.Helper()
	return newEngineFull(t, map[string]*server.MCPServer{"demo": mcpserver.New()}, gateway.DefaultSettings(),
		runtime.Options{Isolation: runtime.IsolateWorkers, Workers: 1}, Options{DataDir: dir, StoreLimits: limits})
}

func caller(principal, session string) auth.Caller {
	return auth.Caller{Principal: auth.Principal{ID: principal}, Session: auth.SessionID(session)}
}

func TestStoreKeepsValuesBetweenRunsAndRestarts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	e := storeEngine(t, dir, StoreLimits{})
	run := func(c auth.Caller, code string) string {
		t.Helper()
		res := execute(t, e, ExecuteRequest{Code: code, Caller: c})
		if !res.OK {
			t.Fatalf("%s: %+v", code, res.Error)
		}
		return string(res.Value)
	}
	run(caller("alice", "s1"), `await sandbox.store.set("draft", {step: 1, items: ["a"]});
		await sandbox.store.set("profile", {name: "Alice"}, {scope: "principal"});
		await sandbox.store.set("tmp", 1, {ttlSeconds: 3600}); return null`)
	if got := run(caller("alice", "s1"), `return [await sandbox.store.get("draft"), await sandbox.store.keys(), await sandbox.store.get("nothing")]`); got != `[{"step":1,"items":["a"]},["draft","tmp"],null]` {
		t.Errorf("same session: %s", got)
	}
	if got := run(caller("alice", "s2"), `return [await sandbox.store.get("draft"), await sandbox.store.get("profile", {scope: "principal"})]`); got != `[null,{"name":"Alice"}]` {
		t.Errorf("another session of the same principal: %s", got)
	}
	if got := run(caller("bob", "s1"), `return [await sandbox.store.get("draft"), await sandbox.store.get("profile", {scope: "principal"}), await sandbox.store.keys("", {scope: "principal"})]`); got != `[null,null,[]]` {
		t.Errorf("another principal (even with the same session id) sees: %s", got)
	}
	if got := run(caller("alice", "s1"), `return [await sandbox.store.delete("tmp"), await sandbox.store.delete("tmp")]`); got != `[true,false]` {
		t.Errorf("delete: %s", got)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e = storeEngine(t, dir, StoreLimits{})
	defer e.Close()
	if got := run(caller("alice", "s9"), `return await sandbox.store.get("profile", {scope: "principal"})`); got != `{"name":"Alice"}` {
		t.Errorf("after a restart: %s", got)
	}
}

func TestStoreErrorsSayWhatToDo(t *testing.T) {
	t.Parallel()
	e := storeEngine(t, "", StoreLimits{ValueBytes: 64, Keys: 2})
	defer e.Close()
	res := execute(t, e, ExecuteRequest{Caller: caller("alice", "s1"), Code: `
		const out: string[] = [];
		const attempt = async (f: () => Promise<unknown>) => { try { await f(); out.push("ok"); } catch (e: any) { out.push(e.name + " " + e.code + ": " + e.message); } };
		await attempt(() => sandbox.store.set("big", "x".repeat(100)));
		await attempt(() => sandbox.store.set("", 1));
		await attempt(() => (sandbox.store.get as any)(42));
		await attempt(() => sandbox.store.get("k", {scope: "world"} as any));
		await attempt(() => (sandbox.store.set as any)("k"));
		await attempt(() => sandbox.store.set("a", 1));
		await attempt(() => sandbox.store.set("b", 1));
		await attempt(() => sandbox.store.set("c", 1));
		return out`})
	if !res.OK {
		t.Fatalf("%+v", res.Error)
	}
	got := string(res.Value)
	for _, want := range []string{
		`MCPToolError STORE_LIMIT: sandbox.store.set: the value is 102 bytes of JSON; a value is at most 64`,
		`VALIDATION_FAILED: sandbox.store.set: the key is empty; call it as sandbox.store.set(key, value`,
		`VALIDATION_FAILED: sandbox.store.get: json: cannot unmarshal number`,
		`scope \"world\" is neither`,
		`the value is missing`,
		`"ok","ok","MCPToolError STORE_LIMIT: sandbox.store.set: this principal already keeps 2 keys`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("errors lack %q:\n%s", want, got)
		}
	}
	// A run that does not name the global has none.
	res = execute(t, e, ExecuteRequest{Code: `return typeof (globalThis as any)["sand" + "box"]`})
	if !res.OK || string(res.Value) != `"undefined"` {
		t.Errorf("a run without sandbox in its code: %s %+v", res.Value, res.Error)
	}
	// Nor can a snippet replace a method for the next call.
	res = execute(t, e, ExecuteRequest{Code: `"use strict"; try { (sandbox.store as any).get = () => 1; return "replaced" } catch (e) { return (e as Error).name }`})
	if !res.OK || string(res.Value) != `"TypeError"` {
		t.Errorf("sandbox.store is not frozen: %s %+v", res.Value, res.Error)
	}
}

// BenchmarkStoreRoundTrip: sandbox.store.set and get from a snippet in a
// worker, beside a call to a tool that does nothing (an in-process MCP
// server) through the same path, in the same run. The target was a store
// call under 100 µs; measured ~180 µs, of which ~30 µs is the store and
// the host (the same loop in process) and the rest the two hops between
// the worker and the parent that every call makes.
func BenchmarkStoreRoundTrip(b *testing.B) {
	const n = 200
	noop := server.NewMCPServer("t", "1")
	noop.AddTool(mcp.NewTool("noop", mcp.WithDescription("Does nothing.")), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("null"), nil
	})
	e := newEngine(b, map[string]*server.MCPServer{"t": noop}, runtime.IsolateWorkers)
	loops := map[string]string{
		"store": `for (let i = 0; i < 100; i++) { await sandbox.store.set("k" + (i % 10), { i }); await sandbox.store.get("k" + (i % 10)); } return 1`,
		"tool":  `for (let i = 0; i < 200; i++) { await t.noop({}); } return 1`,
	}
	per := map[string]float64{}
	for _, name := range []string{"store", "tool"} {
		b.Run(name, func(b *testing.B) {
			var total time.Duration
			for b.Loop() {
				res := execute(b, e, ExecuteRequest{Code: loops[name], Caller: caller("bench", "s")})
				if !res.OK {
					b.Fatal(res.Error)
				}
				total += res.Duration
			}
			per[name] = float64(total.Microseconds()) / float64(b.N) / n
			b.ReportMetric(per[name], "µs/call")
			if name == "tool" && per["store"] > 0 {
				b.ReportMetric(per["store"]/per[name], "store-x-tool")
			}
		})
	}
}
