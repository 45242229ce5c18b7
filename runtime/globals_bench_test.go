package runtime

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/sandboxrt/sandbox/internal/testpeers"
)

// globalFamilies are one representative operation of each web-globals
// family, as agent code uses it.
var globalFamilies = []struct{ name, op string }{
	{"URL", `new URL("https://api.example.com/v1/items?page=2&q=tea").searchParams.get("q")`},
	{"URLSearchParams", `new URLSearchParams({ q: "tea & coffee", page: "2" }).toString()`},
	{"TextEncoder", `new TextEncoder().encode("héllo wörld, a line of text").length`},
	{"crypto.randomUUID", `crypto.randomUUID().length`},
	{"structuredClone", `structuredClone({ a: [1, 2, { b: "c" }], d: new Date(0) }).a.length`},
	{"Intl.NumberFormat", `(1234567.891).toLocaleString("de-DE")`},
	{"Date.toLocaleString", `new Date(0).toLocaleString("en-US", { timeZone: "America/New_York" })`},
	{"Date.toLocaleString ja-JP", `new Date(0).toLocaleString("ja-JP", { timeZone: "Asia/Tokyo", dateStyle: "full", timeStyle: "short" })`},
	{"Intl.RelativeTimeFormat ru", `new Intl.RelativeTimeFormat("ru", { numeric: "auto" }).format(-3, "day")`},
	{"RegExp v flag", `/[\p{L}--[a-z]]/v.test("É")`},
	{"iterator helpers", `[1, 2, 3, 4].values().filter(x => x % 2).map(x => x * 2).toArray().length`},
	{"localeCompare", `"item10".localeCompare("item2", undefined, { numeric: true })`},
}

// BenchmarkGlobalsBesideNode: the cost of one operation of each family in
// the sandbox (a snippet that repeats it 2,000 times, in process, divided)
// beside the same loop in the pinned Node 22 measured in the same run
// (reported as node-ns/op), so the ratio shows where goja and our Go
// implementations stand against V8 and ICU.
func BenchmarkGlobalsBesideNode(b *testing.B) {
	const reps = 2000
	rt := runtimes(b)[InProcess]
	node := nodeLoopTimes(b, reps)
	for _, f := range globalFamilies {
		b.Run(strings.ReplaceAll(f.name, " ", "_"), func(b *testing.B) {
			code := "let r: any; for (let i = 0; i < " + strconv.Itoa(reps) + "; i++) r = " + f.op + "; return r"
			b.ResetTimer()
			var total float64
			for b.Loop() {
				res := run(b, rt, Request{Code: code})
				if !res.OK {
					b.Fatalf("%s: %v", f.name, res.Error)
				}
				total += float64(res.Duration.Nanoseconds()) / reps
			}
			b.ReportMetric(total/float64(b.N), "sandbox-ns/op")
			b.ReportMetric(node[f.name], "node-ns/op")
			b.ReportMetric(total/float64(b.N)/node[f.name], "x-node")
		})
	}
}

// nodeLoopTimes runs each family's loop in one Node process and returns
// nanoseconds per operation (median of 5 timed loops after a warm-up).
func nodeLoopTimes(b *testing.B, reps int) map[string]float64 {
	var src strings.Builder
	src.WriteString("const out = {};\n")
	for _, f := range globalFamilies {
		name, _ := json.Marshal(f.name)
		src.WriteString("{ const t = []; for (let k = 0; k < 6; k++) { const s = performance.now(); let r; for (let i = 0; i < " + strconv.Itoa(reps) + "; i++) r = " + f.op + "; if (k) t.push((performance.now() - s) * 1e6 / " + strconv.Itoa(reps) + "); } t.sort((a, b) => a - b); out[" + string(name) + "] = t[2]; }\n")
	}
	src.WriteString("process.stdout.write(JSON.stringify(out));\n")
	path := filepath.Join(b.TempDir(), "loops.mjs")
	if err := os.WriteFile(path, []byte(src.String()), 0o600); err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(testpeers.Node(b), path)
	cmd.Env = append(os.Environ(), "TZ=UTC")
	outb, err := cmd.Output()
	if err != nil {
		b.Fatalf("node: %v", err)
	}
	out := map[string]float64{}
	if err := json.Unmarshal(outb, &out); err != nil {
		b.Fatalf("node: %v: %s", err, outb)
	}
	return out
}
