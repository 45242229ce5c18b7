package logx_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/sandboxrt/sandbox/internal/logx"
)

func TestDebugOnlyLowersEveryRecord(t *testing.T) {
	var buf bytes.Buffer
	info := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	logx.DebugOnly(info).Error("chatter")
	if buf.Len() != 0 {
		t.Fatalf("an Info logger showed a lowered record: %s", buf.String())
	}

	debug := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	l := logx.DebugOnly(debug).With("server", "a").WithGroup("g")
	l.Warn("chatter", "k", 1)
	if got := buf.String(); !strings.Contains(got, "level=DEBUG") || !strings.Contains(got, "server=a") || !strings.Contains(got, "g.k=1") {
		t.Fatalf("record = %q", got)
	}
}
