// Package benchutil holds what the benchmarks share: per-operation latency
// percentiles (these machines are noisy, so medians are what we quote, beside
// go test's mean) and running a snippet with deno, the peer most code-mode
// runtimes use, in the same run.
package benchutil

import (
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/sandboxrt/sandbox/internal/testpeers"
)

// Latencies records one duration per operation.
type Latencies []time.Duration

// Time runs f and records how long it took.
func (l *Latencies) Time(f func()) {
	t0 := time.Now()
	f()
	*l = append(*l, time.Since(t0))
}

// Report adds p50 and p99 metrics in µs per unit (per is how many units one
// operation does: 100 for a snippet making 100 calls, reported per call).
func (l Latencies) Report(b *testing.B, unit string, per int) {
	if len(l) == 0 {
		return
	}
	s := append(Latencies(nil), l...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	q := func(p float64) float64 {
		return float64(s[min(len(s)-1, int(p*float64(len(s))))].Nanoseconds()) / 1e3 / float64(per)
	}
	b.ReportMetric(q(0.5), "p50-µs/"+unit)
	b.ReportMetric(q(0.99), "p99-µs/"+unit)
}

// Deno benchmarks `deno run` of src (TypeScript), one process per
// operation, checking that it prints want.
func Deno(b *testing.B, src, want string) {
	deno := testpeers.Deno(b)
	dir := b.TempDir()
	script := filepath.Join(dir, "snippet.ts")
	if err := os.WriteFile(script, []byte(src), 0o600); err != nil {
		b.Fatal(err)
	}
	env := append(os.Environ(), "DENO_DIR="+filepath.Join(dir, "cache"), "DENO_NO_UPDATE_CHECK=1", "NO_COLOR=1")
	runOnce := func() {
		cmd := exec.Command(deno, "run", "--quiet", "--no-prompt", script)
		cmd.Env = env
		out, err := cmd.Output()
		if err != nil || strings.TrimSpace(string(out)) != want {
			b.Fatalf("deno: %v %q", err, out)
		}
	}
	runOnce() // compile and cache once, as a warm deno would have
	var l Latencies
	for b.Loop() {
		l.Time(runOnce)
	}
	l.Report(b, "op", 1)
}
