package codemode

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/sandboxrt/sandbox/internal/benchutil"
	"github.com/sandboxrt/sandbox/internal/testpeers"
)

// BenchmarkServeLoadSDKClient is issue 15's own measurement: 16 clients of
// the official TypeScript SDK (one Node process, a session each) against
// the streamable HTTP front end, calling gateway__list_servers (the plain
// round trip) and execute_code of a trivial snippet in turn for 2 s
// spans, interleaved twice; the share is execute_code's throughput over the
// plain round trip's in the same run. Unlike BenchmarkServeLoad's
// in-process Go client, the client here costs what a real one does, and
// shares the machine with the server as it would on one host.
func BenchmarkServeLoadSDKClient(b *testing.B) {
	sdk := testpeers.Package(b, "@modelcontextprotocol/sdk")
	r := newHTTPRig(b)
	// Around each span the script says "span" and "end" on stderr and waits
	// for a line on stdin, so that this side reads the CPU serve (this
	// process) and the workers (its other children) used in the span.
	script := `
const [url, sdk] = process.argv.slice(2);
const { Client } = await import(sdk + "/dist/esm/client/index.js");
const { StreamableHTTPClientTransport } = await import(sdk + "/dist/esm/client/streamableHttp.js");
const lines = (async function* () { let buf = ""; for await (const c of process.stdin) { buf += c; let i; while ((i = buf.indexOf("\n")) >= 0) { yield buf.slice(0, i); buf = buf.slice(i + 1); } } })();
const sync = async (what) => { process.stderr.write(what + "\n"); await lines.next(); };
const clients = [];
for (let i = 0; i < 16; i++) {
  const c = new Client({ name: "load-" + i, version: "1.0.0" });
  await c.connect(new StreamableHTTPClientTransport(new URL(url)));
  clients.push(c);
}
const plain = { name: "gateway__list_servers", arguments: {} };
const trivial = { name: "execute_code", arguments: { code: "return 6*7" } };
for (const c of clients) { await c.callTool(plain); await c.callTool(trivial); }
async function span(req, ms) {
  await sync("span");
  const cpu0 = process.cpuUsage();
  const end = Date.now() + ms;
  const lat = [];
  await Promise.all(clients.map(async (c) => {
    while (Date.now() < end) {
      const t0 = performance.now();
      const res = await c.callTool(req);
      if (res.isError) throw new Error(JSON.stringify(res));
      lat.push(performance.now() - t0);
    }
  }));
  const cpu = process.cpuUsage(cpu0);
  await sync("end");
  lat.sort((a, b) => a - b);
  return { rate: lat.length / (ms / 1000), p50: lat[Math.floor(lat.length / 2)], calls: lat.length, cpuMs: (cpu.user + cpu.system) / 1000 };
}
const out = { plain: [], trivial: [] };
for (let i = 0; i < 2; i++) {
  out.plain.push(await span(plain, 2000));
  out.trivial.push(await span(trivial, 2000));
}
process.stdout.write(JSON.stringify(out));
process.exit(0);
`
	path := filepath.Join(b.TempDir(), "load.mjs")
	if err := os.WriteFile(path, []byte(script), 0o600); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		cmd := exec.Command(testpeers.Node(b), path, r.url+"/mcp", "file://"+sdk)
		cmd.Env = testpeers.Env(b)
		stdin, err := cmd.StdinPipe()
		if err != nil {
			b.Fatal(err)
		}
		stderr, err := cmd.StderrPipe()
		if err != nil {
			b.Fatal(err)
		}
		var stdout strings.Builder
		cmd.Stdout = &stdout
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		// The spans alternate plain, execute_code, plain, execute_code.
		var serveCPU, workerCPU [2]float64
		var errText []string
		sc := bufio.NewScanner(stderr)
		var self0, workers0 float64
		for n := 0; sc.Scan(); {
			switch sc.Text() {
			case "span":
				self0, workers0 = selfCPUMillis(), childrenCPUMillis(cmd.Process.Pid)
			case "end":
				serveCPU[n/2%2] += selfCPUMillis() - self0
				workerCPU[n/2%2] += childrenCPUMillis(cmd.Process.Pid) - workers0
			default:
				errText = append(errText, sc.Text())
				continue
			}
			n++
			fmt.Fprintln(stdin, "go")
		}
		if err := cmd.Wait(); err != nil {
			b.Fatalf("%v: %s", err, strings.Join(errText, "\n"))
		}
		var got struct {
			Plain, Trivial []struct{ Rate, P50, Calls, CPUMs float64 }
		}
		if err := json.Unmarshal([]byte(stdout.String()), &got); err != nil {
			b.Fatalf("%v: %s", err, stdout.String())
		}
		plain := (got.Plain[0].Rate + got.Plain[1].Rate) / 2
		trivial := (got.Trivial[0].Rate + got.Trivial[1].Rate) / 2
		b.ReportMetric(plain, "plain-calls/s")
		b.ReportMetric(trivial, "execute-calls/s")
		b.ReportMetric(trivial/plain, "share-of-plain")
		b.ReportMetric((got.Plain[0].P50+got.Plain[1].P50)/2*1000, "plain-p50-µs")
		b.ReportMetric((got.Trivial[0].P50+got.Trivial[1].P50)/2*1000, "execute-p50-µs")
		// CPU per call, where it goes: the client (Node), serve, the
		// workers. The client alone is more than one of the two cores.
		plainCalls, trivialCalls := got.Plain[0].Calls+got.Plain[1].Calls, got.Trivial[0].Calls+got.Trivial[1].Calls
		b.ReportMetric((got.Plain[0].CPUMs+got.Plain[1].CPUMs)/plainCalls*1000, "client-cpu-µs/plain")
		b.ReportMetric((got.Trivial[0].CPUMs+got.Trivial[1].CPUMs)/trivialCalls*1000, "client-cpu-µs/execute")
		b.ReportMetric(serveCPU[0]/plainCalls*1000, "serve-cpu-µs/plain")
		b.ReportMetric(serveCPU[1]/trivialCalls*1000, "serve-cpu-µs/execute")
		b.ReportMetric(workerCPU[1]/trivialCalls*1000, "worker-cpu-µs/execute")
	}
}

// selfCPUMillis is the CPU time this process has used.
func selfCPUMillis() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e6
}

// childrenCPUMillis is the CPU time this process's running children but
// skip have used: the runtime's workers. A worker that exits within a span
// takes its time with it.
func childrenCPUMillis(skip int) float64 {
	total := 0.0
	for _, pid := range benchutil.Children(os.Getpid()) {
		if st, ok := benchutil.ReadStat(pid); ok && pid != skip {
			total += st.CPUMillis
		}
	}
	return total
}
