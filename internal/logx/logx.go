// Package logx holds the slog helpers more than one package needs.
package logx

import (
	"context"
	"log/slog"
	"runtime/debug"
)

// DebugOnly returns a logger that writes every record to l's handler at
// Debug. It is the logger handed to a library whose chatter (mcp-go's
// transports: connection retries, a write to a server that already exited,
// unparsable lines from a noisy server) should show only when l logs Debug,
// so that the records of the code that owns l stay readable.
func DebugOnly(l *slog.Logger) *slog.Logger { return slog.New(debugOnly{l.Handler()}) }

type debugOnly struct{ h slog.Handler }

func (d debugOnly) Enabled(ctx context.Context, _ slog.Level) bool {
	return d.h.Enabled(ctx, slog.LevelDebug)
}

func (d debugOnly) Handle(ctx context.Context, r slog.Record) error {
	r.Level = slog.LevelDebug
	return d.h.Handle(ctx, r)
}

func (d debugOnly) WithAttrs(attrs []slog.Attr) slog.Handler { return debugOnly{d.h.WithAttrs(attrs)} }
func (d debugOnly) WithGroup(name string) slog.Handler       { return debugOnly{d.h.WithGroup(name)} }

// DurationsInMs is a slog.HandlerOptions.ReplaceAttr for JSON logs: a
// time.Duration attribute "duration" becomes "durationMs", a number of
// milliseconds (slog's JSON handler writes nanoseconds), the unit of every
// other duration the project writes as JSON.
func DurationsInMs(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() != slog.KindDuration {
		return a
	}
	d := a.Value.Duration()
	return slog.Float64(a.Key+"Ms", float64(d.Microseconds())/1000)
}

// Panic logs a recovered panic r at Error with its stack, the way every
// goroutine serve starts for a call reports one it contained: msg says
// what was lost, args what it belonged to.
func Panic(l *slog.Logger, msg string, r any, args ...any) {
	l.Error(msg, append(args, "panic", r, "stack", string(debug.Stack()))...)
}
