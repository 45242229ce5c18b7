package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/sandboxrt/sandbox/internal/telemetry"
)

// startTracing exports spans when the OTEL_* environment asks for it
// (docs/operations.md "Tracing"); stop flushes what is buffered.
func startTracing(ctx context.Context, stderr io.Writer) (stop func(), err error) {
	shutdown, enabled, err := telemetry.Setup(ctx, "sandbox", version())
	if err != nil {
		return nil, &exitError{code: 2, msg: "tracing: " + err.Error()}
	}
	return func() {
		if !enabled {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := shutdown(ctx); err != nil {
			fmt.Fprintln(stderr, "sandbox: tracing: the last spans were not exported:", err)
		}
	}, nil
}
