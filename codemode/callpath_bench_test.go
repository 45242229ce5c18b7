package codemode

import (
	"context"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/sandboxrt/sandbox/examples/mcpserver"
	"github.com/sandboxrt/sandbox/gateway"
	"github.com/sandboxrt/sandbox/internal/benchutil"
	"github.com/sandboxrt/sandbox/runtime"
)

// upstreamEnv makes this test binary the example tracker over stdio: the
// upstream of BenchmarkToolCallPath, a process of its own as in serve.
const upstreamEnv = "SANDBOX_CODEMODE_TEST_UPSTREAM"

func serveUpstreamIfChild() {
	if os.Getenv(upstreamEnv) != "stdio" {
		return
	}
	err := server.NewStdioServer(mcpserver.New()).Listen(context.Background(), os.Stdin, os.Stdout)
	if err != nil {
		os.Exit(1)
	}
	os.Exit(0)
}

// benchUpstreamProtocolEnv pins the protocol version a benchmark's stdio
// upstream is spoken to in (a benchmark's only: tests negotiate). Unset,
// the gateway negotiates the newest (2026-07-28, a stateless request with
// its _meta each call); "2025-11-25" is the era the official SDK's client
// (the reference sandbox's) speaks, so that the two pay the same upstream.
const benchUpstreamProtocolEnv = "SANDBOX_BENCH_UPSTREAM_PROTOCOL"

// callPathCalls is how many tool calls the benchmark's snippet awaits,
// one after another.
const callPathCalls = 20

// BenchmarkToolCallPath is the whole per-call path of a snippet's tool
// call, as serve runs it: the snippet's await in a worker subprocess, the
// frame to this process, the gateway's pipeline (validation, policy,
// limits, log, metrics), the upstream (the example tracker, a stdio
// process) and back into the VM. Beside it, in the same run, the same
// snippet with each part in process, so the cost of each hop shows:
//
//   - worker/stdio: the path as in serve;
//   - worker/inproc: the upstream in process (no upstream pipe);
//   - inproc/inproc: the VM in process too (no worker frame).
//
// Reported per tool call: p50 and p99 of the run's wall time over its
// calls, and CPU (this process, the worker and the upstream, from /proc,
// whose 10 ms ticks are fine over a run of thousands of calls), then this
// process's alone (serve-cpu: what serve spends on a call).
func BenchmarkToolCallPath(b *testing.B) {
	code := "let n = 0;\nfor (let i = 0; i < " + strconv.Itoa(callPathCalls) + "; i++) n += (await demo.listProjects({})).length;\nreturn n"
	for _, c := range []struct {
		name     string
		iso      runtime.Isolation
		upstream string
	}{{"worker/stdio", runtime.IsolateWorkers, "stdio"}, {"worker/inproc", runtime.IsolateWorkers, "inproc"}, {"inproc/inproc", runtime.InProcess, "inproc"}} {
		b.Run(c.name, func(b *testing.B) {
			e := upstreamEngine(b, c.upstream, gateway.DefaultSettings(), runtime.Options{Isolation: c.iso, Workers: 1})
			run := func() {
				res, err := e.Execute(context.Background(), ExecuteRequest{Code: code})
				if err != nil || !res.OK {
					b.Fatalf("%v %+v", err, res)
				}
			}
			for range 20 { // warm: the worker, the transpile cache, the upstream
				run()
			}
			cpu0, self0 := treeCPU(), selfCPU()
			var l benchutil.Latencies
			for b.Loop() {
				l.Time(run)
			}
			l.Report(b, "call", callPathCalls)
			b.ReportMetric((treeCPU()-cpu0)*1e3/float64(b.N*callPathCalls), "cpu-µs/call")
			b.ReportMetric((selfCPU()-self0)*1e3/float64(b.N*callPathCalls), "serve-cpu-µs/call")
		})
	}
}

// upstreamEngine is an engine over the example tracker as "demo": a
// stdio process of this test binary (upstream "stdio"), or in process
// ("inproc").
func upstreamEngine(tb testing.TB, upstream string, settings gateway.Settings, rtOpts runtime.Options) *Engine {
	tb.Helper()
	if upstream == "inproc" {
		return newEngineFull(tb, map[string]*server.MCPServer{"demo": mcpserver.New()}, settings, rtOpts, Options{})
	}
	exe, err := os.Executable()
	if err != nil {
		tb.Fatal(err)
	}
	var pinned string
	if _, bench := tb.(*testing.B); bench {
		pinned = os.Getenv(benchUpstreamProtocolEnv)
	}
	cfg := &gateway.Config{Settings: settings, Servers: map[string]*gateway.ServerConfig{
		"demo": {Name: "demo", Transport: gateway.TransportStdio, Command: exe, Env: map[string]string{upstreamEnv: "stdio"}, ProtocolVersion: pinned}}}
	gw, err := gateway.New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := gw.Start(ctx); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { gw.Close() })
	rt, err := runtime.New(rtOpts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { rt.Close() })
	e, err := New(gw, rt, Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { e.Close() })
	return e
}

// selfCPU is the CPU milliseconds this process (serve's part: code mode,
// the gateway, the runtime's side of the worker) has used so far.
func selfCPU() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e6
}

// treeCPU is the CPU milliseconds this process and its live children have
// used so far.
func treeCPU() float64 {
	ms := selfCPU()
	for _, pid := range benchutil.Children(os.Getpid()) {
		if st, ok := benchutil.ReadStat(pid); ok {
			ms += st.CPUMillis
		}
	}
	return ms
}
