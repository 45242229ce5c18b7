package main

import (
	"context"
	"fmt"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// BenchmarkReplicas is the same load on one replica in memory, one replica
// on Redis, and three replicas on Redis behind a round-robin balancer: 8
// clients, each running snippets that make one rate-limited tool call and
// one sandbox.store write (both need Redis when it is configured), for 3 s.
// On this 2-core machine three replicas share the same cores, so the
// figure to read is what Redis adds per run, not a speed-up.
// BENCH_CODE replaces the snippet (to time one kind of Redis use alone).
func BenchmarkReplicas(b *testing.B) {
	srv := startSharedRedis(b)
	demo := exampleServerBinary(b)
	code := os.Getenv("BENCH_CODE")
	if code == "" {
		code = `await demo.listProjects({}); await sandbox.store.set("k", 1); return 1`
	}
	for _, setup := range []struct {
		name     string
		replicas int
		redis    bool
	}{{"one-replica-memory", 1, false}, {"one-replica-redis", 1, true}, {"three-replicas-redis", 3, true}} {
		b.Run(setup.name, func(b *testing.B) {
			redisCfg := ""
			if setup.redis {
				redisCfg = fmt.Sprintf(`, "gateway": {"redis": {"url": %q, "encryptionKey": "${SANDBOX_REDIS_KEY}", "keyPrefix": %q}}`, srv.URL(), setup.name+":")
			}
			cfg := writeConfig(b, fmt.Sprintf(`{"mcpServers": {"demo": {"command": %q, "rateLimit": {"perSecond": 100000, "burst": 100000}}}%s}`, demo, redisCfg))
			rr := &roundRobin{down: map[int]bool{}, marked: -1}
			for range setup.replicas {
				cmd := exec.Command(sandboxBinary(b), "serve", "-c", cfg, "--http", "127.0.0.1:0", "--log-level", "warn")
				u, _ := url.Parse(startLogged(b, cmd, listening))
				u.Path = ""
				rr.backends = append(rr.backends, u)
			}
			lb := httptest.NewServer(rr)
			b.Cleanup(lb.Close)
			clients := make([]*client.Client, 8)
			for i := range clients {
				clients[i] = httpClient(b, lb.URL+"/mcp", nil)
			}
			req := mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "execute_code", Arguments: map[string]any{"code": code}}}
			var mu sync.Mutex
			var lat []time.Duration
			for b.Loop() {
				var wg sync.WaitGroup
				deadline := time.Now().Add(3 * time.Second)
				for _, c := range clients {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for time.Now().Before(deadline) {
							t0 := time.Now()
							res, err := c.CallTool(context.Background(), req)
							d := time.Since(t0)
							if err != nil || res.IsError || !strings.Contains(toolText(res), `"ok":true`) {
								b.Errorf("execute_code: %v %s", err, toolText(res))
								return
							}
							mu.Lock()
							lat = append(lat, d)
							mu.Unlock()
						}
					}()
				}
				wg.Wait()
			}
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			b.ReportMetric(float64(len(lat))/(3*float64(b.N)), "runs/s")
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
		})
	}
}
