package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/internal/telemetry"
)

// observer is the one place that watches the gateway: every routed call
// ends here exactly once, and so does every change of a server's state. It
// feeds the Prometheus series (metrics.go) and the structured log; tracing
// spans and the audit sink hang off the same calls.
type observer struct {
	log      *slog.Logger
	metrics  *metrics
	auditLog *auditLog // nil: no audit log
}

// audit writes one audit record, if there is an audit log; a record that
// cannot be written is logged, and does not fail what it records.
func (o *observer) audit(r AuditRecord) {
	if o.auditLog == nil {
		return
	}
	if err := o.auditLog.write(r); err != nil {
		o.log.Error("writing the audit log failed", "err", err)
	}
}

// callEnded records one routed call: its outcome (OK or the error's code),
// duration, tool and caller. Arguments and tokens are never recorded.
func (o *observer) callEnded(ctx context.Context, c *call, gerr *Error) {
	elapsed := time.Since(c.start)
	outcome, level, msg := "OK", slog.LevelInfo, ""
	if gerr != nil {
		outcome = string(gerr.Code)
		if gerr.Code != CodeToolError { // the tool's own failure is its business
			level, msg = logLevelFor(gerr.Code), gerr.Message
		}
	}
	if c.span.IsRecording() {
		c.span.SetName("call " + c.toolID)
		c.span.SetAttributes(attribute.String("mcp.tool.name", c.toolID), attribute.String("sandbox.principal", c.req.Caller.Principal.Key()),
			attribute.String("sandbox.call.outcome", outcome), attribute.Int64("sandbox.call.result_bytes", c.resultBytes))
		if c.decision != "" {
			c.span.SetAttributes(attribute.String("sandbox.call.decision", c.decision))
		}
		if gerr != nil {
			c.span.SetStatus(codes.Error, outcome)
		}
	}
	o.metrics.call(c.toolID, outcome, elapsed)
	if o.auditLog != nil {
		r := AuditRecord{Kind: AuditKindCall, Principal: c.req.Caller.Principal.Key(), Session: string(c.req.Caller.Session), Tool: c.toolID,
			Decision: c.decision, Outcome: outcome, DurationMs: float64(elapsed.Microseconds()) / 1000, ArgBytes: len(c.req.Arguments), ResultBytes: int(c.resultBytes)}
		if len(c.req.Arguments) > 0 {
			r.ArgsSHA256 = sha256Hex(c.req.Arguments)
		}
		o.audit(r)
	}
	if !o.log.Enabled(ctx, level) {
		return
	}
	attrs := []slog.Attr{
		slog.String("call", c.id),
		slog.String("tool", c.toolID),
		slog.String("principal", c.req.Caller.Principal.Key()),
		slog.String("session", string(c.req.Caller.Session)),
		slog.Duration("duration", elapsed),
		slog.String("outcome", outcome),
	}
	if msg != "" {
		attrs = append(attrs, slog.String("error", truncate(msg, 300)))
	}
	o.log.LogAttrs(ctx, level, "call", attrs...)
}

// auditPassThrough records one pass-through request of the front end
// (resources/read, prompts/get, completion/complete) once it has ended (it
// is deferred, with the request's named results): who, which prompt, how it
// ended, how long it took, and the size and SHA-256 of what it asked for (a
// resource's URI, a prompt's arguments, a completion's params), never the
// value.
func (g *Gateway) auditPassThrough(kind AuditKind, caller auth.Caller, name string, asked []byte, start time.Time, raw *json.RawMessage, err *error) {
	if g.observe.auditLog == nil {
		return
	}
	r := AuditRecord{Kind: kind, Principal: caller.Principal.Key(), Session: string(caller.Session), Name: truncate(name, 200), Outcome: "OK",
		DurationMs: float64(time.Since(start).Microseconds()) / 1000, ArgBytes: len(asked), ResultBytes: len(*raw)}
	if len(asked) > 0 {
		r.ArgsSHA256 = sha256Hex(asked)
	}
	if *err != nil {
		r.Outcome = string(CodeInternal)
		var ge *Error
		if errors.As(*err, &ge) {
			r.Outcome = string(ge.Code)
		}
	}
	g.observe.audit(r)
}

// promptArguments is the one encoding of a prompt's arguments the audit log
// hashes: JSON, keys sorted; nil for none.
func promptArguments(args map[string]string) []byte {
	if len(args) == 0 {
		return nil
	}
	b, _ := json.Marshal(args)
	return b
}

// completionPrompt is the prompt a completion/complete asks about ("" for
// a resource template's).
func completionPrompt(params json.RawMessage) string {
	var p struct {
		Ref struct{ Type, Name string } `json:"ref"`
	}
	if json.Unmarshal(params, &p) != nil || p.Ref.Type != "ref/prompt" {
		return ""
	}
	return p.Ref.Name
}

// startCall is the span of one routed call: a child of the caller's (its
// run's, or its MCP request's). callEnded names and closes the books on it.
func startCall(ctx context.Context, c *call) context.Context {
	ctx, c.span = telemetry.Tracer().Start(ctx, "call")
	return ctx
}

// logLevelFor: failures the caller caused are Info, the gateway's or the
// upstream's trouble is Warn.
func logLevelFor(c Code) slog.Level {
	switch c {
	case CodeUpstreamUnavailable, CodeUpstreamError, CodeProtocolError, CodeInternal, CodeTimeout, CodeResultTooLarge:
		return slog.LevelWarn
	}
	return slog.LevelInfo
}

// serverState records an upstream's new state.
func (o *observer) serverState(server string, s ServerState) { o.metrics.serverState(server, s) }

// restart records an upstream's reconnection after its connection was lost.
func (o *observer) restart(server string) { o.metrics.restart(server) }

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Audit appends a record to the audit log; without an audit log configured
// it does nothing. A record that cannot be written is logged, and fails
// nothing.
func (g *Gateway) Audit(r AuditRecord) { g.observe.audit(r) }
