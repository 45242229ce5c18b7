package codemode

import (
	"context"
	"fmt"
	"os"
	goruntime "runtime"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/sandboxrt/sandbox/gateway"
	"github.com/sandboxrt/sandbox/gateway/frontend"
	"github.com/sandboxrt/sandbox/vectorindex"
)

// BenchmarkLargeCatalogStart: how long a gateway and code mode over n tools
// take to be ready to search (connect, list, name, index), with a cold index
// directory and then a warm one (a restart), the heap they hold after, and a
// search's latency, over copies of the 341-tool corpus (targets: 10,000 tools ready in < 5 s cold and < 1 s warm,
// < 300 MB). The embedded lexicon is decoded once per process, by the first
// iteration, and the upstreams are in this process: the start of the real
// sandbox serve, lexicon and listing over HTTP included, is
// BenchmarkServeLargeCatalog in cmd/sandbox.
func BenchmarkLargeCatalogStart(b *testing.B) {
	corpus := loadCorpus(b)
	for _, copies := range []int{3, 30} { // 1,023 and 10,230 tools
		n := copies * len(corpus)
		dir := b.TempDir()
		servers := corpusServers(b, corpus, copies)
		for _, phase := range []string{"cold", "warm"} {
			b.Run(fmt.Sprintf("tools=%d/%s", n, phase), func(b *testing.B) {
				var heap uint64
				var search time.Duration
				for b.Loop() {
					if phase == "cold" {
						b.StopTimer()
						os.RemoveAll(dir)
						b.StartTimer()
					}
					goruntime.GC()
					var before, after goruntime.MemStats
					goruntime.ReadMemStats(&before)
					// As sandbox serve does: the index is read while the
					// gateway connects and lists.
					type opened struct {
						ix  *vectorindex.Index
						err error
					}
					ixc := make(chan opened, 1)
					go func() {
						ix, err := OpenIndex(Options{IndexDir: dir})
						ixc <- opened{ix, err}
					}()
					gw := startCorpusGateway(b, servers)
					o := <-ixc
					if o.err != nil {
						b.Fatal(o.err)
					}
					e, err := New(gw, nil, Options{IndexDir: dir, Index: o.ix})
					if err != nil {
						b.Fatal(err)
					}
					b.StopTimer()
					if got := e.ToolCount(); got != n {
						b.Fatalf("%d tools", got)
					}
					t0 := time.Now()
					if _, err := e.Search(context.Background(), SearchRequest{Intent: "list the open pull requests of a repository", K: 5}); err != nil {
						b.Fatal(err)
					}
					search = time.Since(t0)
					goruntime.GC()
					goruntime.ReadMemStats(&after)
					heap = after.HeapAlloc - min(after.HeapAlloc, before.HeapAlloc)
					e.Close()
					gw.Close()
					b.StartTimer()
				}
				b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/ready")
				b.ReportMetric(float64(heap)/(1<<20), "MiB-heap")
				b.ReportMetric(float64(search.Microseconds()), "µs/search")
			})
		}
	}
}

// BenchmarkToolsListLargeCatalog: tools/list of the MCP front end with
// every upstream tool exposed (--expose all) over 1,023 and 10,230 tools,
// through mcp-go's in-process client: what a client that lists everything
// waits for, and the size it receives.
func BenchmarkToolsListLargeCatalog(b *testing.B) {
	corpus := loadCorpus(b)
	for _, copies := range []int{3, 30} {
		n := copies * len(corpus)
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			gw := startCorpusGateway(b, corpusServers(b, corpus, copies))
			b.Cleanup(func() { gw.Close() })
			front := frontend.New(gw)
			b.Cleanup(front.Close)
			c, err := client.NewInProcessClient(front.MCPServer())
			if err != nil {
				b.Fatal(err)
			}
			startClient(b, c)
			ctx := context.Background()
			listed := 0
			for b.Loop() {
				res, err := c.ListTools(ctx, mcp.ListToolsRequest{})
				if err != nil {
					b.Fatal(err)
				}
				listed = len(res.Tools)
				for res.NextCursor != "" {
					res, err = c.ListTools(ctx, mcp.ListToolsRequest{PaginatedRequest: mcp.PaginatedRequest{Params: mcp.PaginatedParams{Cursor: res.NextCursor}}})
					if err != nil {
						b.Fatal(err)
					}
					listed += len(res.Tools)
				}
			}
			if listed < n {
				b.Fatalf("listed %d of %d tools", listed, n)
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/list")
		})
	}
}

// startCorpusGateway is a started gateway over in-process servers; the
// caller closes it.
func startCorpusGateway(b *testing.B, servers map[string]*server.MCPServer) *gateway.Gateway {
	b.Helper()
	cfg := &gateway.Config{Servers: map[string]*gateway.ServerConfig{}, Settings: gateway.DefaultSettings()}
	var opts []gateway.Option
	for name, s := range servers {
		opts = append(opts, gateway.WithInProcessServer(name, s, nil))
	}
	gw, err := gateway.New(cfg, opts...)
	if err != nil {
		b.Fatal(err)
	}
	if err := gw.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	return gw
}
