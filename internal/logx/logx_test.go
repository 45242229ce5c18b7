package logx_test

import (
	"bytes"
	"encoding/json"
	"fmt"
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

// TestPanicLogsValueAndStack: a contained panic is logged at Error with the
// caller's attributes, the panic's value and the stack it came from.
func TestPanicLogsValueAndStack(t *testing.T) {
	var buf bytes.Buffer
	l := slog.New(slog.NewJSONHandler(&buf, nil))
	func() {
		defer func() { logx.Panic(l, "a call panicked", recover(), "id", 7) }()
		panic("boom")
	}()
	var rec map[string]any
	if err := json.Unmarshal(buf.Bytes(), &rec); err != nil {
		t.Fatal(err)
	}
	if rec["level"] != "ERROR" || rec["msg"] != "a call panicked" || rec["id"] != float64(7) || rec["panic"] != "boom" ||
		!strings.Contains(fmt.Sprint(rec["stack"]), "TestPanicLogsValueAndStack") {
		t.Fatalf("%s", buf.Bytes())
	}
}
