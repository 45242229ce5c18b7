package conformancefixture

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// NewHTTPHandler serves s over streamable HTTP (mount it at /mcp). On top of
// mcp-go's transport it adds what the conformance suite checks and mcp-go
// v1.2.1 does not do by itself:
//
//   - Request streams: a tools/call from a client that accepts SSE is
//     answered on an SSE stream that this handler owns, and the notifications
//     a tool sends for its call (progress, logs) go on that stream, before the
//     response. mcp-go routes them through a per-session channel instead,
//     where a concurrent GET stream may take them, or its POST forwarder may
//     take the last one off the channel and drop it once the response is out:
//     measured with the suite, plain mcp-go lost a notification in 17 of 25
//     runs of tools-call-with-logging and 14 of 25 of tools-call-with-progress
//     (0 of 25 each through this handler); over protocol 2026-07-28 an
//     mcp-go client lost a progress notification in 20 of 20 calls (0 of 20
//     through this handler).
//   - Resumability (SEP-1699) for 2025 sessions: the request stream starts
//     with a priming event (id, retry, empty data); a tool may close it
//     mid-call (test_reconnection does) and the client resumes with GET +
//     Last-Event-ID to receive the rest, including the response.
//   - DNS-rebinding protection on loopback: a request that reached a loopback
//     address with a Host or Origin that is not localhost/127.0.0.1/[::1] is
//     refused with 403 (mcp-go checks only Host).
//
// Sessions are stateful (unknown session ids get 404) and idle sessions are
// dropped after 30 minutes.
func NewHTTPHandler(s *server.MCPServer) http.Handler {
	return &httpHandler{
		inner: server.NewStreamableHTTPServer(s,
			server.WithStateful(true),
			server.WithSessionIdleTTL(30*time.Minute),
			// mcp-go logs every delivered sampling response at INFO; keep
			// its warnings and errors only.
			server.WithStreamableHTTPLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))),
		),
		streams: map[string]*requestStream{},
	}
}

const (
	// maxBody caps a POST body; larger requests get 413 rather than an
	// unbounded read.
	maxBody = 16 << 20
	// keptStreams bounds how many finished request streams stay resumable.
	keptStreams = 256
	// detachedLimit bounds how long a call keeps running after its stream
	// was closed and nobody resumed it.
	detachedLimit = 2 * time.Minute
	// retryMillis is the reconnection delay announced in priming events.
	retryMillis = 200
	// eventIDPrefix marks event ids issued by this handler, so a GET with a
	// foreign Last-Event-ID can be told apart from an unknown one of ours.
	eventIDPrefix = "rs_"
)

var errStreamReleased = errors.New("conformancefixture: the HTTP response of this call has ended")

type httpHandler struct {
	inner http.Handler

	mu      sync.Mutex
	streams map[string]*requestStream // by stream id
	order   []string                  // stream ids, oldest first, for eviction
}

func (h *httpHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if msg := rebindingAttempt(r); msg != "" {
		http.Error(w, msg, http.StatusForbidden)
		return
	}
	switch r.Method {
	case http.MethodPost:
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
		if err != nil {
			http.Error(w, fmt.Sprintf("request body unreadable or over %d bytes: %v", maxBody, err), http.StatusRequestEntityTooLarge)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if wantsRequestStream(r, body) {
			h.serveToolCall(w, r)
			return
		}
	case http.MethodGet:
		if last := r.Header.Get("Last-Event-ID"); strings.HasPrefix(last, eventIDPrefix) {
			h.resume(w, r, last)
			return
		}
	}
	h.inner.ServeHTTP(w, r)
}

// wantsRequestStream reports whether a POST is a tools/call request from a
// client that accepts SSE: the calls that get a request stream.
func wantsRequestStream(r *http.Request, body []byte) bool {
	if !strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
		return false
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	return json.Unmarshal(body, &msg) == nil && msg.Method == string(mcp.MethodToolsCall) && len(msg.ID) > 0
}

// resumable reports whether a request's stream can be resumed: only a 2025
// session's. Protocol 2026-07-28 removed sessions and resumability, so its
// streams carry neither priming events nor event ids.
func resumable(r *http.Request) bool {
	return r.Header.Get(server.HeaderKeySessionID) != "" && !mcp.IsModernProtocol(r.Header.Get(mcp.HeaderProtocolVersion))
}

func (h *httpHandler) serveToolCall(w http.ResponseWriter, r *http.Request) {
	rs := h.newStream(r.Header.Get(server.HeaderKeySessionID), resumable(r), w)
	// The call must be able to outlive this HTTP response (a closed stream is
	// resumed by another request), so it runs under its own context: cancelled
	// when the client goes away while still attached, or after detachedLimit.
	ctx, cancel := context.WithCancel(context.WithValue(context.WithoutCancel(r.Context()), requestStreamKey{}, rs))
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer cancel()
		defer rs.finish()
		h.inner.ServeHTTP(rs, r.WithContext(ctx))
	}()
	select {
	case <-done:
	case <-rs.detached:
		go func() {
			select {
			case <-done:
			case <-time.After(detachedLimit):
				cancel()
			}
		}()
	case <-r.Context().Done():
		cancel()
		<-done
	}
	// From here on the call may go on, but never touches w again.
	rs.release()
}

func (h *httpHandler) newStream(session string, resumable bool, w http.ResponseWriter) *requestStream {
	var b [12]byte
	_, _ = rand.Read(b[:])
	rs := &requestStream{
		id:        eventIDPrefix + hex.EncodeToString(b[:]),
		session:   session,
		resumable: resumable,
		out:       w,
		header:    http.Header{},
		detached:  make(chan struct{}),
		changed:   make(chan struct{}),
	}
	if !resumable {
		return rs
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.streams[rs.id] = rs
	h.order = append(h.order, rs.id)
	for len(h.order) > keptStreams {
		delete(h.streams, h.order[0])
		h.order = h.order[1:]
	}
	return rs
}

// resume serves GET + Last-Event-ID for one of our request streams: the
// events after that id, then whatever follows until the stream's response.
func (h *httpHandler) resume(w http.ResponseWriter, r *http.Request, lastEventID string) {
	streamID, seq, ok := parseEventID(lastEventID)
	h.mu.Lock()
	rs := h.streams[streamID]
	h.mu.Unlock()
	if !ok || rs == nil {
		http.Error(w, "unknown Last-Event-ID "+strconv.Quote(lastEventID)+": the stream finished long ago or never existed; re-send the request", http.StatusNotFound)
		return
	}
	if rs.session != r.Header.Get(server.HeaderKeySessionID) {
		http.Error(w, "Last-Event-ID belongs to another session", http.StatusNotFound)
		return
	}
	flusher, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	next := seq + 1
	for {
		events, complete, changed := rs.eventsFrom(next)
		for _, ev := range events {
			if _, err := w.Write(ev.frame()); err != nil {
				return
			}
			next = ev.seq + 1
		}
		if flusher != nil {
			flusher.Flush()
		}
		if complete {
			return
		}
		select {
		case <-changed:
		case <-r.Context().Done():
			return
		}
	}
}

func parseEventID(id string) (stream string, seq int, ok bool) {
	i := strings.LastIndexByte(id, '.')
	if i < 0 {
		return "", 0, false
	}
	n, err := strconv.Atoi(id[i+1:])
	return id[:i], n, err == nil && n >= 0
}

// requestStream is the response side of one tools/call. It is the
// http.ResponseWriter mcp-go writes to, and decides per call between two
// modes:
//
//   - pass-through: mcp-go wrote first (a plain JSON answer, an error, or its
//     own SSE stream for sampling/elicitation requests); its bytes go out as
//     they are.
//   - primed: the tool sent a notification or closed the stream first; the
//     stream starts with a priming event and every message, including
//     mcp-go's final answer, becomes an SSE event with an id of this stream.
//     Events are kept so that a client can resume after the stream closed.
//     A stream that is not resumable (protocol 2026-07-28) gets neither the
//     priming event nor ids, and cannot be closed early.
type requestStream struct {
	id, session string
	resumable   bool
	detached    chan struct{} // closed when the tool closed the stream

	mu       sync.Mutex
	out      http.ResponseWriter // nil once released or detached
	header   http.Header         // what mcp-go sets; sent only in pass-through
	mode     streamMode
	innerSSE bool         // mcp-go declared text/event-stream
	pending  bytes.Buffer // mcp-go output not yet framed (primed mode)
	events   []sseEvent
	complete bool
	changed  chan struct{} // closed and replaced whenever events/complete change
}

type streamMode int

const (
	modeUndecided streamMode = iota
	modePassThrough
	modePrimed
)

type sseEvent struct {
	id   string
	seq  int
	data []byte // empty for the priming event
}

func (e sseEvent) frame() []byte {
	if len(e.data) == 0 {
		return []byte(fmt.Sprintf("id: %s\nretry: %d\ndata: \n\n", e.id, retryMillis))
	}
	return []byte(fmt.Sprintf("id: %s\nevent: message\ndata: %s\n\n", e.id, e.data))
}

type requestStreamKey struct{}

func requestStreamFrom(ctx context.Context) *requestStream {
	rs, _ := ctx.Value(requestStreamKey{}).(*requestStream)
	return rs
}

// Header, WriteHeader, Write and Flush make requestStream the writer mcp-go
// answers the call on.
func (rs *requestStream) Header() http.Header { return rs.header }

func (rs *requestStream) WriteHeader(code int) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.innerSSE = strings.HasPrefix(rs.header.Get("Content-Type"), "text/event-stream")
	if rs.mode == modeUndecided {
		rs.mode = modePassThrough
		if rs.out != nil {
			for k, v := range rs.header {
				rs.out.Header()[k] = v
			}
			rs.out.WriteHeader(code)
		}
	}
}

func (rs *requestStream) Write(p []byte) (int, error) {
	rs.mu.Lock()
	if rs.mode == modeUndecided {
		rs.mu.Unlock()
		rs.WriteHeader(http.StatusOK)
		rs.mu.Lock()
	}
	defer rs.mu.Unlock()
	if rs.mode == modePassThrough {
		if rs.out == nil {
			return 0, errStreamReleased
		}
		return rs.out.Write(p)
	}
	rs.pending.Write(p)
	if rs.innerSSE {
		rs.frameInnerSSE()
	}
	return len(p), nil
}

func (rs *requestStream) Flush() {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if f, ok := rs.out.(http.Flusher); ok && rs.out != nil {
		f.Flush()
	}
}

// frameInnerSSE turns the complete SSE events mcp-go wrote into events of
// this stream (with ids). Callers hold mu.
func (rs *requestStream) frameInnerSSE() {
	for {
		buf := rs.pending.Bytes()
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
		rs.pending.Next(end + 2)
		if len(data) > 0 {
			rs.emitLocked(bytes.Join(data, []byte("\n")))
		}
	}
}

// prime switches an undecided stream to primed mode: SSE headers and the
// priming event. Callers hold mu; it reports whether the stream is primed.
func (rs *requestStream) primeLocked() bool {
	switch rs.mode {
	case modePrimed:
		return true
	case modePassThrough:
		return false
	}
	rs.mode = modePrimed
	if rs.out != nil {
		rs.out.Header().Set("Content-Type", "text/event-stream")
		rs.out.Header().Set("Cache-Control", "no-cache")
		rs.out.WriteHeader(http.StatusOK)
	}
	if rs.resumable {
		rs.emitLocked(nil)
	}
	return true
}

// emitLocked records an event (on resumable streams) and writes it when a
// client is attached.
func (rs *requestStream) emitLocked(data []byte) {
	ev := sseEvent{seq: len(rs.events), data: append([]byte(nil), data...)}
	frame := []byte(fmt.Sprintf("event: message\ndata: %s\n\n", data))
	if rs.resumable {
		ev.id = rs.id + "." + strconv.Itoa(ev.seq)
		rs.events = append(rs.events, ev)
		frame = ev.frame()
	}
	if rs.out != nil {
		if _, err := rs.out.Write(frame); err != nil {
			rs.out = nil // the client is gone; it may resume
		} else if f, ok := rs.out.(http.Flusher); ok {
			f.Flush()
		}
	}
	close(rs.changed)
	rs.changed = make(chan struct{})
}

// notify sends a notification on this call's stream.
func (rs *requestStream) notify(method string, params map[string]any) error {
	msg, err := json.Marshal(mcp.JSONRPCNotification{
		JSONRPC:      mcp.JSONRPC_VERSION,
		Notification: mcp.Notification{Method: method, Params: mcp.NotificationParams{AdditionalFields: params}},
	})
	if err != nil {
		return err
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.primeLocked() {
		rs.emitLocked(msg)
		return nil
	}
	if !rs.innerSSE || rs.out == nil {
		return fmt.Errorf("the response of this call is already being written as JSON; %s cannot follow it", method)
	}
	_, err = fmt.Fprintf(rs.out, "event: message\ndata: %s\n\n", msg)
	return err
}

// closeStream ends the HTTP response while the call goes on (SEP-1699). It
// reports false when the stream cannot be resumed or mcp-go already answers
// on it itself.
func (rs *requestStream) closeStream() bool {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if !rs.resumable || !rs.primeLocked() {
		return false
	}
	if rs.out != nil {
		rs.out = nil
		close(rs.detached)
	}
	return true
}

// finish is called when mcp-go returned: the buffered JSON answer (if any)
// becomes the stream's last event.
func (rs *requestStream) finish() {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.mode == modePrimed && !rs.innerSSE {
		if body := bytes.TrimSpace(rs.pending.Bytes()); len(body) > 0 {
			rs.emitLocked(body)
		}
		rs.pending.Reset()
	}
	rs.complete = true
	close(rs.changed)
	rs.changed = make(chan struct{})
}

// release detaches the HTTP response writer for good.
func (rs *requestStream) release() {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.out = nil
}

// eventsFrom returns the events from seq on, whether the stream is complete,
// and a channel closed on the next change.
func (rs *requestStream) eventsFrom(seq int) ([]sseEvent, bool, <-chan struct{}) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	var out []sseEvent
	if seq < len(rs.events) {
		out = append(out, rs.events[max(seq, 0):]...)
	}
	return out, rs.complete, rs.changed
}

// rebindingAttempt returns why a request must be refused as a possible DNS
// rebinding attack, or "". It applies to connections that arrived on a
// loopback address: their Host, and Origin when present, must name loopback.
func rebindingAttempt(r *http.Request) string {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || !isLoopback(local.String()) {
		return ""
	}
	if !isLoopback(r.Host) {
		return fmt.Sprintf("forbidden: Host %q is not a loopback name; this server only answers requests addressed to localhost", r.Host)
	}
	if origin := r.Header.Get("Origin"); origin != "" {
		u, err := url.Parse(origin)
		if err != nil || !isLoopback(u.Host) {
			return fmt.Sprintf("forbidden: Origin %q is not a loopback origin; browsers on other sites may not call this server", origin)
		}
	}
	return ""
}

func isLoopback(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = hostport
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}
