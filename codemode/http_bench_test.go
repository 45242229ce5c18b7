package codemode

import (
	"context"
	"net/http/httptest"
	"sort"
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

// BenchmarkExecuteCodeOverHTTP is the execute_code path as an agent meets
// it: the real streamable-HTTP front end (in this process, so a CPU profile
// of the benchmark sees it: go test -cpuprofile), code mode and worker
// subprocesses, driven by mcp-go's client, beside a plain MCP round trip
// (gateway__list_servers) in the same run. It reports the p50 of each, the
// difference, and the throughput of 16 concurrent clients of each.
func BenchmarkExecuteCodeOverHTTP(b *testing.B) {
	e := newEngineFull(b, map[string]*server.MCPServer{"demo": mcpserver.New()}, gateway.DefaultSettings(),
		runtime.Options{Workers: 2, MaxQueue: 32}, Options{})
	front := frontend.New(e.gw)
	b.Cleanup(front.Close)
	if err := e.Install(front); err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(front.HTTPHandler(frontend.HTTPOptions{MaxSessionsPerPrincipal: 1000}))
	b.Cleanup(srv.Close)
	newClient := func() *client.Client {
		c, err := client.NewStreamableHttpClient(srv.URL)
		if err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		if err := c.Start(ctx); err != nil {
			b.Fatal(err)
		}
		if _, err := c.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{ProtocolVersion: mcp.ProtocolVersion20251125,
			ClientInfo: mcp.Implementation{Name: "bench", Version: "1"}}}); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { c.Close() })
		return c
	}
	plain := mcp.CallToolRequest{Params: mcp.CallToolParams{Name: frontend.HubListServers}}
	code := mcp.CallToolRequest{Params: mcp.CallToolParams{Name: ExecuteToolName, Arguments: map[string]any{"code": "return 6*7"}}}
	call := func(c *client.Client, req mcp.CallToolRequest) time.Duration {
		t0 := time.Now()
		res, err := c.CallTool(context.Background(), req)
		if err != nil || res.IsError {
			b.Fatalf("%s: %v %v", req.Params.Name, err, res)
		}
		return time.Since(t0)
	}
	c := newClient()
	for range 20 { // warm: workers, caches, connections
		call(c, plain)
		call(c, code)
	}
	var plainLat, codeLat []time.Duration
	for b.Loop() {
		plainLat = append(plainLat, call(c, plain))
		codeLat = append(codeLat, call(c, code))
	}
	p50 := func(d []time.Duration) float64 {
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		return float64(d[len(d)/2].Microseconds())
	}
	pp, cp := p50(plainLat), p50(codeLat)
	b.ReportMetric(pp, "plain-p50-µs")
	b.ReportMetric(cp, "execute-p50-µs")
	b.ReportMetric(cp-pp, "added-p50-µs")

	// Throughput: 16 clients, each its own session, for a fixed time.
	clients := make([]*client.Client, 16)
	for i := range clients {
		clients[i] = newClient()
	}
	throughput := func(req mcp.CallToolRequest) float64 {
		var n int64
		var mu sync.Mutex
		var wg sync.WaitGroup
		deadline := time.Now().Add(time.Second)
		for _, cl := range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				k := int64(0)
				for time.Now().Before(deadline) {
					call(cl, req)
					k++
				}
				mu.Lock()
				n += k
				mu.Unlock()
			}()
		}
		wg.Wait()
		return float64(n)
	}
	pt, ct := throughput(plain), throughput(code)
	b.ReportMetric(pt, "plain-per-s")
	b.ReportMetric(ct, "execute-per-s")
	b.ReportMetric(ct/pt, "throughput-ratio")
}
