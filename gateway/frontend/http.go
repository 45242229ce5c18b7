package frontend

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/gateway/internal/jsonscan"
	"github.com/sandboxrt/sandbox/internal/growstack"
	"github.com/sandboxrt/sandbox/internal/logx"
	"github.com/sandboxrt/sandbox/internal/mcphttp"
	"github.com/sandboxrt/sandbox/internal/telemetry"
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

// envelopeSlack is what a tools/call body may hold besides its arguments
// (jsonrpc, id, method, name, _meta) before the argument limit is judged on
// the body's size.
const envelopeSlack = 4 << 10

// maxRequestBody caps one POST body.
const maxRequestBody = 16 << 20

// HTTPOptions configure the streamable HTTP endpoint.
type HTTPOptions struct {
	// AllowedHosts are extra Host names accepted on loopback connections
	// besides localhost, 127.0.0.1 and [::1] (for a local reverse proxy).
	AllowedHosts []string
	// SessionIdleTimeout drops sessions idle this long (default 30 min).
	SessionIdleTimeout time.Duration
	// MaxInFlightBytes bounds the request bodies held at once, whoever sent
	// them (default 64 MiB); past it a request gets 503 with Retry-After.
	MaxInFlightBytes int64
	// MaxInFlightBytesPerPrincipal bounds what one principal's bodies may
	// hold of MaxInFlightBytes (default half of it), so one tenant sending
	// large bodies cannot take the whole budget from the others.
	MaxInFlightBytesPerPrincipal int64
	// MaxSessionsPerPrincipal bounds the sessions one principal may hold
	// open (default 64); past it initialize gets 429.
	MaxSessionsPerPrincipal int
	// BodyReadTimeout bounds reading one request body (default 30 s), so a
	// client trickling bytes cannot hold its share of MaxInFlightBytes.
	BodyReadTimeout time.Duration
	// Sessions, when set, is the directory replicas share their sessions
	// in (directory.go); nil: a session is valid on this process only.
	Sessions SessionDirectory
	// CallStreams, when set, is where replicas hand each other the call
	// streams whose client went away (streams.go); nil: a stream resumes
	// on the process that ran its call only.
	CallStreams CallStreamStore
}

// defaultMaxInFlightBytes is HTTPOptions.MaxInFlightBytes' default: four
// bodies of the largest size, a few hundred ordinary ones.
const defaultMaxInFlightBytes = 4 * maxRequestBody

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
	sessions := server.WithStateful(true)
	var dir *directoryResolver
	if opts.Sessions != nil {
		dir = &directoryResolver{s: s, dir: opts.Sessions, idle: idle}
		s.directory.Store(dir)
		sessions = server.WithSessionIdManagerResolver(dir)
	}
	inner := server.NewStreamableHTTPServer(s.mcp,
		sessions,
		server.WithSessionIdleTTL(idle),
		server.WithDisableLocalhostProtection(true), // ours checks Origin too
		server.WithStreamableHTTPLogger(logx.DebugOnly(s.log)),
	)
	allowed := map[string]bool{}
	for _, h := range opts.AllowedHosts {
		allowed[strings.ToLower(h)] = true
	}
	budget := opts.MaxInFlightBytes
	if budget <= 0 {
		budget = defaultMaxInFlightBytes
	}
	share := opts.MaxInFlightBytesPerPrincipal
	if share <= 0 || share > budget {
		share = budget / 2
	}
	h := &httpHandler{s: s, inner: inner, allowed: allowed, bodies: &byteBudget{max: budget, share: share},
		maxSessions: opts.MaxSessionsPerPrincipal, bodyTimeout: opts.BodyReadTimeout, dir: dir, shared: opts.CallStreams}
	if h.maxSessions <= 0 {
		h.maxSessions = 64
	}
	if h.bodyTimeout <= 0 {
		h.bodyTimeout = 30 * time.Second
	}
	return mcphttp.NoDrain(h)
}

// byteBudget counts bytes held at once and refuses what would pass its max,
// or what would take one principal past its share of it.
type byteBudget struct {
	mu         sync.Mutex
	max, share int64
	used       int64
	by         map[string]int64 // bytes held, by principal id; no zero entries
}

func (b *byteBudget) tryTake(principal string, n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+n > b.max || b.by[principal]+n > b.share {
		return false
	}
	if b.by == nil {
		b.by = map[string]int64{}
	}
	b.used += n
	b.by[principal] += n
	return true
}

func (b *byteBudget) give(principal string, n int64) {
	b.mu.Lock()
	b.used -= n
	if b.by[principal] -= n; b.by[principal] <= 0 {
		delete(b.by, principal) // the map holds only principals holding bytes
	}
	b.mu.Unlock()
}

type httpHandler struct {
	s       *Server
	inner   *server.StreamableHTTPServer
	allowed map[string]bool
	bodies  *byteBudget // request bodies held at once

	maxSessions int                // per principal
	bodyTimeout time.Duration      // to read one body
	dir         *directoryResolver // nil: sessions are this process's only
	shared      CallStreamStore    // nil: detached streams are this process's only

	mu       sync.Mutex
	streams  map[string]*callStream // detached, resumable streams by id
	resuming map[string]int         // resumes from the shared store in progress, by principal
}

// detachedLimit bounds how long a call keeps running after its client went
// away without anyone resuming its stream.
const detachedLimit = 2 * time.Minute

// Detached streams kept for resumption: at most maxDetached in all, and
// at most maxDetachedPerPrincipal of one principal, so that one principal
// abandoning calls evicts only its own streams.
const (
	maxDetached             = 256
	maxDetachedPerPrincipal = 16
)

func (h *httpHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// HTTPHandler wraps this in mcphttp.NoDrain: a refusal written before
	// the body is read ends the connection instead of waiting for a body
	// that may never come.
	if msg := mcphttp.Rebinding(r, h.allowed); msg != "" {
		http.Error(w, msg, http.StatusForbidden)
		return
	}
	r, err := h.checkSession(r)
	switch {
	case errors.Is(err, errDirectoryDown):
		w.Header().Set("Retry-After", "2")
		http.Error(w, "Service Unavailable: the session directory replicas share (Redis) does not answer, so this replica cannot tell whose session this is; send the request again in a moment", http.StatusServiceUnavailable)
		return
	case err != nil:
		// As for an id never issued: nothing tells the caller it exists.
		http.Error(w, "Not Found: no such session", http.StatusNotFound)
		return
	}
	r, err = h.takeTokens(r)
	if err != nil {
		http.Error(w, "Bad Request: Sandbox-Token header: "+err.Error(), http.StatusBadRequest)
		return
	}
	switch r.Method {
	case http.MethodGet:
		if r.ProtoMajor == 1 && r.ContentLength != 0 {
			// mcp-go marks the stream it answers a GET with Connection:
			// keep-alive, and net/http would wait for the body first.
			http.Error(w, "Bad Request: a GET of the MCP endpoint takes no body; send it without one", http.StatusBadRequest)
			return
		}
		if last := r.Header.Get("Last-Event-ID"); strings.HasPrefix(last, streamIDPrefix) {
			h.resume(w, r, last)
			return
		}
		h.inner.ServeHTTP(w, r)
		return
	case http.MethodPost:
	default:
		h.inner.ServeHTTP(w, r)
		return
	}
	// A body is held until its request is answered: reserve its size (the
	// cap when the client does not say) before reading a byte of it.
	reserve := int64(maxRequestBody)
	if r.ContentLength >= 0 && r.ContentLength < reserve {
		reserve = r.ContentLength
	}
	principal := auth.PrincipalFrom(r.Context()).Key()
	if !h.bodies.tryTake(principal, reserve) {
		w.Header().Set("Retry-After", "1")
		http.Error(w, "Service Unavailable: the server holds as many request bytes as it may for you; send the request again in a moment (a body that says its Content-Length reserves only that much)", http.StatusServiceUnavailable)
		return
	}
	defer h.bodies.give(principal, reserve)
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(h.bodyTimeout))
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, reserve))
	if err != nil {
		// Keep the deadline and close the connection: net/http would
		// otherwise drain the rest of the body after the handler returns,
		// without a deadline, and a trickling client would hold the
		// connection (and this handler's goroutine) for as long as it likes.
		w.Header().Set("Connection", "close")
		http.Error(w, fmt.Sprintf("request body unreadable or over %d bytes: %v", maxRequestBody, err), http.StatusRequestEntityTooLarge)
		return
	}
	_ = rc.SetReadDeadline(time.Time{})
	env, _ := parseEnvelope(body)
	method, isRequest := env.Method, len(env.ID) > 0
	if isRequest {
		var end func()
		r, end = traceRequest(r, env)
		defer end()
		r = r.WithContext(withAnswerSlot(r.Context()))
	}
	// A built-in tool's arguments over its limit are answered here (with
	// room for the envelope around them), before mcp-go decodes the body.
	if method == string(mcp.MethodToolsCall) && isRequest {
		if err := h.s.argumentsTooLarge(env.Params.Name, len(body), envelopeSlack); err != nil {
			w.Header().Set("Content-Type", "application/json")
			res, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": env.ID, "result": errorResult(err)})
			_, _ = w.Write(res)
			return
		}
	}
	// A built-in tool's arguments go to its handler past mcp-go, which
	// would decode them seven to eleven times (arguments.go).
	if method == string(mcp.MethodToolsCall) && isRequest && h.s.isBuiltin(env.Params.Name) {
		if rest, args, ok := splitArguments(body, true); ok { // parseEnvelope read it: JSON
			body = rest
			r = r.WithContext(context.WithValue(r.Context(), handedArgumentsKey{}, handedArguments{tool: env.Params.Name, args: args}))
		}
	}
	if r.Header.Get(server.HeaderKeySessionID) == "" && method == string(mcp.MethodInitialize) && h.s.sessionsOf(auth.PrincipalFrom(r.Context())) >= h.maxSessions {
		w.Header().Set("Retry-After", "60")
		http.Error(w, fmt.Sprintf("Too Many Requests: you hold %d open sessions, the most one principal may; close some (DELETE /mcp with their Mcp-Session-Id) or let them expire", h.maxSessions), http.StatusTooManyRequests)
		return
	}
	if h.serveTasks(w, r, body, env) { // the tasks extension (tasks.go)
		return
	}
	if !strings.Contains(r.Header.Get("Accept"), "text/event-stream") || method != string(mcp.MethodToolsCall) || !isRequest {
		// The body is read: mcp-go's Handle takes it as it is (its
		// ServeHTTP would read and copy it again).
		h.inner.Handle(answering(mcphttp.ResponseWriter(w), answerSlotFrom(r.Context()), env.ID), mcphttp.Request(r, body))
		return
	}
	h.serveToolCall(w, r, body, env.ID)
}

// serveToolCall answers a tools/call on a stream the front end owns. For a
// 2025 session the stream is resumable (SEP-1699): it starts with a priming
// event (an id, a retry delay, no data), every event has an id, and when the
// client goes away the call keeps running; the client reconnects with GET
// and Last-Event-ID to get the rest. On 2026-07-28 (no sessions, no
// resumability) events carry no ids and a client that leaves cancels the call.
func (h *httpHandler) serveToolCall(w http.ResponseWriter, r *http.Request, body []byte, requestID json.RawMessage) {
	sid := r.Header.Get(server.HeaderKeySessionID)
	cs := newCallStream(w, sid, sid != "" && !mcp.IsModernProtocol(r.Header.Get(mcp.HeaderProtocolVersion)), requestID)
	cs.owner = auth.PrincipalFrom(r.Context()).Key()
	ctx, cancel := context.WithCancel(context.WithValue(context.WithoutCancel(r.Context()), notifierKey{}, notifier(cs)))
	req := mcphttp.Request(r, body)
	req.Context = ctx
	finished := make(chan struct{})
	go func() {
		// mcp-go's handler, code mode and the run's wait go deep: one
		// copy of an empty stack instead of three of a deep one (28-40 µs
		// a call, RATIONALE.md).
		growstack.To32K()
		defer close(finished)
		defer cancel()
		// mcp-go recovers a tool handler's panic, but not one in its own
		// handling of the request or in a hook, and net/http's recovery
		// does not reach this goroutine: unrecovered, it would end the
		// process and every tenant's calls with it.
		defer func() {
			if r := recover(); r != nil {
				logx.Panic(h.s.log, "a call panicked", r, "id", telemetry.Clip(string(requestID)))
				writeRPC(cs, http.StatusOK, requestID, nil, &rpcErr{Code: mcp.INTERNAL_ERROR, Message: errRunPanicked.Error()})
				cs.Finish()
			}
		}()
		h.inner.Handle(answering(cs, answerSlotFrom(ctx), requestID), req)
		cs.Finish()
	}()
	select {
	case <-finished:
		if !cs.LostAnswer() {
			return
		}
		// The client's connection broke as the answer was written: keep
		// the stream, complete, for the client's resume.
	case <-r.Context().Done():
		if !cs.Detach() {
			cancel()
			<-finished
			return
		}
	}
	h.keep(cs)
	if h.shared != nil {
		go h.handOff(cs) // for a client resuming on another replica
	}
	go func() {
		t := time.NewTimer(detachedLimit)
		defer t.Stop()
		select {
		case <-finished:
		case <-t.C:
			cancel()
		}
	}()
}

// keep registers a detached stream for resumption (oldest evicted first).
func (h *httpHandler) keep(cs *callStream) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.streams == nil {
		h.streams = map[string]*callStream{}
	}
	h.streams[cs.ID()] = cs
	for {
		counts := map[string]int{}
		for _, s := range h.streams {
			counts[s.owner]++
		}
		// Evict from the principal over its share, else (all full) from the
		// principal holding the most.
		owner := cs.owner
		if counts[owner] <= maxDetachedPerPrincipal {
			if len(h.streams) <= maxDetached {
				break
			}
			for o, n := range counts {
				if n > counts[owner] {
					owner = o
				}
			}
		}
		var oldest *callStream
		for _, s := range h.streams {
			if s.owner == owner && (oldest == nil || s.created.Before(oldest.created)) {
				oldest = s
			}
		}
		delete(h.streams, oldest.ID())
		oldest.evicted.Store(true)
	}
	time.AfterFunc(detachedLimit+time.Minute, func() {
		h.mu.Lock()
		if h.streams[cs.ID()] == cs {
			delete(h.streams, cs.ID())
		}
		h.mu.Unlock()
		cs.evicted.Store(true)
	})
}

// resume serves GET + Last-Event-ID: the stream's events after that id,
// then what follows until the call's response.
func (h *httpHandler) resume(w http.ResponseWriter, r *http.Request, lastEventID string) {
	streamID, seq, ok := parseEventID(lastEventID)
	if !ok {
		http.Error(w, "malformed Last-Event-ID: resume with the id of the last event you received from this stream", http.StatusBadRequest)
		return
	}
	h.mu.Lock()
	cs := h.streams[streamID]
	h.mu.Unlock()
	if cs == nil && h.shared != nil && r.Header.Get(server.HeaderKeySessionID) != "" {
		h.resumeShared(w, r, streamID, seq) // run, or ran, on another replica
		return
	}
	if cs == nil || cs.session != r.Header.Get(server.HeaderKeySessionID) || cs.owner != auth.PrincipalFrom(r.Context()).Key() {
		http.Error(w, "unknown Last-Event-ID: the stream finished long ago, belongs to another session, or never existed; send the request again", http.StatusNotFound)
		return
	}
	if cs.Replay(r.Context(), w, seq) {
		h.mu.Lock()
		delete(h.streams, cs.ID())
		h.mu.Unlock()
	}
}

// rpcEnvelope is what the front end reads of a POST before mcp-go does:
// the JSON-RPC id and method, and of a tools/call the tool's name and the
// trace context in _meta. Decoding skips the rest without copying it.
type rpcEnvelope struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name string         `json:"name"`
		Meta map[string]any `json:"_meta"` // traceparent, for tracing
	} `json:"params"`
}

// parseEnvelope reads a body's envelope, once per body; false (an empty
// envelope) for a batch or anything unreadable. It reads what
// json.Unmarshal reads (FuzzParseEnvelope holds it to that): a body of the
// usual shape is walked without decoding (scanEnvelope), anything else is
// decoded.
func parseEnvelope(body []byte) (rpcEnvelope, bool) {
	if m, ok := scanEnvelope(body); ok {
		return m, true
	}
	var m rpcEnvelope
	if json.Unmarshal(body, &m) != nil {
		return rpcEnvelope{}, false
	}
	return m, true
}

// scanEnvelope reads the envelope of a body of the usual shape: an object
// whose keys are plain ASCII and come once each (however encoding/json
// would fold their case), a method and a tool name that are plain strings,
// params an object or null. false for anything else, which json.Unmarshal
// reads instead: keys that fold together or need unescaping, values of
// other types (whose errors are json.Unmarshal's to make), invalid JSON.
func scanEnvelope(body []byte) (rpcEnvelope, bool) {
	var m rpcEnvelope
	if !json.Valid(body) {
		return m, false
	}
	var seen jsonscan.Fields
	shape := true
	isObject := jsonscan.Members(body, func(key, value []byte) bool {
		switch {
		case !jsonscan.PlainKey(key):
			shape = false
		case keyIs(key, "id"):
			if shape = seen.First(0); shape {
				m.ID = value
			}
		case keyIs(key, "method"):
			if shape = seen.First(1); shape {
				m.Method, shape = jsonscan.PlainString(value)
			}
		case keyIs(key, "params"):
			if shape = seen.First(2); shape && string(value) != "null" {
				shape = scanParams(value, &m)
			}
		default:
			shape = jsonscan.OtherKey(key, "id", "method", "params")
		}
		return shape
	})
	return m, isObject && shape
}

// scanParams reads a tools/call's name and _meta for scanEnvelope.
func scanParams(params []byte, m *rpcEnvelope) bool {
	var seen jsonscan.Fields
	shape := true
	isObject := jsonscan.Members(params, func(key, value []byte) bool {
		switch {
		case !jsonscan.PlainKey(key):
			shape = false
		case keyIs(key, "name"):
			if shape = seen.First(0); shape {
				m.Params.Name, shape = jsonscan.PlainString(value)
			}
		case keyIs(key, "_meta"):
			// A tools/call's _meta is small (a progress token, trace
			// context) and rare from most clients: decoded as it was.
			if shape = seen.First(1) && value[0] == '{'; shape {
				shape = json.Unmarshal(value, &m.Params.Meta) == nil
			}
		default:
			shape = jsonscan.OtherKey(key, "name", "_meta")
		}
		return shape
	})
	return isObject && shape
}

// takeTokens applies "Sandbox-Token-<server>" headers. On a session the
// front end has open (and that belongs to the request's principal: see
// ServeHTTP), they become the session's tokens, dropped when it ends. A
// request without a session (2026-07-28) gets them for itself only, never
// stored. A request that names a session the front end did not open stores
// nothing. It returns the request to serve, or an error for the client.
func (h *httpHandler) takeTokens(r *http.Request) (*http.Request, error) {
	tokens := map[string]string{}
	for k, v := range r.Header {
		if lk := strings.ToLower(k); strings.HasPrefix(lk, "sandbox-token-") && len(v) > 0 {
			tokens[strings.TrimPrefix(lk, "sandbox-token-")] = v[0]
		}
	}
	if len(tokens) == 0 {
		return r, nil
	}
	sid := r.Header.Get(server.HeaderKeySessionID)
	if sid == "" {
		ctx, err := h.s.g.WithRequestTokens(r.Context(), tokens)
		if err != nil {
			return nil, err
		}
		return r.WithContext(ctx), nil
	}
	sess := h.s.sessionByID(sid)
	if sess == nil {
		if h.dir == nil {
			return r, nil // mcp-go answers 404 for the unknown session
		}
		// A session re-established here (foreignSession checked that it is
		// the requester's): its tokens go to the store replicas share.
		caller := auth.Caller{Principal: auth.PrincipalFrom(r.Context()), Session: auth.SessionID(sid)}
		for server, tok := range tokens {
			if err := h.s.g.SetSessionToken(r.Context(), caller, server, tok); err != nil {
				return nil, err
			}
		}
		return r, nil
	}
	for server, tok := range tokens {
		if err := sess.gw.SetToken(r.Context(), server, tok); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// checkSession refuses a request that names a session of another
// principal: a session is bound to the principal that started it, and a
// request of anyone else is refused, whatever id it knows. With a directory
// replicas share, every request naming a session is checked there (attach).
func (h *httpHandler) checkSession(r *http.Request) (*http.Request, error) {
	sid := r.Header.Get(server.HeaderKeySessionID)
	if sid == "" {
		return r, nil
	}
	if h.dir != nil {
		return h.dir.attach(r, sid)
	}
	if sess := h.s.sessionByID(sid); sess != nil && sess.caller.Principal.Key() != auth.PrincipalFrom(r.Context()).Key() {
		return r, errSessionOfAnother
	}
	return r, nil // mcp-go answers 404 for an id it never issued
}

// streamIDPrefix marks the event ids of the front end's call streams.
const streamIDPrefix = "cs_"

// callStream is the response of one tools/call (mcphttp.CallStream) and
// what the front end keeps with it to hand it to its client's resume: whose
// call it is, and whether it is still kept.
type callStream struct {
	*mcphttp.CallStream
	owner   string // the principal whose call it is (auth.Principal.Key)
	session string
	created time.Time
	evicted atomic.Bool // no longer kept for a resume (keep)
}

func newCallStream(w http.ResponseWriter, session string, resumable bool, requestID json.RawMessage) *callStream {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return &callStream{
		CallStream: mcphttp.NewCallStream(w, newStreamID(hex.EncodeToString(b[:]), requestID), resumable),
		session:    session, created: time.Now(),
	}
}

// send delivers a notification of the call on its stream (the notifier).
func (cs *callStream) send(msg []byte) error { return cs.Send(msg) }

// primeStream opens a resumable call stream as soon as its call starts
// running (mcphttp.CallStream.Prime): the priming event comes first, at once.
func primeStream(next server.ToolHandlerFunc) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if cs, ok := notifierFrom(ctx).(*callStream); ok {
			cs.Prime()
		}
		return next(ctx, req)
	}
}

// traceRequest starts the span of one MCP request: a child of the client's
// trace context, from the request's _meta (the client's own) or else its
// HTTP headers.
func traceRequest(r *http.Request, env rpcEnvelope) (*http.Request, func()) {
	ctx := telemetry.FromMeta(telemetry.FromHeaders(r.Context(), r.Header), env.Params.Meta)
	// The method and tool name are the client's: clipped.
	method, tool := telemetry.Clip(env.Method), telemetry.Clip(env.Params.Name)
	name := "mcp " + method
	if tool != "" && env.Method == string(mcp.MethodToolsCall) {
		name += " " + tool
	}
	ctx, span := telemetry.Tracer().Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer))
	if span.IsRecording() {
		span.SetAttributes(attribute.String("rpc.system", "jsonrpc"), attribute.String("rpc.method", method),
			attribute.String("mcp.session.id", telemetry.Clip(r.Header.Get(server.HeaderKeySessionID))))
		if tool != "" {
			span.SetAttributes(attribute.String("mcp.tool.name", tool))
		}
	}
	return r.WithContext(ctx), func() { span.End() }
}

// traceToolCall gives a tools/call that arrived without a span of ours (over
// stdio: the HTTP front end starts one per request in traceRequest) its
// request span, a child of the trace context in its _meta.
func traceToolCall(next server.ToolHandlerFunc) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if sc := trace.SpanContextFromContext(ctx); sc.IsValid() && !sc.IsRemote() {
			return next(ctx, req)
		}
		if req.Params.Meta != nil {
			ctx = telemetry.FromMeta(ctx, req.Params.Meta.AdditionalFields)
		}
		tool := telemetry.Clip(req.Params.Name)
		ctx, span := telemetry.Tracer().Start(ctx, "mcp tools/call "+tool, trace.WithSpanKind(trace.SpanKindServer))
		defer span.End()
		if span.IsRecording() {
			span.SetAttributes(attribute.String("rpc.system", "jsonrpc"), attribute.String("rpc.method", string(mcp.MethodToolsCall)),
				attribute.String("mcp.tool.name", tool))
		}
		return next(ctx, req)
	}
}
