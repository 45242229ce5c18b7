package runtime

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestMain lets this test binary serve as its own worker subprocess, or as
// a worker that dies when a run reaches it (dyingWorker).
func TestMain(m *testing.M) {
	if os.Getenv(workerEnv) == "1" && len(os.Args) > 1 {
		if mode, ok := strings.CutPrefix(os.Args[len(os.Args)-1], dyingWorker); ok {
			os.Exit(serveDyingWorker(mode))
		}
	}
	if os.Getenv(echoEnv) == "1" {
		os.Exit(serveEcho())
	}
	ServeWorkerIfChild()
	os.Exit(m.Run())
}

// dyingWorker, then "always" or "once:<path>", as a worker's last argument
// makes a worker that starts, reads its first run and exits without a word,
// as a worker that died just before the run reached it would. With "once",
// only the worker that creates the file at path does so; the others serve
// as usual.
const dyingWorker = "sandbox-test-dying-worker:"

func serveDyingWorker(mode string) int {
	if path, ok := strings.CutPrefix(mode, "once:"); ok {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err != nil {
			return serveWorker(os.Stdin, os.Stdout)
		}
		f.Close()
	}
	if newFrameWriter(os.Stdout).send(&message{T: msgReady, PID: os.Getpid()}) != nil {
		return 3
	}
	_, _ = readFrame(bufio.NewReader(os.Stdin))
	return 1
}

// testQueue is the test runtimes' MaxQueue: more runs than the tests ever
// start at once. They wait however long they expect to (MaxExpectedWait
// -1): parallel tests of slow snippets are not agents to turn away.
const testQueue = 1 << 10

var (
	sharedOnce sync.Once
	sharedRTs  map[Isolation]*Runtime
)

// runtimes returns one Runtime per isolation mode, shared by the tests.
//
// The tests run in parallel (t.Parallel), so runs on a shared Runtime wait
// their turn for one of its slots: a test that asserts how long something
// took measures Result.Duration, which starts once the run has its slot, never
// the wall time around Run. Tests that kill or exhaust workers, or need a free
// worker at a given moment, use workerRuntime.
func runtimes(t testing.TB) map[Isolation]*Runtime {
	t.Helper()
	sharedOnce.Do(func() {
		sharedRTs = map[Isolation]*Runtime{}
		for _, iso := range []Isolation{IsolateWorkers, InProcess} {
			rt, err := New(Options{Isolation: iso, Workers: 2, MaxQueue: testQueue, MaxExpectedWait: -1})
			if err != nil {
				panic(err)
			}
			sharedRTs[iso] = rt
		}
	})
	return sharedRTs
}

// workerRuntime starts a worker pool of its own for one test (tests that kill
// or exhaust workers must not disturb the shared runtimes); it is closed
// when the test ends.
func workerRuntime(t testing.TB, workers int) *Runtime {
	t.Helper()
	rt, err := New(Options{Workers: workers, MaxQueue: testQueue, MaxExpectedWait: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	return rt
}

// bothModes runs f once per isolation mode, the two in parallel; it must be
// the last thing its test does.
func bothModes(t *testing.T, f func(t *testing.T, rt *Runtime)) {
	t.Helper()
	for iso, rt := range runtimes(t) {
		t.Run(iso.String(), func(t *testing.T) {
			t.Parallel()
			f(t, rt)
		})
	}
}

// run runs code and fails the test on a runtime error. Its default time
// limit (a minute) is only there to end a hung run: a test that is not about
// time must not fail because the machine is loaded (the race detector makes
// in-process runs ten times slower). Tests about the time limit set their own.
func run(t testing.TB, rt *Runtime, req Request) *Result {
	t.Helper()
	if req.Limits.Timeout == 0 {
		req.Limits.Timeout = time.Minute
	}
	res, err := rt.Run(context.Background(), req)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.OK == (res.Error != nil) {
		t.Fatalf("inconsistent result: ok=%v error=%v", res.OK, res.Error)
	}
	if res.Logs == nil || res.Calls == nil {
		t.Fatalf("logs and calls must be non-nil slices: %+v", res)
	}
	return res
}

func mustOK(t testing.TB, res *Result) {
	t.Helper()
	if !res.OK {
		t.Fatalf("run failed: %v\n%s", res.Error, res.Error.Stack)
	}
}

// jsonEqual compares JSON documents by value.
func jsonEqual(t testing.TB, got json.RawMessage, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("result is not JSON: %q: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad want %q: %v", want, err)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	if string(gb) != string(wb) {
		t.Fatalf("value = %s, want %s", got, want)
	}
}
