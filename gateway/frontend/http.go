package frontend

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/sandboxrt/sandbox/gateway"
)

// notifier delivers a JSON-RPC notification for the call in progress, in
// order with the call's response.
type notifier interface {
	send(msg []byte) error
}

type notifierKey struct{}

func notifierFrom(ctx context.Context) notifier {
	n, _ := ctx.Value(notifierKey{}).(notifier)
	return n
}

// maxRequestBody caps one POST body.
const maxRequestBody = 16 << 20

// HTTPOptions configure the streamable HTTP endpoint.
type HTTPOptions struct {
	// AllowedHosts are extra Host names accepted on loopback connections
	// besides localhost, 127.0.0.1 and [::1] (for a local reverse proxy).
	AllowedHosts []string
	// SessionIdleTimeout drops sessions idle this long (default 30 min).
	SessionIdleTimeout time.Duration
}

// HTTPHandler returns the streamable HTTP endpoint (mount it at /mcp).
//
//   - DNS-rebinding protection: on a loopback connection, a Host or Origin
//     that is not a loopback name gets 403 (mcp-go checks Host only).
//   - Each tools/call from a client that accepts SSE is answered on a stream
//     the front end owns, and the call's progress and log notifications are
//     written to it directly, before the response (mcp-go's per-session
//     channel can hand them to another stream or drop the last one).
//   - Session tokens: headers "Sandbox-Token-<server>: <token>" set the
//     session's bearer token for that server (gateway "sessionToken").
func (s *Server) HTTPHandler(opts HTTPOptions) http.Handler {
	idle := opts.SessionIdleTimeout
	if idle == 0 {
		idle = 30 * time.Minute
	}
	inner := server.NewStreamableHTTPServer(s.mcp,
		server.WithStateful(true),
		server.WithSessionIdleTTL(idle),
		server.WithDisableLocalhostProtection(true), // ours checks Origin too
		server.WithStreamableHTTPLogger(quiet(s.log)),
	)
	allowed := map[string]bool{}
	for _, h := range opts.AllowedHosts {
		allowed[strings.ToLower(h)] = true
	}
	return &httpHandler{s: s, inner: inner, allowed: allowed}
}

type httpHandler struct {
	s       *Server
	inner   http.Handler
	allowed map[string]bool
}

func (h *httpHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if msg := h.rebinding(r); msg != "" {
		http.Error(w, msg, http.StatusForbidden)
		return
	}
	h.takeTokens(r)
	if r.Method != http.MethodPost {
		h.inner.ServeHTTP(w, r)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRequestBody))
	if err != nil {
		http.Error(w, fmt.Sprintf("request body unreadable or over %d bytes: %v", maxRequestBody, err), http.StatusRequestEntityTooLarge)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	if !strings.Contains(r.Header.Get("Accept"), "text/event-stream") || !isToolCall(body) {
		h.inner.ServeHTTP(w, r)
		return
	}
	cs := newCallStream(w)
	ctx := context.WithValue(r.Context(), notifierKey{}, notifier(cs))
	h.inner.ServeHTTP(cs, r.WithContext(ctx))
	cs.finish()
}

func isToolCall(body []byte) bool {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	return json.Unmarshal(body, &m) == nil && m.Method == string(mcp.MethodToolsCall) && len(m.ID) > 0
}

// rebinding returns why a request looks like a DNS-rebinding attempt, or "".
// Only connections that arrived at a loopback address are judged: that is
// where a browser tricked into resolving evil.example to 127.0.0.1 ends up.
func (h *httpHandler) rebinding(r *http.Request) string {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || local == nil || !loopbackHost(local.String()) {
		return ""
	}
	if !loopbackHost(r.Host) && !h.allowed[strings.ToLower(hostOnly(r.Host))] {
		return fmt.Sprintf("Forbidden: Host %q is not a loopback name (DNS-rebinding protection); connect to localhost, 127.0.0.1 or [::1]", r.Host)
	}
	if origin := r.Header.Get("Origin"); origin != "" {
		u, err := url.Parse(origin)
		if err != nil || !loopbackHost(u.Host) && !h.allowed[strings.ToLower(u.Hostname())] {
			return fmt.Sprintf("Forbidden: Origin %q is not a loopback origin (DNS-rebinding protection)", origin)
		}
	}
	return ""
}

func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.Trim(hostport, "[]")
}

func loopbackHost(hostport string) bool {
	h := strings.ToLower(hostOnly(hostport))
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// takeTokens stores "Sandbox-Token-<server>" headers as the session's tokens.
func (h *httpHandler) takeTokens(r *http.Request) {
	sid := r.Header.Get(server.HeaderKeySessionID)
	if sid == "" {
		return
	}
	for k, v := range r.Header {
		lk := strings.ToLower(k)
		if !strings.HasPrefix(lk, "sandbox-token-") || len(v) == 0 {
			continue
		}
		h.s.g.Tokens().SetToken(gateway.SessionID(sid), gateway.NormalizeName(strings.TrimPrefix(lk, "sandbox-token-")), v[0])
	}
}

// callStream is the response side of one tools/call: the writer mcp-go
// answers on, and the stream the call's notifications go to first.
//
// Whoever writes first decides the form: if mcp-go answers first (plain
// JSON, or its own SSE stream for a relayed elicitation), its bytes go out as
// they are and later notifications join its SSE stream; if a notification
// comes first, the response becomes an SSE stream and mcp-go's JSON answer
// is sent as its last event.
type callStream struct {
	mu       sync.Mutex
	out      http.ResponseWriter
	header   http.Header
	mode     int // 0: undecided, 1: mcp-go's form, 2: our SSE stream
	innerSSE bool
	pending  bytes.Buffer
	broken   bool
}

func newCallStream(w http.ResponseWriter) *callStream {
	return &callStream{out: w, header: http.Header{}}
}

func (cs *callStream) Header() http.Header { return cs.header }

func (cs *callStream) WriteHeader(code int) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.innerSSE = strings.HasPrefix(cs.header.Get("Content-Type"), "text/event-stream")
	if cs.mode == 0 {
		cs.mode = 1
		for k, v := range cs.header {
			cs.out.Header()[k] = v
		}
		cs.out.WriteHeader(code)
	}
}

func (cs *callStream) Write(p []byte) (int, error) {
	cs.mu.Lock()
	if cs.mode == 0 {
		cs.mu.Unlock()
		cs.WriteHeader(http.StatusOK)
		cs.mu.Lock()
	}
	defer cs.mu.Unlock()
	if cs.mode == 1 || cs.innerSSE {
		return cs.out.Write(p)
	}
	cs.pending.Write(p)
	return len(p), nil
}

func (cs *callStream) Flush() {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if f, ok := cs.out.(http.Flusher); ok {
		f.Flush()
	}
}

func (cs *callStream) send(msg []byte) error {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.broken {
		return fmt.Errorf("stream closed")
	}
	switch {
	case cs.mode == 0:
		cs.mode = 2
		cs.out.Header().Set("Content-Type", "text/event-stream")
		cs.out.Header().Set("Cache-Control", "no-cache")
		if sid := cs.header.Get(server.HeaderKeySessionID); sid != "" {
			cs.out.Header().Set(server.HeaderKeySessionID, sid)
		}
		cs.out.WriteHeader(http.StatusOK)
	case cs.mode == 1 && !cs.innerSSE:
		return fmt.Errorf("the response is already being written as JSON")
	}
	if _, err := fmt.Fprintf(cs.out, "event: message\ndata: %s\n\n", msg); err != nil {
		cs.broken = true
		return err
	}
	if f, ok := cs.out.(http.Flusher); ok {
		f.Flush()
	}
	return nil
}

// finish sends mcp-go's buffered JSON answer as the stream's last event.
func (cs *callStream) finish() {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.broken = true
	if cs.mode != 2 || cs.pending.Len() == 0 {
		return
	}
	data := bytes.TrimSpace(cs.pending.Bytes())
	fmt.Fprintf(cs.out, "event: message\ndata: %s\n\n", data)
	if f, ok := cs.out.(http.Flusher); ok {
		f.Flush()
	}
}
