package runtime

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sandboxrt/sandbox/runtime/internal/bindings"
)

// idleWorker is the pool's one idle worker, after a run.
func idleWorker(t *testing.T, rt *Runtime) *worker {
	t.Helper()
	mustOK(t, run(t, rt, Request{Code: "return 1"}))
	rt.pool.mu.Lock()
	defer rt.pool.mu.Unlock()
	if len(rt.pool.idle) != 1 {
		t.Fatalf("%d idle workers, want 1", len(rt.pool.idle))
	}
	return rt.pool.idle[0]
}

// killAndReap kills a worker from outside, as the OOM killer or an operator
// would, and waits until its process is gone.
func killAndReap(t *testing.T, w *worker) {
	t.Helper()
	if err := syscall.Kill(w.pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case <-w.exited:
	case <-time.After(30 * time.Second):
		t.Fatal("the killed worker was not reaped in 30s")
	}
}

// TestAWorkerThatDiedIdleIsReplaced: a worker killed while idle is not
// handed to the next run; the run succeeds on its replacement.
func TestAWorkerThatDiedIdleIsReplaced(t *testing.T) {
	t.Parallel()
	rt := workerRuntime(t, 1)
	w := idleWorker(t, rt)
	killAndReap(t, w)
	res := run(t, rt, Request{Code: "return 2"})
	mustOK(t, res)
	jsonEqual(t, res.Value, `2`)
	if now := idleWorker(t, rt); now.pid == w.pid {
		t.Fatal("the dead worker is still in the pool")
	}
}

// TestARunOnADeadWorkerIsLost: a run handed a worker that is already dead
// (the write of the run fails) is reported as lost, so that it is run again,
// and the Go error never shows.
func TestARunOnADeadWorkerIsLost(t *testing.T) {
	t.Parallel()
	rt := workerRuntime(t, 1)
	w := idleWorker(t, rt)
	got, err := rt.pool.get()
	if err != nil || got != w {
		t.Fatalf("get: %v", err)
	}
	// Dead after the pool handed it out: what get cannot see.
	killAndReap(t, w)
	req := &Request{Code: "return 1"}
	hs := newHostSide(context.Background(), req, DefaultLimits)
	out, reusable, lost := rt.pool.attempt(context.Background(), hs, w, &runMessage{Code: req.Code, Filename: "snippet.ts", Limits: DefaultLimits}, DefaultLimits)
	rt.pool.put(w, reusable)
	if !lost || reusable || out.Error != nil {
		t.Fatalf("attempt on a dead worker: lost=%v reusable=%v out=%+v", lost, reusable, out.Error)
	}
	mustOK(t, run(t, rt, Request{Code: "return 1"}))
}

// TestAWorkerThatDiesBeforeTheRunStartsIsRetried: the worker reads the run
// and exits without acknowledging it (it died as the run reached it); the
// run goes to a new worker and succeeds, with nothing of the first attempt.
func TestAWorkerThatDiesBeforeTheRunStartsIsRetried(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(t.TempDir(), "died")
	rt, err := New(Options{Workers: 1, WorkerCommand: []string{exe, dyingWorker + "once:" + marker}})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	res := run(t, rt, Request{Code: "console.log('once'); return 3"})
	mustOK(t, res)
	jsonEqual(t, res.Value, `3`)
	if len(res.Logs) != 1 || res.Logs[0].Message != "once" {
		t.Fatalf("logs = %+v", res.Logs)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("no worker died on the run, the test proves nothing: %v", err)
	}
}

// TestWorkersThatKeepDyingSayRunAgain: the retry is once; when the second
// worker dies too, the run fails with a message for the agent, not a Go
// error about pipes.
func TestWorkersThatKeepDyingSayRunAgain(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	rt, err := New(Options{Workers: 1, WorkerCommand: []string{exe, dyingWorker + "always"}})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	res := run(t, rt, Request{Code: "return 1"})
	if res.OK || res.Error.Kind != KindInternal || res.Error.Message != workerLost {
		t.Fatalf("error = %+v, want %q", res.Error, workerLost)
	}
	for _, internal := range []string{"EOF", "closed", "pipe", "|1", "write"} {
		if strings.Contains(res.Error.Error(), internal) {
			t.Fatalf("the error shows %q: %s", internal, res.Error)
		}
	}
}

// writeCounter counts the writes a frameWriter makes.
type writeCounter struct {
	bytes.Buffer
	writes int
}

func (w *writeCounter) Write(p []byte) (int, error) { w.writes++; return w.Buffer.Write(p) }

// TestLazyFramesGoTogether: the calls a turn of the snippet starts are held
// until the VM idles and then cross in one write, each still a frame of
// its own.
func TestLazyFramesGoTogether(t *testing.T) {
	var out writeCounter
	fw := newFrameWriter(&out)
	for id := uint64(1); id <= 3; id++ {
		if err := fw.sendLazy(&message{T: msgCall, RunID: 1, ID: id, Target: &bindings.Target{Kind: bindings.KindTool, ID: "demo:echo"}, Args: json.RawMessage(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	if out.writes != 0 {
		t.Fatalf("%d writes before the VM idled, want none", out.writes)
	}
	if err := fw.flush(); err != nil || out.writes != 1 {
		t.Fatalf("flush: %v, %d writes, want 1", err, out.writes)
	}
	if err := fw.flush(); err != nil || out.writes != 1 {
		t.Fatalf("a flush with nothing held: %v, %d writes, want still 1", err, out.writes)
	}
	r := bufio.NewReader(&out.Buffer)
	for id := uint64(1); id <= 3; id++ {
		if m, err := readFrame(r); err != nil || m.T != msgCall || m.ID != id || string(m.Args) != `{}` {
			t.Fatalf("frame %d: %+v, %v", id, m, err)
		}
	}
}

// TestTailsFollowTheirFrames: a log's message and a reply's result travel
// raw after their frame and are read back as they were; what a misbehaving worker could send instead
// is refused or made valid.
func TestTailsFollowTheirFrames(t *testing.T) {
	var buf bytes.Buffer
	fw := newFrameWriter(&buf)
	texts := []string{"plain", "", `"quoted" \ and {"json": 1}`, "é 😀\n\x00", strings.Repeat("x", 200<<10)}
	for _, text := range texts {
		if err := fw.sendText(&message{T: msgLog, RunID: 7, Log: &LogEntry{Level: LevelWarn}}, text); err != nil {
			t.Fatal(err)
		}
	}
	_ = fw.send(&message{T: msgDone, RunID: 7, Outcome: &execOutcome{Value: json.RawMessage(`1`)}})
	r := bufio.NewReaderSize(&buf, 64<<10)
	for _, text := range texts {
		m, err := readFrame(r)
		if err != nil || m.T != msgLog || m.RunID != 7 || m.Log.Level != LevelWarn || m.Log.Message != text || m.Tail != 0 {
			t.Fatalf("read %+v, %v; want the log %.40q", m, err, text)
		}
	}
	if m, err := readFrame(r); err != nil || m.T != msgDone || string(m.Outcome.Value) != "1" {
		t.Fatalf("the frame after the logs: %+v, %v", m, err)
	}

	frame := func(envelope, tail string) *bufio.Reader {
		var b bytes.Buffer
		var hdr [4]byte
		binary.BigEndian.PutUint32(hdr[:], uint32(len(envelope)))
		b.Write(hdr[:])
		b.WriteString(envelope + tail)
		return bufio.NewReader(&b)
	}
	if m, err := readFrame(frame(`{"t":"log","run":1,"log":{"level":"log","message":""},"tail":4}`, "a\xffb\xfe")); err != nil || m.Log.Message != "a\uFFFDb\uFFFD" {
		t.Fatalf("invalid UTF-8: %+v, %v", m, err)
	}
	// A reply's result follows its frame as it is, bytes and all.
	var rb bytes.Buffer
	result := `{"a": "<b> & \u00e9", "n": [1, 2]}`
	if err := newFrameWriter(&rb).sendReply(3, 9, nil, []byte(result)); err != nil {
		t.Fatal(err)
	}
	if m, err := readFrame(bufio.NewReader(&rb)); err != nil || m.T != msgReply || m.ID != 9 || string(m.Result) != result || m.Tail != 0 {
		t.Fatalf("a reply read back: %+v, %v", m, err)
	}
	if m, err := readFrame(frame(`{"t":"reply","run":1,"id":2,"err":{"code":"X","message":"no"}}`, "")); err != nil || m.Result != nil || m.Err == nil {
		t.Fatalf("a reply with an error and no tail: %+v, %v", m, err)
	}
	for _, bad := range []string{
		`{"t":"reply","run":1,"id":2,"result":{},"tail":4}`,
		`{"t":"reply","run":1,"id":2,"err":{"code":"X","message":"no"},"tail":4}`,
		`{"t":"call","run":1,"id":2,"tail":4}`,
		`{"t":"done","run":1,"tail":4}`,
		`{"t":"log","run":1,"tail":4}`,
		`{"t":"log","run":1,"log":{"level":"log","message":"x"},"tail":4}`,
		`{"t":"log","run":1,"log":{"level":"log","message":""},"tail":-4}`,
	} {
		if _, err := readFrame(frame(bad, "abcd")); err == nil || !strings.Contains(err.Error(), "malformed frame") {
			t.Errorf("%s: err = %v, want a malformed frame", bad, err)
		}
	}
	if _, err := readFrame(frame(`{"t":"log","run":1,"log":{"level":"log","message":""},"tail":9}`, "abcd")); err != io.ErrUnexpectedEOF {
		t.Errorf("a cut tail: err = %v, want unexpected EOF", err)
	}
	if _, err := readFrame(frame(`{"t":"reply","run":1,"id":2,"tail":9}`, "abcd")); err != io.ErrUnexpectedEOF {
		t.Errorf("a cut result: err = %v, want unexpected EOF", err)
	}
}

// TestNestedRunsInputAndCompileOnly: a run's input is the global input; a
// compile-only run runs nothing; a nested run gets a worker while its
// caller holds the only one, and past the extras fails at once with
// ErrBusy instead of waiting.
// TestReplyHeaderIsMarshal: the reply frame sendReply spells by hand is
// json.Marshal's, byte for byte, with every field present or left out.
func TestReplyHeaderIsMarshal(t *testing.T) {
	t.Parallel()
	for _, runID := range []uint64{0, 1, 42, math.MaxUint64} {
		for _, id := range []uint64{0, 7, 1 << 53, math.MaxUint64} {
			for _, tail := range []int{0, 1, 12_345, maxFrameBytes} {
				want, err := json.Marshal(&message{T: msgReply, RunID: runID, ID: id, Tail: tail})
				if err != nil {
					t.Fatal(err)
				}
				if got := appendReplyHeader(nil, runID, id, tail); string(got) != string(want) {
					t.Errorf("run %d id %d tail %d: %s, json.Marshal %s", runID, id, tail, got, want)
				}
			}
		}
	}
	// What crosses the pipe: the header, then the result.
	var got, want bytes.Buffer
	result := []byte(`[{"id":1}]`)
	if err := newFrameWriter(&got).sendReply(5, 6, nil, result); err != nil {
		t.Fatal(err)
	}
	if err := newFrameWriter(&want).sendTail(&message{T: msgReply, RunID: 5, ID: 6}, "", result); err != nil {
		t.Fatal(err)
	}
	if got.String() != want.String() {
		t.Errorf("sendReply wrote %q, sendTail %q", got.String(), want.String())
	}
}

func TestNestedRunsInputAndCompileOnly(t *testing.T) {
	t.Parallel()
	rt := workerRuntime(t, 1)
	res := run(t, rt, Request{Code: `return input.a + 1`, Input: json.RawMessage(`{"a": 41}`)})
	if !res.OK || string(res.Value) != "42" {
		t.Errorf("input: %s %+v", res.Value, res.Error)
	}
	res = run(t, rt, Request{Code: `console.log("ran"); return 1`, CompileOnly: true})
	if !res.OK || len(res.Value) != 0 || len(res.Logs) != 0 {
		t.Errorf("compile only ran the code: %s %+v", res.Value, res.Logs)
	}
	res = run(t, rt, Request{Code: "const a = 1;\nreturn a +", CompileOnly: true})
	if res.OK || res.Error.Kind != KindCompile || res.Error.Line != 2 {
		t.Errorf("compile only of broken code: %+v", res.Error)
	}

	// The outer run holds the only worker and waits for its nested runs,
	// which hold the extra workers (inside a tool call) until the one past
	// the extras has been refused.
	var nestedErrs []error
	holding := make(chan struct{}, minNestedExtras)
	release := make(chan struct{})
	hold := HostFunc(func(ctx context.Context, call ToolCall) (json.RawMessage, error) {
		holding <- struct{}{}
		<-release
		return json.RawMessage(`null`), nil
	})
	holdTool := []Tool{{ID: "h:hold", Namespace: "h", Function: "hold"}}
	host := HostFunc(func(ctx context.Context, call ToolCall) (json.RawMessage, error) {
		results := make([]*Result, minNestedExtras)
		errs := make([]error, minNestedExtras+1)
		done := make(chan int, minNestedExtras)
		for i := range results {
			go func() {
				results[i], errs[i] = rt.Run(ctx, Request{Code: `await h.hold({}); return input.i`, Nested: true, Tools: holdTool, Host: hold,
					Input: json.RawMessage(`{"i": ` + strconv.Itoa(i) + `}`)})
				done <- i
			}()
		}
		for range minNestedExtras {
			<-holding
		}
		_, errs[minNestedExtras] = rt.Run(ctx, Request{Code: `return 1`, Nested: true})
		close(release)
		for range minNestedExtras {
			<-done
		}
		nestedErrs = errs
		n := 0
		for i, r := range results {
			if errs[i] == nil && r.OK && string(r.Value) == strconv.Itoa(i) {
				n++
			}
		}
		return json.Marshal(n)
	})
	res = run(t, rt, Request{Code: `return await t.nest({})`, Tools: []Tool{{ID: "t:nest", Namespace: "t", Function: "nest"}}, Host: host})
	if !res.OK || string(res.Value) != strconv.Itoa(minNestedExtras) {
		t.Errorf("nested runs on a one-worker pool: %s %+v", res.Value, res.Error)
	}
	if !errors.Is(nestedErrs[minNestedExtras], ErrBusy) {
		t.Errorf("a nested run past the extras: %v, want ErrBusy", nestedErrs[minNestedExtras])
	}
}

// TestAWorkerKeepsItsProcessAfterARunThatChurns: a run that keeps ~22 MB
// of data while making ~400 MB of garbage (parsing tool results, say) does
// not make its worker retire: workers run at GOGC 400, but a run whose heap
// grows goes back to Go's default until it ends, so its garbage does not
// count as growth past retireHeapBytes. A run that keeps more than that
// does retire it.
func TestAWorkerKeepsItsProcessAfterARunThatChurns(t *testing.T) {
	t.Parallel()
	rt := workerRuntime(t, 1)
	w := idleWorker(t, rt)
	churn := `const keep: string[] = [];
for (let i = 0; i < 22000; i++) keep.push(String(i).padEnd(1000, "x"));
let n = 0;
for (let r = 0; r < 400; r++) { const tmp: string[] = []; for (let i = 0; i < 1000; i++) tmp.push(String(r * i).padEnd(1000, "y")); n += tmp.length; }
return [keep.length, n]`
	res := run(t, rt, Request{Code: churn, Limits: Limits{MemoryBytes: 256 << 20}})
	mustOK(t, res)
	jsonEqual(t, res.Value, `[22000,400000]`)
	if now := idleWorker(t, rt); now.pid != w.pid {
		t.Fatal("the worker retired after a run that kept ~22 MB")
	}
	big := `const keep: string[] = []; for (let i = 0; i < 150000; i++) keep.push(String(i).padEnd(1000, "x")); return keep.length`
	mustOK(t, run(t, rt, Request{Code: big, Limits: Limits{MemoryBytes: 256 << 20}}))
	if now := idleWorker(t, rt); now.pid == w.pid {
		t.Fatal("the worker did not retire after a run that kept ~150 MB")
	}
}
