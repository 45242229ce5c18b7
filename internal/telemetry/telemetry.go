// Package telemetry sets up OpenTelemetry tracing from the standard OTEL_*
// environment variables and holds the few helpers the data path uses to
// make spans and carry W3C trace context.
//
// Nothing is exported unless the environment asks for it
// (OTEL_TRACES_EXPORTER=otlp, or an OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT);
// until Setup installs a provider, Tracer is OpenTelemetry's no-op one, whose
// spans cost a context allocation and record nothing.
//
// The spans (docs/operations.md "Tracing"): one per MCP request on the HTTP
// front end (a child of the client's traceparent, from the HTTP header or
// the request's _meta), one per execute_code run, one per tool call (a child
// of its run's span, or of the request), one per upstream request; HTTP
// upstreams receive the traceparent of their request's span.
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// InstrumentationName names the tracer of every span of ours.
const InstrumentationName = "github.com/sandboxrt/sandbox"

// Tracer is the tracer every span of ours comes from (no-op until Setup).
func Tracer() trace.Tracer { return otel.Tracer(InstrumentationName) }

// propagator is W3C trace context only, whatever the global one is: a
// client's baggage is not carried to upstreams (it is the client's data,
// unbounded, and no business of the servers behind the gateway).
var propagator = propagation.TraceContext{}

// MaxAttributeBytes bounds the string values of our spans' attributes (and
// what Clip leaves of client-given names): spans wait in memory for export,
// and a client chooses some of those strings.
const MaxAttributeBytes = 256

// Clip shortens a client-given string for a span name or attribute.
func Clip(s string) string {
	if len(s) <= 128 {
		return s
	}
	return strings.ToValidUTF8(s[:128], "") + "…"
}

// Setup installs a tracer provider that exports spans as the environment
// says: OTEL_TRACES_EXPORTER ("otlp" or "none"; unset means otlp when an
// OTLP endpoint is set, else none), OTEL_EXPORTER_OTLP_[TRACES_]PROTOCOL
// ("http/protobuf", the default, or "grpc"), the endpoint, headers,
// timeout and TLS variables the OTLP exporters read, OTEL_TRACES_SAMPLER,
// OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES; OTEL_SDK_DISABLED=true
// turns it all off. enabled is false when nothing is exported; shutdown
// flushes the spans still buffered and is safe to call either way.
func Setup(ctx context.Context, service, version string) (shutdown func(context.Context) error, enabled bool, err error) {
	none := func(context.Context) error { return nil }
	if strings.EqualFold(os.Getenv("OTEL_SDK_DISABLED"), "true") {
		return none, false, nil
	}
	exporter := strings.ToLower(strings.TrimSpace(os.Getenv("OTEL_TRACES_EXPORTER")))
	if exporter == "" {
		exporter = "none"
		if os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "" {
			exporter = "otlp"
		}
	}
	switch exporter {
	case "none":
		return none, false, nil
	case "otlp":
	default:
		return none, false, fmt.Errorf("OTEL_TRACES_EXPORTER=%q is not supported: use otlp (with OTEL_EXPORTER_OTLP_ENDPOINT) or none", exporter)
	}
	protocol := os.Getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if protocol == "" {
		protocol = os.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	var exp sdktrace.SpanExporter
	switch protocol {
	case "", "http/protobuf":
		exp, err = otlptracehttp.New(ctx)
	case "grpc":
		exp, err = otlptracegrpc.New(ctx)
	default:
		return none, false, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL=%q is not supported: use http/protobuf or grpc", protocol)
	}
	if err != nil {
		return none, false, fmt.Errorf("the OTLP trace exporter: %w", err)
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", service), attribute.String("service.version", version)),
		resource.WithFromEnv(), // OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES win
	)
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return none, false, fmt.Errorf("the trace resource: %w", err)
	}
	limits := sdktrace.NewSpanLimits() // the OTEL_SPAN_*_LIMIT variables
	if limits.AttributeValueLengthLimit < 0 || limits.AttributeValueLengthLimit > MaxAttributeBytes {
		limits.AttributeValueLengthLimit = MaxAttributeBytes
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res), sdktrace.WithRawSpanLimits(limits))
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagator)
	return tp.Shutdown, true, nil
}

// FromHeaders is ctx with the remote span context of W3C traceparent (and
// tracestate) headers, when they carry a valid one.
func FromHeaders(ctx context.Context, h http.Header) context.Context {
	return propagator.Extract(ctx, propagation.HeaderCarrier(h))
}

// FromMeta is ctx with the remote span context of an MCP request's _meta
// ("traceparent", "tracestate"), which wins over the transport's: it is
// the client's own, where an HTTP header may be a proxy's.
func FromMeta(ctx context.Context, meta map[string]any) context.Context {
	tp, _ := meta["traceparent"].(string)
	if tp == "" {
		return ctx
	}
	carrier := propagation.MapCarrier{"traceparent": tp}
	if ts, _ := meta["tracestate"].(string); ts != "" {
		carrier["tracestate"] = ts
	}
	return propagation.TraceContext{}.Extract(ctx, carrier)
}

// Inject adds the W3C trace context of ctx's span to headers (nothing when
// there is no valid span).
func Inject(ctx context.Context, headers map[string]string) {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return
	}
	propagator.Inject(ctx, propagation.MapCarrier(headers))
}
