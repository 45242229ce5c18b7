package codemode

import (
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/sandboxrt/sandbox/internal/logx"
	"github.com/sandboxrt/sandbox/runtime"
)

// Live logs for execute_code. When the client sends a progressToken, each
// console entry and tool call of the run is sent while the snippet runs: a
// notifications/progress whose message says what happened, and, for console
// entries, a notifications/message at the entry's level. A chatty snippet
// must not flood the client, so at most streamBurst notifications go out at
// once and streamRate a second after; what does not fit is counted, said in
// the next message, and is in the result, which holds everything.

const (
	streamRate   = 20 // events per second, after the burst
	streamBurst  = 40
	streamQueue  = 256 // events waiting to be sent; more are counted, not kept
	streamMsgMax = 200 // characters of a console line in a progress message
)

type eventStream struct {
	progress func(progress, total float64, message string)
	log      func(level string, data any)
	events   chan runtime.Event
	done     chan struct{}

	mu      sync.Mutex
	closed  bool
	skipped int // not streamed: over the rate or the queue
	sent    int
	now     func() time.Time
	errLog  *slog.Logger // where a relay's panic is told
}

func newEventStream(progress func(float64, float64, string), log func(string, any), errLog *slog.Logger) *eventStream {
	s := &eventStream{progress: progress, log: log, events: make(chan runtime.Event, streamQueue), done: make(chan struct{}), now: time.Now, errLog: errLog}
	go s.send()
	return s
}

// event is the run's OnEvent: it never blocks. A call's end can be heard
// after the run is over (and the stream finished); it is dropped.
func (s *eventStream) event(e runtime.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	select {
	case s.events <- e:
	default:
		s.skipped++
	}
}

func (s *eventStream) send() {
	defer close(s.done)
	// The relay (the front end's notifier) runs here, on a goroutine no one
	// else recovers: a panic in it stops the streaming, not the process.
	// The events still queued are dropped (event never blocks, and finish
	// waits only for done); the run's result has them all.
	defer func() {
		if r := recover(); r != nil {
			logx.Panic(s.errLog, "code mode: relaying a run's progress panicked; the rest of its events are not streamed", r)
		}
	}()
	tokens := float64(streamBurst)
	last := s.now()
	for e := range s.events {
		now := s.now()
		tokens = min(streamBurst, tokens+now.Sub(last).Seconds()*streamRate)
		last = now
		if tokens < 1 {
			s.mu.Lock()
			s.skipped++
			s.mu.Unlock()
			continue
		}
		tokens--
		s.mu.Lock()
		s.sent++
		n, skipped := s.sent, s.skipped
		s.skipped = 0
		s.mu.Unlock()
		msg := describeEvent(e)
		if skipped > 0 {
			msg = fmt.Sprintf("(%d events not streamed; the result has them all) %s", skipped, msg)
		}
		s.progress(float64(n), 0, msg)
		if e.Log != nil {
			s.log(mcpLogLevel(e.Log.Level), e.Log.Message)
		}
	}
}

// finish stops streaming once the run is over: the events already queued
// go out within the rate (the rest are counted), then it returns, so that
// no notification follows the result.
func (s *eventStream) finish() {
	s.mu.Lock()
	s.closed = true
	close(s.events)
	s.mu.Unlock()
	<-s.done
}

func describeEvent(e runtime.Event) string {
	switch {
	case e.Log != nil:
		return "console." + string(e.Log.Level) + ": " + truncateRunes(e.Log.Message, streamMsgMax)
	case e.Call != nil && !e.Ended:
		return "calling " + e.Call.Tool
	case e.Call != nil && e.Call.OK:
		return fmt.Sprintf("%s answered in %d ms", e.Call.Tool, e.Call.Duration.Milliseconds())
	case e.Call != nil:
		return fmt.Sprintf("%s failed (%s) after %d ms", e.Call.Tool, e.Call.Code, e.Call.Duration.Milliseconds())
	}
	return ""
}

// mcpLogLevel maps a console level to an MCP logging level.
func mcpLogLevel(l runtime.LogLevel) string {
	switch l {
	case runtime.LevelWarn:
		return "warning"
	case runtime.LevelError:
		return "error"
	case runtime.LevelDebug:
		return "debug"
	}
	return "info"
}

func truncateRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
