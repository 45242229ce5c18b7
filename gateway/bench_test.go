package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/sandboxrt/sandbox/gateway/internal/testserver"
	"github.com/sandboxrt/sandbox/gateway/internal/upstream"
	"github.com/sandboxrt/sandbox/internal/benchutil"
)

// The gateway's added latency per call: every iteration makes one call to
// the upstream directly (a raw tools/call through the same mcp-go transport
// the gateway uses, after the same handshake) and one through Gateway.Call,
// interleaved so that both see the same machine load. Reported: median and
// p99 of each, and the added median (gateway - direct).
//
//	go test -run '^$' -bench AddedLatency -benchtime 3000x ./gateway/

// directConn is an upstream connection without the gateway.
type directConn struct {
	tr   transport.Interface
	cl   *client.Client
	meta map[string]any
	seq  atomic.Int64
}

func newDirect(b *testing.B, tr transport.Interface) *directConn {
	b.Helper()
	// The same capabilities as the gateway advertises, so that the upstream
	// does the same work for both and only the gateway's own cost differs.
	cl := client.NewClient(tr, client.WithClientCapabilities(upstream.ClientCapabilities()))
	ctx := context.Background()
	if err := cl.Start(ctx); err != nil {
		b.Fatal(err)
	}
	res, err := cl.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{ClientInfo: mcp.Implementation{Name: "bench", Version: "1"}}})
	if err != nil {
		b.Fatal(err)
	}
	d := &directConn{tr: tr, cl: cl}
	if v := cl.ProtocolVersion(); mcp.IsModernProtocol(v) {
		caps, _ := json.Marshal(upstream.ClientCapabilities())
		d.meta = map[string]any{mcp.MetaKeyProtocolVersion: v, mcp.MetaKeyClientCapabilities: json.RawMessage(caps)} // as the gateway: no clientInfo per request
	}
	_ = res
	b.Cleanup(func() { cl.Close() })
	return d
}

// directParams are tools/call params encoded as the gateway encodes them.
type directParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Meta      map[string]any  `json:"_meta,omitempty"`
}

func (d *directConn) call(ctx context.Context) error {
	params, _ := json.Marshal(directParams{Name: "echo", Arguments: json.RawMessage(`{"text":"hello"}`), Meta: d.meta})
	id := mcp.NewRequestId("d-" + strconv.FormatInt(d.seq.Add(1), 10))
	resp, err := d.tr.SendRequest(ctx, transport.JSONRPCRequest{JSONRPC: "2.0", ID: id, Method: "tools/call", Params: json.RawMessage(params)})
	if err != nil {
		return err
	}
	if resp.Error != nil {
		return resp.Error.AsError()
	}
	// The gateway decodes the result; so does any real client.
	_, err = parseCallResult(resp.Result, false)
	return err
}

func benchGateway(b *testing.B, opts ...Option) *Gateway {
	return benchGatewayWith(b, nil, opts...)
}

// benchGatewayWith is benchGateway on a config of the benchmark's own.
func benchGatewayWith(b *testing.B, cfg *Config, opts ...Option) *Gateway {
	b.Helper()
	g, err := New(cfg, opts...)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { g.Close() })
	if err := g.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	return g
}

func stdioGateway(b *testing.B) *Gateway {
	b.Helper()
	exe, _ := os.Executable()
	cfg, err := ParseConfig("", []byte(`{"mcpServers": {"s": {"command": `+strconv.Quote(exe)+`, "env": {"`+testserver.EnvVar+`": "stdio"}}}, "gateway": {"healthInterval": "0s"}}`))
	if err != nil {
		b.Fatal(err)
	}
	g, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { g.Close() })
	if err := g.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	return g
}

// latencies collects per-call durations from many goroutines.
type latencies struct {
	mu            sync.Mutex
	direct, viaGW []time.Duration
}

func (l *latencies) add(direct, gw []time.Duration) {
	l.mu.Lock()
	l.direct = append(l.direct, direct...)
	l.viaGW = append(l.viaGW, gw...)
	l.mu.Unlock()
}

func quantile(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return d[int(float64(len(d)-1)*q)]
}

func (l *latencies) report(b *testing.B) {
	dm, gm := quantile(l.direct, 0.5), quantile(l.viaGW, 0.5)
	b.ReportMetric(float64(dm.Microseconds()), "direct-p50-µs")
	b.ReportMetric(float64(quantile(l.direct, 0.99).Microseconds()), "direct-p99-µs")
	b.ReportMetric(float64(gm.Microseconds()), "gateway-p50-µs")
	b.ReportMetric(float64(quantile(l.viaGW, 0.99).Microseconds()), "gateway-p99-µs")
	b.ReportMetric(float64((gm - dm).Microseconds()), "added-p50-µs")
	b.ReportMetric(0, "ns/op") // the pair's mean is not the point
}

func runPairs(b *testing.B, g *Gateway, tool string, d *directConn, parallel int) {
	ctx := context.Background()
	req := CallRequest{Tool: tool, Arguments: json.RawMessage(`{"text":"hello"}`)}
	one := func(dl, gl *[]time.Duration) {
		t0 := time.Now()
		if err := d.call(ctx); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if _, err := g.Call(ctx, req); err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		*dl = append(*dl, t1.Sub(t0))
		*gl = append(*gl, t2.Sub(t1))
	}
	for i := 0; i < 50; i++ { // warm up: compile the schema, fill pools
		var a, c []time.Duration
		one(&a, &c)
	}
	var l latencies
	b.ResetTimer()
	if parallel <= 1 {
		var dl, gl []time.Duration
		for i := 0; i < b.N; i++ {
			one(&dl, &gl)
		}
		l.add(dl, gl)
	} else {
		b.SetParallelism((parallel + 1) / 2) // GOMAXPROCS=2 here: 2 x 16 = 32 goroutines
		b.RunParallel(func(pb *testing.PB) {
			var dl, gl []time.Duration
			for pb.Next() {
				one(&dl, &gl)
			}
			l.add(dl, gl)
		})
	}
	b.StopTimer()
	l.report(b)
}

func BenchmarkAddedLatency(b *testing.B) {
	b.Run("inprocess/sequential", func(b *testing.B) {
		g := benchGateway(b, WithInProcessServer("mem", testserver.New(), nil))
		d := newDirect(b, transport.NewInProcessTransport(testserver.New()))
		runPairs(b, g, "mem:echo", d, 1)
	})
	b.Run("inprocess/concurrent32", func(b *testing.B) {
		g := benchGateway(b, WithInProcessServer("mem", testserver.New(), nil))
		d := newDirect(b, transport.NewInProcessTransport(testserver.New()))
		runPairs(b, g, "mem:echo", d, 32)
	})
	b.Run("inprocess/sequential-with-logs-and-metrics", func(b *testing.B) {
		g := benchGateway(b, WithInProcessServer("mem", testserver.New(), nil),
			WithLogger(slog.New(slog.NewJSONHandler(io.Discard, nil))), WithMetrics(prometheus.NewRegistry()))
		d := newDirect(b, transport.NewInProcessTransport(testserver.New()))
		runPairs(b, g, "mem:echo", d, 1)
	})
	// Policy (three rules, the last one matching), audit log and redaction
	// (ten secrets) on, beside the same calls with them off above.
	b.Run("inprocess/sequential-with-policy-audit-redaction", func(b *testing.B) {
		runPairs(b, policyAuditGateway(b), "mem:echo", newDirect(b, transport.NewInProcessTransport(testserver.New())), 1)
	})
	// The same with tracing on: every call a span exported (to a sink that
	// drops it) by the SDK's batch processor, as a configured OTLP export
	// would; the calls above run with OpenTelemetry's no-op provider.
	b.Run("inprocess/sequential-with-policy-audit-redaction-tracing", func(b *testing.B) {
		tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(discardExporter{}))
		otel.SetTracerProvider(tp)
		b.Cleanup(func() {
			_ = tp.Shutdown(context.Background())
			otel.SetTracerProvider(noop.NewTracerProvider())
		})
		runPairs(b, policyAuditGateway(b), "mem:echo", newDirect(b, transport.NewInProcessTransport(testserver.New())), 1)
	})
	exe, _ := os.Executable()
	stdioDirect := func(b *testing.B) *directConn {
		tr := transport.NewStdio(exe, []string{testserver.EnvVar + "=stdio"})
		return newDirect(b, tr)
	}
	b.Run("stdio/sequential", func(b *testing.B) {
		runPairs(b, stdioGateway(b), "s:echo", stdioDirect(b), 1)
	})
	b.Run("stdio/concurrent32", func(b *testing.B) {
		runPairs(b, stdioGateway(b), "s:echo", stdioDirect(b), 32)
	})
}

// BenchmarkRouteOnly is the gateway's own pipeline with an upstream that
// answers at once without any transport: lookup, validation, path check,
// limits and result decoding.
func BenchmarkValidateAndCheck(b *testing.B) {
	tool := testTool(b, "s:read", "", `{"type":"object","properties":{"path":{"type":"string"},"opts":{"type":"object","properties":{"n":{"type":"integer"}}}},"required":["path"]}`)
	args := json.RawMessage(`{"path":"/srv/data/reports/2026/q3.csv","opts":{"n":5}}`)
	roots := []string{"/srv/data"}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		v, err := decodeArgs(args)
		if err != nil {
			b.Fatal(err)
		}
		if e := validateDecoded(tool, v); e != nil {
			b.Fatal(e)
		}
		if tr := checkPaths(v, roots); tr != nil {
			b.Fatal(tr)
		}
	}
}

// discardExporter drops the spans it is given.
type discardExporter struct{}

func (discardExporter) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discardExporter) Shutdown(context.Context) error                             { return nil }

// policyAuditGateway has a three-rule policy (the last one matching), the
// audit log and ten secrets to redact.
func policyAuditGateway(b *testing.B) *Gateway {
	settings := DefaultSettings()
	settings.Policy = &Policy{Rules: []PolicyRule{
		{Tools: "github:delete_*", Action: PolicyDeny},
		{Tools: "*:*", Annotations: map[string]bool{"readOnlyHint": false, "openWorldHint": false}, Action: PolicyApprove},
		{Tools: "mem:*", Action: PolicyAllow},
	}}
	settings.Audit = &AuditConfig{Path: filepath.Join(b.TempDir(), "audit.jsonl")}
	for i := range 10 {
		settings.Secrets = append(settings.Secrets, fmt.Sprintf("secret-value-%02d-abcdefgh", i))
	}
	return benchGatewayWith(b, &Config{Servers: map[string]*ServerConfig{}, Settings: settings}, WithInProcessServer("mem", testserver.New(), nil))
}

// BenchmarkStdioCall is one Gateway.Call after another to a stdio upstream
// (this test binary as the test server, on the protocol the gateway
// negotiates): the pipeline, the request's encoding, the pipe both ways
// and the answer's decoding, without a worker or a front end. Reported per
// call: this process's CPU (the gateway's side) and the upstream
// process's, beside this process's allocations.
//
//	go test -run '^$' -bench StdioCall -benchtime 3000x ./gateway/
func BenchmarkStdioCall(b *testing.B) {
	g := stdioGateway(b)
	ctx := context.Background()
	req := CallRequest{Tool: "s:echo", Arguments: json.RawMessage(`{"text":"hello"}`)}
	call := func() {
		if res, err := g.Call(ctx, req); err != nil || res.IsError {
			b.Fatalf("%v %+v", err, res)
		}
	}
	for range 50 { // warm: the schema compiled, pools filled
		call()
	}
	upstreamCPU := func() (ms float64) {
		for _, pid := range benchutil.Children(os.Getpid()) {
			if st, ok := benchutil.ReadStat(pid); ok {
				ms += st.CPUMillis
			}
		}
		return ms
	}
	self0, up0 := selfCPU(), upstreamCPU()
	b.ReportAllocs()
	for b.Loop() {
		call()
	}
	b.ReportMetric((selfCPU()-self0)*1e3/float64(b.N), "gateway-cpu-µs/call")
	b.ReportMetric((upstreamCPU()-up0)*1e3/float64(b.N), "upstream-cpu-µs/call")
}

// selfCPU is the CPU milliseconds this process has used so far.
func selfCPU() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e6
}
