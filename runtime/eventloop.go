package runtime

import (
	"container/heap"
	"sync"
	"time"

	"github.com/dop251/goja"
)

// The event loop of an execution, on the VM's goroutine. goja is not
// goroutine-safe, so everything that happens after the snippet's first
// synchronous run comes back to the VM through here: tool-call answers (posted
// to the job queue from other goroutines by execution.deliver) and timers
// (setTimeout, setInterval; installed by setup). Promise reactions are goja's
// own microtasks, run by the VM after each job. The loop ends when the
// snippet's promise settles, when the run is interrupted (deadline, memory,
// cancellation), when a job raises an error that must end the run, or when
// nothing is left that could settle the promise (a deadlock).

// loop runs timers and tool-call answers until the snippet's promise settles.
func (e *execution) loop(main *goja.Promise) *Error {
	for main.State() == goja.PromiseStatePending {
		select {
		case <-e.stopped:
			return e.stopErr
		default:
		}
		progressed := false
		for _, job := range e.queue.drain() {
			job()
			progressed = true
			if err := e.takeFatal(); err != nil {
				return err
			}
		}
		if t := e.timers.peek(); t != nil && !t.when.After(time.Now()) {
			e.fireTimer(t)
			if err := e.takeFatal(); err != nil {
				return err
			}
			continue
		}
		if progressed || main.State() != goja.PromiseStatePending {
			continue
		}
		if len(e.calls) == 0 && e.timers.Len() == 0 && e.queue.empty() {
			return &Error{Kind: KindDeadlock, Message: "the snippet is awaiting a promise that can never settle: " +
				"no timer and no tool call is pending. Check for a promise whose resolve is never called, or an await on something that is not started"}
		}
		// Nothing left to run until an answer or a timer: what this turn
		// started goes out together.
		if e.side != nil {
			e.side.idle()
		}
		var wake <-chan time.Time
		var tm *time.Timer
		if t := e.timers.peek(); t != nil {
			tm = time.NewTimer(time.Until(t.when))
			wake = tm.C
		}
		select {
		case <-e.queue.notify:
		case <-wake:
		case <-e.stopped:
		}
		if tm != nil {
			tm.Stop()
		}
	}
	return nil
}

// takeFatal returns the error that must end the run, if any.
func (e *execution) takeFatal() *Error {
	select {
	case <-e.stopped:
		return e.stopErr
	default:
	}
	if e.pendingFatal != nil {
		err := e.pendingFatal
		e.pendingFatal = nil
		return err
	}
	return nil
}

// callVM calls into the VM from the loop and records a failure that must end
// the run: an interrupt, a stack overflow, or an exception nothing caught.
func (e *execution) callVM(fn goja.Callable, this goja.Value, args ...goja.Value) {
	if _, err := fn(this, args...); err != nil && e.pendingFatal == nil {
		e.pendingFatal = e.errorFrom(err)
	}
}

// jobQueue carries closures from other goroutines to the VM's goroutine.
type jobQueue struct {
	mu     sync.Mutex
	jobs   []func()
	notify chan struct{}
}

func (q *jobQueue) post(job func()) {
	q.mu.Lock()
	q.jobs = append(q.jobs, job)
	q.mu.Unlock()
	select {
	case q.notify <- struct{}{}:
	default:
	}
}

func (q *jobQueue) drain() []func() {
	q.mu.Lock()
	jobs := q.jobs
	q.jobs = nil
	q.mu.Unlock()
	return jobs
}

func (q *jobQueue) empty() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.jobs) == 0
}

// timer is a setTimeout/setInterval registration, ordered by due time and
// then by creation, so timers due at the same time fire in the order they were
// set, as in browsers and Node.
type timer struct {
	id       int64
	when     time.Time
	seq      uint64
	fn       goja.Callable
	args     []goja.Value
	interval time.Duration // > 0 for setInterval
	index    int
}

type timerHeap []*timer

func (h timerHeap) Len() int { return len(h) }
func (h timerHeap) Less(i, j int) bool {
	if h[i].when.Equal(h[j].when) {
		return h[i].seq < h[j].seq
	}
	return h[i].when.Before(h[j].when)
}
func (h timerHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i]; h[i].index = i; h[j].index = j }
func (h *timerHeap) Push(x any)   { t := x.(*timer); t.index = len(*h); *h = append(*h, t) }
func (h *timerHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	*h = old[:len(old)-1]
	t.index = -1
	return t
}
func (h timerHeap) peek() *timer {
	if len(h) == 0 {
		return nil
	}
	return h[0]
}

func (e *execution) addTimer(fn goja.Callable, delay time.Duration, args []goja.Value, repeat bool) int64 {
	if delay < 0 {
		delay = 0
	}
	e.nextTimerID++
	e.timerSeq++
	t := &timer{id: e.nextTimerID, when: time.Now().Add(delay), seq: e.timerSeq, fn: fn, args: args}
	if repeat {
		t.interval = max(delay, time.Millisecond)
	}
	heap.Push(&e.timers, t)
	e.timerByID[t.id] = t
	return t.id
}

func (e *execution) clearTimer(id int64) {
	if t, ok := e.timerByID[id]; ok {
		delete(e.timerByID, id)
		if t.index >= 0 {
			heap.Remove(&e.timers, t.index)
		}
	}
}

func (e *execution) fireTimer(t *timer) {
	heap.Pop(&e.timers)
	if t.interval > 0 {
		e.timerSeq++
		t.when = time.Now().Add(t.interval)
		t.seq = e.timerSeq
		heap.Push(&e.timers, t)
	} else {
		delete(e.timerByID, t.id)
	}
	e.callVM(t.fn, goja.Undefined(), t.args...)
}

func (e *execution) stopTimers() {
	e.timers = nil
	e.timerByID = map[int64]*timer{}
}
