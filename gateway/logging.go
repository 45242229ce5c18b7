package gateway

import (
	"log/slog"
	"time"
)

const infoLevel = slog.LevelInfo

// logLevelFor: failures the caller caused are Info, the gateway's or the
// upstream's trouble is Warn.
func logLevelFor(c Code) slog.Level {
	switch c {
	case CodeUpstreamUnavailable, CodeProtocolError, CodeInternal, CodeTimeout, CodeResultTooLarge:
		return slog.LevelWarn
	}
	return slog.LevelInfo
}

// slogCall is the structured record of one routed call. Arguments and
// tokens are never logged.
func slogCall(id, tool string, session SessionID, d time.Duration, outcome, msg string) []slog.Attr {
	attrs := []slog.Attr{
		slog.String("call", id),
		slog.String("tool", tool),
		slog.String("session", string(session)),
		slog.Duration("duration", d),
		slog.String("outcome", outcome),
	}
	if msg != "" {
		attrs = append(attrs, slog.String("error", truncate(msg, 300)))
	}
	return attrs
}
