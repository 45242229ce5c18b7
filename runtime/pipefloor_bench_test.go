package runtime

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/sandboxrt/sandbox/internal/benchutil"
)

// echoEnv makes this test binary a child that echoes each line of its stdin
// to its stdout: BenchmarkPipeRoundTrip's other end.
const echoEnv = "SANDBOX_RUNTIME_TEST_ECHO"

// serveEcho echoes lines as a worker reads its frames: a blocking read of
// stdin through a bufio.Reader, a write of stdout per line.
func serveEcho() int {
	r := bufio.NewReaderSize(os.Stdin, 64<<10)
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			return 0
		}
		if _, err := os.Stdout.Write(line); err != nil {
			return 1
		}
	}
}

// BenchmarkPipeRoundTrip is the floor under an awaited call in a worker
// (BenchmarkHostCalls100Worker): a line of a call frame's size to a child
// process of this binary and back, over the pipes a worker has, with
// nothing else done on either side. Between round trips this side is busy
// for gap (spinning, as a VM between two calls is), so that the other
// process's thread has gone idle as it has in a snippet: on a virtual
// machine the wake-up of an idle CPU, not the pipe, is most of the cost
// (gap=0 keeps both sides hot; the worker benchmark sits between the two).
// Reported per round trip: p50 and p99.
func BenchmarkPipeRoundTrip(b *testing.B) {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	frame := []byte(`{"t":"call","run":1,"id":7,"tool":"demo__echo","args":{"i":42}}` + "\n")
	for _, gap := range []time.Duration{0, 15 * time.Microsecond, 100 * time.Microsecond} {
		b.Run(fmt.Sprintf("gap=%v", gap), func(b *testing.B) {
			cmd := exec.Command(exe)
			cmd.Env = []string{echoEnv + "=1"}
			in, err := cmd.StdinPipe()
			if err != nil {
				b.Fatal(err)
			}
			out, err := cmd.StdoutPipe()
			if err != nil {
				b.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				b.Fatal(err)
			}
			defer func() { _ = in.Close(); _ = cmd.Wait() }()
			r := bufio.NewReader(out)
			roundTrip := func() {
				if _, err := in.Write(frame); err != nil {
					b.Fatal(err)
				}
				if _, err := r.ReadSlice('\n'); err != nil && err != io.EOF {
					b.Fatal(err)
				}
			}
			for range 100 {
				roundTrip()
			}
			var l benchutil.Latencies
			for b.Loop() {
				for end := time.Now().Add(gap); time.Now().Before(end); {
				}
				l.Time(roundTrip)
			}
			l.Report(b, "trip", 1)
		})
	}
}
