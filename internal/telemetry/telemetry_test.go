package telemetry

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"go.opentelemetry.io/otel/trace"
)

func TestSetupReadsTheEnvironment(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		env     map[string]string
		enabled bool
		err     string
	}{
		{env: map[string]string{}, enabled: false},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1"}, enabled: false},
		{env: map[string]string{"OTEL_SDK_DISABLED": "true", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1"}, enabled: false},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, err: `OTEL_TRACES_EXPORTER="zipkin" is not supported`},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, err: "use http/protobuf or grpc"},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:1/v1/traces"}, enabled: true},
	} {
		for _, k := range []string{"OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_SDK_DISABLED", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
			t.Setenv(k, c.env[k])
		}
		shutdown, enabled, err := Setup(ctx, "sandbox", "test")
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%v: error %v, want %q", c.env, err, c.err)
			}
			continue
		}
		if err != nil || enabled != c.enabled {
			t.Errorf("%v: enabled %v, %v", c.env, enabled, err)
		}
		sctx, cancel := context.WithTimeout(ctx, 0)
		_ = shutdown(sctx) // nothing to flush to an endpoint nobody listens on
		cancel()
	}
}

func TestTraceContextInAndOut(t *testing.T) {
	ctx := context.Background()
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	h := http.Header{}
	h.Set("traceparent", tp)
	sc := trace.SpanContextFromContext(FromHeaders(ctx, h))
	if sc.TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" || !sc.IsRemote() {
		t.Fatalf("from headers: %v", sc)
	}
	meta := FromMeta(FromHeaders(ctx, h), map[string]any{"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"})
	if got := trace.SpanContextFromContext(meta).TraceID().String(); got != "0af7651916cd43dd8448eb211c80319c" {
		t.Fatalf("_meta does not win: %s", got)
	}
	if got := FromMeta(ctx, map[string]any{"traceparent": "garbage"}); trace.SpanContextFromContext(got).IsValid() {
		t.Fatal("a bad traceparent made a span context")
	}
	out := map[string]string{}
	Inject(meta, out)
	if out["traceparent"] != "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" {
		t.Fatalf("injected %v", out)
	}
	none := map[string]string{}
	Inject(ctx, none)
	if len(none) != 0 {
		t.Fatalf("injected without a span: %v", none)
	}
}

func TestClip(t *testing.T) {
	if got := Clip("short"); got != "short" {
		t.Errorf("Clip(short) = %q", got)
	}
	long := strings.Repeat("é", 1000) // 2 bytes each: the cut falls inside one
	got := Clip(long)
	if len(got) > 128+len("…") || !strings.HasSuffix(got, "…") || !utf8.ValidString(got) {
		t.Errorf("Clip(2000 bytes) = %d bytes, valid %v", len(got), utf8.ValidString(got))
	}
}
