// Package mcphttp is what sandbox adds around mcp-go's streamable HTTP
// server (v1.2.1), shared by its two MCP servers over HTTP: the gateway's
// front end (gateway/frontend) and the conformance fixture
// (internal/conformancefixture).
//
//   - CallStream is the response of one tools/call: the writer mcp-go
//     answers the call on, and the SSE stream the call's notifications go to,
//     in order, before its answer. A 2025-era stream is resumable (SEP-1699):
//     a priming event first, an id on every event, and the events kept for a
//     client that reconnects with GET and Last-Event-ID.
//   - Request and ResponseWriter hand a request whose body has been read to
//     mcp-go's Handle, so that mcp-go does not read and copy it again.
//   - Rebinding is the DNS-rebinding check (Host and Origin; mcp-go checks
//     Host only).
//
// RATIONALE.md ("mcp-go, and what the front end adds") says why mcp-go's own
// request handling and event store do not do these.
package mcphttp

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/server"
)

// RetryMillis is the reconnection delay a priming event announces.
const RetryMillis = 500

// Event is one event of a call stream: its sequence number (0, 1, ...) and
// its data, one JSON-RPC message (nil for the priming event).
type Event struct {
	Seq  int
	Data []byte
}

// Frame is the event as SSE. Its id is "<streamID>.<seq>"; the events of a
// stream that cannot be resumed carry none (streamID "").
func (e Event) Frame(streamID string) []byte {
	if e.Data == nil {
		return fmt.Appendf(nil, "id: %s.%d\nretry: %d\ndata: \n\n", streamID, e.Seq, RetryMillis)
	}
	if streamID == "" {
		return fmt.Appendf(nil, "event: message\ndata: %s\n\n", e.Data)
	}
	return fmt.Appendf(nil, "id: %s.%d\nevent: message\ndata: %s\n\n", streamID, e.Seq, e.Data)
}

// SplitEventID splits an event id of a call stream ("<streamID>.<seq>")
// into the stream's id and the event's sequence number. What a stream id
// may look like is its issuer's to check.
func SplitEventID(v string) (streamID string, seq int, ok bool) {
	i := strings.LastIndexByte(v, '.')
	if i < 0 || i+1 == len(v) || len(v)-i-1 > 9 {
		return "", 0, false
	}
	seq, err := strconv.Atoi(v[i+1:])
	if err != nil || seq < 0 {
		return "", 0, false
	}
	return v[:i], seq, true
}

// StartSSE writes the header of an SSE response.
func StartSSE(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
}

type streamMode int

const (
	undecided streamMode = iota
	httpError            // mcp-go refused the request with an HTTP error status, passed through
	sse                  // the call's SSE stream
)

// CallStream is the response side of one tools/call: the writer mcp-go
// answers the call on (it implements server.HTTPResponseWriter), and the
// stream the call's notifications are sent on (Send).
//
// The first thing written decides the form. An HTTP error status from
// mcp-go (say, an unknown session) goes out as it is. Anything else makes
// the response an SSE stream: a priming event first on resumable streams,
// then every notification and every message mcp-go writes (its JSON answer,
// or each event of the SSE stream it writes when it relays a request to the
// client, such as elicitation/create) as one event each, with ids on
// resumable streams, which keep their events for Replay.
//
// mcp-go writes SSE rather than handing over messages, so that output is
// parsed again here (the re-framing): it is what lets a call's
// notifications, which mcp-go would send through the session's shared
// channel, go on the call's own stream in order.
type CallStream struct {
	id        string
	resumable bool

	mu       sync.Mutex
	out      http.ResponseWriter // nil once the client went away
	broken   bool                // a write to the client failed
	header   http.Header         // what mcp-go sets
	mode     streamMode
	innerSSE bool         // mcp-go declared text/event-stream
	pending  bytes.Buffer // mcp-go's output not yet made into events
	events   []Event      // kept on resumable streams
	seq      int
	complete bool          // mcp-go returned: the answer is out
	changed  chan struct{} // closed and replaced when events or complete change

	// unflushed says events were written to out and not flushed yet;
	// flushTimer flushes them FlushDelay later unless the call ended first
	// (see emitLocked).
	unflushed  bool
	flushTimer *time.Timer
}

// FlushDelay is how long the priming event and mcp-go's own events (its
// answer, a request it relays to the client) may wait in the response's
// buffer before they are flushed. A call that ends sooner (most snippets)
// sends them with its answer in one write instead of one each: each flush
// is a write to the socket and a wake-up of the client (measured: the
// priming event's flush alone was 4% of serve's CPU per trivial run).
// Notifications (Send) are flushed at once, as progress should be.
const FlushDelay = 20 * time.Millisecond

// NewCallStream starts the response of one tools/call on w. A resumable
// stream (a 2025 session's; 2026-07-28 removed resumability) names its
// events "<id>.<seq>" and keeps them for Replay.
func NewCallStream(w http.ResponseWriter, id string, resumable bool) *CallStream {
	return &CallStream{id: id, resumable: resumable, out: w, header: http.Header{}, changed: make(chan struct{})}
}

// ID is the stream's id, as its event ids start.
func (cs *CallStream) ID() string { return cs.id }

// Resumable reports whether the stream's events carry ids and are kept.
func (cs *CallStream) Resumable() bool { return cs.resumable }

// Header is the header mcp-go sets; only an HTTP error passes it on.
func (cs *CallStream) Header() http.Header { return cs.header }

// WriteHeader takes mcp-go's status: an error goes out as it is, a success
// opens the SSE stream.
func (cs *CallStream) WriteHeader(code int) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.innerSSE = strings.HasPrefix(cs.header.Get("Content-Type"), "text/event-stream")
	if cs.mode != undecided {
		return
	}
	if code != http.StatusOK {
		cs.mode = httpError
		if cs.out != nil {
			for k, v := range cs.header {
				cs.out.Header()[k] = v
			}
			cs.out.WriteHeader(code)
		}
		return
	}
	cs.openLocked(cs.header.Get(server.HeaderKeySessionID))
}

// Write takes what mcp-go writes: passed on after an HTTP error, else made
// into events (its SSE events as they complete, its JSON answer by Finish).
func (cs *CallStream) Write(p []byte) (int, error) {
	cs.mu.Lock()
	if cs.mode == undecided {
		cs.mu.Unlock()
		cs.WriteHeader(http.StatusOK)
		cs.mu.Lock()
	}
	defer cs.mu.Unlock()
	if cs.mode == httpError {
		if cs.out == nil {
			return 0, fmt.Errorf("client gone")
		}
		return cs.out.Write(p)
	}
	cs.pending.Write(p)
	if cs.innerSSE {
		cs.frameInnerSSE()
	}
	return len(p), nil
}

// Flush does nothing: the stream flushes the events it writes, a
// notification at once and mcp-go's own (a request it relays to the
// client) within FlushDelay or with the answer (emitLocked).
func (cs *CallStream) Flush() {}

// CanStream tells mcp-go that it may answer with SSE (which it does when it
// relays a request to the client during the call).
func (cs *CallStream) CanStream() bool { return true }

var _ server.HTTPResponseWriter = (*CallStream)(nil)

// openLocked starts the SSE response (and the priming event). sid is the
// session id mcp-go set, read only where mcp-go is the writer (WriteHeader,
// on its own goroutine): its header map is written by mcp-go without this
// stream's lock, so Prime and Send, on the tool's goroutine, never read it.
func (cs *CallStream) openLocked(sid string) {
	cs.mode = sse
	if cs.out != nil {
		h := cs.out.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache")
		if sid != "" {
			h.Set(server.HeaderKeySessionID, sid)
		}
		cs.out.WriteHeader(http.StatusOK)
	}
	if cs.resumable {
		cs.emitLocked(nil, false)
	}
}

// frameInnerSSE turns the complete events of mcp-go's own SSE output into
// events of this stream.
func (cs *CallStream) frameInnerSSE() {
	for {
		buf := cs.pending.Bytes()
		end := bytes.Index(buf, []byte("\n\n"))
		if end < 0 {
			return
		}
		var data [][]byte
		for _, line := range bytes.Split(buf[:end], []byte("\n")) {
			if d, ok := bytes.CutPrefix(line, []byte("data:")); ok {
				data = append(data, bytes.TrimPrefix(d, []byte(" ")))
			}
		}
		cs.pending.Next(end + 2)
		if len(data) > 0 {
			cs.emitLocked(bytes.Join(data, []byte("\n")), false)
		}
	}
}

// emitLocked writes one event (and keeps it on resumable streams), flushed
// at once when flush is set, else within FlushDelay or with the answer.
func (cs *CallStream) emitLocked(data []byte, flush bool) {
	ev := Event{Seq: cs.seq}
	if data != nil {
		ev.Data = append([]byte{}, data...)
	}
	cs.seq++
	id := ""
	if cs.resumable {
		id = cs.id
		cs.events = append(cs.events, ev)
	}
	if cs.out != nil {
		if _, err := cs.out.Write(ev.Frame(id)); err != nil {
			cs.out, cs.broken = nil, true
		} else if flush {
			cs.flushLocked()
		} else {
			cs.unflushed = true
			if cs.flushTimer == nil {
				cs.flushTimer = time.AfterFunc(FlushDelay, cs.flushLate)
			}
		}
	}
	close(cs.changed)
	cs.changed = make(chan struct{})
}

// flushLocked flushes what was written. A write lands in a buffer; the
// flush is what finds a broken connection.
func (cs *CallStream) flushLocked() {
	cs.unflushed = false
	cs.stopFlushTimerLocked()
	if cs.out != nil && http.NewResponseController(cs.out).Flush() != nil {
		cs.out, cs.broken = nil, true
	}
}

// stopFlushTimerLocked stops a pending late flush.
func (cs *CallStream) stopFlushTimerLocked() {
	if cs.flushTimer != nil {
		cs.flushTimer.Stop()
		cs.flushTimer = nil
	}
}

// flushLate is the flush timer's: events still in the buffer FlushDelay
// after they were written go out, unless the response is no longer this
// stream's to write (detached, or finished: the HTTP server flushes a
// finished handler's response itself).
func (cs *CallStream) flushLate() {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.flushTimer = nil
	if cs.unflushed && !cs.complete && cs.out != nil {
		cs.flushLocked()
	}
}

// Prime opens a resumable stream now, priming event first (SEP-1699), so
// that a client that loses the stream of a call that says nothing until its
// answer can resume it. Until then mcp-go may still refuse the request with
// an HTTP error, which passes through as it is.
func (cs *CallStream) Prime() {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.mode == undecided && cs.resumable {
		cs.openLocked("") // mcp-go sets a session id only on initialize, never a tools/call
	}
}

// Send sends a JSON-RPC message (a notification of the call) on the stream,
// before the call's answer.
func (cs *CallStream) Send(msg []byte) error {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	switch {
	case cs.complete:
		return fmt.Errorf("the call has finished")
	case cs.mode == httpError:
		return fmt.Errorf("the response is an HTTP error")
	case cs.mode == undecided:
		cs.openLocked("")
	}
	cs.emitLocked(msg, true)
	return nil
}

// Finish is called when mcp-go returned: its buffered JSON answer becomes
// the stream's last event. What is still unflushed is flushed here on a
// resumable stream, whose broken connection must be noticed (LostAnswer:
// the answer is then kept for a resume); any other stream's last events go
// out with the end of the response, in the same write.
func (cs *CallStream) Finish() {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.mode == sse && !cs.innerSSE {
		if data := bytes.TrimSpace(cs.pending.Bytes()); len(data) > 0 {
			cs.emitLocked(data, false)
		}
		cs.pending.Reset()
	}
	if cs.unflushed && cs.resumable {
		cs.flushLocked()
	} else {
		cs.stopFlushTimerLocked()
	}
	cs.complete = true
	close(cs.changed)
	cs.changed = make(chan struct{})
}

// Detach stops writing to the client; it reports whether the stream is
// worth keeping for a resume: a resumable stream that has begun, finished
// or not (the client may have missed the end).
func (cs *CallStream) Detach() bool {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.out = nil
	cs.stopFlushTimerLocked()
	return cs.resumable && cs.mode == sse
}

// LostAnswer reports whether a finished call's resumable stream lost its
// client on the way (a write failed), so that its end must be kept.
func (cs *CallStream) LostAnswer() bool {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.resumable && cs.mode == sse && cs.broken
}

// EventsFrom returns the kept events from seq on, whether the stream is
// complete, and a channel closed at the next change.
func (cs *CallStream) EventsFrom(seq int) ([]Event, bool, <-chan struct{}) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	var out []Event
	for _, e := range cs.events {
		if e.Seq >= seq {
			out = append(out, e)
		}
	}
	return out, cs.complete, cs.changed
}

// Replay serves a resume (GET + Last-Event-ID) of a resumable stream: an
// SSE response with the events after the one numbered after, then those
// that follow, until the call's answer has gone out (true) or ctx ends or
// the client is gone (false).
func (cs *CallStream) Replay(ctx context.Context, w http.ResponseWriter, after int) bool {
	StartSSE(w)
	flusher, _ := w.(http.Flusher)
	next := after + 1
	for {
		events, complete, changed := cs.EventsFrom(next)
		for _, ev := range events {
			if _, err := w.Write(ev.Frame(cs.id)); err != nil {
				return false
			}
			next = ev.Seq + 1
		}
		if flusher != nil {
			flusher.Flush()
		}
		if complete {
			return true
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return false
		}
	}
}
