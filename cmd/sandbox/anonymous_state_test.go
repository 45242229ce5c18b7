package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestServeAnonymousSessionsShareNothing: without gateway.auth every HTTP
// client is the anonymous principal, and one session used to read another's
// principal-scope store values, call and delete its saved scripts and read
// its result handles. Each attack through the real binary: what one session
// keeps is its own, and what only makes sense across sessions is refused
// with AUTH_REQUIRED saying that the operator configures gateway.auth.
func TestServeAnonymousSessionsShareNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("starts sandbox serve")
	}
	url := serveHTTP(t, fmt.Sprintf(`{"mcpServers": {"big": %s}, "codeMode": {"dataDir": %q, "limits": {"memoryMB": 16}}}`,
		bigServerConfig(t), t.TempDir()))
	victim, attacker := session(t, url, ""), session(t, url, "")
	// run runs a snippet on a session ("" for a stateless request) and
	// returns its value, or the text of a failed call.
	run := func(sid, code string) string {
		t.Helper()
		text, isErr := callTool(t, url, "", sid, "execute_code", map[string]any{"code": `
			const attempt = async (f: () => Promise<unknown>) => { try { return await f() } catch (e: any) { return e.code + ": " + e.message } };
			` + code})
		var report struct {
			OK    bool            `json:"ok"`
			Value json.RawMessage `json:"value"`
		}
		if isErr || json.Unmarshal([]byte(text), &report) != nil || !report.OK {
			t.Fatalf("execute_code: %s", text)
		}
		return string(report.Value)
	}

	t.Run("principal-scope store values are refused, session values stay the session's", func(t *testing.T) {
		got := run(victim, `return [await attempt(() => sandbox.store.set("draft", "victim's")),
			await attempt(() => sandbox.store.set("token", "victim's", { scope: "principal" }))]`)
		if !strings.HasPrefix(got, `[null,"AUTH_REQUIRED: sandbox.store.set: scope \"principal\" keeps values across sessions`) ||
			!strings.Contains(got, "configure gateway.auth") {
			t.Errorf("the victim's principal-scope set: %s", got)
		}
		got = run(attacker, `return [await attempt(() => sandbox.store.get("draft")), await attempt(() => sandbox.store.get("token", { scope: "principal" })),
			await attempt(() => sandbox.store.keys("", { scope: "principal" }))]`)
		if !strings.HasPrefix(got, `[null,"AUTH_REQUIRED:`) || strings.Contains(got, "victim's") {
			t.Errorf("the attacker reads: %s", got)
		}
		if got := run("", `return await attempt(() => sandbox.store.get("draft"))`); !strings.Contains(got, "AUTH_REQUIRED: sandbox.store.get: this request has no session") {
			t.Errorf("a stateless request reads: %s", got)
		}
		if got := run(victim, `return await sandbox.store.get("draft")`); got != `"victim's"` {
			t.Errorf("the victim's own session value: %s", got)
		}
	})

	t.Run("saved scripts are refused, so there is none to call or delete", func(t *testing.T) {
		text, isErr := callTool(t, url, "", victim, "save_script", map[string]any{"name": "weekly_report", "description": "The weekly report.", "code": `return "victim's"`})
		if !isErr || !strings.Contains(text, "AUTH_REQUIRED") || !strings.Contains(text, "configure gateway.auth") {
			t.Errorf("save_script: %v %s", isErr, text)
		}
		text, isErr = callTool(t, url, "", attacker, "delete_script", map[string]any{"name": "weekly_report"})
		if !isErr || !strings.Contains(text, "AUTH_REQUIRED") {
			t.Errorf("delete_script: %v %s", isErr, text)
		}
		if got := run(attacker, `return await attempt(() => scripts.weeklyReport({}))`); !strings.Contains(got, "UNKNOWN_TOOL: there is no saved script scripts.weeklyReport") {
			t.Errorf("the attacker calls the victim's script: %s", got)
		}
	})

	t.Run("result handles are the session's that made them", func(t *testing.T) {
		items := (5 << 20) / bigItemBytes // over the 4 MiB a run of 16 MiB receives whole
		handle := strings.Trim(run(victim, fmt.Sprintf(`const r: any = await big.exportItems({ items: %d }); return r.handle`, items)), `"`)
		if !strings.HasPrefix(handle, "res_") {
			t.Fatalf("no handle: %s", handle)
		}
		read := fmt.Sprintf(`return await attempt(() => sandbox.results.json(%q, "content.count"))`, handle)
		if got := run(victim, read); got != fmt.Sprint(items) {
			t.Errorf("the victim's later run: %s", got)
		}
		for name, sid := range map[string]string{"another session": attacker, "a stateless request": ""} {
			if got := run(sid, read); !strings.Contains(got, "VALIDATION_FAILED: sandbox.results.json: no result") {
				t.Errorf("%s reads the victim's handle: %s", name, got)
			}
		}
	})
}
