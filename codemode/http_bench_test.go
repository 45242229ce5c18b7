package codemode

import (
	"context"
	"fmt"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/sandboxrt/sandbox/examples/mcpserver"
	"github.com/sandboxrt/sandbox/gateway"
	"github.com/sandboxrt/sandbox/gateway/frontend"
	"github.com/sandboxrt/sandbox/runtime"
)

// httpRig is the execute_code path as an agent meets it: the real
// streamable-HTTP front end (in this process, so a CPU profile of the
// benchmark sees it: go test -cpuprofile), code mode and worker
// subprocesses (as many as CPUs, as sandbox serve has by default), and
// mcp-go's client, one session per client.
type httpRig struct {
	b   *testing.B
	url string
}

func newHTTPRig(b *testing.B) *httpRig {
	e := newEngineFull(b, map[string]*server.MCPServer{"demo": mcpserver.New()}, gateway.DefaultSettings(),
		runtime.Options{MaxQueue: 256}, Options{})
	front := frontend.New(e.gw)
	b.Cleanup(front.Close)
	serveTools(b, front, e)
	srv := httptest.NewServer(front.HTTPHandler(frontend.HTTPOptions{MaxSessionsPerPrincipal: 1000}))
	b.Cleanup(srv.Close)
	return &httpRig{b: b, url: srv.URL}
}

func (r *httpRig) client() *client.Client {
	c, err := client.NewStreamableHttpClient(r.url)
	if err != nil {
		r.b.Fatal(err)
	}
	return startClient(r.b, c)
}

// call makes one call and returns its latency; busy reports a BUSY answer
// (the run queue was full), which a load test counts rather than fails on.
func (r *httpRig) call(c *client.Client, req mcp.CallToolRequest) (d time.Duration, busy bool) {
	t0 := time.Now()
	res, err := c.CallTool(context.Background(), req)
	d = time.Since(t0)
	if err == nil && res.IsError && len(res.Content) > 0 {
		if tc, ok := res.Content[0].(mcp.TextContent); ok && strings.HasPrefix(tc.Text, "BUSY") {
			return d, true
		}
	}
	if err != nil || res.IsError {
		r.b.Fatalf("%s: %v %+v", req.Params.Name, err, res)
	}
	return d, false
}

var (
	plainCall  = mcp.CallToolRequest{Params: mcp.CallToolParams{Name: frontend.HubListServers}}
	trivialRun = mcp.CallToolRequest{Params: mcp.CallToolParams{Name: ExecuteToolName, Arguments: map[string]any{"code": "return 6*7"}}}
	fiveCalls  = mcp.CallToolRequest{Params: mcp.CallToolParams{Name: ExecuteToolName, Arguments: map[string]any{"code": `const out = [];
for (let i = 0; i < 5; i++) out.push((await demo.listProjects({})).length);
return out`}}}
)

func percentile(d []time.Duration, p float64) float64 {
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return float64(d[int(float64(len(d)-1)*p)].Microseconds())
}

// BenchmarkExecuteCodeOverHTTP: one client, execute_code of a trivial
// snippet beside a plain MCP round trip (gateway__list_servers), alternated
// in the same run: p50 of each and what execute_code adds.
func BenchmarkExecuteCodeOverHTTP(b *testing.B) {
	r := newHTTPRig(b)
	c := r.client()
	for range 20 { // warm: workers, caches, connections
		r.call(c, plainCall)
		r.call(c, trivialRun)
	}
	var plain, code []time.Duration
	cpu0 := treeCPU()
	for b.Loop() {
		d, _ := r.call(c, plainCall)
		plain = append(plain, d)
		d, _ = r.call(c, trivialRun)
		code = append(code, d)
	}
	// The CPU of a plain call and a run together, client included (this
	// process, its workers, its upstream).
	b.ReportMetric((treeCPU()-cpu0)*1e3/float64(b.N), "cpu-µs/pair")
	pp, cp := percentile(plain, 0.5), percentile(code, 0.5)
	b.ReportMetric(pp, "plain-p50-µs")
	b.ReportMetric(cp, "execute-p50-µs")
	b.ReportMetric(cp-pp, "added-p50-µs")
}

// BenchmarkServeLoad is `make load`: 1, 4, 16 and 64 concurrent clients
// (a session each) making one kind of call for loadSpan each: the plain
// round trip, execute_code of a trivial snippet, and of a snippet making
// five tool calls. Latency percentiles, throughput, and for the snippets
// the throughput as a share of the plain round trip's at the same
// concurrency, measured in the same run.
func BenchmarkServeLoad(b *testing.B) {
	const loadSpan = 2 * time.Second
	r := newHTTPRig(b)
	warm := r.client()
	for range 20 {
		r.call(warm, trivialRun)
		r.call(warm, fiveCalls)
	}
	for _, n := range []int{1, 4, 16, 64} {
		clients := make([]*client.Client, n)
		for i := range clients {
			clients[i] = r.client()
		}
		plainRate := 0.0
		for _, kind := range []struct {
			name string
			req  mcp.CallToolRequest
		}{{"plain", plainCall}, {"trivial", trivialRun}, {"five-calls", fiveCalls}} {
			b.Run(fmt.Sprintf("clients=%d/%s", n, kind.name), func(b *testing.B) {
				var mu sync.Mutex
				var lat []time.Duration
				busy := 0
				for b.Loop() { // one measured span, whatever b.N
					var wg sync.WaitGroup
					deadline := time.Now().Add(loadSpan)
					for _, c := range clients {
						wg.Add(1)
						go func() {
							defer wg.Done()
							for time.Now().Before(deadline) {
								d, wasBusy := r.call(c, kind.req)
								mu.Lock()
								if wasBusy {
									busy++
								} else {
									lat = append(lat, d)
								}
								mu.Unlock()
							}
						}()
					}
					wg.Wait()
				}
				rate := float64(len(lat)) / (loadSpan.Seconds() * float64(b.N))
				b.ReportMetric(percentile(lat, 0.5), "p50-µs")
				b.ReportMetric(percentile(lat, 0.99), "p99-µs")
				b.ReportMetric(rate, "calls/s")
				b.ReportMetric(float64(busy), "busy")
				if kind.name == "plain" {
					plainRate = rate
				} else if plainRate > 0 {
					b.ReportMetric(rate/plainRate, "share-of-plain")
				}
			})
		}
	}
}
