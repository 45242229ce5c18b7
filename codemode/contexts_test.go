package codemode

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/server"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/examples/mcpserver"
	"github.com/sandboxrt/sandbox/gateway"
	"github.com/sandboxrt/sandbox/gateway/toolspec"
	"github.com/sandboxrt/sandbox/runtime"
)

// TestContextHandles: a request without a session asks execute_code for a
// context ("new"), gets a handle in the result, and the runs that pass it
// back share sandbox.store's session scope, as the runs of one session do;
// runs without it do not. A handle made up, damaged, minted for another
// principal, or passed on a session is refused, and one minted by another
// engine with the same key (another replica) works.
func TestContextHandles(t *testing.T) {
	t.Parallel()
	key := "0123456789abcdef0123456789abcdef"
	e := newEngineFull(t, map[string]*server.MCPServer{"demo": mcpserver.New()}, gateway.DefaultSettings(),
		runtime.Options{Isolation: runtime.IsolateWorkers, Workers: 1}, Options{DataDir: t.TempDir(), ContextKey: key})
	ctx := context.Background()
	anonymous := auth.Caller{Principal: auth.Anonymous()}
	alice := auth.Caller{Principal: auth.Principal{ID: "alice"}}
	type report struct {
		OK      bool            `json:"ok"`
		Context string          `json:"context"`
		Value   json.RawMessage `json:"value"`
	}
	run := func(c auth.Caller, context, code string) (report, string) {
		t.Helper()
		args := map[string]any{"code": `const attempt = async (f: () => Promise<unknown>) => { try { return await f() } catch (e: any) { return e.code + ": " + e.message } };` + code}
		if context != "" {
			args["context"] = context
		}
		raw, _ := json.Marshal(args)
		res, err := e.handleExecute(ctx, toolspec.Request{Caller: c, Arguments: raw})
		if err != nil {
			return report{}, err.Error()
		}
		var r report
		if json.Unmarshal(res.StructuredContent, &r) != nil || !r.OK {
			t.Fatalf("execute_code: %s", res.StructuredContent)
		}
		return r, ""
	}

	first, _ := run(anonymous, "new", `await sandbox.store.set("draft", "kept"); return "set"`)
	if !strings.HasPrefix(first.Context, "ctx_") {
		t.Fatalf("no context handle in the result: %+v", first)
	}
	again, _ := run(anonymous, first.Context, `return await sandbox.store.get("draft")`)
	if string(again.Value) != `"kept"` || again.Context != first.Context {
		t.Fatalf("a run with the handle: %+v", again)
	}
	other, _ := run(anonymous, "new", `return await sandbox.store.get("draft")`)
	if string(other.Value) != "null" || other.Context == first.Context {
		t.Fatalf("a run with another context: %+v", other)
	}
	none, _ := run(anonymous, "", `return await attempt(() => sandbox.store.get("draft"))`)
	if none.Context != "" || !strings.Contains(string(none.Value), `AUTH_REQUIRED: sandbox.store.get: this request has no session`) || !strings.Contains(string(none.Value), `\"context\": \"new\"`) {
		t.Fatalf("a run without a handle: %+v", none)
	}

	// Another replica (an engine with the same key) takes the handle.
	replica := newEngineFull(t, map[string]*server.MCPServer{"demo": mcpserver.New()}, gateway.DefaultSettings(),
		runtime.Options{Isolation: runtime.IsolateWorkers, Workers: 1}, Options{DataDir: t.TempDir(), ContextKey: key})
	if id, ok := replica.OpenContext(auth.Anonymous().Key(), first.Context); !ok || id == "" {
		t.Fatal("another replica refused the handle")
	}

	aliceHandle, _ := run(alice, "new", `await sandbox.store.set("draft", "alice's"); return 1`)
	for name, c := range map[string]struct {
		caller  auth.Caller
		context string
	}{
		"made up":                {alice, "ctx_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"},
		"not a handle":           {alice, "my-session"},
		"damaged":                {alice, aliceHandle.Context[:len(aliceHandle.Context)-2] + "xx"},
		"another principal's":    {anonymous, aliceHandle.Context},
		"on a session":           {auth.Caller{Principal: alice.Principal, Session: "s1"}, aliceHandle.Context},
		"another principal, too": {auth.Caller{Principal: auth.Principal{ID: "bob"}}, aliceHandle.Context},
	} {
		if _, err := run(c.caller, c.context, `return 1`); err == "" || !strings.Contains(err, "context") {
			t.Errorf("%s: %q", name, err)
		}
	}
	if got, _ := run(alice, aliceHandle.Context, `return await sandbox.store.get("draft")`); string(got.Value) != `"alice's"` {
		t.Fatalf("alice's own handle: %+v", got)
	}
}
