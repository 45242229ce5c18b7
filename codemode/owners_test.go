package codemode

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/examples/mcpserver"
	"github.com/sandboxrt/sandbox/gateway"
	"github.com/sandboxrt/sandbox/runtime"
)

// The anonymous principal (serve over HTTP without gateway.auth) is every
// unauthenticated client at once: nothing one of its sessions keeps is
// another's. Its sessions keep session state, principal-wide state is
// refused with AUTH_REQUIRED saying how to get it, and its held results
// are its session's (or, without a session, its run's).
func TestAnonymousHoldsNothingPrincipalWide(t *testing.T) {
	t.Parallel()
	e := newEngineFull(t, map[string]*server.MCPServer{"demo": mcpserver.New(), "big": bigServer(6 << 20)}, gateway.DefaultSettings(),
		runtime.Options{Isolation: runtime.IsolateWorkers, Workers: 1}, Options{DataDir: t.TempDir()})
	ctx := context.Background()
	one := auth.Caller{Principal: auth.Anonymous(), Session: "s1"}
	two := auth.Caller{Principal: auth.Anonymous(), Session: "s2"}
	stateless := auth.Caller{Principal: auth.Anonymous()}
	run := func(c auth.Caller, code string) string {
		t.Helper()
		res := execute(t, e, ExecuteRequest{Caller: c, Limits: runtime.Limits{MemoryBytes: 16 << 20}, Code: `
			const attempt = async (f: () => Promise<unknown>) => { try { return JSON.stringify(await f()) } catch (e: any) { return e.code + ": " + e.message } };
			` + code})
		if !res.OK {
			t.Fatalf("%s: %+v", code, res.Error)
		}
		return string(res.Value)
	}

	// The store: a session's values are its own; the principal scope, and
	// any scope without a session, are refused.
	got := run(one, `return [await attempt(() => sandbox.store.set("k", "one's")), await attempt(() => sandbox.store.set("p", 1, { scope: "principal" }))]`)
	if !strings.HasPrefix(got, `["null","AUTH_REQUIRED: sandbox.store.set: scope \"principal\" keeps values across sessions`) ||
		!strings.Contains(got, "leave scope out to keep values in this session, or ask the operator to configure gateway.auth") {
		t.Errorf("session one's store: %s", got)
	}
	if got := run(two, `return [await attempt(() => sandbox.store.get("k")), await attempt(() => sandbox.store.keys("", { scope: "principal" }))]`); !strings.HasPrefix(got, `["null","AUTH_REQUIRED: sandbox.store.keys: scope \"principal\"`) {
		t.Errorf("session two reads: %s", got)
	}
	if got := run(stateless, `return await attempt(() => sandbox.store.get("k"))`); !strings.Contains(got, `AUTH_REQUIRED: sandbox.store.get: this request has no session (a stateless 2026-07-28 request)`) {
		t.Errorf("a stateless request's store: %s", got)
	}
	if got := run(one, `return await attempt(() => sandbox.store.get("k"))`); got != `"\"one's\""` {
		t.Errorf("session one's own value: %s", got)
	}

	// Saved scripts: refused, and none saved under the principal before
	// (by any client) is run; the operator's shared ones are.
	script := Script{Name: "planted", Description: "Says hello.", Code: `return "planted"`}
	var ge *gateway.Error
	if err := e.SaveScript(ctx, one, script); !errors.As(err, &ge) || ge.Code != gateway.CodeAuthRequired || !strings.Contains(ge.Message, "send the code with execute_code instead, or ask the operator to configure gateway.auth") {
		t.Errorf("save_script: %v", err)
	}
	if _, err := e.CheckScript(ctx, one, script); !errors.As(err, &ge) || ge.Code != gateway.CodeAuthRequired {
		t.Errorf("save_script's check: %v", err)
	}
	if _, err := e.DeleteScript(ctx, one, "planted"); !errors.As(err, &ge) || ge.Code != gateway.CodeAuthRequired {
		t.Errorf("delete_script: %v", err)
	}
	script.Owner, script.Saved = auth.Anonymous().Key(), time.Now()
	if err := e.scripts.Put(ctx, script); err != nil { // as a client saved it before this rule
		t.Fatal(err)
	}
	if err := e.scripts.Put(ctx, Script{Name: "greet", Description: "Greets.", Code: `return "shared"`, Owner: auth.Operator().Key()}); err != nil {
		t.Fatal(err)
	}
	if err := e.scripts.Share(ctx, auth.Operator().Key(), "greet", true); err != nil {
		t.Fatal(err)
	}
	got = run(two, `return [await attempt(() => scripts.planted({})), await attempt(() => scripts.greet({}))]`)
	if !strings.Contains(got, `UNKNOWN_TOOL: there is no saved script scripts.planted; you have scripts.greet`) || !strings.Contains(got, `"\"shared\""`) {
		t.Errorf("scripts of the anonymous principal: %s", got)
	}
	if tools := e.CallerMCPTools(two); len(tools) != 1 || tools[0].Name != ScriptWirePrefix+"greet" {
		t.Errorf("the anonymous principal's script tools: %+v", tools)
	}
	if err := e.scripts.Share(ctx, auth.Operator().Key(), "greet", false); err != nil {
		t.Fatal(err)
	}
	if got := run(two, `return await attempt(() => scripts.greet({}))`); !strings.Contains(got, "scripts cannot be saved for you: ask the operator to configure gateway.auth") {
		t.Errorf("with no script to call: %s", got)
	}

	// Held results: the session's that made them; without a session, the
	// run's.
	got = run(one, `const r: any = await big.exportAll({}); return r.handle`)
	handle := strings.Trim(got, `"`)
	if !strings.HasPrefix(handle, "res_") {
		t.Fatalf("no handle: %s", got)
	}
	read := fmt.Sprintf(`return await attempt(() => sandbox.results.json(%q, "items.1.id"))`, handle)
	if got := run(one, read); got != `"1"` {
		t.Errorf("session one's later run: %s", got)
	}
	for name, c := range map[string]auth.Caller{"session two": two, "a stateless request": stateless} {
		if got := run(c, read); !strings.Contains(got, "VALIDATION_FAILED: sandbox.results.json: no result") {
			t.Errorf("%s read session one's handle: %s", name, got)
		}
	}
	got = run(stateless, `const r: any = await big.exportAll({}); return [r.handle, await sandbox.results.json(r.handle, "items.2.id")]`)
	if !strings.HasSuffix(got, `,2]`) {
		t.Fatalf("a stateless run reads its own handle: %s", got)
	}
	handle = got[2:strings.Index(got, `",`)]
	if got := run(stateless, fmt.Sprintf(`return await attempt(() => sandbox.results.json(%q, "count"))`, handle)); !strings.Contains(got, "no result") {
		t.Errorf("another stateless run read it: %s", got)
	}
}
