package runtime

import (
	"context"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkHostCalls100WorkerJournalled is BenchmarkHostCalls100Worker for
// a run that keeps a journal (a 2026-07-28 client's execute_code) and never
// pauses: what the journal costs each call.
func BenchmarkHostCalls100WorkerJournalled(b *testing.B) {
	benchmarkHostCallsOf(b, IsolateWorkers, true)
}

// BenchmarkReplay5Calls is a resume: a snippet whose five calls come from
// its journal and whose sixth (the approved one) runs live, in a worker.
func BenchmarkReplay5Calls(b *testing.B) {
	rt, err := New(Options{Workers: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer rt.Close()
	warm(b, rt)
	code := "const xs = []\nfor (let i = 0; i < 5; i++) xs.push(await demo.echo({ i, r: Math.random() }))\nreturn [xs.length, await demo.ask({})]"
	host := newPausingHost()
	first, err := rt.Run(context.Background(), Request{Code: code, Tools: pausingTools, Host: host, Journal: &Journal{}})
	if err != nil || first.OK {
		b.Fatalf("%v %+v", err, first)
	}
	j := <-host.journal
	host.answering = true
	for b.Loop() {
		res, err := rt.Run(context.Background(), Request{Code: code, Tools: pausingTools, Host: host, Journal: j})
		if err != nil || !res.OK {
			b.Fatalf("%v %v", err, res.Error)
		}
	}
}

// BenchmarkHeldWorkerRSS reports the resident memory of a worker holding
// a run that waits for an answer (what a paused run that keeps its worker
// costs beyond the worker being unavailable).
func BenchmarkHeldWorkerRSS(b *testing.B) {
	rt, err := New(Options{Workers: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer rt.Close()
	warm(b, rt)
	var total float64
	for b.Loop() {
		waiting := make(chan struct{})
		release := make(chan struct{})
		host := HostFunc(func(ctx context.Context, c ToolCall) (json.RawMessage, error) {
			close(waiting)
			<-release
			return json.RawMessage(`{}`), nil
		})
		done := make(chan struct{})
		go func() {
			defer close(done)
			_, _ = rt.Run(context.Background(), Request{Code: "const big = Array.from({length: 1000}, (_, i) => ({i}));\nawait demo.echo({});\nreturn big.length", Tools: demoTools, Host: host})
		}()
		<-waiting
		time.Sleep(10 * time.Millisecond)
		rt.pool.mu.Lock()
		for w := range rt.pool.all {
			total += float64(rssBytes(w.pid))
		}
		rt.pool.mu.Unlock()
		close(release)
		<-done
	}
	b.ReportMetric(total/float64(b.N)/(1<<20), "worker-RSS-MB")
}

func rssBytes(pid int) int64 {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}
