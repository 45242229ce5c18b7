package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/sandboxrt/sandbox/internal/logx"
	"github.com/sandboxrt/sandbox/internal/telemetry"
)

// Conn is one live session with an upstream. Requests are sent raw
// through mcp-go's transport (mcp-go's typed client drops parts of schemas
// and fails a whole result on an unknown content type); mcp-go's client is
// used for what it does well: the handshake in both protocol eras and the
// 2026-07-28 subscriptions/listen stream.
type Conn struct {
	s          *Supervisor
	life       context.Context // the supervisor's: bounds the connection's background work
	client     *client.Client
	tr         transport.Interface
	proc       *process
	desk       *stagingDesk // answers too long for memory, staged in files (staging.go)
	isHTTP     bool
	modern     bool
	version    string
	caps       mcp.ServerCapabilities
	serverInfo mcp.Implementation
	// instructions is what the server said about itself at initialize (cut
	// to maxInstructions), for agents choosing among servers; the gateway
	// redacts it and cuts it shorter.
	instructions string
	capsJSON     [AnswersAll + 1]json.RawMessage // capabilitiesAnswering(a), pre-encoded for modern _meta
	metaJSON     sync.Map                        // metaKey -> plainMeta's encoding

	nextID   atomic.Uint64
	lastOK   atomic.Int64 // unix nanos of the last successful request
	activity atomic.Int64 // unix nanos of the last bytes that arrived from the server
	progMu   sync.Mutex
	progress map[string]*progressWatch // by progress token

	dead     chan struct{}
	deadOnce sync.Once
	deadMu   sync.Mutex
	deadWhy  string // for agents: what happened, without the server's own output
	deadMore string // for the operator's log only: stderr, transport errors

	listenMu   sync.Mutex
	listenStop func()

	refreshMu      sync.Mutex
	refreshPending Kinds
	refreshRunning bool
}

func newConn(s *Supervisor, life context.Context) *Conn {
	c := &Conn{s: s, life: life, dead: make(chan struct{}), progress: map[string]*progressWatch{}, desk: newStagingDesk(s.opts, s.log)}
	c.lastOK.Store(time.Now().UnixNano())
	return c
}

// start runs the handshake: the stateless 2026-07-28 protocol when the
// server offers it (unless pinned), the initialize handshake otherwise.
func (c *Conn) start(ctx, initCtx context.Context, tr transport.Interface, pinned string) error {
	c.tr = tr
	caps := ClientCapabilities()
	c.encodeCapabilities()
	opts := []client.ClientOption{client.WithClientCapabilities(caps)}
	if pinned != "" {
		opts = append(opts, client.WithProtocolVersion(pinned))
	}
	cl := client.NewClient(tr, opts...)
	cl.OnNotification(c.onNotification)
	if err := cl.Start(ctx); err != nil {
		return fmt.Errorf("starting the %s transport: %w", c.s.spec.Transport, err)
	}
	c.client = cl
	if bi, ok := tr.(transport.BidirectionalInterface); ok {
		bi.SetRequestHandler(c.onRequest)
	}
	res, err := cl.Initialize(initCtx, mcp.InitializeRequest{Params: mcp.InitializeParams{
		ProtocolVersion: pinned, Capabilities: caps,
		// Sent once: in initialize, or server/discover's _meta (not repeated
		// per request: requestMeta).
		ClientInfo: mcp.Implementation{Name: c.s.opts.ClientName, Version: c.s.opts.ClientVersion},
	}})
	if err != nil {
		if c.proc != nil {
			select {
			case <-c.proc.exited:
				return &exitedError{c.proc}
			case <-time.After(50 * time.Millisecond):
			}
		}
		return fmt.Errorf("initialize: %w", err)
	}
	c.version = res.ProtocolVersion
	if v := cl.ProtocolVersion(); v != "" {
		c.version = v
	}
	c.modern = mcp.IsModernProtocol(c.version)
	c.caps, c.serverInfo = res.Capabilities, res.ServerInfo
	c.instructions = truncate(strings.TrimSpace(res.Instructions), maxInstructions)
	return nil
}

// markDead records why the connection is unusable and wakes the supervisor.
// why is shown to agents (keep it free of what the server printed or
// answered); detail goes only to the operator's log and `sandbox servers`.
func (c *Conn) markDead(why, detail string) {
	c.deadOnce.Do(func() {
		c.deadMu.Lock()
		c.deadWhy, c.deadMore = why, detail
		c.deadMu.Unlock()
		close(c.dead)
	})
}

func (c *Conn) isDead() bool {
	select {
	case <-c.dead:
		return true
	default:
		return false
	}
}

func (c *Conn) deathReason() string {
	c.deadMu.Lock()
	defer c.deadMu.Unlock()
	if c.deadWhy == "" {
		return "connection closed"
	}
	return c.deadWhy
}

// deathDetail is the operator's detail of why the connection died.
func (c *Conn) deathDetail() string {
	c.deadMu.Lock()
	defer c.deadMu.Unlock()
	return c.deadMore
}

// close ends the connection and, for stdio, the server process.
func (c *Conn) close() {
	c.markDead("closed by the gateway", "")
	c.listenMu.Lock()
	if c.listenStop != nil {
		stop := c.listenStop
		c.listenStop = nil
		c.listenMu.Unlock()
		stop()
	} else {
		c.listenMu.Unlock()
	}
	if c.client != nil {
		_ = c.client.Close()
	} else if c.tr != nil {
		_ = c.tr.Close()
	}
	if c.proc != nil {
		c.proc.stop()
	}
	c.desk.close()
}

// encodeCapabilities encodes, once per connection, the client capabilities
// each Answers declares.
func (c *Conn) encodeCapabilities() {
	for a := range c.capsJSON {
		c.capsJSON[a], _ = json.Marshal(capabilitiesAnswering(Answers(a)))
	}
}

// requestMeta returns the _meta of a request: the progress token if any
// and, on the stateless protocol, the per-request protocol metadata that
// says something: the protocol version and the capabilities the request's
// caller can answer (both required). clientInfo is optional per request
// on 2026-07-28; the server has it from server/discover (mcp-go's client
// sends it there), and sending it again with every request costs the
// server a decode per call (an mcp-go server's tools/call: 53 µs with it,
// 47.5 without).
func (c *Conn) requestMeta(progressToken string, logLevel string, answers Answers) map[string]any {
	if !c.modern && progressToken == "" {
		return nil
	}
	m := make(map[string]any, 4)
	if progressToken != "" {
		m["progressToken"] = progressToken
	}
	if c.modern {
		m[mcp.MetaKeyProtocolVersion] = c.version
		m[mcp.MetaKeyClientCapabilities] = c.capsJSON[answers&AnswersAll]
		if logLevel != "" {
			m[mcp.MetaKeyLogLevel] = logLevel
		}
	}
	return m
}

// metaKey is what a plain call's _meta depends on.
type metaKey struct {
	logLevel string
	answers  Answers
}

// plainMeta is requestMeta("", logLevel, answers) encoded: what most calls
// carry, the same for every call at a log level and Answers, so encoded
// once per connection and pair rather than map and all on every call
// (MCP's eight levels and none, times four Answers: at most 36). Levels
// that are not MCP's are encoded every time (a cache per string a client
// can choose would grow without bound).
func (c *Conn) plainMeta(logLevel string, answers Answers) any {
	answers &= AnswersAll
	key := metaKey{logLevel, answers}
	if cached, ok := c.metaJSON.Load(key); ok {
		return cached
	}
	meta := c.requestMeta("", logLevel, answers)
	if meta == nil {
		return nil
	}
	enc, err := json.Marshal(meta)
	if err != nil {
		return meta
	}
	if logLevel == "" || slices.Contains(mcpLogLevels, mcp.LoggingLevel(logLevel)) {
		c.metaJSON.Store(key, json.RawMessage(enc))
	}
	return json.RawMessage(enc)
}

var mcpLogLevels = []mcp.LoggingLevel{mcp.LoggingLevelDebug, mcp.LoggingLevelInfo, mcp.LoggingLevelNotice, mcp.LoggingLevelWarning,
	mcp.LoggingLevelError, mcp.LoggingLevelCritical, mcp.LoggingLevelAlert, mcp.LoggingLevelEmergency}

// request sends one JSON-RPC request and returns the raw result. params is
// encoded as given (it carries its own _meta). An answer too long for
// memory is ErrResultTooLarge (only tools/call takes one staged: CallTool).
func (c *Conn) request(ctx context.Context, method string, params any, header http.Header) (json.RawMessage, error) {
	raw, staged, err := c.roundTrip(ctx, method, params, header, false)
	if staged != nil {
		return c.unstage(staged)
	}
	return raw, err
}

// unstage is a staged answer for a request that does not take one: staged
// because a request that does was waiting when it came (lineReader), it
// is read back into memory when it is within MaxResultBytes, and too large
// otherwise.
func (c *Conn) unstage(st *Staged) (json.RawMessage, error) {
	defer st.Remove()
	if st.Size > c.s.opts.MaxResultBytes {
		return nil, ErrResultTooLarge
	}
	b, err := os.ReadFile(st.Path)
	if err != nil {
		return nil, fmt.Errorf("reading a staged answer back: %w", err)
	}
	var resp transport.JSONRPCResponse
	if err := json.Unmarshal(b, &resp); err != nil {
		return nil, &RPCError{Code: mcp.PARSE_ERROR, Message: "the server's answer is not JSON-RPC: " + err.Error()}
	}
	raw, again, err := c.result(&resp)
	if again != nil { // the server wrote our stand-in's code and a token it cannot know
		again.Remove()
		return nil, ErrResultTooLarge
	}
	return raw, err
}

// roundTrip is request, with the answer either in memory or staged in a
// file (staging.go); stage says the request takes a staged answer.
func (c *Conn) roundTrip(ctx context.Context, method string, params any, header http.Header, stage bool) (_ json.RawMessage, _ *Staged, err error) {
	if c.isDead() {
		return nil, nil, &ConnLostError{c.deathReason()}
	}
	// A request made for a traced call or MCP request gets its own span
	// (and an HTTP upstream its traceparent: transport.go); the gateway's
	// own requests (health checks, listing) start no traces.
	if trace.SpanContextFromContext(ctx).IsValid() {
		var span trace.Span
		ctx, span = telemetry.Tracer().Start(ctx, "upstream "+method, trace.WithSpanKind(trace.SpanKindClient),
			trace.WithAttributes(attribute.String("sandbox.server", c.s.spec.Name), attribute.String("rpc.method", method)))
		defer func() {
			if err != nil {
				span.SetStatus(codes.Error, err.Error())
			}
			span.End()
		}()
	}
	req, err := c.newRequest(method, params, header)
	if err != nil {
		return nil, nil, err
	}
	if stage {
		defer c.desk.expect(req.ID)()
	}
	var tooLarge atomic.Bool
	if c.isHTTP {
		ctx = withTooLargeFlag(ctx, &tooLarge)
	}
	resp, err := c.send(ctx, req)
	if err != nil {
		return nil, nil, c.sendFailed(ctx, req, err, tooLarge.Load())
	}
	return c.result(resp)
}

// newRequest encodes a request with a fresh id and, on the 2026-07-28 HTTP
// transport, the standard headers derived from it.
func (c *Conn) newRequest(method string, params any, header http.Header) (transport.JSONRPCRequest, error) {
	encoded, err := json.Marshal(params)
	if err != nil {
		return transport.JSONRPCRequest{}, fmt.Errorf("encoding %s params: %w", method, err)
	}
	if c.modern && c.isHTTP {
		if std := mcp.StandardHeaders(c.version, mcp.MCPMethod(method), encoded); len(std) > 0 {
			if header == nil {
				header = make(http.Header, len(std))
			}
			for k, v := range std {
				header.Set(k, v)
			}
		}
	}
	id := mcp.NewRequestId("sbx-" + strconv.FormatUint(c.nextID.Add(1), 10))
	return transport.JSONRPCRequest{JSONRPC: mcp.JSONRPC_VERSION, ID: id, Method: method, Params: json.RawMessage(encoded), Header: header}, nil
}

// sendFailed says why a request got no answer: the caller's context ended
// (the upstream is told to stop), the answer was too large, or the
// connection is gone (it is marked dead, so the supervisor reconnects).
func (c *Conn) sendFailed(ctx context.Context, req transport.JSONRPCRequest, err error, tooLarge bool) error {
	if ctx.Err() != nil {
		c.cancelUpstream(req.ID, ctx.Err())
		return ctx.Err()
	}
	if tooLarge || errors.Is(err, ErrResultTooLarge) {
		return ErrResultTooLarge
	}
	if c.isDead() {
		return &ConnLostError{c.deathReason()}
	}
	if errors.Is(err, transport.ErrTransportClosed) {
		if c.proc != nil {
			// stdout ended; the exit status usually follows within
			// milliseconds and says why.
			select {
			case <-c.proc.exited:
				c.markDead("the server process "+c.proc.exitStatus(), c.proc.stderrExcerpt())
			case <-time.After(500 * time.Millisecond):
			}
		}
		c.markDead("the transport closed", "")
		return &ConnLostError{c.deathReason()}
	}
	if errors.Is(err, transport.ErrAuthorizationRequired) {
		// The server refused this request's credentials (401): the
		// connection is fine, and other callers' tokens may be good.
		return err
	}
	if c.isHTTP {
		// The server is unreachable or forgot our session: reconnect.
		c.markDead(req.Method+" failed", err.Error())
		return &ConnLostError{c.deathReason()}
	}
	return err
}

// result is an answer's result (or the file it is staged in), or its
// JSON-RPC error as an *RPCError.
func (c *Conn) result(resp *transport.JSONRPCResponse) (json.RawMessage, *Staged, error) {
	if resp.Error != nil && resp.Error.Code == tooLargeRPCCode {
		return nil, nil, ErrResultTooLarge
	}
	c.lastOK.Store(time.Now().UnixNano())
	if resp.Error != nil && resp.Error.Code == stagedRPCCode {
		data, _ := resp.Error.Data.(map[string]any)
		token, _ := data["token"].(string)
		if st, ok := c.desk.take(token); ok {
			return nil, st, nil
		}
		// A server can write this code too; only our own stand-ins have a
		// token we gave out.
	}
	if resp.Error != nil {
		e := &RPCError{Code: resp.Error.Code, Message: resp.Error.Message}
		if resp.Error.Data != nil {
			e.Data, _ = json.Marshal(resp.Error.Data)
		}
		return nil, nil, e
	}
	return resp.Result, nil, nil
}

// send hands a request to the transport. The in-process transport runs the
// handler on the caller's goroutine and only the handler can notice a
// cancelled context, so there the wait is raced against ctx.
func (c *Conn) send(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	if _, inproc := c.tr.(*transport.InProcessTransport); !inproc || ctx.Done() == nil {
		return c.tr.SendRequest(ctx, req)
	}
	// The in-process server must not see the caller's context values: when
	// the caller is itself an mcp-go server (the front end), they include its
	// HTTP request headers, which the upstream would validate as its own.
	ctx, cancel := isolatedContext(ctx)
	defer cancel()
	type answer struct {
		resp *transport.JSONRPCResponse
		err  error
	}
	ch := make(chan answer, 1)
	go func() {
		// The server's handler runs here, on a goroutine no one else
		// recovers: a server built without mcp-go's recovery that panics
		// fails this request rather than the process.
		defer func() {
			if r := recover(); r != nil {
				logx.Panic(c.s.log, "an in-process server's handler panicked", r, "server", c.s.spec.Name, "method", telemetry.Clip(req.Method))
				ch <- answer{nil, fmt.Errorf("the in-process server panicked: %v", r)}
			}
		}()
		r, err := c.tr.SendRequest(ctx, req)
		ch <- answer{r, err}
	}()
	select {
	case a := <-ch:
		return a.resp, a.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// cancelUpstream tells the server to stop working on a request whose caller
// went away (notifications/cancelled). On the 2026-07-28 HTTP transport the
// closed response stream is the cancellation, so nothing is sent there.
func (c *Conn) cancelUpstream(id mcp.RequestId, cause error) {
	if c.isDead() || (c.modern && c.isHTTP) {
		return
	}
	if _, inproc := c.tr.(*transport.InProcessTransport); inproc {
		return // the handler's context is the caller's, already cancelled
	}
	n := mcp.JSONRPCNotification{JSONRPC: mcp.JSONRPC_VERSION, Notification: mcp.Notification{
		Method: string(mcp.MethodNotificationCancelled),
		Params: mcp.NotificationParams{AdditionalFields: map[string]any{"requestId": id, "reason": cause.Error()}},
	}}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = c.tr.SendNotification(ctx, n)
	}()
}

type listParams struct {
	Cursor string         `json:"cursor,omitempty"`
	Meta   map[string]any `json:"_meta,omitempty"`
}

// decodeListPage reads one page of a list result: the items of field, each
// kept raw, and the next cursor (none when absent or not a string). A large
// catalog's listing is megabytes: this decodes the page once, into a struct
// holding only the field asked for (made for it with reflect, so it does
// for tools, resources and prompts alike); decoding the result into a map
// and then the field into an array read every byte twice more. Keys match
// as encoding/json matches them, ignoring case: a page that also has a
// "TOOLS" key is read differently from a strict reading, which only that
// upstream's own listing can suffer from.
func decodeListPage(raw []byte, field string) (items []json.RawMessage, next string, err error) {
	v := reflect.New(listPageType(field))
	if err := json.Unmarshal(raw, v.Interface()); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) && typeErr.Field != "" {
			return nil, "", fmt.Errorf("%q is not an array: %w", field, err)
		}
		return nil, "", fmt.Errorf("result is not a JSON object: %w", err)
	}
	items, _ = v.Elem().Field(0).Interface().([]json.RawMessage)
	next, _ = v.Elem().Field(1).Interface().(string)
	return items, next, nil
}

var listPageTypes sync.Map // field -> reflect.Type

// listPageType is struct{ Items []json.RawMessage `json:"<field>"`; Next
// any `json:"nextCursor"` }.
func listPageType(field string) reflect.Type {
	if t, ok := listPageTypes.Load(field); ok {
		return t.(reflect.Type)
	}
	t := reflect.StructOf([]reflect.StructField{
		{Name: "Items", Type: reflect.TypeFor[[]json.RawMessage](), Tag: reflect.StructTag(`json:"` + field + `"`)},
		{Name: "Next", Type: reflect.TypeFor[any](), Tag: `json:"nextCursor"`},
	})
	listPageTypes.Store(field, t)
	return t
}

// listAll follows a paginated list to the end and returns the raw items.
func (c *Conn) listAll(ctx context.Context, method, field string) ([]json.RawMessage, error) {
	var out []json.RawMessage
	seen := map[string]bool{"": true}
	cursor := ""
	for page := 0; ; page++ {
		if page == maxListPages {
			return nil, fmt.Errorf("more than %d pages", maxListPages)
		}
		// The gateway's own request: no one is there to answer a question
		// (roots aside), so it declares none.
		raw, err := c.request(ctx, method, listParams{Cursor: cursor, Meta: c.requestMeta("", "", AnswersNone)}, nil)
		if err != nil {
			return nil, err
		}
		items, next, err := decodeListPage(raw, field)
		if err != nil {
			return nil, err
		}
		out = append(out, items...)
		if len(out) > maxListItems {
			return nil, fmt.Errorf("more than %d items", maxListItems)
		}
		if next == "" {
			return out, nil
		}
		if seen[next] {
			return nil, fmt.Errorf("the server repeated cursor %q", truncate(next, 40))
		}
		seen[next] = true
		cursor = next
	}
}

// ResultsChecked reports whether every result this connection hands back
// was checked as JSON on its way in, so that a reader need not check it
// again. Every transport a connection is made with does: the stdio
// transport checks each line whole (splitMessage's json.Valid, or
// json.Unmarshal for the rest) and hands on a slice of it, an answer read
// back from staging is decoded by json.Unmarshal, and mcp-go's transports
// (streamable HTTP, SSE, in process) decode each message with
// encoding/json, which reads the whole text before it fills the result's
// json.RawMessage (gateway's TestHTTPResultsAreCheckedByTheTransport holds
// mcp-go to it). False only for a connection with no transport yet.
func (c *Conn) ResultsChecked() bool {
	return c.tr != nil
}

// aliveWithin reports whether the server answered a request or sent bytes
// within d.
func (c *Conn) aliveWithin(d time.Duration) bool {
	since := func(v *atomic.Int64) time.Duration { return time.Since(time.Unix(0, v.Load())) }
	return since(&c.lastOK) < d || since(&c.activity) < d
}

// busySince reports whether a server whose health check started at checked
// and timed out is busy rather than hung: calls are in flight and bytes of
// answers arrived since the check started.
func (c *Conn) busySince(checked time.Time, inFlight int) bool {
	return inFlight > 0 && time.Unix(0, c.activity.Load()).After(checked)
}

// maxInstructions bounds the instructions kept of a server. Agents read
// far less (the gateway's cut, in every search answer's roster); the rest
// is kept so that the gateway redacts before it cuts, never a secret
// already cut in two.
const maxInstructions = 8 << 10

// healthCheck sends one real request.
func (c *Conn) healthCheck(ctx context.Context) error {
	ctx = c.s.withOperatorToken(ctx)
	var method string
	switch {
	case c.caps.Tools != nil:
		method = "tools/list"
	case c.caps.Resources != nil:
		method = "resources/list"
	case c.caps.Prompts != nil:
		method = "prompts/list"
	case !c.modern:
		method = "ping"
	default:
		return nil
	}
	var params any = listParams{Meta: c.requestMeta("", "", AnswersNone)} // the gateway's own, as listAll's
	if method == "ping" {
		params = struct{}{}
	}
	_, err := c.request(ctx, method, params, nil)
	var re *RPCError
	if errors.As(err, &re) {
		return nil // it answered
	}
	return err
}

// --- progress ---

// Progress is one progress notification relayed from the upstream.
type Progress struct {
	Progress float64 `json:"progress"`
	Total    float64 `json:"total,omitempty"` // 0 when the upstream did not say
	Message  string  `json:"message,omitempty"`
}

// progressWatch is one call's progress relay and the relays under way.
type progressWatch struct {
	fn     func(Progress)
	relays sync.WaitGroup
}

// watchProgress relays the progress notifications of token to fn until stop.
// stop waits for a relay under way, so fn is never called after stop has
// returned: a notification that comes as the call ends is relayed before
// the call returns, or dropped, never after its response.
func (c *Conn) watchProgress(token string, fn func(Progress)) (stop func()) {
	w := &progressWatch{fn: fn}
	c.progMu.Lock()
	c.progress[token] = w
	c.progMu.Unlock()
	return func() {
		c.progMu.Lock()
		delete(c.progress, token)
		c.progMu.Unlock()
		w.relays.Wait()
	}
}

// --- notifications from the upstream ---

func (c *Conn) onNotification(n mcp.JSONRPCNotification) {
	// The relay runs on the transport's reading goroutine (ours for stdio,
	// mcp-go's for HTTP), which nothing else recovers: a panic in it drops
	// this notification rather than end the process.
	defer func() {
		if r := recover(); r != nil {
			logx.Panic(c.s.log, "relaying an upstream's notification panicked; it was dropped", r, "server", c.s.spec.Name, "method", telemetry.Clip(n.Method))
		}
	}()
	switch n.Method {
	case string(mcp.MethodNotificationProgress):
		f := n.Params.AdditionalFields
		token := progressTokenString(f["progressToken"])
		c.progMu.Lock()
		w := c.progress[token]
		if w != nil {
			w.relays.Add(1)
		}
		c.progMu.Unlock()
		if w == nil {
			return
		}
		defer w.relays.Done()
		p := Progress{}
		p.Progress, _ = numberOf(f["progress"])
		p.Total, _ = numberOf(f["total"])
		if m, ok := f["message"].(string); ok {
			p.Message = m
		}
		w.fn(p)
	case string(mcp.MethodNotificationToolsListChanged):
		c.scheduleRefresh(Tools)
	case string(mcp.MethodNotificationResourcesListChanged):
		c.scheduleRefresh(Resources)
	case string(mcp.MethodNotificationPromptsListChanged):
		c.scheduleRefresh(Prompts)
	case string(mcp.MethodNotificationResourceUpdated):
		uri, _ := n.Params.AdditionalFields["uri"].(string)
		c.s.host.ResourceUpdated(uri, notificationParams(n))
	case string(mcp.MethodNotificationMessage):
		c.s.host.LogMessage(notificationParams(n))
	}
}

// progressTokenString makes string and numeric tokens comparable.
func progressTokenString(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case float64:
		return strconv.FormatFloat(t, 'f', -1, 64)
	case json.Number:
		return t.String()
	case nil:
		return ""
	}
	return fmt.Sprint(v)
}

// notificationParams re-encodes a notification's params without _meta.
func notificationParams(n mcp.JSONRPCNotification) json.RawMessage {
	if len(n.Params.AdditionalFields) == 0 {
		return json.RawMessage(`{}`)
	}
	b, err := json.Marshal(n.Params.AdditionalFields)
	if err != nil {
		return json.RawMessage(`{}`)
	}
	return b
}

// scheduleRefresh re-lists after a list_changed notification; bursts of
// notifications are coalesced into one refresh.
func (c *Conn) scheduleRefresh(kind Kinds) {
	c.refreshMu.Lock()
	c.refreshPending |= kind
	if c.refreshRunning {
		c.refreshMu.Unlock()
		return
	}
	c.refreshRunning = true
	c.refreshMu.Unlock()
	go func() {
		for {
			time.Sleep(20 * time.Millisecond)
			c.refreshMu.Lock()
			k := c.refreshPending
			c.refreshPending = 0
			if k == 0 || c.isDead() {
				c.refreshRunning = false
				c.refreshMu.Unlock()
				return
			}
			c.refreshMu.Unlock()
			ctx, cancel := context.WithTimeout(c.life, c.s.opts.StartupTimeout)
			ctx = c.s.withOperatorToken(ctx)
			if err := c.s.refresh(ctx, c, k); err != nil && c.life.Err() == nil && !c.isDead() {
				// (A refresh cut short because the gateway is closing or the
				// connection died is not a failure worth a warning.)
				c.s.log.Warn("refresh after list_changed failed", "server", c.s.spec.Name, "error", err)
			}
			cancel()
		}
	}()
}

// startListen opens the 2026-07-28 subscriptions/listen stream, through
// which a modern server sends list_changed and resource updates.
func (c *Conn) startListen(ctx context.Context) {
	filter := mcp.SubscriptionFilter{
		ToolsListChanged:     c.caps.Tools != nil && c.caps.Tools.ListChanged,
		PromptsListChanged:   c.caps.Prompts != nil && c.caps.Prompts.ListChanged,
		ResourcesListChanged: c.caps.Resources != nil && c.caps.Resources.ListChanged,
	}
	if c.caps.Resources != nil && c.caps.Resources.Subscribe {
		filter.ResourceSubscriptions = c.s.host.SubscribedURIs()
	}
	c.listenMu.Lock()
	defer c.listenMu.Unlock()
	if c.listenStop != nil {
		c.listenStop()
		c.listenStop = nil
	}
	if filter.IsEmpty() {
		return
	}
	lctx := c.s.withOperatorToken(ctx)
	stop, err := c.client.ListenAsync(lctx, filter, func(err error) {
		c.s.log.Debug("subscriptions/listen ended", "server", c.s.spec.Name, "error", err)
	})
	if err != nil {
		c.s.log.Warn("subscriptions/listen failed", "server", c.s.spec.Name, "error", err)
		return
	}
	c.listenStop = stop
}

// Subscribe turns a resource subscription on or off upstream.
func (c *Conn) Subscribe(ctx context.Context, uri string, on bool) error {
	if c.caps.Resources == nil || !c.caps.Resources.Subscribe {
		return nil // the server sends no updates; nothing to ask for
	}
	if c.modern {
		c.startListen(c.life)
		return nil
	}
	method := "resources/subscribe"
	if !on {
		method = "resources/unsubscribe"
	}
	_, err := c.request(c.s.withOperatorToken(ctx), method, map[string]any{"uri": uri}, nil)
	return err
}

// hasParamHeaders reports whether a tool schema uses x-mcp-header (SEP-2243).
func hasParamHeaders(raw json.RawMessage) bool { return bytes.Contains(raw, []byte("x-mcp-header")) }

// isolatedContext carries ctx's deadline, cancellation and the gateway's own
// per-call values, and nothing else.
func isolatedContext(ctx context.Context) (context.Context, context.CancelFunc) {
	base := context.Background()
	if v, ok := ctx.Value(callerKey{}).(callerValue); ok {
		base = context.WithValue(base, callerKey{}, v)
	}
	if tok, ok := ctx.Value(tokenKey{}).(string); ok {
		base = WithToken(base, tok)
	}
	var cancel context.CancelFunc
	if d, ok := ctx.Deadline(); ok {
		base, cancel = context.WithDeadline(base, d)
	} else {
		base, cancel = context.WithCancel(base)
	}
	stop := context.AfterFunc(ctx, cancel)
	return base, func() { stop(); cancel() }
}
