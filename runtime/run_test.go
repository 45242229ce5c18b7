package runtime

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestResultValues(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, code, want string
	}{
		{"number", "return 6 * 7", `42`},
		{"top-level await", "const v = await Promise.resolve(5); return v + 1", `6`},
		{"last promise", "return (async () => 'later')()", `"later"`},
		{"typescript", "interface P { x: number }\nconst p: P = { x: 1 };\nenum E { A = 2 }\nreturn p.x + E.A", `3`},
		{"object order kept", "return { b: 1, a: 2, c: { z: 1, y: 2 } }", `{"b":1,"a":2,"c":{"z":1,"y":2}}`},
		{"undefined and functions omitted", "return { u: undefined, f() {}, s: Symbol('x'), k: 1 }", `{"k":1}`},
		{"undefined in arrays is null", "return [undefined, () => 1, 2]", `[null,null,2]`},
		{"non-finite numbers are null", "return [NaN, Infinity, -Infinity, -0]", `[null,null,null,0]`},
		{"dates use toJSON", "return new Date(0)", `"1970-01-01T00:00:00.000Z"`},
		{"custom toJSON", "return { toJSON(key: string) { return 'k=' + key } }", `"k="`},
		{"map and set are empty objects", "return [new Map([[1, 2]]), new Set([1])]", `[{},{}]`},
		{"boxed primitives", "return [new Number(1), new String('s'), new Boolean(false)]", `[1,"s",false]`},
		{"errors keep name and message", "const e: any = new TypeError('bad'); e.code = 7; return e", `{"name":"TypeError","message":"bad","code":7}`},
		{"large numbers", "return [1e21, 1.5e-7, 123456789012, 0.1 + 0.2]", `[1e21,1.5e-7,123456789012,0.30000000000000004]`},
		{"unicode", "return 'héllo \\u2028 😀 \"q\" \\n'", `"héllo \u2028 😀 \"q\" \n"`},
		{"class instances", "class A { x = 1; #p = 2; get y() { return 2 } } return new A()", `{"x":1}`},
		{"typed arrays", "return new Uint8Array([7, 8])", `{"0":7,"1":8}`},
		{"async generator lowered", "async function* g() { yield 1; yield 2 }\nconst out: number[] = [];\nfor await (const v of g()) out.push(v);\nreturn out", `[1,2]`},
		{"using lowered", "const log: string[] = [];\n{ using r = { [Symbol.dispose]() { log.push('disposed') } }; log.push('in') }\nreturn log", `["in","disposed"]`},
		{"optional chaining", "const o: any = { a: { b: 1 } }; return [o?.a?.b, o?.x?.y ?? 'dflt']", `[1,"dflt"]`},
		{"atob and btoa", "return [btoa('hi!'), atob('aGkh')]", `["aGkh","hi!"]`},
	}
	bothModes(t, func(t *testing.T, rt *Runtime) {
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				res := run(t, rt, Request{Code: c.code})
				mustOK(t, res)
				jsonEqual(t, res.Value, c.want)
			})
		}
	})
}

func TestUndefinedResultHasNoValue(t *testing.T) {
	t.Parallel()
	bothModes(t, func(t *testing.T, rt *Runtime) {
		for _, code := range []string{"const x = 1;", "return undefined", "return () => 1"} {
			res := run(t, rt, Request{Code: code})
			mustOK(t, res)
			if res.Value != nil {
				t.Errorf("%q: value = %s, want none", code, res.Value)
			}
		}
	})
}

func TestResultErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, code string
		kind       ErrorKind
		limit      string
		msg        string
	}{
		{"cycle", "const o: any = { a: { } }; o.a.back = o; return o", KindResult, "", "cycle at $.a.back"},
		{"bigint", "return { n: [1n] }", KindResult, "", "BigInt at $.n[0]"},
		{"throwing getter", "return { get x() { throw new Error('nope') } }", KindResult, "", "threw at $.x: Error: nope"},
		{"too large", "return { big: 'z'.repeat(2e6) }", KindLimit, LimitResultSize, "1MiB result limit (stopped at $.big)"},
		// Where an error happened, spelt as the path to it.
		{"cycle under a quoted key and an index", `const o: any = { "a key": [1, {}] }; o["a key"][1].x = o; return o`, KindResult, "", `cycle at $["a key"][1].x`},
		{"bigint in a typed array", "return { t: [new BigInt64Array(2)] }", KindResult, "", "BigInt at $.t[0][0]"},
		{"too large in an array", "return [1, { s: ['z'.repeat(2e6)] }]", KindLimit, LimitResultSize, "(stopped at $[1].s[0])"},
		{"too large at a key", "const o: any = { a: 1 }; o['k'.repeat(2e6)] = 1; return o", KindLimit, LimitResultSize, "(stopped at $)"},
		{"too deep", "let o: any = {}; const root = o; for (let i = 0; i < 1000; i++) { o.n = {}; o = o.n } return root", KindResult, "", "nested deeper than 256 levels"},
	}
	bothModes(t, func(t *testing.T, rt *Runtime) {
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				res := run(t, rt, Request{Code: c.code})
				if res.OK {
					t.Fatalf("ok with %s, want %s error", res.Value, c.kind)
				}
				if res.Error.Kind != c.kind || res.Error.Limit != c.limit || !strings.Contains(res.Error.Message, c.msg) {
					t.Fatalf("error = %+v, want kind %s limit %q containing %q", res.Error, c.kind, c.limit, c.msg)
				}
			})
		}
	})
}

func TestCompileErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, code string
		line, col  int
		msg        string
	}{
		{"syntax on line 1", "let x: number = ;", 1, 17, `Unexpected ";"`},
		{"syntax on line 3", "const a = 1;\nconst b = 2;\nconst c = (a +;", 3, 15, `Unexpected ";"`},
		{"import", "import fs from 'fs';\nreturn 1", 1, 0, "import and export are not available"},
		{"export", "const x = 1;\nexport default x;", 2, 0, "import and export are not available"},
		{"namespace", "namespace N { export const a = 1 }", 1, 0, "namespaces and module declarations cannot be written"},
		{"empty", "  \n ", 0, 0, "the snippet is empty"},
	}
	bothModes(t, func(t *testing.T, rt *Runtime) {
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				res := run(t, rt, Request{Code: c.code, Filename: "agent.ts"})
				e := res.Error
				if e == nil || e.Kind != KindCompile {
					t.Fatalf("error = %+v, want a compile error", e)
				}
				if !strings.Contains(e.Message, c.msg) {
					t.Errorf("message %q does not contain %q", e.Message, c.msg)
				}
				if c.line > 0 && (e.Line != c.line || e.File != "agent.ts") {
					t.Errorf("at %s:%d:%d, want agent.ts:%d", e.File, e.Line, e.Column, c.line)
				}
				if c.col > 0 && e.Column != c.col {
					t.Errorf("column %d, want %d", e.Column, c.col)
				}
			})
		}
	})
}

// TestCodeCannotLeaveItsWrapper: the snippet is the body of an async
// function (transpile.go). Text that closes that function early, or leaves
// something open that swallows its tail, is a compile error at the
// snippet's own line, and nothing of it runs.
func TestCodeCannotLeaveItsWrapper(t *testing.T) {
	t.Parallel()
	const closes = "closes the function the snippet runs in"
	cases := []struct {
		name, code string
		line, col  int
		msg        string
	}{
		{"closed and reopened", "return 1\n})(); 5; (() => {", 2, 1, closes},
		{"closed at the end", "return 1\n})()", 2, 1, closes},
		{"a statement between", "return 1\n}; globalThis.x = 1; {", 2, 1, closes},
		{"a sequence on line 1", "})(), globalThis.x = 1, (async () => {", 1, 1, closes},
		{"after code on line 1", "return 1;})(); 5; (() => {", 1, 10, closes},
		{"a call outside", "const a = 1;\n})(); demo.echo({}); (async () => {", 2, 1, closes},
		{"one brace too many", "const o = {a: 1};\nreturn o }", 2, 10, closes},
		{"two braces too many", "return 1\n}}", 2, 1, closes},
		{"a brace never closed", "if (globalThis) {\nreturn 1", 2, 9, "never closed"},
		{"a comment never closed", "return 1 /* and the rest", 1, 10, `Expected "*/" to terminate multi-line comment`},
		{"a comment never closed, later", "const a = 1;\n/* x", 2, 1, `Expected "*/" to terminate multi-line comment`},
		{"a template never closed", "return `abc", 1, 0, "Unterminated"},
	}
	bothModes(t, func(t *testing.T, rt *Runtime) {
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				host := &recordingHost{}
				res := run(t, rt, Request{Code: c.code, Filename: "agent.ts", Tools: demoTools, Host: host})
				e := res.Error
				if e == nil || e.Kind != KindCompile {
					t.Fatalf("error = %+v, want a compile error", e)
				}
				if !strings.Contains(e.Message, c.msg) || e.File != "agent.ts" || e.Line != c.line || (c.col > 0 && e.Column != c.col) {
					t.Fatalf("error = %s, want %q at agent.ts:%d:%d", e, c.msg, c.line, c.col)
				}
				host.mu.Lock()
				called := len(host.calls)
				host.mu.Unlock()
				if len(res.Calls) != 0 || called != 0 {
					t.Fatalf("code outside the wrapper ran: %+v", res.Calls)
				}
			})
		}
		// What esbuild puts before the wrapper (its helpers) is not the
		// snippet's: code that needs them still runs.
		res := run(t, rt, Request{Code: "const d = (c: any, ctx: any) => c;\n@d class A { x = 1 }\n" +
			"async function* g() { yield 1 }\nconst out: number[] = [];\nfor await (const v of g()) out.push(v);\n" +
			"{ await using r = { async [Symbol.asyncDispose]() { out.push(2) } } }\nreturn [new A().x, ...out]"})
		mustOK(t, res)
		jsonEqual(t, res.Value, `[1,1,2]`)
	})
}

func TestRuntimeErrorsPointAtTheSnippet(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, code string
		errName    string
		msg        string
		line, col  int
		stackLines int
	}{
		{"throw on line 1", `throw new Error("first")`, "Error", "first", 1, 7, 1},
		{"throw in nested function", "function inner(): never {\n  throw new RangeError('deep');\n}\nfunction outer() { inner() }\nouter();", "RangeError", "deep", 2, 9, 3},
		{"rejection after await", "await new Promise((r) => setTimeout(r, 1));\nconst o: any = undefined;\no.field;", "TypeError", "field", 3, 3, 1},
		{"async function rejects", "async function f() {\n  await null;\n  throw new SyntaxError('late');\n}\nawait f();", "SyntaxError", "late", 3, 9, 1},
		{"throw a string", "throw 'plain text'", "Uncaught", "'plain text'", 0, 0, 0},
	}
	bothModes(t, func(t *testing.T, rt *Runtime) {
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				res := run(t, rt, Request{Code: c.code})
				e := res.Error
				if e == nil || e.Kind != KindRuntime || e.Name != c.errName || !strings.Contains(e.Message, c.msg) {
					t.Fatalf("error = %+v, want %s containing %q", e, c.errName, c.msg)
				}
				if e.Line != c.line || (c.col > 0 && e.Column != c.col) {
					t.Errorf("at line %d col %d, want %d:%d; stack:\n%s", e.Line, e.Column, c.line, c.col, e.Stack)
				}
				if got := len(strings.Split(strings.TrimSpace(e.Stack), "\n")); c.stackLines > 0 && got < c.stackLines {
					t.Errorf("stack has %d frames, want >= %d:\n%s", got, c.stackLines, e.Stack)
				}
				if strings.Contains(e.Stack, "snippet.ts.js") {
					t.Errorf("stack shows transpiled positions: %s", e.Stack)
				}
			})
		}
	})
}

func TestConsole(t *testing.T) {
	t.Parallel()
	code := `
console.log("plain", 1, true, null, undefined);
console.info({ a: 1, b: [1, "two"], m: new Map([["k", { v: 1 }]]), s: new Set([1]) });
console.warn("%s is %d years and %i days (%f)", "Ann", 41.5, 2.9, 0.5);
console.error(new TypeError("bad thing"));
console.debug([1, [2, [3, [4, [5, [6]]]]]]);
const cyc: any = { name: "c" }; cyc.self = cyc;
console.log(cyc);
console.group("grp"); console.log("inside"); console.groupEnd();
console.assert(1 > 2, "math");
console.count(); console.count();
return 0;`
	bothModes(t, func(t *testing.T, rt *Runtime) {
		res := run(t, rt, Request{Code: code})
		mustOK(t, res)
		want := []LogEntry{
			{LevelLog, "plain 1 true null undefined"},
			{LevelInfo, "{ a: 1, b: [ 1, 'two' ], m: Map(1) { 'k' => { v: 1 } }, s: Set(1) { 1 } }"},
			{LevelWarn, "Ann is 41.5 years and 2 days (0.5)"},
			{LevelError, "TypeError: bad thing"},
			{LevelDebug, "[ 1, [ 2, [ 3, [ 4, [Array] ] ] ] ]"},
			{LevelLog, "{ name: 'c', self: [Circular] }"},
			{LevelLog, "grp"},
			{LevelLog, "  inside"},
			{LevelError, "Assertion failed: math"},
			{LevelLog, "default: 1"},
			{LevelLog, "default: 2"},
		}
		if len(res.Logs) != len(want) {
			t.Fatalf("got %d entries, want %d: %+v", len(res.Logs), len(want), res.Logs)
		}
		for i, w := range want {
			g := res.Logs[i]
			if g.Level != w.Level || !strings.HasPrefix(g.Message, w.Message) {
				t.Errorf("entry %d = %s %q, want %s %q", i, g.Level, g.Message, w.Level, w.Message)
			}
		}
	})
}

func TestConsoleIsCappedAndSaysSo(t *testing.T) {
	t.Parallel()
	bothModes(t, func(t *testing.T, rt *Runtime) {
		res := run(t, rt, Request{Code: `for (let i = 0; i < 100000; i++) console.log("line " + i + " " + "x".repeat(50)); return "done"`,
			Limits: Limits{OutputBytes: 4096}})
		mustOK(t, res)
		jsonEqual(t, res.Value, `"done"`)
		if !res.LogsTruncated {
			t.Fatal("LogsTruncated not set")
		}
		total := 0
		for _, l := range res.Logs[:len(res.Logs)-1] {
			total += len(l.Message)
		}
		if total > 4096 {
			t.Errorf("kept %d bytes of output, limit 4096", total)
		}
		last := res.Logs[len(res.Logs)-1]
		if last.Level != LevelWarn || !strings.Contains(last.Message, "console output truncated") {
			t.Errorf("last entry = %+v, want the truncation note", last)
		}
		if !strings.HasPrefix(res.Logs[0].Message, "line 0 ") {
			t.Errorf("first entry = %q, want the first line kept", res.Logs[0].Message)
		}
	})
}

func TestConsoleOneHugeValueIsBounded(t *testing.T) {
	t.Parallel()
	bothModes(t, func(t *testing.T, rt *Runtime) {
		res := run(t, rt, Request{Code: `const big = Array.from({ length: 200000 }, (_, i) => ({ i, s: "v" + i })); console.log(big); console.log("x".repeat(5e6)); return 1`})
		mustOK(t, res)
		for _, l := range res.Logs {
			if len(l.Message) > maxEntryBytes+100 {
				t.Errorf("one entry of %d bytes, over the %d per-entry cap", len(l.Message), maxEntryBytes)
			}
		}
		if !strings.Contains(res.Logs[0].Message, "more items") {
			t.Errorf("array not elided: %.200s", res.Logs[0].Message)
		}
	})
}

func TestTimersAndMicrotasks(t *testing.T) {
	t.Parallel()
	code := `
const order: string[] = [];
setTimeout(() => order.push("t10"), 10);
setTimeout((a: string, b: string) => order.push(a + b), 0, "t0", "-args");
setTimeout(() => order.push("t0b"), 0);
const cancelled = setTimeout(() => order.push("never"), 1);
clearTimeout(cancelled);
queueMicrotask(() => order.push("micro"));
Promise.resolve().then(() => order.push("then"));
order.push("sync");
let ticks = 0;
await new Promise<void>((resolve) => {
  const id = setInterval(() => { ticks++; if (ticks === 3) { clearInterval(id); resolve(); } }, 1);
});
await new Promise((r) => setTimeout(r, 20));
return { order, ticks };`
	bothModes(t, func(t *testing.T, rt *Runtime) {
		res := run(t, rt, Request{Code: code})
		mustOK(t, res)
		jsonEqual(t, res.Value, `{"order":["sync","micro","then","t0-args","t0b","t10"],"ticks":3}`)
	})
}

func TestDeadlockEndsAtOnce(t *testing.T) {
	t.Parallel()
	bothModes(t, func(t *testing.T, rt *Runtime) {
		for _, code := range []string{
			"await new Promise(() => {})",
			"const p = new Promise<number>((resolve) => { if (false) resolve(1) }); return await p",
			"let resolveLater: any; const p = new Promise((r) => { resolveLater = r }); setTimeout(() => {}, 5); await p",
		} {
			res := run(t, rt, Request{Code: code, Limits: Limits{Timeout: 20 * time.Second}})
			if res.Error == nil || res.Error.Kind != KindDeadlock {
				t.Fatalf("%q: error = %+v, want deadlock", code, res.Error)
			}
			if res.Duration > 5*time.Second {
				t.Errorf("%q: deadlock reported after %v, long after it happened", code, res.Duration)
			}
		}
	})
}

func TestUnhandledRejectionIsReportedButResultKept(t *testing.T) {
	t.Parallel()
	bothModes(t, func(t *testing.T, rt *Runtime) {
		res := run(t, rt, Request{Code: "Promise.reject(new Error('floating'));\nawait new Promise((r) => setTimeout(r, 1));\nreturn 'kept'"})
		mustOK(t, res)
		jsonEqual(t, res.Value, `"kept"`)
		if len(res.Logs) != 1 || res.Logs[0].Level != LevelWarn || !strings.Contains(res.Logs[0].Message, "Unhandled promise rejection") || !strings.Contains(res.Logs[0].Message, "floating") {
			t.Fatalf("logs = %+v, want one warning about the unhandled rejection", res.Logs)
		}
	})
}

func TestTimerCallbackThrowEndsRun(t *testing.T) {
	t.Parallel()
	bothModes(t, func(t *testing.T, rt *Runtime) {
		res := run(t, rt, Request{Code: "setTimeout(() => { throw new Error('in timer') }, 1);\nawait new Promise((r) => setTimeout(r, 50));\nreturn 1"})
		if res.Error == nil || res.Error.Kind != KindRuntime || !strings.Contains(res.Error.Message, "in timer") || res.Error.Line != 1 {
			t.Fatalf("error = %+v, want the timer's exception at line 1", res.Error)
		}
	})
}

// TestResultBytesAreJSONStringify: a result's JSON is byte for byte what the
// VM's JSON.stringify writes for the same value, for every kind of
// primitive (the serializer writes each kind itself) in objects and arrays.
// In process: from a worker the result arrives re-encoded by its frame,
// which escapes <, >, & and U+2028/U+2029 (the same JSON, other bytes).
func TestResultBytesAreJSONStringify(t *testing.T) {
	t.Parallel()
	values := []string{
		`[0, 1, -1, 255, 256, 65536, -2147483648, 2147483648, 9007199254740991, 2 ** 53 + 2, -(2 ** 63)]`,
		`[-0, 0.1, 0.1 + 0.2, 1e21, 1e-7, 1.5e-7, 5e-324, 1.7976931348623157e308, -1.25, 123456789.125, 1 / 3]`,
		`[NaN, Infinity, -Infinity, true, false, null, undefined]`,
		`["", "plain", "q\"uote", "back\\slash", "\n\r\t\b\f", "\u0001\u001f\u007f", "é ü ß", "€ 中文", "😀 𝄞", "<a & b>", "\u2028\u2029"]`,
		`{ "a key": 1, "q\"k": [2, { "é": "ü", "😀": "x" }], "\n": null, "": "" }`,
		`[new Number(-0), new Number(2.5), new String("boxed \"s\""), new Boolean(true), Object(1)]`,
		`{ nested: [[[], {}], [{ a: [1, "two", 3.5, false] }]], n: 12345678901234 }`,
	}
	rt := runtimes(t)[InProcess]
	for _, v := range values {
		res := run(t, rt, Request{Code: "return " + v})
		mustOK(t, res)
		ref := run(t, rt, Request{Code: "return JSON.stringify(" + v + ")"})
		mustOK(t, ref)
		var want string
		if err := json.Unmarshal(ref.Value, &want); err != nil {
			t.Fatal(err)
		}
		if string(res.Value) != want {
			t.Errorf("%s\n got  %s\n want %s", v, res.Value, want)
		}
	}
}

// TestArgumentsWithAGetterThatCalls: a getter in a call's arguments that
// starts another call serializes that call's arguments inside the first's
// (callInVM is entered again): each call keeps its own arguments, and a
// getter that throws is the argument's error, not the outer call's.
func TestArgumentsWithAGetterThatCalls(t *testing.T) {
	t.Parallel()
	code := `let inner: Promise<any> | undefined;
const outer = demo.echo({ a: 1, get b() { inner = demo.echo({ c: [2, { d: 3 }] }); return "x" }, e: 4 });
const [o, i] = await Promise.all([outer, inner]);
let thrown = "";
try { await demo.echo({ get f(): number { throw new Error("from getter") } }) } catch (err) { thrown = String(err) }
return [o.args, i.args, thrown, JSON.stringify({ g: 5 })]`
	bothModes(t, func(t *testing.T, rt *Runtime) {
		res := run(t, rt, Request{Code: code, Tools: demoTools, Host: &recordingHost{}})
		mustOK(t, res)
		want := `[{"a":1,"b":"x","e":4},{"c":[2,{"d":3}]},"MCPToolError: demo.echo: turning the argument into JSON threw at $.f: Error: from getter","{\"g\":5}"]`
		if got := string(res.Value); got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	})
}
