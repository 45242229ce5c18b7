package runtime

import (
	"context"
	"encoding/json"
	"testing"
	"time"
)

// FuzzRun feeds arbitrary source through transpile and run (in-process, with
// tight limits). Whatever the input, the runtime must not panic, must not
// hang past its limits, and must give a consistent result: OK with valid JSON
// or a value-less error.
func FuzzRun(f *testing.F) {
	seeds := []string{
		"return 1",
		"return await Promise.all([1, 2].map(async (x) => x * 2))",
		"throw new Error('x')",
		"let x: number = ;",
		"import fs from 'fs'",
		"await import('fs')",
		"while (true) {}",
		"function r(): number { return r() } return r()",
		"const o: any = {}; o.o = o; return o",
		"return { toJSON() { throw 1 } }",
		"return /\\p{L}+/u.exec('héllo')",
		"return new RegExp('\\\\p{Nope}', 'u')",
		"eval('1')",
		"(() => {}).constructor('return this')()",
		"console.log('%s %d %o', 'a', 1, {a: [1, {b: 2}]}); return 0",
		"setTimeout(() => { throw new Error('t') }, 0); await new Promise((r) => setTimeout(r, 5))",
		"return [1n]",
		"await new Promise(() => {})",
		"return 'x'.repeat(1e6)",
		"`${",
		"/*",
		"return \"\\uD800\"",
		"class A { static #p = 1; static get p() { return A.#p } } return A.p",
		"async function* g() { yield 1 } for await (const v of g()) return v",
		"label: for (;;) { break label } return 'ok'",
		"return Object.groupBy([1, 2, 3], (x) => (x % 2 ? 'odd' : 'even'))",
	}
	for _, s := range seeds {
		f.Add(s)
	}
	rt, err := New(Options{Isolation: InProcess, Workers: 1})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, code string) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		start := time.Now()
		res, err := rt.Run(ctx, Request{Code: code, Limits: Limits{Timeout: 200 * time.Millisecond, ResultBytes: 64 << 10, OutputBytes: 64 << 10}})
		if err != nil {
			t.Fatalf("Run error: %v", err)
		}
		if elapsed := time.Since(start); elapsed > 5*time.Second {
			t.Fatalf("took %v with a 200ms limit", elapsed)
		}
		if res.OK == (res.Error != nil) {
			t.Fatalf("inconsistent result: %+v", res)
		}
		if res.OK && res.Value != nil && !json.Valid(res.Value) {
			t.Fatalf("invalid JSON value %q", res.Value)
		}
		if !res.OK && res.Value != nil {
			t.Fatalf("failed run with a value: %+v", res)
		}
		if res.Error != nil && res.Error.Kind == KindInternal {
			t.Fatalf("internal error for %q: %v", code, res.Error)
		}
	})
}
