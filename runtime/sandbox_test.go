package runtime

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestNoCodeGeneration tries every known way to reach eval or the Function
// constructor. Each probe must throw; none may return.
func TestNoCodeGeneration(t *testing.T) {
	t.Parallel()
	probes := []string{
		`eval("1")`,
		`(0, globalThis["ev" + "al"])("1")`,
		`Function("return 1")()`,
		`new Function("return 1")()`,
		`(() => {}).constructor("return 1")()`,
		`(function () {}).constructor("return 1")()`,
		`(async () => {}).constructor("return 1")()`,
		`(async function () {}).constructor("return 1")()`,
		`(function* () {}).constructor("return 1")().next()`,
		`Object.getPrototypeOf(function () {}).constructor("return 1")()`,
		`Object.getPrototypeOf(async function () {}).constructor("return 1")()`,
		`Object.getPrototypeOf(function* () {}).constructor("return 1")()`,
		`Reflect.construct(Function, ["return 1"])()`,
		`Reflect.apply(Function, null, ["return 1"])()`,
		`Reflect.get(Function.prototype, "constructor")("return 1")()`,
		`Object.getOwnPropertyDescriptor(Function.prototype, "constructor")!.value("return 1")()`,
		`(() => {}).bind(null).constructor("return 1")()`,
		`[].map.constructor("return 1")()`,
		`Math.max.constructor("return 1")()`,
		`(class A {} as any).constructor("return 1")()`,
		`(async () => {}).constructor.prototype.constructor("return 1")()`,
		`Object.defineProperty(Function.prototype, "constructor", { value: 1 })`,
		`((Function.prototype as any).constructor = 1, (Function.prototype as any).constructor === 1 ? "reassigned" : Promise.reject(new TypeError("read-only")))`,
		`setTimeout("globalThis.x = 1", 0)`,
		`setInterval("globalThis.x = 1", 0)`,
		`(globalThis as any).require("fs")`,
		`(globalThis as any).process.env`,
		`(globalThis as any).Deno.readTextFile("/etc/passwd")`,
		`(globalThis as any).fetch("http://example.com")`,
		`(globalThis as any).GoError("x")`,
	}
	var code strings.Builder
	code.WriteString("const out: string[] = [];\n")
	for i, p := range probes {
		code.WriteString("try { const v = await (async () => " + p + ")(); out.push('ESCAPED " + jsString(p) + " => ' + String(v)); } catch (e: any) { out.push('blocked " + jsString(p) + "'); }\n")
		_ = i
	}
	code.WriteString("return out;")
	bothModes(t, func(t *testing.T, rt *Runtime) {
		res := run(t, rt, Request{Code: code.String()})
		if !res.OK {
			// import("fs") may be rejected at compile time; that blocks it too,
			// but the other probes must still run: retry without it.
			t.Fatalf("run failed: %v", res.Error)
		}
		var out []string
		if err := json.Unmarshal(res.Value, &out); err != nil {
			t.Fatal(err)
		}
		if len(out) != len(probes) {
			t.Fatalf("%d probe results for %d probes", len(out), len(probes))
		}
		for _, o := range out {
			if strings.HasPrefix(o, "ESCAPED") {
				t.Error(o)
			}
		}
	})
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return strings.Trim(strings.ReplaceAll(string(b), "'", `\'`), `"`)
}

// TestGlobalsAreOnlyTheLanguageAndOurs pins the global names a snippet can
// see: the language's built-ins, what the run binds, and what the families
// of globals.go install: those of every VM always, each of the others
// exactly when the snippet names it. A new global (from a goja upgrade, say)
// fails here until it is reviewed; a family that installs more or less than
// it declares fails too.
func TestGlobalsAreOnlyTheLanguageAndOurs(t *testing.T) {
	t.Parallel()
	language := strings.Fields(`AggregateError Array ArrayBuffer BigInt BigInt64Array BigUint64Array Boolean
		DataView Date Error EvalError Float32Array Float64Array Function Infinity Int16Array Int32Array Int8Array
		JSON Map Math NaN Number Object Promise Proxy RangeError ReferenceError Reflect RegExp Set
		String Symbol SyntaxError TypeError URIError Uint16Array Uint32Array Uint8Array Uint8ClampedArray WeakMap
		WeakSet decodeURI decodeURIComponent encodeURI encodeURIComponent escape globalThis isFinite isNaN
		parseFloat parseInt undefined unescape`)
	bound := []string{"MCPToolError", "demo"} // the tool error class, the namespace of demoTools[:1]
	always := append(append([]string{}, language...), bound...)
	var named []string
	for _, f := range families {
		if f.everyVM {
			always = append(always, f.globals...)
		} else {
			named = append(named, f.globals...)
		}
	}
	type snippet struct {
		code string
		want []string
	}
	naming := func(names []string) string {
		return "const named = [typeof " + strings.Join(names, ", typeof ") + "];\nreturn Object.getOwnPropertyNames(globalThis)"
	}
	snippets := []snippet{
		{"return Object.getOwnPropertyNames(globalThis)", always},
		{naming(named), append(append([]string{}, always...), named...)},
	}
	for _, f := range families {
		if !f.everyVM && len(f.globals) > 0 {
			snippets = append(snippets, snippet{naming(f.globals[:1]), append(append([]string{}, always...), f.globals...)})
		}
	}
	if len(named) < 10 {
		t.Fatalf("only %d globals installed when named: %v", len(named), named)
	}
	bothModes(t, func(t *testing.T, rt *Runtime) {
		for _, c := range snippets {
			res := run(t, rt, Request{Code: c.code, Tools: demoTools[:1], Host: &recordingHost{}})
			mustOK(t, res)
			var got []string
			_ = json.Unmarshal(res.Value, &got)
			sort.Strings(got)
			want := append([]string{}, c.want...)
			sort.Strings(want)
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Fatalf("%s\nglobals differ:\n got  %v\n want %v", c.code, got, want)
			}
		}
	})
}

// TestConsoleMethodsWhenNamed: every run has the global console, and its
// methods when the code names console (the only way agent code reaches
// them); a run that does not name it gets the object without building its
// 19 functions. The name is spelt at run time below, as nothing real does.
func TestConsoleMethodsWhenNamed(t *testing.T) {
	t.Parallel()
	unnamed := `const name = String.fromCharCode(99, 111, 110, 115, 111, 108, 101);
const c = (globalThis as any)[name];
return [typeof c, Object.getOwnPropertyNames(globalThis).includes(name), Object.keys(c).length]`
	named := `console.log("x"); return [typeof console, Object.keys(console).sort().join(" ")]`
	bothModes(t, func(t *testing.T, rt *Runtime) {
		res := run(t, rt, Request{Code: unnamed})
		mustOK(t, res)
		if got := string(res.Value); got != `["object",true,0]` {
			t.Errorf("a run that does not name console: %s", got)
		}
		res = run(t, rt, Request{Code: named})
		mustOK(t, res)
		want := `["object","assert count countReset debug dir error group groupCollapsed groupEnd info log table time timeEnd timeLog trace warn"]`
		if got := string(res.Value); got != want || len(res.Logs) != 1 || res.Logs[0].Message != "x" {
			t.Errorf("a run that names console: %s, logs %+v", got, res.Logs)
		}
	})
}

// TestSourceMapCommentsCannotReadHostFiles checks that a sourceMappingURL
// naming a host file is never read: goja's default loader would read it.
func TestSourceMapCommentsCannotReadHostFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mapFile := filepath.Join(dir, "evil.map")
	// A valid source map that would rename the file to LEAKED.ts if read.
	if err := os.WriteFile(mapFile, []byte(`{"version":3,"sources":["LEAKED.ts"],"names":[],"mappings":"AAAA"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	js := "(async () => { throw new Error('x') })()\n//# sourceMappingURL=" + mapFile
	p, err := compileProgram(&transpiled{JS: js, Lines: 1}, "direct.ts")
	if err != nil {
		t.Fatal(err)
	}
	_ = p
	rt := runtimes(t)[InProcess]
	res := run(t, rt, Request{Code: "throw new Error('x')\n//# sourceMappingURL=" + mapFile})
	if res.Error == nil || strings.Contains(res.Error.Stack+res.Error.File, "LEAKED") {
		t.Fatalf("the host source map was read: %+v", res.Error)
	}
}

func TestUnicodePropertyEscapes(t *testing.T) {
	t.Parallel()
	code := `
return {
  letters: "héllo wörld 42 ΣΩ".match(/\p{L}+/gu),
  notLetters: "a1b2".replace(/\P{L}/gu, ""),
  inClass: "x-1_é".match(/[\p{L}\d]+/gu),
  script: /^\p{Script=Greek}+$/u.test("ΣΩ"),
  upper: "aBcD".match(/\p{Lu}/gu),
  constructed: new RegExp("\\p{N}+", "u").exec("ab 123")![0],
  instance: /\p{L}/u instanceof RegExp,
};`
	bothModes(t, func(t *testing.T, rt *Runtime) {
		res := run(t, rt, Request{Code: code})
		mustOK(t, res)
		jsonEqual(t, res.Value, `{"letters":["héllo","wörld","ΣΩ"],"notLetters":"ab","inClass":["x","1","é"],"script":true,"upper":["B","D"],"constructed":"123","instance":true}`)
		res = run(t, rt, Request{Code: "const a = 1;\nreturn /x\\p{Emoji_Presentation_Unknown}/u.test('x')"})
		if e := res.Error; e == nil || e.Kind != KindCompile || e.Line != 2 || !strings.Contains(e.Message, "not supported") {
			t.Fatalf("an unknown property in a literal must be a compile error at line 2, got %+v", res.Error)
		}
		res = run(t, rt, Request{Code: "try { new RegExp('\\\\p{NoSuchThing}', 'u') } catch (e) { return [e.name, e.message] }"})
		mustOK(t, res)
		if !strings.Contains(string(res.Value), "SyntaxError") || !strings.Contains(string(res.Value), "not supported") {
			t.Fatalf("an unknown property in a constructed RegExp must throw a SyntaxError, got %s", res.Value)
		}
	})
}

func TestDynamicImportIsAClearCompileError(t *testing.T) {
	t.Parallel()
	bothModes(t, func(t *testing.T, rt *Runtime) {
		res := run(t, rt, Request{Code: "const a = 1;\nconst fs = await import('fs');\nreturn fs"})
		if e := res.Error; e == nil || e.Kind != KindCompile || e.Line != 2 || !strings.Contains(e.Message, "import() is not available") {
			t.Fatalf("error = %+v, want a located import() compile error", res.Error)
		}
	})
}

func TestModernBuiltins(t *testing.T) {
	t.Parallel()
	code := `
const people = [{ n: "a", age: 30 }, { n: "b", age: 40 }, { n: "c", age: 30 }];
const byAge = Object.groupBy(people, (p) => String(p.age));
const m = Map.groupBy(people, (p) => p.age > 35);
const { promise, resolve } = Promise.withResolvers<number>();
setTimeout(() => resolve(7), 1);
return { byAge, old: m.get(true)!.map((p) => p.n), resolved: await promise, sorted: [3, 1, 2].toSorted() };`
	bothModes(t, func(t *testing.T, rt *Runtime) {
		res := run(t, rt, Request{Code: code})
		mustOK(t, res)
		jsonEqual(t, res.Value, `{"byAge":{"30":[{"n":"a","age":30},{"n":"c","age":30}],"40":[{"n":"b","age":40}]},"old":["b"],"resolved":7,"sorted":[1,2,3]}`)
	})
}

// TestConsoleNeverReachesHostStdout checks that console output is captured,
// not printed: the CLI's stdout carries the JSON result only.
// Not parallel: it replaces os.Stdout, which the other tests and the test
// framework write to.
func TestConsoleNeverReachesHostStdout(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stdout
	os.Stdout = w
	rt := runtimes(t)[InProcess]
	res := run(t, rt, Request{Code: "console.log('SHOULD-NOT-LEAK'); console.error('NOR-THIS'); return 1"})
	os.Stdout = saved
	w.Close()
	data := make([]byte, 4096)
	n, _ := r.Read(data)
	mustOK(t, res)
	if n > 0 {
		t.Fatalf("stdout got %q", data[:n])
	}
}

// TestConcurrentRunsStayWithinThePool runs more snippets than workers and
// checks that all finish and no more than the pool's size ran at once.
func TestConcurrentRunsStayWithinThePool(t *testing.T) {
	t.Parallel()
	rt := workerRuntime(t, 2)
	var mu sync.Mutex
	inside, peak := 0, 0
	host := HostFunc(func(ctx context.Context, c ToolCall) (json.RawMessage, error) {
		mu.Lock()
		inside++
		peak = max(peak, inside)
		mu.Unlock()
		// A slow host on purpose: runs overlap, so a pool that let a third
		// snippet in would show it in peak.
		time.Sleep(20 * time.Millisecond)
		mu.Lock()
		inside--
		mu.Unlock()
		return json.RawMessage(`1`), nil
	})
	var wg sync.WaitGroup
	errs := make(chan string, 12)
	for i := 0; i < 12; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			res, err := rt.Run(context.Background(), Request{Code: "return (await demo.echo({})) as number + " + strings.Repeat("1", 1+i%3), Tools: demoTools, Host: host})
			if err != nil || !res.OK {
				errs <- "run failed"
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if peak > 2 {
		t.Errorf("%d snippets ran at once, pool size 2", peak)
	}
	rt.pool.mu.Lock()
	live := rt.pool.live
	rt.pool.mu.Unlock()
	if live > 2 {
		t.Errorf("%d live workers, pool size 2", live)
	}
}

func TestLimitsValidate(t *testing.T) {
	t.Parallel()
	rt := runtimes(t)[InProcess]
	for _, l := range []Limits{{Timeout: -1}, {MemoryBytes: 1000}, {ToolCalls: -3}, {Timeout: time.Nanosecond}} {
		if _, err := rt.Run(context.Background(), Request{Code: "return 1", Limits: l}); err == nil || !strings.Contains(err.Error(), "limits:") {
			t.Errorf("%+v: err = %v, want a limits error", l, err)
		}
	}
	res := run(t, rt, Request{Code: "return 1 // " + strings.Repeat("x", 2000), Limits: Limits{CodeBytes: 1000}})
	if res.Error == nil || res.Error.Limit != LimitCodeSize {
		t.Errorf("code over the size limit: %+v", res.Error)
	}
}

func TestWorkerFromAnUnpreparedBinaryFailsClearly(t *testing.T) {
	t.Parallel()
	rt, err := New(Options{Workers: 1, WorkerCommand: []string{"/bin/true"}})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	res, err := rt.Run(context.Background(), Request{Code: "return 1"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Error == nil || res.Error.Kind != KindInternal || !strings.Contains(res.Error.Message, "ServeWorkerIfChild") {
		t.Fatalf("error = %+v, want a message saying the worker must call ServeWorkerIfChild", res.Error)
	}
}
