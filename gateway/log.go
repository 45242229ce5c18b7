package gateway

import (
	"context"
	"log/slog"
)

// quietLogger is the logger handed to mcp-go's transports: their
// per-message chatter (connection retries, unparsable lines from a noisy
// server) goes to the gateway's logger at Debug, so that the gateway's own
// Info/Warn records stay readable.
func quietLogger(l *slog.Logger) *slog.Logger {
	return slog.New(debugHandler{l.Handler()})
}

type debugHandler struct{ h slog.Handler }

func (d debugHandler) Enabled(ctx context.Context, _ slog.Level) bool {
	return d.h.Enabled(ctx, slog.LevelDebug)
}

func (d debugHandler) Handle(ctx context.Context, r slog.Record) error {
	r.Level = slog.LevelDebug
	return d.h.Handle(ctx, r)
}

func (d debugHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return debugHandler{d.h.WithAttrs(attrs)}
}
func (d debugHandler) WithGroup(name string) slog.Handler { return debugHandler{d.h.WithGroup(name)} }
