package main

import (
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/sandboxrt/sandbox/internal/testwait"
)

// receivedSpan is what the tests read of an exported span.
type receivedSpan struct {
	name              string
	trace, id, parent string
	service           string
	attrs             map[string]string
}

// spanSink collects the spans of OTLP export requests, decoded with the
// official OTLP protobuf packages.
type spanSink struct {
	mu    sync.Mutex
	spans []receivedSpan
}

func (s *spanSink) add(req *coltracepb.ExportTraceServiceRequest) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, rs := range req.ResourceSpans {
		service := ""
		for _, a := range rs.GetResource().GetAttributes() {
			if a.Key == "service.name" {
				service = a.GetValue().GetStringValue()
			}
		}
		for _, ss := range rs.ScopeSpans {
			for _, sp := range ss.Spans {
				attrs := map[string]string{}
				for _, a := range sp.Attributes {
					attrs[a.Key] = fmt.Sprint(a.GetValue().GetStringValue(), a.GetValue().GetIntValue())
				}
				s.spans = append(s.spans, receivedSpan{name: sp.Name, trace: hex.EncodeToString(sp.TraceId), id: hex.EncodeToString(sp.SpanId),
					parent: hex.EncodeToString(sp.ParentSpanId), service: service, attrs: attrs})
			}
		}
	}
}

// byName returns the span of a trace with a name starting with prefix.
func (s *spanSink) byName(trace, prefix string) (receivedSpan, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sp := range s.spans {
		if sp.trace == trace && strings.HasPrefix(sp.name, prefix) {
			return sp, true
		}
	}
	return receivedSpan{}, false
}

// otlpHTTPReceiver is an OTLP/HTTP (protobuf) trace receiver.
func otlpHTTPReceiver(t *testing.T, sink *spanSink) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req coltracepb.ExportTraceServiceRequest
		if r.URL.Path != "/v1/traces" || proto.Unmarshal(body, &req) != nil {
			http.Error(w, "not an OTLP trace export", http.StatusBadRequest)
			return
		}
		sink.add(&req)
		out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

type grpcReceiver struct {
	coltracepb.UnimplementedTraceServiceServer
	sink *spanSink
}

func (g grpcReceiver) Export(_ context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	g.sink.add(req)
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

// otlpGRPCReceiver is an OTLP/gRPC trace receiver.
func otlpGRPCReceiver(t *testing.T, sink *spanSink) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer()
	coltracepb.RegisterTraceServiceServer(s, grpcReceiver{sink: sink})
	go func() { _ = s.Serve(ln) }()
	t.Cleanup(s.Stop)
	return "http://" + ln.Addr().String()
}

// tracedUpstream is an HTTP MCP server whose echo tool records the
// traceparent header of the request that called it.
func tracedUpstream(t *testing.T) (url string, traceparents func() []string) {
	var mu sync.Mutex
	var seen []string
	s := server.NewMCPServer("traced", "1.0.0")
	s.AddTool(mcp.NewTool("echo", mcp.WithString("text")), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("echo: " + req.GetString("text", "")), nil
	})
	h := server.NewStreamableHTTPServer(s)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if tp := r.Header.Get("traceparent"); tp != "" {
			mu.Lock()
			seen = append(seen, tp)
			mu.Unlock()
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp", func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), seen...)
	}
}

// TestTracing: with the standard OTEL_* variables set, sandbox serve
// exports a span per MCP request (a child of the client's traceparent,
// from the HTTP header or the request's _meta), per execute_code, per tool
// call and per upstream request, each the child of the one before, to a
// real OTLP receiver over HTTP and over gRPC; the HTTP upstream receives
// the traceparent of its request's span.
func TestTracing(t *testing.T) {
	if testing.Short() {
		t.Skip("starts sandbox serve")
	}
	for _, protocol := range []string{"http/protobuf", "grpc"} {
		t.Run(protocol, func(t *testing.T) {
			sink := &spanSink{}
			endpoint := otlpHTTPReceiver(t, sink)
			if protocol == "grpc" {
				endpoint = otlpGRPCReceiver(t, sink)
			}
			upURL, traceparents := tracedUpstream(t)
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
			t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", protocol)
			t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
			t.Setenv("OTEL_SERVICE_NAME", "sandbox-under-test")
			url := serveHTTP(t, fmt.Sprintf(`{"mcpServers": {"up": {"url": %q}}}`, upURL))

			const clientTrace, clientSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
			c := httpClient(t, url, map[string]string{"traceparent": "00-" + clientTrace + "-" + clientSpan + "-01"})
			ctx := context.Background()
			res, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "execute_code", Arguments: map[string]any{"code": `return await up.echo({text: "hi"})`}}})
			if err != nil || !strings.Contains(toolText(res), "echo: hi") {
				t.Fatalf("execute_code: %v %s", err, toolText(res))
			}

			var request, run, call, upstream receivedSpan
			testwait.Until(t, 15*time.Second, "the spans to arrive", func() bool {
				var ok [4]bool
				request, ok[0] = sink.byName(clientTrace, "mcp tools/call execute_code")
				run, ok[1] = sink.byName(clientTrace, "execute_code")
				call, ok[2] = sink.byName(clientTrace, "call up:echo")
				upstream, ok[3] = sink.byName(clientTrace, "upstream tools/call")
				return ok[0] && ok[1] && ok[2] && ok[3]
			})
			for _, link := range []struct {
				child, parent receivedSpan
				parentID      string
			}{{request, receivedSpan{name: "the client's span"}, clientSpan}, {run, request, request.id}, {call, run, run.id}, {upstream, call, call.id}} {
				if link.child.parent != link.parentID {
					t.Errorf("span %q has parent %s, want %q (%s)", link.child.name, link.child.parent, link.parent.name, link.parentID)
				}
			}
			if request.service != "sandbox-under-test" || run.attrs["sandbox.run.outcome"] != "OK0" || call.attrs["sandbox.call.outcome"] != "OK0" {
				t.Errorf("attributes: service %q, run %v, call %v", request.service, run.attrs, call.attrs)
			}
			want := "00-" + clientTrace + "-" + upstream.id + "-01"
			found := false
			for _, tp := range traceparents() {
				found = found || tp == want
			}
			if !found {
				t.Errorf("the upstream did not get traceparent %s; it got %v", want, traceparents())
			}

			// A traceparent in the request's _meta is the client's own: it wins.
			const metaTrace, metaSpan = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
			_, err = c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "execute_code", Arguments: map[string]any{"code": `return 1`},
				Meta: &mcp.Meta{AdditionalFields: map[string]any{"traceparent": "00-" + metaTrace + "-" + metaSpan + "-01"}}}})
			if err != nil {
				t.Fatal(err)
			}
			testwait.Until(t, 15*time.Second, "the _meta request's span", func() bool {
				request, ok := sink.byName(metaTrace, "mcp tools/call execute_code")
				return ok && request.parent == metaSpan
			})
		})
	}
}

// TestTracingOverStdio: over stdio, where no HTTP header can carry it, an
// execute_code request's span is the child of the traceparent in its _meta.
func TestTracingOverStdio(t *testing.T) {
	if testing.Short() {
		t.Skip("starts sandbox serve")
	}
	sink := &spanSink{}
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", otlpHTTPReceiver(t, sink))
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
	cfg := writeConfig(t, `{"mcpServers": {}}`)
	c, err := client.NewStdioMCPClient(sandboxBinary(t), nil, "serve", "-c", cfg, "--log-level", "warn")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	initialize(t, c)
	ctx := context.Background()
	const metaTrace, metaSpan = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
	if _, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "execute_code", Arguments: map[string]any{"code": `return 1`},
		Meta: &mcp.Meta{AdditionalFields: map[string]any{"traceparent": "00-" + metaTrace + "-" + metaSpan + "-01"}}}}); err != nil {
		t.Fatal(err)
	}
	var request, run receivedSpan
	testwait.Until(t, 15*time.Second, "the spans to arrive", func() bool {
		var ok1, ok2 bool
		request, ok1 = sink.byName(metaTrace, "mcp tools/call execute_code")
		run, ok2 = sink.byName(metaTrace, "execute_code")
		return ok1 && ok2
	})
	if request.parent != metaSpan || run.parent != request.id {
		t.Fatalf("request %+v, run %+v", request, run)
	}
}
