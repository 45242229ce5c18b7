package runtime

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	goruntime "runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/dlclark/regexp2/v2"

	"github.com/sandboxrt/sandbox/internal/bytesize"
	"github.com/sandboxrt/sandbox/internal/growstack"
	"github.com/sandboxrt/sandbox/internal/prestart"
	"github.com/sandboxrt/sandbox/runtime/internal/bindings"
)

// workerEnv marks a process started as a worker (prestart.Start sets it).
const workerEnv = prestart.WorkerEnv

// ServeWorkerIfChild turns this process into a sandbox worker when it was
// started as one, and never returns in that case. Call it first thing in
// main (and in TestMain of tests that run snippets in workers); it returns at
// once in any other process.
func ServeWorkerIfChild() {
	if os.Getenv(workerEnv) != "1" {
		return
	}
	os.Exit(serveWorker(os.Stdin, os.Stdout))
}

// workerGCPercent is a worker's GOGC (see serveWorker).
const workerGCPercent = 400

// retireHeapBytes: a worker whose heap grew by more than this during a run exits
// after it, so the next snippet starts in a small, fresh process (Go keeps
// address space it once mapped).
const retireHeapBytes = 96 << 20

// serveWorker runs snippets one at a time, as the parent asks, until stdin
// closes. It returns the process exit code.
func serveWorker(in io.Reader, out io.Writer) int {
	// Every run builds a fresh VM (~1 MB of garbage a trivial run) over a
	// small live heap (the worker's caches, the next run's VM), so at Go's
	// default GOGC of 100 the collector ran every few runs and took about a
	// fifth of a busy worker's CPU. GC work per run falls as GOGC rises;
	// 400 raised trivial runs/s under load by a third (measured at 100,
	// 200, 400 and 800: 400 was best) for ~10 MB more RSS per worker. A run
	// whose heap grows past gcLowerAt goes back to GOGC 100 until it ends
	// (watchHeap): at 400 its garbage would pile up to five times its live
	// data and make the worker retire (retireHeapBytes) after runs that
	// merely parse a few MB. It loosens nothing: during a run the memory
	// limit is enforced by watchHeap (which collects before deciding), the
	// soft memory limit and the address-space cap, none of which depend on
	// GOGC.
	debug.SetGCPercent(workerGCPercent)
	// Nothing reads a worker's heap profile, and sampling it (a stack
	// walk every 512 KiB allocated, which a VM's build does twice) was
	// 1% of a busy worker's CPU.
	goruntime.MemProfileRate = 0
	prebuild()
	// A Go stack overflow is fatal; a smaller cap makes it come sooner and
	// cheaper (the default is 1 GB), and the parent reports it as the stack limit.
	debug.SetMaxStack(256 << 20)
	fw := newFrameWriter(out)
	if err := fw.send(&message{T: msgReady, PID: os.Getpid()}); err != nil {
		return 3
	}
	r := bufio.NewReaderSize(in, 64<<10)

	var mu sync.Mutex
	var cur *workerRun
	for {
		m, err := readFrame(r)
		if err != nil {
			if err == io.EOF {
				return 0
			}
			fmt.Fprintln(os.Stderr, "sandbox worker:", err)
			return 3
		}
		mu.Lock()
		run := cur
		mu.Unlock()
		switch m.T {
		case msgRun:
			if run != nil || m.Run == nil || m.RunID == 0 {
				fmt.Fprintln(os.Stderr, "sandbox worker: protocol error: a run while another is in progress, or an empty run")
				return 3
			}
			// The execution exists before the run is published, so a reply or
			// a cancel that follows the run frame at once finds it.
			wr := newWorkerRun(fw, m.RunID, m.Run)
			mu.Lock()
			cur = wr
			mu.Unlock()
			// Sent at once: it tells the parent the run reached this worker,
			// so a snippet that kills it within a millisecond is reported as
			// what it did (say, its memory limit), not as a worker lost before
			// the run started.
			if err := fw.send(&message{T: msgStarted, RunID: m.RunID}); err != nil {
				return 3
			}
			go func() {
				growstack.To16K()
				outcome, retire := wr.execute(m.Run)
				outcome.Error = capError(outcome.Error)
				mu.Lock()
				cur = nil
				mu.Unlock()
				if err := fw.send(&message{T: msgDone, RunID: wr.id, Outcome: &outcome, Retire: retire}); err != nil {
					os.Exit(3)
				}
				if retire {
					os.Exit(0)
				}
				collectIfLarge()
				prebuild()
			}()
			// As after a reply (below): run the snippet on this thread now,
			// rather than leave it queued behind a blocking read.
			goruntime.Gosched()
		case msgReply:
			if run != nil && run.id == m.RunID {
				run.ex.deliver(m.ID, m.Result, m.Err)
				// The VM's goroutine, readied by deliver, waits on this P while
				// this one would go back to a blocking read of stdin (a pipe
				// the parent left blocking: no netpoller), holding the P in a
				// system call until another thread, woken for it, steals the
				// VM's goroutine. Yielding runs the VM on this thread now;
				// replies already read (a Promise.all's) are delivered first,
				// so that the VM takes them in one turn.
				if r.Buffered() == 0 {
					goruntime.Gosched()
				}
			}
		case msgClock:
			if run != nil && run.id == m.RunID {
				run.ex.standClock(m.Stopped)
			}
		case msgCancel:
			if run != nil && run.id == m.RunID {
				run.ex.interrupt(&Error{Kind: KindCancelled, Message: "the run was cancelled by its caller"})
			}
		default:
			fmt.Fprintf(os.Stderr, "sandbox worker: protocol error: unexpected %q message\n", m.T)
			return 3
		}
	}
}

// workerRun is one snippet in a worker; it implements vmSide by sending
// frames to the parent.
type workerRun struct {
	fw     *frameWriter
	id     uint64
	ex     *execution
	limits Limits
}

func newWorkerRun(fw *frameWriter, id uint64, m *runMessage) *workerRun {
	w := &workerRun{fw: fw, id: id, limits: m.Limits.WithDefaults()}
	select {
	case ex := <-prebuilt:
		ex.side, ex.limits, ex.filename = w, w.limits, m.Filename
		w.ex = ex
	default: // still being built (runs back to back): build this one now
		w.ex = newExecution(w, w.limits, m.Filename)
	}
	w.ex.compiled = func() { _ = fw.sendLazy(&message{T: msgCompiled, RunID: id}) }
	w.ex.input = m.Input
	w.ex.compileOnly = m.CompileOnly
	w.ex.useInputs(m.Seed, m.Clock)
	return w
}

func (w *workerRun) startCall(id uint64, target bindings.Target, args json.RawMessage) {
	// Held until the VM idles (or lazyDelay passes): the calls a turn of the
	// snippet starts together cross the pipe in one write.
	if err := w.fw.sendLazy(&message{T: msgCall, RunID: w.id, ID: id, Target: &target, Args: args, Clock: w.ex.takeClock()}); err != nil {
		msg := "the call could not be sent: the sandbox worker lost its connection to the host"
		var big *frameTooLargeError
		if errors.As(err, &big) {
			msg = "the call could not be sent: its arguments are too large (" + bytesize.Format(int64(big.size)) + ")"
		}
		w.ex.deliver(id, nil, &ToolError{Code: CodeHostError, Message: msg})
	}
}

func (w *workerRun) idle() { _ = w.fw.flush() }

func (w *workerRun) log(e LogEntry) {
	_ = w.fw.sendText(&message{T: msgLog, RunID: w.id, Log: &LogEntry{Level: e.Level}, Clock: w.ex.takeClock()}, e.Message)
}

func (w *workerRun) execute(m *runMessage) (execOutcome, bool) {
	limits := w.limits
	// A backtracking regexp runs inside a native call that no interrupt
	// reaches. With a match timeout at the deadline it returns (as "no match")
	// and the interrupt that the deadline already raised ends the run.
	regexp2.DefaultMatchTimeout = limits.Timeout
	// The address-space cap also bounds the transpiler: esbuild recurses on
	// nesting, and a runaway stack must end here, as a worker crash.
	setAddressSpaceLimit(limits.MemoryBytes)
	t, cerr := transpileCached(m.Filename, m.Code)
	if cerr != nil {
		return execOutcome{Error: cerr}, false
	}
	debug.SetMemoryLimit(limits.MemoryBytes + heapObjects())
	stopWatch := watchHeap(w.ex, limits.MemoryBytes)

	out := w.ex.run(t, m.Tools, m.Services)
	out.Clock = w.ex.takeClock()

	peak := stopWatch()
	// A worker that grew large, or whose snippet hit the memory limit, is
	// replaced: the next snippet starts in a small, clean process.
	retire := peak > retireHeapBytes || (out.Error != nil && out.Error.Limit == LimitMemory)
	return out, retire
}

// prebuilt holds the VM of the next run, built while the worker waits
// (setupBase): ~90 µs of a trivial run's work off its critical path. It is
// fresh: built after the previous run ended, and never given user code.
var prebuilt = make(chan *execution, 1)

// prebuild builds the next run's VM in the background.
func prebuild() {
	go func() {
		growstack.To16K()
		ex := newExecution(nil, Limits{}, "")
		if ex.setupBase() != nil {
			return // the run builds its own, and reports what failed
		}
		select {
		case prebuilt <- ex:
		default:
		}
	}()
}

// collectIfLarge collects garbage between runs when a run left a lot, so the
// next run's heap watchdog starts from an honest baseline.
func collectIfLarge() {
	if heapObjects() > 16<<20 {
		goruntime.GC()
	}
}

func heapObjects() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}

var heapSamples = []metrics.Sample{
	{Name: "/memory/classes/heap/objects:bytes"},
	{Name: "/gc/heap/live:bytes"},
}

// watchHeap interrupts the VM when the heap has grown by more than limit
// since the run started (the worker's own caches and the previous run's
// leftovers are not the snippet's). Reading the runtime's metrics costs
// ~200 ns, so a 1 ms poll is cheap; a snippet growing its heap gradually is
// stopped within about a millisecond of allocation. The one huge allocation
// a poll cannot catch fails against the address-space limit instead, which
// ends the process (see pool.go for how that is reported). It returns the
// peak growth.
func watchHeap(ex *execution, limit int64) (stop func() int64) {
	done := make(chan struct{})
	base := heapObjects()
	var peak int64
	lowered := false
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		samples := make([]metrics.Sample, len(heapSamples))
		copy(samples, heapSamples)
		for {
			select {
			case <-done:
				return
			case <-ex.stopped:
				return
			case <-t.C:
			}
			metrics.Read(samples)
			grown := int64(samples[0].Value.Uint64()) - base
			peak = max(peak, grown)
			if grown > gcLowerAt && !lowered {
				// A run that allocates this much is not a trivial one: back to
				// the default GOGC for the rest of it, so that its garbage is
				// collected as before and does not make the worker retire.
				debug.SetGCPercent(100)
				lowered = true
			}
			if grown <= limit {
				continue
			}
			// Garbage counts in objects until the next GC: collect, then decide
			// on what is live.
			goruntime.GC()
			metrics.Read(samples)
			if live := int64(samples[1].Value.Uint64()) - base; live > limit {
				ex.interrupt(memoryLimitError(limit, ""))
				return
			}
		}
	}()
	return func() int64 {
		close(done)
		wg.Wait()
		if lowered {
			debug.SetGCPercent(workerGCPercent)
		}
		return peak
	}
}

// gcLowerAt is the heap growth in a run past which the worker's collector
// goes back to Go's default GOGC until the run ends (see serveWorker).
const gcLowerAt = 24 << 20

func memoryLimitError(limit int64, detail string) *Error {
	msg := fmt.Sprintf("the snippet used more than its %s memory limit; process data in smaller pieces (page through results, avoid building huge strings or arrays)"+RaiseLimitAdvice,
		bytesize.Format(limit))
	if detail != "" {
		msg += " (" + detail + ")"
	}
	return &Error{Kind: KindLimit, Limit: LimitMemory, Message: msg}
}

// addressSpaceHeadroom is what a worker may map beyond its current size plus
// twice the memory limit: Go's GC needs room above the live heap, and the
// VM's own structures need some.
const addressSpaceHeadroom = 256 << 20

// setAddressSpaceLimit caps the worker's virtual memory so that one huge
// allocation ('x'.repeat(2**40), new Uint8Array(2**40)) fails at once instead
// of taking the machine's memory. Go reserves ~1 GiB of address space at
// start, so the cap is relative to the current size.
func setAddressSpaceLimit(memory int64) {
	// Reading /proc/self/status costs ~45 µs, a tenth of a trivial run:
	// set the cap again only for another memory limit, or when the Go
	// runtime's mappings grew enough to eat into the headroom.
	mapped := goMappedBytes()
	if memory == lastAS.memory && mapped-lastAS.mapped < addressSpaceHeadroom/4 {
		return
	}
	lastAS.memory, lastAS.mapped = memory, mapped
	current := vmSizeBytes()
	if current <= 0 {
		return
	}
	soft := uint64(current + 2*memory + addressSpaceHeadroom)
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &lim); err != nil {
		return
	}
	if lim.Max != ^uint64(0) && soft > lim.Max {
		soft = lim.Max
	}
	lim.Cur = soft
	if err := syscall.Setrlimit(syscall.RLIMIT_AS, &lim); err != nil {
		fmt.Fprintln(os.Stderr, "sandbox worker: cannot set the address-space limit:", err)
	}
}

// lastAS is what setAddressSpaceLimit last set the cap for (one run at a
// time in a worker: no lock).
var lastAS struct{ memory, mapped int64 }

// goMappedBytes is all the memory the Go runtime has mapped (cheap, unlike
// /proc), to notice the address space growing between runs.
func goMappedBytes() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}

// vmSizeBytes reads this process's virtual memory size from /proc.
func vmSizeBytes() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmSize:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}
