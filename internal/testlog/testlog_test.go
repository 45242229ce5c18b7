package testlog_test

import (
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/sandboxrt/sandbox/internal/testlog"
)

// TestBufferTakesWritesFromManyGoroutines: every line written at once by
// many loggers is there whole (run with -race, it also shows no race).
func TestBufferTakesWritesFromManyGoroutines(t *testing.T) {
	var buf testlog.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() { log.Info("line", "n", i) })
	}
	wg.Wait()
	for i := range 50 {
		if !strings.Contains(buf.String(), fmt.Sprintf("msg=line n=%d\n", i)) {
			t.Fatalf("line %d missing or torn:\n%s", i, buf.String())
		}
	}
}

func ExampleBuffer() {
	var buf testlog.Buffer
	fmt.Fprint(&buf, "written")
	fmt.Println(buf.String())
	// Output: written
}
