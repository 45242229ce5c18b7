package runtime

import (
	"sync"
	"time"
)

// A run's wall clock stops while a person is being asked to approve one of
// its tool calls (ToolCall.PauseClock): the time limit is for the snippet's
// work, not for a person's reading. While any approval is pending the clock
// stands; a snippet that keeps computing meanwhile is bounded by the
// approval's own timeout, after which the clock runs again.

// runClock counts the approvals pending in a run and tells the run's
// deadlines when the count leaves or returns to zero.
type runClock struct {
	mu     sync.Mutex
	paused int
	// notify hears each change (true: stopped, false: running again), in
	// order, under mu: it must not block for long.
	notify func(stopped bool)
}

// setNotify sets who hears the clock's changes, telling f at once when the
// clock stands already: a run's first call can reach its Host, and be
// asked about, before the run's awaiter sets f (the worker's reader relays
// calls from the moment the run is sent), and that pause must not be lost.
func (c *runClock) setNotify(f func(stopped bool)) {
	c.mu.Lock()
	c.notify = f
	if f != nil && c.paused > 0 {
		f(true)
	}
	c.mu.Unlock()
}

// pause stops the clock until the returned resume is called (once; later
// calls do nothing).
func (c *runClock) pause() (resume func()) {
	c.mu.Lock()
	c.paused++
	if c.paused == 1 && c.notify != nil {
		c.notify(true)
	}
	c.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			c.mu.Lock()
			c.paused--
			if c.paused == 0 && c.notify != nil {
				c.notify(false)
			}
			c.mu.Unlock()
		})
	}
}

// deadline is a time limit that can stand still: a timer that runs fire
// when the time left reaches zero, stopped and started again by the run's
// clock. Safe for concurrent use.
type deadline struct {
	mu       sync.Mutex
	timer    *time.Timer
	at       time.Time     // when it fires, while running
	left     time.Duration // the time left, while stopped
	stopped  bool
	fired    bool
	onExpiry func()
}

func newDeadline(d time.Duration, onExpiry func()) *deadline {
	dl := &deadline{at: time.Now().Add(d), onExpiry: onExpiry}
	dl.timer = time.AfterFunc(d, dl.fire)
	return dl
}

func (dl *deadline) fire() {
	dl.mu.Lock()
	if dl.stopped || dl.fired {
		dl.mu.Unlock()
		return
	}
	dl.fired = true
	dl.mu.Unlock()
	dl.onExpiry()
}

// stand stops the deadline (stopped true) or starts it again with the time
// it had left.
func (dl *deadline) stand(stopped bool) {
	dl.mu.Lock()
	defer dl.mu.Unlock()
	if dl.fired || stopped == dl.stopped {
		return
	}
	dl.stopped = stopped
	if stopped {
		dl.timer.Stop()
		dl.left = max(time.Until(dl.at), 0)
		return
	}
	dl.at = time.Now().Add(dl.left)
	dl.timer.Reset(dl.left)
}

// cancel stops the deadline for good.
func (dl *deadline) cancel() {
	dl.mu.Lock()
	dl.fired = true
	dl.mu.Unlock()
	dl.timer.Stop()
}
