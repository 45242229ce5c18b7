package gateway

import (
	"context"
	"log/slog"
	"time"
)

// observer is the one place that watches the gateway: every routed call
// ends here exactly once, and so does every change of a server's state. It
// feeds the Prometheus series (metrics.go) and the structured log; tracing
// spans and the audit sink hang off the same calls.
type observer struct {
	log     *slog.Logger
	metrics *metrics
}

// callEnded records one routed call: its outcome (OK or the error's code),
// duration, tool and caller. Arguments and tokens are never recorded.
func (o *observer) callEnded(ctx context.Context, c *call, gerr *Error) {
	elapsed := time.Since(c.start)
	outcome, level, msg := "OK", slog.LevelInfo, ""
	if gerr != nil {
		outcome = string(gerr.Code)
		if gerr.Code != CodeUpstreamError { // the tool's own failure is its business
			level, msg = logLevelFor(gerr.Code), gerr.Message
		}
	}
	o.metrics.call(c.toolID, outcome, elapsed)
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

// logLevelFor: failures the caller caused are Info, the gateway's or the
// upstream's trouble is Warn.
func logLevelFor(c Code) slog.Level {
	switch c {
	case CodeUpstreamUnavailable, CodeProtocolError, CodeInternal, CodeTimeout, CodeResultTooLarge:
		return slog.LevelWarn
	}
	return slog.LevelInfo
}

// serverState records an upstream's new state.
func (o *observer) serverState(server string, s ServerState) { o.metrics.serverState(server, s) }

// restart records an upstream's reconnection after its connection was lost.
func (o *observer) restart(server string) { o.metrics.restart(server) }
