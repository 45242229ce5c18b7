package conformancefixture

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/sandboxrt/sandbox/internal/mcphttp"
)

// NewHTTPHandler serves s over streamable HTTP (mount it at /mcp). On top of
// mcp-go's transport it adds what the conformance suite checks and mcp-go
// v1.2.1 does not do by itself, with the same package as the gateway's front
// end (internal/mcphttp):
//
//   - Request streams: a tools/call from a client that accepts SSE is
//     answered on an SSE stream that this handler owns (mcphttp.CallStream),
//     and the notifications a tool sends for its call (progress, logs) go on
//     that stream, before the response. mcp-go routes them through a
//     per-session channel instead, where a concurrent GET stream may take
//     them, or its POST forwarder may take the last one off the channel and
//     drop it once the response is out: measured with the suite, plain mcp-go
//     lost a notification in 17 of 25 runs of tools-call-with-logging and 14
//     of 25 of tools-call-with-progress (0 of 25 each through this handler);
//     over protocol 2026-07-28 an mcp-go client lost a progress notification
//     in 20 of 20 calls (0 of 20 through this handler).
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
	// eventIDPrefix marks event ids issued by this handler, so a GET with a
	// foreign Last-Event-ID can be told apart from an unknown one of ours.
	eventIDPrefix = "rs_"
)

type httpHandler struct {
	inner *server.StreamableHTTPServer

	mu      sync.Mutex
	streams map[string]*requestStream // by stream id
	order   []string                  // stream ids, oldest first, for eviction
}

func (h *httpHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if msg := mcphttp.Rebinding(r, nil); msg != "" {
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
		if refuseMissingCapability(w, body) {
			return
		}
		if wantsRequestStream(r, body) {
			h.serveToolCall(w, r, body)
			return
		}
		h.inner.Handle(mcphttp.ResponseWriter(w), mcphttp.Request(r, body))
		return
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

func (h *httpHandler) serveToolCall(w http.ResponseWriter, r *http.Request, body []byte) {
	rs := h.newStream(r.Header.Get(server.HeaderKeySessionID), resumable(r), w)
	// The call must be able to outlive this HTTP response (a closed stream is
	// resumed by another request), so it runs under its own context: cancelled
	// when the client goes away while still attached, or after detachedLimit.
	ctx, cancel := context.WithCancel(context.WithValue(context.WithoutCancel(r.Context()), requestStreamKey{}, rs))
	req := mcphttp.Request(r, body)
	req.Context = ctx
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer cancel()
		defer rs.Finish()
		h.inner.Handle(rs, req)
	}()
	select {
	case <-done:
	case <-rs.closed:
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
	rs.Detach()
}

func (h *httpHandler) newStream(session string, resumable bool, w http.ResponseWriter) *requestStream {
	var b [12]byte
	_, _ = rand.Read(b[:])
	rs := &requestStream{
		CallStream: mcphttp.NewCallStream(w, eventIDPrefix+hex.EncodeToString(b[:]), resumable),
		session:    session,
		closed:     make(chan struct{}),
	}
	if !resumable {
		return rs
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.streams[rs.ID()] = rs
	h.order = append(h.order, rs.ID())
	for len(h.order) > keptStreams {
		delete(h.streams, h.order[0])
		h.order = h.order[1:]
	}
	return rs
}

// resume serves GET + Last-Event-ID for one of our request streams: the
// events after that id, then whatever follows until the stream's response.
func (h *httpHandler) resume(w http.ResponseWriter, r *http.Request, lastEventID string) {
	streamID, seq, ok := mcphttp.SplitEventID(lastEventID)
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
	rs.Replay(r.Context(), w, seq)
}

// requestStream is the response side of one tools/call: the call stream
// mcp-go answers on (mcphttp.CallStream), which the tool's notifications go
// to and which a tool may close mid-call for the client to resume.
type requestStream struct {
	*mcphttp.CallStream
	session   string
	closed    chan struct{} // closed when the tool closed the stream
	closeOnce sync.Once
}

type requestStreamKey struct{}

func requestStreamFrom(ctx context.Context) *requestStream {
	rs, _ := ctx.Value(requestStreamKey{}).(*requestStream)
	return rs
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
	return rs.Send(msg)
}

// closeStream ends the HTTP response while the call goes on (SEP-1699). It
// reports false when the stream cannot be resumed (protocol 2026-07-28) or
// mcp-go answered it with an HTTP error.
func (rs *requestStream) closeStream() bool {
	if !rs.Resumable() {
		return false
	}
	rs.Prime()
	if !rs.Detach() {
		return false
	}
	rs.closeOnce.Do(func() { close(rs.closed) })
	return true
}
