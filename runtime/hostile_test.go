package runtime

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sandboxrt/sandbox/runtime/internal/bindings"
)

// Regression tests for what an adversarial review of the runtime found: each
// test is one finding, named after what it must never do again.

func TestDeeplyNestedCodeCannotCrashTheHost(t *testing.T) {
	t.Parallel()
	if raceEnabled {
		t.Skip("the race detector's shadow memory does not fit under a worker's address-space cap")
	}
	if testing.Short() {
		t.Skip("overflows a worker's stack")
	}
	rt := workerRuntime(t, 1)
	for name, code := range map[string]string{
		"prefix operators": "return " + strings.Repeat("~", 175000) + "1",
		"brackets":         "return " + strings.Repeat("[", 120000) + strings.Repeat("]", 120000),
	} {
		res := run(t, rt, Request{Code: code, Limits: Limits{Timeout: 30 * time.Second}})
		if res.OK || (res.Error.Kind != KindLimit && res.Error.Kind != KindCompile) {
			t.Errorf("%s: error = %+v, want a limit or compile error from the worker", name, res.Error)
		}
	}
	mustOK(t, run(t, rt, Request{Code: "return 'host alive'"}))
}

// TestAnswersNeverReachALaterRun: a run that ends with a call in flight
// must not hand that call's answer to the next run in the same worker.
func TestAnswersNeverReachALaterRun(t *testing.T) {
	t.Parallel()
	rt := workerRuntime(t, 1)
	// A's call is answered while B, in the same worker, awaits its own: A's
	// answer waits until B's call has reached the host, and B's answer until
	// A's has been given.
	bCalled := make(chan struct{}, 1)
	aAnswered := make(chan struct{}, 1)
	wait := func(ch chan struct{}) {
		select {
		case <-ch:
		case <-time.After(5 * time.Second):
		}
	}
	host := HostFunc(func(ctx context.Context, c ToolCall) (json.RawMessage, error) {
		answer := json.RawMessage(fmt.Sprintf(`{"answerFor":%s}`, c.Arguments))
		if strings.Contains(string(c.Arguments), "tenant-A") {
			wait(bCalled) // still answering when A has ended
			aAnswered <- struct{}{}
			return answer, nil
		}
		bCalled <- struct{}{}
		wait(aAnswered)
		return answer, nil
	})
	for i := 0; i < 10; i++ {
		a := run(t, rt, Request{Code: `demo.echo({ secret: "tenant-A" }).catch(() => {}); return 1`, Tools: demoTools, Host: host})
		mustOK(t, a)
		b := run(t, rt, Request{Code: `return await demo.echo({ mine: "tenant-B" })`, Tools: demoTools, Host: host})
		mustOK(t, b)
		if !strings.Contains(string(b.Value), "tenant-B") {
			t.Fatalf("run B got %s", b.Value)
		}
	}
}

func TestEarlyCancelIsACancellation(t *testing.T) {
	t.Parallel()
	rt := workerRuntime(t, 1)
	for i := 0; i < 20; i++ {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(time.Duration(i*15)*time.Microsecond, cancel)
		res, err := rt.Run(ctx, Request{Code: "while (true) {}", Limits: Limits{Timeout: 10 * time.Second}})
		cancel()
		if err != nil {
			continue // cancelled before a worker was free: also fine
		}
		if res.Error == nil || res.Error.Kind != KindCancelled {
			t.Fatalf("try %d: error = %+v, want cancelled", i, res.Error)
		}
	}
}

func TestEmptyConsoleEntriesCountAgainstTheLimit(t *testing.T) {
	t.Parallel()
	bothModes(t, func(t *testing.T, rt *Runtime) {
		res := run(t, rt, Request{Code: "const t0 = Date.now(); while (Date.now() - t0 < 300) console.log(); return 1", Limits: Limits{OutputBytes: 1024}})
		mustOK(t, res)
		if !res.LogsTruncated || len(res.Logs) > 1024/logEntryOverhead+2 {
			t.Fatalf("%d entries kept, truncated=%v", len(res.Logs), res.LogsTruncated)
		}
	})
}

func TestErrorTextIsCapped(t *testing.T) {
	t.Parallel()
	bothModes(t, func(t *testing.T, rt *Runtime) {
		for _, code := range []string{
			`throw new Error("x".repeat(4e6))`,
			`const e: any = new Error("m"); e.name = "N".repeat(1e6); throw e`,
			`new RegExp("\\p{Nope}" + "y".repeat(2e6), "u")`,
		} {
			res := run(t, rt, Request{Code: code})
			e := res.Error
			if e == nil || len(e.Message) > maxErrorMessage+100 || len(e.Name) > maxErrorField+100 {
				t.Fatalf("%.40s: error text of %d bytes", code, len(e.Message)+len(e.Name))
			}
		}
	})
}

func TestCachesAreBoundedInBytes(t *testing.T) {
	t.Parallel()
	rt := runtimes(t)[InProcess]
	for i := 0; i < 40; i++ {
		code := fmt.Sprintf("// %d\nreturn 1 // %s", i, strings.Repeat("z", 200<<10))
		mustOK(t, run(t, rt, Request{Code: code}))
	}
	if _, cost := transpileCache.Size(); cost > 16<<20 {
		t.Errorf("transpile cache holds %d bytes", cost)
	}
	// The RegExp rewrites' caches: runtime/internal/jsregexp's tests.
}

// TestSmallMemoryLimitAfterAHeavyRun: what earlier runs left in a worker's
// caches is not charged to the next run.
func TestSmallMemoryLimitAfterAHeavyRun(t *testing.T) {
	t.Parallel()
	if raceEnabled {
		t.Skip("the race detector's shadow memory does not fit under a worker's address-space cap")
	}
	rt := workerRuntime(t, 1)
	mustOK(t, run(t, rt, Request{Code: `for (let i = 0; i < 60; i++) { try { new RegExp("(" + "\\p{L}".repeat(10) + "x" + i, "u") } catch {} } return 1`}))
	for i := 0; i < 3; i++ {
		mustOK(t, run(t, rt, Request{Code: "return [1, 2, 3].length", Limits: Limits{MemoryBytes: 24 << 20}}))
	}
}

// TestRegexpTimeoutIsPerRun: a program compiled for a short run must not
// time out the regexps of a longer one.
func TestRegexpTimeoutIsPerRun(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs a slow regexp to completion")
	}
	rt := workerRuntime(t, 1)
	code := `const s = "a".repeat(21) + "cab"; return /(?=a)(a+)+b/.test(s)`
	short := run(t, rt, Request{Code: code, Limits: Limits{Timeout: 50 * time.Millisecond}})
	if short.OK {
		t.Skip("the machine is fast enough that the regexp finished in 50ms")
	}
	long := run(t, rt, Request{Code: code, Limits: Limits{Timeout: 30 * time.Second}})
	mustOK(t, long)
	jsonEqual(t, long.Value, "true")
}

func TestOversizedToolAnswerFailsTheCallNotTheRun(t *testing.T) {
	t.Parallel()
	if raceEnabled {
		t.Skip("the race detector's shadow memory does not fit under a worker's address-space cap")
	}
	if testing.Short() {
		t.Skip("moves 65 MB")
	}
	rt := workerRuntime(t, 1)
	big := json.RawMessage(`"` + strings.Repeat("b", 65<<20) + `"`)
	host := HostFunc(func(context.Context, ToolCall) (json.RawMessage, error) { return big, nil })
	// The answer is checked and marshalled in this process, beside every other
	// parallel test: 1-2 s idle, 6 s seen on a loaded machine. A call left
	// hanging would end the run at its time limit without the code; a check
	// that is merely slow shows as taking more than half of it.
	const limit = time.Minute
	res := run(t, rt, Request{Code: "try { await demo.echo({}) } catch (e) { return e.code }", Tools: demoTools, Host: host, Limits: Limits{Timeout: limit}})
	mustOK(t, res)
	jsonEqual(t, res.Value, `"RESULT_TOO_LARGE"`)
	if res.Duration > limit/2 {
		t.Errorf("took %v", res.Duration)
	}
}

// TestBuiltinsSurviveTamperedPrototypes: snippets that delete what our Go
// code reads must get a JavaScript outcome, never an internal error.
func TestBuiltinsSurviveTamperedPrototypes(t *testing.T) {
	t.Parallel()
	codes := []string{
		"delete (Map.prototype as any).size; console.log(new Map([[1, 2]])); return 1",
		"const e = new Error('x'); Object.setPrototypeOf(e, null); throw e",
		"delete (Promise.prototype as any).then; queueMicrotask(() => {}); return 1",
		"delete (Map.prototype as any).set; return Map.groupBy([1], (x) => x).size",
		"const ta = Object.getPrototypeOf(Uint8Array.prototype); delete ta.length; console.log(new Uint8Array(2)); return 1",
		"const a = {}; const p = new Proxy(a, {}); Object.setPrototypeOf(a, p); return a instanceof RegExp",
	}
	rt := workerRuntime(t, 1)
	for _, code := range codes {
		res := run(t, rt, Request{Code: code, Limits: Limits{Timeout: 2 * time.Second}})
		if res.Error != nil && res.Error.Kind == KindInternal {
			t.Errorf("%s: internal error %v", code, res.Error)
		}
	}
}

// TestBuiltinsTakenBeforeTheCodeThatNamesThem: the built-ins host code
// calls are taken only when a snippet names them (jsenv.Env.CaptureFor), and
// still before it runs, so replacing them does not change what console.log
// shows; a snippet that reaches one by a name built at run time gets a plain
// object's treatment, not an internal error.
func TestBuiltinsTakenBeforeTheCodeThatNamesThem(t *testing.T) {
	t.Parallel()
	bothModes(t, func(t *testing.T, rt *Runtime) {
		res := run(t, rt, Request{Code: `
const m = new Map([[1, 2]]);
(Map.prototype as any).entries = () => { throw new Error("replaced") };
(globalThis as any).Map = function () {};
console.log(m, new Set(["s"]), new Uint8Array([7]), new TextEncoder().encode("hi"));
return 1`})
		mustOK(t, res)
		if len(res.Logs) != 1 || res.Logs[0].Message != "Map(1) { 1 => 2 } Set(1) { 's' } Uint8Array(1) [ 7 ] Uint8Array(2) [ 104, 105 ]" {
			t.Errorf("logs = %+v", res.Logs)
		}

		res = run(t, rt, Request{Code: `
const g = globalThis as any, name = (...parts: string[]) => parts.join(""); // esbuild folds "Ma" + "p"
const M = g[name("Ma", "p")], S = g[name("Se", "t")], U = g[name("Uint8", "Array")];
const m = new M([[1, 2]]);
console.log(m, new S([1]), new U([7]));
return { size: m.size, clone: structuredClone(m).size ?? "plain", bytes: new U([7]) }`})
		mustOK(t, res)
		jsonEqual(t, res.Value, `{"size":1,"clone":"plain","bytes":{"0":7}}`)
		if len(res.Logs) != 1 || res.Logs[0].Message != "Map {} Set {} Uint8Array { '0': 7 }" {
			t.Errorf("logs = %+v", res.Logs)
		}
	})
}

func TestLimitHitWhileDescribingAnErrorIsTheLimit(t *testing.T) {
	t.Parallel()
	bothModes(t, func(t *testing.T, rt *Runtime) {
		res := run(t, rt, Request{Code: `const e = new Error("x"); Object.defineProperty(e, "name", { get() { while (true) {} } }); throw e`,
			Limits: Limits{Timeout: 300 * time.Millisecond}})
		if res.Error == nil || res.Error.Kind != KindLimit || res.Error.Limit != LimitTime {
			t.Fatalf("error = %+v, want the time limit", res.Error)
		}
	})
}

func TestHugeResultsAreResultSizeErrors(t *testing.T) {
	t.Parallel()
	if raceEnabled {
		t.Skip("the race detector's shadow memory does not fit under a worker's address-space cap")
	}
	rt := workerRuntime(t, 1)
	for _, code := range []string{`return "\x01".repeat(6e7)`, `return new Uint8Array(3e7)`} {
		res := run(t, rt, Request{Code: code, Limits: Limits{MemoryBytes: 512 << 20, Timeout: 20 * time.Second}})
		if res.Error == nil || res.Error.Limit != LimitResultSize {
			t.Errorf("%s: error = %+v, want the result size limit", code, res.Error)
		}
		if res.Duration > 5*time.Second {
			t.Errorf("%s: took %v", code, res.Duration)
		}
	}
}

func TestToolMessageCannotMoveTheErrorLocation(t *testing.T) {
	t.Parallel()
	host := HostFunc(func(context.Context, ToolCall) (json.RawMessage, error) {
		return nil, &ToolError{Code: "UPSTREAM_ERROR", Message: "not found\n    at handler (snippet.ts:3:5(0))"}
	})
	bothModes(t, func(t *testing.T, rt *Runtime) {
		res := run(t, rt, Request{Code: "const a = 1;\nconst b = 2;\nconst c = 3;\nconst d = 4;\nconst f = 5;\nawait demo.echo({});", Tools: demoTools, Host: host})
		if res.Error == nil || res.Error.Line != 6 {
			t.Fatalf("error at line %d, want 6 (the call): %+v", res.Error.Line, res.Error)
		}
	})
}

func TestGroupByKeysCompareLikeTheSpec(t *testing.T) {
	t.Parallel()
	bothModes(t, func(t *testing.T, rt *Runtime) {
		res := run(t, rt, Request{Code: `
const big = Map.groupBy([1, 2, 3], () => 5n);
const nan = Map.groupBy([1, 2], () => NaN);
const sym = Symbol("k");
const bySym = Object.groupBy([1], () => sym as any);
return [big.size, [...big.values()][0].length, nan.get(NaN).length, (bySym as any)[sym].length, Object.keys(bySym).length]`})
		mustOK(t, res)
		jsonEqual(t, res.Value, "[1,3,2,1,0]")
	})
}

func TestJSONMatchesStringifyForProxiesAndBigIntToJSON(t *testing.T) {
	t.Parallel()
	bothModes(t, func(t *testing.T, rt *Runtime) {
		res := run(t, rt, Request{Code: `(BigInt.prototype as any).toJSON = function () { return this.toString() }; return { p: new Proxy([1, 2], {}), n: 5n }`})
		mustOK(t, res)
		jsonEqual(t, res.Value, `{"p":[1,2],"n":"5"}`)
		res = run(t, rt, Request{Code: `try { await demo.echo(new Proxy([1], {}) as any) } catch (e) { return e.code }`, Tools: demoTools, Host: &recordingHost{}})
		mustOK(t, res)
		jsonEqual(t, res.Value, `"INVALID_ARGUMENTS"`)
	})
}

func TestSmallCompatibilityDetails(t *testing.T) {
	t.Parallel()
	bothModes(t, func(t *testing.T, rt *Runtime) {
		res := run(t, rt, Request{Code: `
const order: string[] = [];
setTimeout(() => order.push("a"), 1);
setTimeout(() => order.push("b"), 0);
await new Promise((r) => setTimeout(r, 10));
return { order, log: String(console.log), timer: setTimeout.name, compile: typeof (/x/ as any).compile }`})
		mustOK(t, res)
		var got struct {
			Order      []string
			Log, Timer string
			Compile    string
		}
		_ = json.Unmarshal(res.Value, &got)
		if strings.Join(got.Order, "") != "ab" || strings.Contains(got.Log, "github.com") || got.Timer != "setTimeout" || got.Compile != "undefined" {
			t.Fatalf("got %s", res.Value)
		}
	})
}

func TestManyRunsAtOnceShareNothing(t *testing.T) {
	t.Parallel()
	rt := workerRuntime(t, 2)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			res := run(t, rt, Request{Code: fmt.Sprintf("(globalThis as any).mark = (globalThis as any).mark ?? %d; Object.prototype.toString = () => 'tampered'; return [(globalThis as any).mark, String({})]", i)})
			if !res.OK || string(res.Value) != fmt.Sprintf(`[%d,"tampered"]`, i) {
				t.Errorf("run %d: %s %v", i, res.Value, res.Error)
			}
		}(i)
	}
	wg.Wait()
}

// TestForgedCallsAreNotBound: the parent checks every call a worker sends
// against what the run was given, by the call's kind, and never trusts the
// kind: a call to anything else (a tool of another kind's name, a member of
// a namespace the run did not open, a service method that does not exist,
// a kind that does not exist, a frame with no target) is NOT_BOUND and
// reaches no Host. The messages are what they were when calls were strings.
func TestForgedCallsAreNotBound(t *testing.T) {
	var reached []Target
	req := &Request{
		Tools:    []Tool{{ID: "demo:list", Namespace: "demo", Function: "list"}, {Namespace: "gh"}},
		Services: []string{"store"},
		Host: HostFunc(func(_ context.Context, c ToolCall) (json.RawMessage, error) {
			reached = append(reached, c.Target)
			return json.RawMessage(`1`), nil
		}),
	}
	hs := newHostSide(context.Background(), req, DefaultLimits)
	notBound := func(s string) string { return fmt.Sprintf("NOT_BOUND tool %q is not bound to this run", s) }
	cases := []struct {
		target bindings.Target
		want   string
	}{
		{bindings.Target{Kind: bindings.KindTool, ID: "demo:list"}, "ok"},
		{bindings.Target{Kind: bindings.KindMember, Namespace: "gh", Function: "x"}, "ok"},
		{bindings.Target{Kind: bindings.KindService, Namespace: "store", Function: "get"}, "ok"},
		{bindings.Target{Kind: bindings.KindTool, ID: "demo:other"}, notBound("demo:other")},
		{bindings.Target{Kind: bindings.KindTool, ID: "gh.x"}, notBound("gh.x")},
		{bindings.Target{Kind: bindings.KindMember, Namespace: "demo", Function: "list"}, notBound("demo.list")},
		{bindings.Target{Kind: bindings.KindMember, Namespace: "other", Function: "x"}, notBound("other.x")},
		{bindings.Target{Kind: bindings.KindMember, Namespace: "gh"}, notBound("gh.")},
		{bindings.Target{Kind: bindings.KindMember, Namespace: "gh", Function: "a.b"}, notBound("gh.a.b")},
		{bindings.Target{Kind: bindings.KindMember, Namespace: "gh", Function: "a:b"}, notBound("gh.a:b")},
		{bindings.Target{Kind: bindings.KindService, Namespace: "store", Function: "nope"}, notBound("sandbox:store.nope")},
		{bindings.Target{Kind: bindings.KindService, Namespace: "results", Function: "read"}, notBound("sandbox:results.read")},
		{bindings.Target{Kind: bindings.KindService, Namespace: "store"}, notBound("sandbox:store.")},
		{bindings.Target{Kind: 9, ID: "demo:list", Namespace: "gh", Function: "x"}, notBound("")},
		{bindings.Target{}, notBound("")},
	}
	for i, c := range cases {
		done := make(chan string, 1)
		hs.call(uint64(i+1), c.target, json.RawMessage(`{}`), func(_ json.RawMessage, terr *ToolError) {
			if terr != nil {
				done <- terr.Code + " " + terr.Message
				return
			}
			done <- "ok"
		})
		if got := <-done; got != c.want {
			t.Errorf("%+v: %s, want %s", c.target, got, c.want)
		}
	}
	want := []Target{{Kind: BoundTool, Tool: "demo:list"}, {Kind: NamespaceMember, Namespace: "gh", Function: "x"}, {Kind: ServiceMethod, Service: "store", Method: "get"}}
	if !slices.Equal(reached, want) {
		t.Errorf("the host got %+v, want %+v", reached, want)
	}

	// A call frame without a target (a worker speaking another protocol)
	// is refused the same way.
	var out bytes.Buffer
	w := &worker{fw: newFrameWriter(&out)}
	w.relayCall(hs, 7, &message{T: msgCall, RunID: 7, ID: 100, Args: json.RawMessage(`{}`)})
	reply, err := readFrame(bufio.NewReader(&out))
	if err != nil || reply.T != msgReply || reply.Err == nil || reply.Err.Code != CodeNotBound {
		t.Fatalf("reply to a call with no target: %+v %v", reply, err)
	}
}
