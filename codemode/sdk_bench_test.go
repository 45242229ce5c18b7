package codemode

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

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
	script := `
const [url, sdk] = process.argv.slice(2);
const { Client } = await import(sdk + "/dist/esm/client/index.js");
const { StreamableHTTPClientTransport } = await import(sdk + "/dist/esm/client/streamableHttp.js");
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
  lat.sort((a, b) => a - b);
  return { rate: lat.length / (ms / 1000), p50: lat[Math.floor(lat.length / 2)] };
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
		outb, err := cmd.Output()
		if err != nil {
			b.Fatalf("%v: %s", err, outb)
		}
		var got struct {
			Plain, Trivial []struct{ Rate, P50 float64 }
		}
		if err := json.Unmarshal(outb, &got); err != nil {
			b.Fatalf("%v: %s", err, outb)
		}
		plain := (got.Plain[0].Rate + got.Plain[1].Rate) / 2
		trivial := (got.Trivial[0].Rate + got.Trivial[1].Rate) / 2
		b.ReportMetric(plain, "plain-calls/s")
		b.ReportMetric(trivial, "execute-calls/s")
		b.ReportMetric(trivial/plain, "share-of-plain")
		b.ReportMetric((got.Plain[0].P50+got.Plain[1].P50)/2*1000, "plain-p50-µs")
		b.ReportMetric((got.Trivial[0].P50+got.Trivial[1].P50)/2*1000, "execute-p50-µs")
	}
}
