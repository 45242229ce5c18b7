package codemode

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sandboxrt/sandbox/gateway"
	"github.com/sandboxrt/sandbox/gateway/frontend"
	"github.com/sandboxrt/sandbox/internal/benchutil"
	"github.com/sandboxrt/sandbox/internal/testpeers"
	"github.com/sandboxrt/sandbox/runtime"
)

// BenchmarkServeLoadReference is `make load`'s reference column: sandbox's
// streamable HTTP front end and, in the same run, the reference sandbox
// (peers/reference/quickjs-server.mjs: an MCP server on the official SDK
// that runs each snippet in a fresh quickjs-emscripten runtime), both over
// the same upstream (the example tracker, a stdio process of this test
// binary) and both driven by 16 clients of the official TypeScript SDK.
// Spans of 2 s alternate between the two targets, three rounds; the
// figures are medians. For each target: runs/s of `return 6*7` and of the
// five-call snippet at 16 clients, the trivial run's p50 with one client,
// and the CPU per run of the target's processes (serve, its workers and
// its upstream; the reference server and its upstream), the client's
// apart, and then the client's own CPU per run of each target. Ratios are
// sandbox over the reference.
func BenchmarkServeLoadReference(b *testing.B) {
	sdk := testpeers.Package(b, "@modelcontextprotocol/sdk")
	testpeers.Package(b, "quickjs-emscripten")
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	e := upstreamEngine(b, "stdio", gateway.DefaultSettings(), runtime.Options{MaxQueue: 256})
	front := frontend.New(e.gw)
	b.Cleanup(front.Close)
	serveTools(b, front, e)
	srv := httptest.NewServer(front.HTTPHandler(frontend.HTTPOptions{MaxSessionsPerPrincipal: 1000}))
	b.Cleanup(srv.Close)

	ref := exec.Command(testpeers.Node(b), filepath.Join("..", "peers", "reference", "quickjs-server.mjs"), "0", exe)
	ref.Env = append(testpeers.Env(b), upstreamEnv+"=stdio")
	refURL := startLine(b, ref, regexp.MustCompile(`listening on (http://\S+/mcp)`))

	script := `
const [sdk, ...urls] = process.argv.slice(2);
const { Client } = await import(sdk + "/dist/esm/client/index.js");
const { StreamableHTTPClientTransport } = await import(sdk + "/dist/esm/client/streamableHttp.js");
const lines = (async function* () { let buf = ""; for await (const c of process.stdin) { buf += c; let i; while ((i = buf.indexOf("\n")) >= 0) { yield buf.slice(0, i); buf = buf.slice(i + 1); } } })();
const sync = async (what) => { process.stderr.write(what + "\n"); await lines.next(); };
const trivial = { name: "execute_code", arguments: { code: "return 6*7" } };
const five = { name: "execute_code", arguments: { code: "const out = [];\nfor (let i = 0; i < 5; i++) out.push((await demo.listProjects({})).length);\nreturn out" } };
const targets = [];
for (const url of urls) {
  const clients = [];
  for (let i = 0; i < 16; i++) {
    const c = new Client({ name: "load-" + i, version: "1.0.0" });
    await c.connect(new StreamableHTTPClientTransport(new URL(url)));
    clients.push(c);
  }
  for (const c of clients) { await c.callTool(trivial); await c.callTool(five); }
  targets.push(clients);
}
async function span(t, clients, req, ms) {
  await sync("span " + t);
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
  await sync("end " + t);
  lat.sort((a, b) => a - b);
  return { rate: lat.length / (ms / 1000), p50: lat[Math.floor(lat.length / 2)], calls: lat.length, clientCPU: (cpu.user + cpu.system) / 1000 / lat.length };
}
const out = targets.map(() => ({ trivial: [], five: [], single: [] }));
for (let round = 0; round < 3; round++) {
  for (const [t, clients] of targets.entries()) {
    out[t].trivial.push(await span(t, clients, trivial, 2000));
    out[t].five.push(await span(t, clients, five, 2000));
    out[t].single.push(await span(t, clients.slice(0, 1), trivial, 1000));
  }
}
process.stdout.write(JSON.stringify(out));
process.exit(0);
`
	path := filepath.Join(b.TempDir(), "reference-load.mjs")
	if err := os.WriteFile(path, []byte(script), 0o600); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		driver := exec.Command(testpeers.Node(b), path, "file://"+sdk, srv.URL+"/mcp", refURL)
		driver.Env = testpeers.Env(b)
		stdin, err := driver.StdinPipe()
		if err != nil {
			b.Fatal(err)
		}
		stderr, err := driver.StderrPipe()
		if err != nil {
			b.Fatal(err)
		}
		var stdout strings.Builder
		driver.Stdout = &stdout
		if err := driver.Start(); err != nil {
			b.Fatal(err)
		}
		// targetCPU is the CPU of target 0 (this process, its workers and
		// its upstream: every child but the driver and the reference, and
		// the children reaped so far, such as a worker that retired within
		// a span) or target 1 (the reference server and its upstream),
		// split as [the server, its sandboxes, its upstream]; the
		// reference's sandboxes run inside its server.
		targetCPU := func(t string) [3]float64 {
			if t == "1" {
				var out [3]float64
				if st, ok := benchutil.ReadStat(ref.Process.Pid); ok {
					out[0] = st.CPUMillis
				}
				for _, c := range benchutil.Children(ref.Process.Pid) {
					if st, ok := benchutil.ReadStat(c); ok {
						out[2] += st.CPUMillis
					}
				}
				return out
			}
			var ru syscall.Rusage
			_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru)
			out := [3]float64{selfCPUMillis(), float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e6, 0}
			for _, pid := range benchutil.Children(os.Getpid()) {
				if pid != driver.Process.Pid && pid != ref.Process.Pid {
					if st, ok := benchutil.ReadStat(pid); ok {
						if isUpstream(pid) {
							out[2] += st.CPUMillis
						} else {
							out[1] += st.CPUMillis
						}
					}
				}
			}
			return out
		}
		var cpu [2][][3]float64 // per span, in the driver's order
		var errText []string
		sc := bufio.NewScanner(stderr)
		var cpu0 [3]float64
		for sc.Scan() {
			what, t, _ := strings.Cut(sc.Text(), " ")
			switch what {
			case "span":
				cpu0 = targetCPU(t)
			case "end":
				i := 0
				if t == "1" {
					i = 1
				}
				c1 := targetCPU(t)
				for k := range c1 {
					c1[k] -= cpu0[k]
				}
				cpu[i] = append(cpu[i], c1)
			default:
				errText = append(errText, sc.Text())
				continue
			}
			fmt.Fprintln(stdin, "go")
		}
		if err := driver.Wait(); err != nil {
			b.Fatalf("%v: %s", err, strings.Join(errText, "\n"))
		}
		var got []struct {
			Trivial, Five, Single []struct{ Rate, P50, Calls, ClientCPU float64 }
		}
		if err := json.Unmarshal([]byte(stdout.String()), &got); err != nil || len(got) != 2 {
			b.Fatalf("%v: %s", err, stdout.String())
		}
		type figures struct {
			trivialRate, fiveRate, singleP50, trivialCPU, fiveCPU float64
			trivialClientCPU, fiveClientCPU                       float64
			fiveParts                                             [3]float64
		}
		sum := func(c [3]float64) float64 { return c[0] + c[1] + c[2] }
		var f [2]figures
		for t := range 2 {
			var tr, fr, sp, tc, fc, tcc, fcc []float64
			var parts [3][]float64
			for r := range 3 {
				tr = append(tr, got[t].Trivial[r].Rate)
				fr = append(fr, got[t].Five[r].Rate)
				sp = append(sp, got[t].Single[r].P50)
				tcc = append(tcc, got[t].Trivial[r].ClientCPU)
				fcc = append(fcc, got[t].Five[r].ClientCPU)
				// Spans of a round: trivial, five, single.
				tc = append(tc, sum(cpu[t][3*r])/got[t].Trivial[r].Calls)
				fc = append(fc, sum(cpu[t][3*r+1])/got[t].Five[r].Calls)
				for k := range parts {
					parts[k] = append(parts[k], cpu[t][3*r+1][k]/got[t].Five[r].Calls)
				}
			}
			f[t] = figures{median(tr), median(fr), median(sp), median(tc), median(fc), median(tcc), median(fcc),
				[3]float64{median(parts[0]), median(parts[1]), median(parts[2])}}
		}
		for t, name := range []string{"sandbox", "quickjs"} {
			b.ReportMetric(f[t].trivialRate, name+"-trivial-runs/s")
			b.ReportMetric(f[t].fiveRate, name+"-five-runs/s")
			b.ReportMetric(f[t].singleP50*1000, name+"-trivial-p50-µs")
			b.ReportMetric(f[t].trivialCPU*1000, name+"-trivial-cpu-µs/run")
			b.ReportMetric(f[t].fiveCPU*1000, name+"-five-cpu-µs/run")
			// Where a five-call run's CPU goes (medians of each part, so
			// they need not add up to the whole's median).
			b.ReportMetric(f[t].fiveParts[0]*1000, name+"-five-server-cpu-µs/run")
			if t == 0 {
				b.ReportMetric(f[t].fiveParts[1]*1000, name+"-five-workers-cpu-µs/run")
			}
			b.ReportMetric(f[t].fiveParts[2]*1000, name+"-five-upstream-cpu-µs/run")
			// What the 16 SDK clients spend on a run of the target: the
			// machine's other tenant, which a target's answers can make
			// busier (an event stream costs a client more to read than one
			// JSON object).
			b.ReportMetric(f[t].trivialClientCPU*1000, name+"-trivial-client-cpu-µs/run")
			b.ReportMetric(f[t].fiveClientCPU*1000, name+"-five-client-cpu-µs/run")
		}
		b.ReportMetric(f[0].trivialRate/f[1].trivialRate, "trivial-runs-ratio")
		b.ReportMetric(f[0].fiveRate/f[1].fiveRate, "five-runs-ratio")
		b.ReportMetric(f[0].fiveCPU/f[1].fiveCPU, "five-cpu-ratio")
	}
}

// startLine starts cmd and returns the first submatch of re in a line of
// its stderr; the process is killed when the benchmark ends.
func startLine(b *testing.B, cmd *exec.Cmd, re *regexp.Regexp) string {
	b.Helper()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	select {
	case url := <-found:
		return url
	case <-time.After(60 * time.Second):
		b.Fatalf("%s did not start within 60 s", cmd.Path)
	}
	return ""
}

// isUpstream reports whether pid is this test binary serving as the
// example tracker (its environment names upstreamEnv).
func isUpstream(pid int) bool {
	env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	return err == nil && slices.Contains(strings.Split(string(env), "\x00"), upstreamEnv+"=stdio")
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
