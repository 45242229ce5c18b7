package frontend

// A tool that runs only as a task may gather input before it becomes one
// (SEP-2663 on SEP-2322, the conformance scenario tasks-mrtr-composition):
// its multi round-trip rounds are answered in the request, input_required
// with the gateway's requestState and no task, and the task is made on the
// round that does not ask at once. The front end cannot know beforehand
// which round that is, so it starts the round and waits a moment
// (askFirstWindow): a round that asks within it is answered as any call's
// input_required; one that ends, runs longer, or asks something of the
// client during the call (an upstream's elicitation, which needs a task to
// ask through) becomes the task, which adopts the round where it is.

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sandboxrt/sandbox/gateway"
	"github.com/sandboxrt/sandbox/runs"
)

// askFirstWindow is how long a required-task tool's round may take to ask
// for input before its call becomes a task: a tool that asks first asks
// at once (it has done nothing yet), and a client that asked for a task
// waits no longer than this for one.
const askFirstWindow = time.Second

// firstRound is a round of a task's call started before its task exists.
type firstRound struct {
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{} // closed when the round answered
	// result and rpcError are the round's answer, set before done closes.
	result, rpcError json.RawMessage

	needsTask chan struct{} // closed when the round asks something of the client mid-call
	needOnce  sync.Once
	adopted   chan struct{}               // closed when the task adopted the round
	run       atomic.Pointer[runs.Handle] // the adopting task's run
	ask       gateway.InputAsker          // the task's asker, set before adopted closes
}

// taskCallKey marks the context of a task's call, its first round's too
// (taskProtocolError).
type taskCallKey struct{}

// startFirstRound serves one round of a required-task tool's call, without
// its client's end (the round may become a task's).
func (h *httpHandler) startFirstRound(r *http.Request, tool string, body []byte) *firstRound {
	f := &firstRound{done: make(chan struct{}), needsTask: make(chan struct{}), adopted: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.WithValue(context.WithoutCancel(r.Context()), taskCallKey{}, true))
	ctx = context.WithValue(ctx, notifierKey{}, notifier(lateNotifier{f}))
	f.ctx, f.cancel = gateway.WithInputAsker(ctx, f.askThroughTask), cancel
	go func() {
		defer close(f.done)
		f.result, f.rpcError = h.serveTaskCall(f.ctx, tool, r, body)
	}()
	return f
}

// askedAtOnce waits up to window for the round to answer input_required,
// and returns that answer; false when the round ended otherwise, runs on,
// or needs its task to ask through.
func (f *firstRound) askedAtOnce(window time.Duration) (json.RawMessage, bool) {
	t := time.NewTimer(window)
	defer t.Stop()
	select {
	case <-f.done:
		if _, ok := inputRequired(f.result); ok {
			f.cancel()
			return f.result, true
		}
	case <-t.C:
	case <-f.needsTask:
	}
	return nil, false
}

// adopt makes the round the first of run's call: what it reports and asks
// from now on is the task's, and cancelling the task cancels it.
func (f *firstRound) adopt(run *runs.Handle, ask gateway.InputAsker) {
	f.ask = ask
	f.run.Store(run)
	close(f.adopted)
	go func() {
		select {
		case <-run.Context().Done():
			f.cancel()
		case <-f.done:
		}
	}()
}

// outcome waits for the round's answer.
func (f *firstRound) outcome() (result, rpcError json.RawMessage) {
	<-f.done
	f.cancel()
	return f.result, f.rpcError
}

// abandon stops a round no task will adopt.
func (f *firstRound) abandon() { f.cancel() }

// askThroughTask is the round's InputAsker: an upstream that asks during
// the round makes it a task at once, and asks through the task.
func (f *firstRound) askThroughTask(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	f.needOnce.Do(func() { close(f.needsTask) })
	select {
	case <-f.adopted:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return f.ask(ctx, method, params)
}

// lateNotifier keeps a first round's progress and log lines in its task's
// run once there is one (before, there is nobody to tell).
type lateNotifier struct{ f *firstRound }

func (n lateNotifier) send(msg []byte) error {
	if run := n.f.run.Load(); run != nil {
		return taskNotifier{run}.send(msg)
	}
	return nil
}
