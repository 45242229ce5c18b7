package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sandboxrt/sandbox/internal/benchutil"
)

const trivialSnippet = "const xs = [1, 2, 3];\nreturn { sum: xs.reduce((a, b) => a + b, 0) };"

// fiftyLines is a realistic agent snippet for the transpile benchmark.
var fiftyLines = func() string {
	var b strings.Builder
	b.WriteString("interface Commit { sha: string; message: string; author: { name: string; date: string } }\n")
	for i := 0; i < 12; i++ {
		fmt.Fprintf(&b, "const c%d: Commit[] = [{ sha: 'a%d', message: 'fix #%d', author: { name: 'ann', date: '2026-01-0%d' } }];\n", i, i, i, i%9+1)
		fmt.Fprintf(&b, "const m%d = c%d.filter((c) => c.message.includes('#')).map((c) => ({ ...c, short: c.sha.slice(0, 7) }));\n", i, i)
		fmt.Fprintf(&b, "if (m%d.length > 1) { console.log(`many ${m%d.length}`); }\n", i, i)
		fmt.Fprintf(&b, "await new Promise<void>((r) => r());\n")
	}
	b.WriteString("return [c0, c1].flat().length;\n")
	return b.String()
}()

func BenchmarkTranspile(b *testing.B) {
	var l benchutil.Latencies
	for i := 0; b.Loop(); i++ {
		code := fiftyLines + fmt.Sprintf("// %d\n", i) // defeat the cache: measure esbuild
		l.Time(func() {
			if _, err := transpile("snippet.ts", code); err != nil {
				b.Fatal(err)
			}
		})
	}
	l.Report(b, "op", 1)
}

func benchmarkTrivial(b *testing.B, iso Isolation, unique bool) {
	rt, err := New(Options{Isolation: iso, Workers: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer rt.Close()
	warm(b, rt)
	var l benchutil.Latencies
	cpu := startWorkerCPU(iso)
	defer cpu.report(b, "op", 1)
	for i := 0; b.Loop(); i++ {
		code := trivialSnippet
		if unique {
			code += fmt.Sprintf("\n// %d", i)
		}
		l.Time(func() {
			res, err := rt.Run(context.Background(), Request{Code: code})
			if err != nil || !res.OK {
				b.Fatalf("%v %v", err, res.Error)
			}
		})
	}
	l.Report(b, "op", 1)
}

// warm makes sure the worker is started before timing.
func warm(b *testing.B, rt *Runtime) {
	for i := 0; i < 3; i++ {
		if res, err := rt.Run(context.Background(), Request{Code: "return 0"}); err != nil || !res.OK {
			b.Fatalf("warm-up: %v", err)
		}
	}
}

// BenchmarkTrivialWorkerIdle is a warm worker's trivial run as an agent
// makes them: a few milliseconds apart (the model thinks between
// snippets), which is when the worker builds the next run's VM.
func BenchmarkTrivialWorkerIdle(b *testing.B) {
	rt, err := New(Options{Isolation: IsolateWorkers, Workers: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer rt.Close()
	warm(b, rt)
	var l benchutil.Latencies
	for b.Loop() {
		time.Sleep(3 * time.Millisecond)
		l.Time(func() {
			res, err := rt.Run(context.Background(), Request{Code: trivialSnippet})
			if err != nil || !res.OK {
				b.Fatalf("%v %v", err, res.Error)
			}
		})
	}
	l.Report(b, "op", 1)
}

// End to end: Run of a trivial snippet, transpile cached (the same snippet
// again) and uncached (a new snippet each time).
func BenchmarkTrivialInProcess(b *testing.B)         { benchmarkTrivial(b, InProcess, false) }
func BenchmarkTrivialInProcessUncached(b *testing.B) { benchmarkTrivial(b, InProcess, true) }
func BenchmarkTrivialWorker(b *testing.B)            { benchmarkTrivial(b, IsolateWorkers, false) }
func BenchmarkTrivialWorkerUncached(b *testing.B)    { benchmarkTrivial(b, IsolateWorkers, true) }

// A snippet awaiting 100 host calls one after another; reported per call.
func benchmarkHostCalls(b *testing.B, iso Isolation) { benchmarkHostCallsOf(b, iso, false) }

// benchmarkHostCallsOf is benchmarkHostCalls, the run keeping a journal
// when journalled is set.
func benchmarkHostCallsOf(b *testing.B, iso Isolation, journalled bool) {
	rt, err := New(Options{Isolation: iso, Workers: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer rt.Close()
	warm(b, rt)
	host := HostFunc(func(ctx context.Context, c ToolCall) (json.RawMessage, error) {
		return json.RawMessage(`{"ok":true}`), nil
	})
	code := "let n = 0;\nfor (let i = 0; i < 100; i++) { const r = await demo.echo({ i }); if ((r as any).ok) n++ }\nreturn n"
	var l benchutil.Latencies
	cpu := startWorkerCPU(iso)
	defer cpu.report(b, "call", 100)
	for b.Loop() {
		l.Time(func() {
			req := Request{Code: code, Tools: demoTools, Host: host}
			if journalled {
				req.Journal = &Journal{}
			}
			res, err := rt.Run(context.Background(), req)
			if err != nil || !res.OK {
				b.Fatalf("%v %v", err, res.Error)
			}
		})
	}
	l.Report(b, "call", 100)
}

func BenchmarkHostCalls100InProcess(b *testing.B) { benchmarkHostCalls(b, InProcess) }
func BenchmarkHostCalls100Worker(b *testing.B)    { benchmarkHostCalls(b, IsolateWorkers) }

// BenchmarkFiveCallsWorker is the five-call snippet of make load's
// reference benchmark (codemode's BenchmarkServeLoadReference) against a
// host that answers at once with what the example tracker's list_projects
// returns: what a worker spends on the snippet agents send most, per run.
func BenchmarkFiveCallsWorker(b *testing.B) {
	rt, err := New(Options{Isolation: IsolateWorkers, Workers: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer rt.Close()
	warm(b, rt)
	projects := json.RawMessage(`[{"id":"PRJ-1","name":"Website relaunch","status":"active","owner":"ana"},` +
		`{"id":"PRJ-2","name":"Mobile app","status":"active","owner":"ben"},` +
		`{"id":"PRJ-4","name":"Data platform","status":"active","owner":"chen"}]`)
	host := HostFunc(func(ctx context.Context, c ToolCall) (json.RawMessage, error) { return projects, nil })
	tools := []Tool{{ID: "demo:list_projects", Namespace: "demo", Function: "listProjects"}}
	code := "const out = [];\nfor (let i = 0; i < 5; i++) out.push((await demo.listProjects({})).length);\nreturn out"
	var l benchutil.Latencies
	cpu := startWorkerCPU(IsolateWorkers)
	defer cpu.report(b, "op", 1)
	for b.Loop() {
		l.Time(func() {
			res, err := rt.Run(context.Background(), Request{Code: code, Tools: tools, Host: host})
			if err != nil || !res.OK || string(res.Value) != "[3,3,3,3,3]" {
				b.Fatalf("%v %+v", err, res)
			}
		})
	}
	l.Report(b, "op", 1)
}

// workerCPU is the CPU the benchmark's workers spent while it ran: the
// user and system time of its child processes (/proc, 10 ms resolution, so
// run enough iterations: -benchtime 2000x), with that of the workers that
// exited meanwhile (recycled every maxRunsPerWorker runs), which the
// process's RUSAGE_CHILDREN holds once they are waited for.
type workerCPU struct {
	on     bool
	before map[string]float64 // live children by pid and start time
	reaped float64            // RUSAGE_CHILDREN, ms
}

func startWorkerCPU(iso Isolation) *workerCPU {
	if iso != IsolateWorkers {
		return &workerCPU{}
	}
	return &workerCPU{on: true, before: childrenCPU(), reaped: reapedCPU()}
}

func childrenCPU() map[string]float64 {
	out := map[string]float64{}
	for _, pid := range benchutil.Children(os.Getpid()) {
		if st, ok := benchutil.ReadStat(pid); ok {
			out[fmt.Sprint(pid, "/", st.StartTime)] = st.CPUMillis
		}
	}
	return out
}

func reapedCPU() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e6
}

// report adds worker-cpu-µs/<unit>: the workers' CPU over the benchmark's
// iterations, per unit (per times an iteration).
func (w *workerCPU) report(b *testing.B, unit string, per int) {
	if !w.on || b.N == 0 {
		return
	}
	ms := reapedCPU() - w.reaped
	after := childrenCPU()
	for k, v := range after {
		ms += v - w.before[k] // a worker started meanwhile: all of its CPU
	}
	for k, v := range w.before {
		if _, ok := after[k]; !ok {
			ms -= v // reaped: RUSAGE_CHILDREN has all of it, this much from before
		}
	}
	b.ReportMetric(ms*1000/float64(b.N*per), "worker-cpu-µs/"+unit)
}

// BenchmarkHostCallsTogether100Worker: a snippet starting 100 calls at once
// (Promise.all), whose call frames cross to the parent together; per call.
func BenchmarkHostCallsTogether100Worker(b *testing.B) {
	rt, err := New(Options{Isolation: IsolateWorkers, Workers: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer rt.Close()
	warm(b, rt)
	host := HostFunc(func(ctx context.Context, c ToolCall) (json.RawMessage, error) {
		return json.RawMessage(`{"ok":true}`), nil
	})
	code := "const rs = await Promise.all(Array.from({ length: 100 }, (_, i) => demo.echo({ i })));\nreturn rs.filter((r: any) => r.ok).length"
	var l benchutil.Latencies
	for b.Loop() {
		l.Time(func() {
			res, err := rt.Run(context.Background(), Request{Code: code, Tools: demoTools, Host: host})
			if err != nil || !res.OK || string(res.Value) != "100" {
				b.Fatalf("%v %+v", err, res)
			}
		})
	}
	l.Report(b, "call", 100)
}

// BenchmarkDenoRun is the peer: `deno run` of the same snippet, one process
// per snippet, as most code-mode runtimes do it. Deno has no top-level
// return: it prints the same result instead.
func BenchmarkDenoRun(b *testing.B) {
	benchutil.Deno(b, "const xs = [1, 2, 3];\nconsole.log(JSON.stringify({ sum: xs.reduce((a, b) => a + b, 0) }));\n", `{"sum":6}`)
}

// BenchmarkResultList200InProcess: a snippet returning 200 objects of a
// list's shape (nested objects, arrays, strings with escapes), whose walk to
// the run's JSON result (serialize.go) is most of the run; per run, with
// its allocations.
func BenchmarkResultList200InProcess(b *testing.B) {
	rt := runtimes(b)[InProcess]
	code := "return Array.from({ length: 200 }, (_, i) => ({ id: i, name: 'item ' + i, tags: ['a', 'b'], " +
		"owner: { login: 'ann', id: 7 }, score: i / 3, open: true, note: 'line\\n2' }))"
	b.ReportAllocs()
	for b.Loop() {
		if res := run(b, rt, Request{Code: code}); !res.OK {
			b.Fatal(res.Error)
		}
	}
}
