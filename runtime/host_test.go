package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var demoTools = []Tool{
	{ID: "demo:echo", Namespace: "demo", Function: "echo"},
	{ID: "demo:fail", Namespace: "demo", Function: "fail"},
	{ID: "demo:slow", Namespace: "demo", Function: "slow"},
	{ID: "demo:text", Namespace: "demo", Function: "text"},
	{ID: "other_srv:list-items", Namespace: "otherSrv", Function: "listItems"},
}

// recordingHost answers demo tools and records what it saw.
type recordingHost struct {
	mu          sync.Mutex
	calls       []ToolCall
	inFlight    atomic.Int32
	maxInFlight atomic.Int32
	cancelled   atomic.Int32
	// overlap, when set, holds each echo call until that many calls have been
	// in flight at once (or 5 s have passed): a test sees whether calls run
	// concurrently without depending on how soon goroutines get a CPU.
	overlap int32
	// slowCancelled, when set (buffered), hears when a slow call's context ends.
	slowCancelled chan struct{}
}

func (h *recordingHost) CallTool(ctx context.Context, c ToolCall) (json.RawMessage, error) {
	h.mu.Lock()
	h.calls = append(h.calls, c)
	h.mu.Unlock()
	n := h.inFlight.Add(1)
	defer h.inFlight.Add(-1)
	for {
		m := h.maxInFlight.Load()
		if n <= m || h.maxInFlight.CompareAndSwap(m, n) {
			break
		}
	}
	switch c.Target.Tool {
	case "demo:echo", "other_srv:list-items":
		for deadline := time.Now().Add(5 * time.Second); h.maxInFlight.Load() < h.overlap && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		return json.RawMessage(fmt.Sprintf(`{"tool":%q,"args":%s}`, c.Target, c.Arguments)), nil
	case "demo:fail":
		return nil, &ToolError{Code: "VALIDATION_FAILED", Message: "owner is required", Data: json.RawMessage(`{"errors":[{"path":"/owner"}]}`)}
	case "demo:slow":
		select {
		case <-ctx.Done():
			h.cancelled.Add(1)
			if h.slowCancelled != nil {
				select {
				case h.slowCancelled <- struct{}{}:
				default:
				}
			}
			return nil, ctx.Err()
		case <-time.After(20 * time.Second):
			return json.RawMessage(`"too late"`), nil
		}
	case "demo:text":
		return json.RawMessage(`"plain text result"`), nil
	}
	return nil, errors.New("unexpected tool " + c.Target.String())
}

func TestToolCalls(t *testing.T) {
	t.Parallel()
	code := `
const [a, b, c] = await Promise.all([demo.echo({ n: 1 }), demo.echo({ n: 2 }), otherSrv.listItems()]);
let caught: any;
try {
  await demo.fail({ repo: "x" });
} catch (e) {
  caught = { isTool: e instanceof MCPToolError, isError: e instanceof Error, name: e.name, tool: e.tool, code: e.code, data: e.data, message: e.message };
}
const t = await demo.text({});
return { a, b, c, caught, t };`
	bothModes(t, func(t *testing.T, rt *Runtime) {
		host := &recordingHost{overlap: 2}
		res := run(t, rt, Request{Code: code, Tools: demoTools, Host: host})
		mustOK(t, res)
		jsonEqual(t, res.Value, `{
			"a":{"tool":"demo:echo","args":{"n":1}},
			"b":{"tool":"demo:echo","args":{"n":2}},
			"c":{"tool":"other_srv:list-items","args":{}},
			"caught":{"isTool":true,"isError":true,"name":"MCPToolError","tool":"demo:fail","code":"VALIDATION_FAILED","data":{"errors":[{"path":"/owner"}]},"message":"owner is required"},
			"t":"plain text result"}`)
		if host.maxInFlight.Load() < 2 {
			t.Errorf("Promise.all ran calls one at a time (max in flight %d)", host.maxInFlight.Load())
		}
		if len(res.Calls) != 5 {
			t.Fatalf("trace has %d calls, want 5: %+v", len(res.Calls), res.Calls)
		}
		fail := res.Calls[3]
		if fail.Tool != "demo:fail" || fail.OK || fail.Code != "VALIDATION_FAILED" || fail.ArgBytes != len(`{"repo":"x"}`) {
			t.Errorf("trace of the failed call = %+v", fail)
		}
		for _, c := range res.Calls {
			if c.Tool != "demo:fail" && (!c.OK || c.Duration <= 0) {
				t.Errorf("trace entry %+v", c)
			}
		}
	})
}

func TestUncaughtToolErrorEndsRunAtCallSite(t *testing.T) {
	t.Parallel()
	bothModes(t, func(t *testing.T, rt *Runtime) {
		res := run(t, rt, Request{Code: "const x = 1;\nawait demo.echo({});\nconst r = await demo.fail({ owner: '' });\nreturn r", Tools: demoTools, Host: &recordingHost{}})
		e := res.Error
		if e == nil || e.Name != "MCPToolError" || e.Code != "VALIDATION_FAILED" || e.Tool != "demo:fail" || e.Line != 3 {
			t.Fatalf("error = %+v, want the MCPToolError at line 3", e)
		}
		if string(e.Data) != `{"errors":[{"path":"/owner"}]}` {
			t.Errorf("data = %s", e.Data)
		}
	})
}

func TestToolArgumentErrors(t *testing.T) {
	t.Parallel()
	cases := []struct{ code, msg string }{
		{"await demo.echo('text')", "must be an object"},
		{"await demo.echo([1])", "must be an object"},
		{"await demo.echo(null)", "must be an object"},
		{"await demo.echo({ n: 1n })", "BigInt at $.n"},
		{"const o: any = {}; o.o = o; await demo.echo(o)", "cycle at $.o"},
		{"await demo.echo({ a: 1 }, { b: 2 })", "takes one argument"},
	}
	bothModes(t, func(t *testing.T, rt *Runtime) {
		for _, c := range cases {
			host := &recordingHost{}
			res := run(t, rt, Request{Code: "try { " + c.code + "; return 'no error' } catch (e) { return [e.code, e.message] }", Tools: demoTools, Host: host})
			mustOK(t, res)
			var got []string
			_ = json.Unmarshal(res.Value, &got)
			if len(got) != 2 || got[0] != "INVALID_ARGUMENTS" || !strings.Contains(got[1], c.msg) {
				t.Errorf("%s: got %s, want INVALID_ARGUMENTS containing %q", c.code, res.Value, c.msg)
			}
			if len(host.calls) != 0 {
				t.Errorf("%s: the host was called with bad arguments", c.code)
			}
		}
	})
}

func TestNotBoundToolSaysWhatToDo(t *testing.T) {
	t.Parallel()
	bothModes(t, func(t *testing.T, rt *Runtime) {
		res := run(t, rt, Request{Code: "try { await demo.deleteEverything({}) } catch (e) { return [e.name, e.code, e.tool, e.message] }", Tools: demoTools, Host: &recordingHost{}})
		mustOK(t, res)
		var got []string
		_ = json.Unmarshal(res.Value, &got)
		if len(got) != 4 || got[0] != "MCPToolError" || got[1] != "NOT_BOUND" || got[2] != "demo.deleteEverything" ||
			!strings.Contains(got[3], "demo.echo") || !strings.Contains(got[3], "search_tools") {
			t.Fatalf("got %s", res.Value)
		}
	})
}

func TestBoundNamespacesAreFrozen(t *testing.T) {
	t.Parallel()
	code := `
const attempts: string[] = [];
try { (demo as any).echo = () => "hijacked"; } catch (e) { attempts.push("assign: " + e.name); }
try { delete (demo as any).echo; } catch (e) { attempts.push("delete: " + e.name); }
try { (globalThis as any).demo = {}; } catch (e) { attempts.push("replace: " + e.name); }
return { frozen: Object.isFrozen(demo), attempts, still: (await demo.echo({ x: 1 }) as any).tool, keys: Object.keys(demo) };`
	bothModes(t, func(t *testing.T, rt *Runtime) {
		res := run(t, rt, Request{Code: code, Tools: demoTools, Host: &recordingHost{}})
		mustOK(t, res)
		jsonEqual(t, res.Value, `{"frozen":true,"attempts":["assign: TypeError","delete: TypeError","replace: TypeError"],"still":"demo:echo","keys":["echo","fail","slow","text"]}`)
	})
}

func TestHostFailuresBecomeToolErrors(t *testing.T) {
	t.Parallel()
	hosts := map[string]Host{
		"panics":       HostFunc(func(context.Context, ToolCall) (json.RawMessage, error) { panic("boom") }),
		"plain error":  HostFunc(func(context.Context, ToolCall) (json.RawMessage, error) { return nil, errors.New("socket closed") }),
		"invalid JSON": HostFunc(func(context.Context, ToolCall) (json.RawMessage, error) { return json.RawMessage(`{not json`), nil }),
	}
	want := map[string][2]string{
		"panics":       {CodeHostError, "panicked: boom"},
		"plain error":  {CodeHostError, "socket closed"},
		"invalid JSON": {CodeInvalidResult, "invalid JSON"},
	}
	bothModes(t, func(t *testing.T, rt *Runtime) {
		for name, host := range hosts {
			res := run(t, rt, Request{Code: "try { await demo.echo({}) } catch (e) { return [e.code, e.message] }", Tools: demoTools, Host: host})
			mustOK(t, res)
			var got []string
			_ = json.Unmarshal(res.Value, &got)
			if len(got) != 2 || got[0] != want[name][0] || !strings.Contains(got[1], want[name][1]) {
				t.Errorf("%s: got %s, want %v", name, res.Value, want[name])
			}
		}
		res := run(t, rt, Request{Code: "try { await demo.echo({}) } catch (e) { return e.code }", Tools: demoTools})
		mustOK(t, res)
		jsonEqual(t, res.Value, `"`+CodeNoHost+`"`)
	})
}

func TestRunEndCancelsInFlightCalls(t *testing.T) {
	t.Parallel()
	bothModes(t, func(t *testing.T, rt *Runtime) {
		host := &recordingHost{slowCancelled: make(chan struct{}, 1)}
		res := run(t, rt, Request{Code: "demo.slow({}).catch(() => {});\nawait demo.echo({});\nreturn 'done without waiting'", Tools: demoTools, Host: host})
		mustOK(t, res)
		select {
		case <-host.slowCancelled:
		case <-time.After(5 * time.Second):
		}
		if host.cancelled.Load() != 1 {
			t.Fatal("the abandoned call's context was not cancelled")
		}
		if c := res.Calls[0]; c.Tool != "demo:slow" || c.OK || c.Code != "CANCELLED" {
			t.Errorf("trace of the abandoned call = %+v", c)
		}
	})
}

// TestTimeLimitNamesTheCallNeverAnswered: a run that runs out of time
// while it awaits a call says which call, and how long it waited, in both
// modes (the worker's deadline and the parent's); calls that did answer
// are not named.
func TestTimeLimitNamesTheCallNeverAnswered(t *testing.T) {
	t.Parallel()
	bothModes(t, func(t *testing.T, rt *Runtime) {
		host := &recordingHost{}
		res := run(t, rt, Request{Code: "await demo.echo({});\nawait demo.echo({});\nawait demo.slow({});\nreturn 1",
			Tools: demoTools, Host: host, Limits: Limits{Timeout: 300 * time.Millisecond}})
		if res.OK || res.Error.Kind != KindLimit || res.Error.Limit != LimitTime {
			t.Fatalf("want the time limit, got %+v", res.Error)
		}
		msg := res.Error.Message
		if !strings.Contains(msg, "; when it was stopped, it was still waiting for the answer of demo:slow (tool call 3 of the run, made ") ||
			!strings.HasSuffix(msg, " before, never answered)") || strings.Contains(msg, "demo:echo") {
			t.Fatalf("message: %s", msg)
		}
	})
}

func TestCancelRun(t *testing.T) {
	t.Parallel()
	bothModes(t, func(t *testing.T, rt *Runtime) {
		// Each snippet first starts a tool call, and the caller cancels when
		// the host sees it: the run is then under way (on a shared runtime a run
		// may wait for a slot first), busy in a loop or awaiting a slow call.
		for _, code := range []string{"demo.echo({});\nwhile (true) {}", "await demo.slow({})"} {
			called := make(chan struct{}, 1)
			host := HostFunc(func(ctx context.Context, c ToolCall) (json.RawMessage, error) {
				called <- struct{}{}
				if c.Target.Tool == "demo:slow" {
					<-ctx.Done()
					return nil, ctx.Err()
				}
				return json.RawMessage(`1`), nil
			})
			ctx, cancel := context.WithCancel(context.Background())
			cancelledAt := make(chan time.Time, 1)
			go func() {
				select {
				case <-called:
				case <-time.After(10 * time.Second): // never called: cancel anyway
				}
				cancelledAt <- time.Now()
				cancel()
			}()
			res, err := rt.Run(ctx, Request{Code: code, Tools: demoTools, Host: host, Limits: Limits{Timeout: 20 * time.Second}})
			cancel()
			if err != nil {
				t.Fatal(err)
			}
			if res.Error == nil || res.Error.Kind != KindCancelled {
				t.Fatalf("%q: error = %+v, want cancelled", code, res.Error)
			}
			if elapsed := time.Since(<-cancelledAt); elapsed > 5*time.Second {
				t.Errorf("%q: cancellation took %v", code, elapsed)
			}
		}
	})
}

func TestToolCallLimit(t *testing.T) {
	t.Parallel()
	bothModes(t, func(t *testing.T, rt *Runtime) {
		host := &recordingHost{}
		// Catching every error must not let a snippet exceed the limit.
		res := run(t, rt, Request{Code: "while (true) { try { await demo.echo({}) } catch {} }", Tools: demoTools, Host: host, Limits: Limits{ToolCalls: 5}})
		if res.Error == nil || res.Error.Kind != KindLimit || res.Error.Limit != LimitToolCalls {
			t.Fatalf("error = %+v, want the tool-call limit", res.Error)
		}
		if len(host.calls) != 5 || len(res.Calls) != 5 {
			t.Errorf("host saw %d calls, trace %d; want 5", len(host.calls), len(res.Calls))
		}
	})
}

// TestOpenNamespaces: an open namespace exists with no tool bound; its
// members reach the Host as a NamespaceMember Target; it is frozen, its stubs
// reach no code generation, an open name the VM already has (Math) stays the
// VM's, and a worker cannot name members of a namespace the run did not
// open.
func TestOpenNamespaces(t *testing.T) {
	t.Parallel()
	bothModes(t, func(t *testing.T, rt *Runtime) {
		var mu sync.Mutex
		var got []Target
		host := HostFunc(func(_ context.Context, c ToolCall) (json.RawMessage, error) {
			mu.Lock()
			got = append(got, c.Target)
			mu.Unlock()
			return json.RawMessage(`"from ` + c.Target.String() + `"`), nil
		})
		tools := []Tool{{Namespace: "files"}, {Namespace: "Math"}, {ID: "demo:echo", Namespace: "demo", Function: "echo"}}
		res := run(t, rt, Request{Host: host, Tools: tools, Code: `
			const out: any[] = [await (files as any).readAnything({}), await demo.echo({}), Math.max(1, 2), Object.isFrozen(files)];
			try { (files as any).x = 1; out.push("mutated") } catch (e) { out.push(e.name) }
			try { (files as any).readAnything.constructor("return 1")(); out.push("codegen") } catch (e) { out.push(e.name) }
			try { await (demo as any).other({}) } catch (e) { out.push(e.code) }
			return out`})
		mustOK(t, res)
		jsonEqual(t, res.Value, `["from files.readAnything","from demo:echo",2,true,"TypeError","TypeError","NOT_BOUND"]`)
		want := []Target{{Kind: NamespaceMember, Namespace: "files", Function: "readAnything"}, {Kind: BoundTool, Tool: "demo:echo"}}
		if !slices.Equal(got, want) {
			t.Errorf("the host got %+v, want %+v", got, want)
		}
	})
}

// TestWebGlobalsCannotEscapeOrLeak: the web globals' functions reach no
// code generation, and a run that tampers with them leaves the next run's
// untouched (each run has a fresh VM and builds them anew).
func TestWebGlobalsCannotEscapeOrLeak(t *testing.T) {
	t.Parallel()
	rt := workerRuntime(t, 1) // one worker: the second run reuses the first one's process
	res := run(t, rt, Request{Code: `
		const out: string[] = [];
		for (const f of [TextEncoder, TextDecoder, crypto.randomUUID, crypto.subtle.digest, structuredClone, performance.now, fetch, "".isWellFormed, URL, URLSearchParams, new URL("https://x.y/").searchParams.get, Object.getOwnPropertyDescriptor(URL.prototype, "href")!.get, AbortController, AbortSignal.timeout, [].values().map, Intl.NumberFormat, (1).toLocaleString, Intl.DateTimeFormat, new Intl.DateTimeFormat("de").formatToParts, new Intl.DateTimeFormat("ja").formatToParts(0)[0].constructor, Intl.PluralRules, Intl.ListFormat, Intl.RelativeTimeFormat, new Date(0).toLocaleDateString, new RegExp("[a--b]", "v").constructor, new RegExp("[a--b]", "v").exec]) {
			try { (f as any).constructor("return globalThis")(); out.push("codegen") } catch (e) { out.push(e.name) }
		}
		(TextEncoder.prototype as any).encode = () => "pwned";
		(crypto as any).randomUUID = () => "fixed";
		(globalThis as any).structuredClone = (x: any) => x;
		(URLSearchParams.prototype as any).toString = () => "pwned";
		(Intl.DateTimeFormat.prototype as any).format = () => "pwned";
		(Date.prototype as any).toLocaleDateString = () => "pwned";
		(Intl.ListFormat.prototype as any).format = () => "pwned";
		return out`})
	mustOK(t, res)
	jsonEqual(t, res.Value, `[`+strings.TrimSuffix(strings.Repeat(`"TypeError",`, 26), ",")+`]`)
	res = run(t, rt, Request{Code: `const o = {a: 1}; return [Array.from(new TextEncoder().encode("a")), crypto.randomUUID() !== "fixed", structuredClone(o) !== o, new URLSearchParams("a=1").toString(),
		new Intl.DateTimeFormat("de", {timeZone: "UTC"}).format(0), new Date(0).toLocaleDateString("fr", {timeZone: "UTC"}), new Intl.ListFormat("es").format(["a", "i"])]`})
	mustOK(t, res)
	jsonEqual(t, res.Value, `[[97],true,true,"a=1","1.1.1970","01/01/1970","a e i"]`)
}

// TestOnEventStreamsLogsAndCallsWhileRunning: OnEvent hears the console
// entry and the call's start before the call is answered, in order, and
// the call's end after; the result still holds them all.
func TestOnEventStreamsLogsAndCallsWhileRunning(t *testing.T) {
	t.Parallel()
	for _, iso := range []Isolation{IsolateWorkers, InProcess} {
		rt := runtimes(t)[iso]
		var mu sync.Mutex
		var events []string
		record := func(e Event) {
			mu.Lock()
			defer mu.Unlock()
			switch {
			case e.Log != nil:
				events = append(events, "log "+e.Log.Message)
			case e.Call != nil && e.Ended:
				events = append(events, fmt.Sprintf("end %s ok=%v", e.Call.Tool, e.Call.OK))
			case e.Call != nil:
				events = append(events, "start "+e.Call.Tool)
			}
		}
		var seenAtCall []string
		host := HostFunc(func(ctx context.Context, call ToolCall) (json.RawMessage, error) {
			mu.Lock()
			seenAtCall = append([]string(nil), events...)
			mu.Unlock()
			return json.RawMessage(`{"n": 1}`), nil
		})
		res := run(t, rt, Request{Code: `console.log("before"); const r = await demo.get({}); console.log("after"); return r.n`,
			Tools: []Tool{{ID: "demo:get", Namespace: "demo", Function: "get"}}, Host: host, OnEvent: record})
		mustOK(t, res)
		if got := strings.Join(seenAtCall, "|"); got != "log before|start demo:get" {
			t.Errorf("%v: when the host was called, OnEvent had heard %q", iso, got)
		}
		mu.Lock()
		got := strings.Join(events, "|")
		mu.Unlock()
		if got != "log before|start demo:get|end demo:get ok=true|log after" {
			t.Errorf("%v: events %q", iso, got)
		}
		if len(res.Logs) != 2 || len(res.Calls) != 1 {
			t.Errorf("%v: the result lost entries: %d logs, %d calls", iso, len(res.Logs), len(res.Calls))
		}
	}
}

// TestPauseClockStopsTheTimeLimit: a Host waiting on a person stops the
// run's time limit (in the worker and in its parent), and the limit runs
// again with the time it had left once the person answered; without a
// pause the same wait is past the limit.
func TestPauseClockStopsTheTimeLimit(t *testing.T) {
	t.Parallel()
	bothModes(t, func(t *testing.T, rt *Runtime) {
		const limit = 400 * time.Millisecond
		for _, pause := range []bool{true, false} {
			host := HostFunc(func(ctx context.Context, c ToolCall) (json.RawMessage, error) {
				if pause {
					defer c.PauseClock()()
				}
				select {
				case <-time.After(3 * limit):
				case <-ctx.Done():
					return nil, ctx.Err()
				}
				return json.RawMessage(`"approved"`), nil
			})
			res, err := rt.Run(context.Background(), Request{Code: `const a = await demo.echo({}); return a`, Tools: demoTools, Host: host, Limits: Limits{Timeout: limit}})
			if err != nil {
				t.Fatal(err)
			}
			if pause != res.OK {
				t.Fatalf("pause %v: ok %v, error %v", pause, res.OK, res.Error)
			}
			if !pause && (res.Error.Kind != KindLimit || res.Error.Limit != LimitTime) {
				t.Fatalf("without a pause: %+v", res.Error)
			}
		}
		// The limit still holds after a pause: the time left runs out.
		host := HostFunc(func(ctx context.Context, c ToolCall) (json.RawMessage, error) {
			c.PauseClock()()
			return json.RawMessage(`1`), nil
		})
		res, err := rt.Run(context.Background(), Request{Code: `await demo.echo({}); while (true) {}`, Tools: demoTools, Host: host, Limits: Limits{Timeout: limit}})
		if err != nil {
			t.Fatal(err)
		}
		if res.OK || res.Error.Limit != LimitTime {
			t.Fatalf("after a pause the loop was not stopped: %+v", res.Error)
		}
	})
}

func TestDeadlineStands(t *testing.T) {
	t.Parallel()
	fired := make(chan time.Time, 1)
	start := time.Now()
	dl := newDeadline(200*time.Millisecond, func() { fired <- time.Now() })
	time.Sleep(50 * time.Millisecond)
	dl.stand(true)
	dl.stand(true) // twice is once
	time.Sleep(300 * time.Millisecond)
	select {
	case <-fired:
		t.Fatal("a standing deadline fired")
	default:
	}
	dl.stand(false)
	at := <-fired
	// 200 ms of running time, plus the 300 ms it stood.
	if d := at.Sub(start); d < 450*time.Millisecond {
		t.Fatalf("fired after %v, before its running time was up", d)
	}
	dl.stand(true) // after firing: nothing
	dl.cancel()
}

// TestServiceCallsAreServiceMethods: a call of the sandbox global reaches
// the Host as a ServiceMethod Target, and is named "sandbox:store.get" in
// the trace and in MCPToolError.tool, as the snippet writes it in argument
// errors.
func TestServiceCallsAreServiceMethods(t *testing.T) {
	t.Parallel()
	bothModes(t, func(t *testing.T, rt *Runtime) {
		var mu sync.Mutex
		var got []Target
		host := HostFunc(func(_ context.Context, c ToolCall) (json.RawMessage, error) {
			mu.Lock()
			got = append(got, c.Target)
			mu.Unlock()
			if c.Target.Method == "set" {
				return nil, &ToolError{Code: "STORE_LIMIT", Message: "full"}
			}
			return c.Arguments, nil
		})
		res := run(t, rt, Request{Host: host, Services: []string{"store"}, Code: `
			const out: any[] = [await sandbox.store.get("k")];
			try { await sandbox.store.set("k", 1) } catch (e) { out.push(e.tool, e.code) }
			try { await sandbox.store.set("k", 1n) } catch (e) { out.push(e.tool, e.code, e.message) }
			return out`})
		mustOK(t, res)
		jsonEqual(t, res.Value, `[{"key":"k"},"sandbox:store.set","STORE_LIMIT","sandbox:store.set","INVALID_ARGUMENTS","sandbox.store.set: the argument has a BigInt at $.value, which JSON cannot represent; convert it with String(x) or Number(x)"]`)
		want := []Target{{Kind: ServiceMethod, Service: "store", Method: "get"}, {Kind: ServiceMethod, Service: "store", Method: "set"}}
		if !slices.Equal(got, want) {
			t.Errorf("the host got %+v, want %+v", got, want)
		}
		if len(res.Calls) != 2 || res.Calls[0].Tool != "sandbox:store.get" || res.Calls[1].Tool != "sandbox:store.set" {
			t.Errorf("trace %+v", res.Calls)
		}
	})
}
