package frontend

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"sort"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/gateway"
	"github.com/sandboxrt/sandbox/gateway/toolspec"
)

// session is the front end's state for one MCP client session: the servers
// it chose to see, its log level, and the calls it has in flight (where
// upstream requests and logs for it are delivered).
type session struct {
	s      *Server
	caller auth.Caller
	cs     server.ClientSession
	gw     *gateway.Session // the gateway's state for it: narrowing, tokens, subscriptions, log level
	// adopted: made on another replica and served here (directory.go);
	// mcp-go does not know it as a session of its own.
	adopted bool

	mu    sync.Mutex
	calls []*activeCall // in flight, oldest first
}

type activeCall struct {
	ctx context.Context
	n   notifier
}

// callerOf is who made a request: the principal authentication put in the
// context (the operator for the stdio client, whose process it is) and the
// request's MCP session. A 2026-07-28 request has no session: its caller's
// Session is empty and it shares no per-session state with anyone.
func callerOf(ctx context.Context) auth.Caller {
	cs := server.ClientSessionFromContext(ctx)
	if cs == nil {
		return auth.Caller{Principal: auth.PrincipalFrom(ctx)}
	}
	return callerOfSession(ctx, cs)
}

func callerOfSession(ctx context.Context, cs server.ClientSession) auth.Caller {
	if cs.SessionID() == stdioSessionID {
		return auth.Caller{Principal: auth.Operator(), Session: stdioSession}
	}
	return auth.Caller{Principal: auth.PrincipalFrom(ctx), Session: auth.SessionID(cs.SessionID())}
}

// stdioSessionID is mcp-go's id for the one stdio client.
const stdioSessionID = "stdio"

// stdioSession is the session of this process's stdio client, as the
// gateway and code mode know it. mcp-go names every stdio session "stdio";
// kept as is, a stdio client would find what the last process's client
// kept in session scope (sandbox.store with a data directory), though each
// process is a client's session of its own. So it is "stdio-" and a random
// id, one per process (mcp-go serves stdio once per process).
var stdioSession = auth.SessionID("stdio-" + rand.Text())

func (s *Server) sessionStarted(ctx context.Context, cs server.ClientSession) {
	if cs.SessionID() == "" {
		return // a 2026-07-28 request: no session to keep
	}
	// mcp-go also registers a session when a client opens its GET stream;
	// one that existed before (attach checked it in the directory) lives
	// on in other replicas when the stream ends here.
	v, known := ctx.Value(verifiedSessionKey{}).(verifiedSession)
	s.hold(ctx, cs, known && v.id == cs.SessionID(), true)
}

// hold makes this replica's copy of a session (one at a time): the
// gateway's state for it, registered by id, its session tools. An existing
// copy is kept, unless replace. adopted: the session was made on another
// replica, and its end here is not its end.
func (s *Server) hold(ctx context.Context, cs server.ClientSession, adopted, replace bool) *session {
	s.adoptMu.Lock()
	if sess := s.sessionByID(cs.SessionID()); sess != nil && !replace {
		s.adoptMu.Unlock()
		return sess
	}
	sess := &session{s: s, caller: callerOfSession(ctx, cs), cs: cs, adopted: adopted}
	sess.gw = s.g.OpenSession(sess.caller, sess)
	s.mu.Lock()
	s.sessions[cs.SessionID()] = sess
	s.mu.Unlock()
	s.adoptMu.Unlock()
	s.applyCallerTools(sess)
	msg := "session started"
	if adopted {
		msg = "session adopted from another replica"
	}
	s.log.Info(msg, "session", string(sess.caller.Session), "principal", sess.caller.Principal.Key())
	return sess
}

// sessionEnded is the one clean-up path of a session: the gateway forgets
// its tokens, subscriptions, narrowing and client with it.
func (s *Server) sessionEnded(cs server.ClientSession) {
	s.mu.Lock()
	sess := s.sessions[cs.SessionID()]
	delete(s.sessions, cs.SessionID())
	s.mu.Unlock()
	if sess == nil {
		return
	}
	d := s.directory.Load()
	if d != nil {
		d.unclaimed.take(cs.SessionID())
	}
	if d != nil && (d.idled.take(cs.SessionID()) || sess.adopted) {
		sess.gw.Detach() // it lives on in other replicas, with its tokens
		s.log.Info("session idled out here", "session", string(sess.caller.Session))
		return
	}
	sess.gw.Close()
	s.log.Info("session ended", "session", string(sess.caller.Session))
}

// sessionFor returns the state of the request's session (nil for a
// 2026-07-28 request, which has none).
func (s *Server) sessionFor(ctx context.Context) *session {
	cs := server.ClientSessionFromContext(ctx)
	if cs == nil {
		return nil
	}
	return s.sessionByID(cs.SessionID())
}

// sessionsOf counts the sessions a principal opened here (not the ones
// adopted from other replicas).
func (s *Server) sessionsOf(p auth.Principal) int {
	key := p.Key()
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, sess := range s.sessions {
		if sess.caller.Principal.Key() == key && !sess.adopted {
			n++
		}
	}
	return n
}

func (s *Server) sessionByID(id string) *session {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sessions[id]
}

// enterCall records a call in flight; the returned function ends it.
func (sess *session) enterCall(ctx context.Context, n notifier) func() {
	c := &activeCall{ctx: ctx, n: n}
	sess.mu.Lock()
	sess.calls = append(sess.calls, c)
	sess.mu.Unlock()
	return func() {
		sess.mu.Lock()
		defer sess.mu.Unlock()
		for i, x := range sess.calls {
			if x == c {
				sess.calls = append(sess.calls[:i], sess.calls[i+1:]...)
				break
			}
		}
	}
}

func (sess *session) latestCall() *activeCall {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	if len(sess.calls) == 0 {
		return nil
	}
	return sess.calls[len(sess.calls)-1]
}

// --- gateway.Peer ---

// Supports reports a client capability declared at initialization.
func (sess *session) Supports(capability string) bool {
	ci, ok := sess.cs.(server.SessionWithClientInfo)
	if !ok {
		return false
	}
	caps := ci.GetClientCapabilities()
	switch capability {
	case "sampling":
		_, ok := sess.cs.(server.SessionWithSampling)
		return ok && caps.Sampling != nil
	case "elicitation":
		_, ok := sess.cs.(server.SessionWithElicitation)
		return ok && caps.Elicitation != nil
	case gateway.CapabilityURLElicitation:
		_, ok := sess.cs.(server.SessionWithElicitation)
		return ok && caps.Elicitation != nil && caps.Elicitation.URL != nil
	case gateway.CapabilityFormElicitation: // {} means form mode alone
		_, ok := sess.cs.(server.SessionWithElicitation)
		return ok && caps.Elicitation != nil && (caps.Elicitation.Form != nil || caps.Elicitation.URL == nil)
	case "roots":
		_, ok := sess.cs.(server.SessionWithRoots)
		return ok && caps.Roots != nil
	}
	return false
}

// requestContext gives an upstream request the context of the call it
// belongs to (mcp-go sends a request to the client on that call's stream),
// cancelled when either ends.
func (sess *session) requestContext(ctx context.Context) (context.Context, context.CancelFunc) {
	// The relaying context comes from the gateway's side (an upstream's
	// transport); what mcp-go needs to send the request on the right stream
	// is in the context of the front end's call.
	base := context.Background()
	if c := sess.latestCall(); c != nil {
		base = c.ctx
	}
	merged, cancel := context.WithCancel(base)
	stop := context.AfterFunc(ctx, cancel)
	return merged, func() { stop(); cancel() }
}

// Request relays a sampling, elicitation or roots request to the client.
func (sess *session) Request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	ctx, cancel := sess.requestContext(ctx)
	defer cancel()
	ctx = sess.s.mcp.WithContext(ctx, sess.cs)
	var res any
	var err error
	switch method {
	case string(mcp.MethodSamplingCreateMessage):
		var p mcp.CreateMessageParams
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, fmt.Errorf("sampling/createMessage params: %w", err)
		}
		res, err = sess.cs.(server.SessionWithSampling).RequestSampling(ctx, mcp.CreateMessageRequest{
			Request: mcp.Request{Method: method}, CreateMessageParams: p})
	case string(mcp.MethodElicitationCreate):
		var p mcp.ElicitationParams
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, fmt.Errorf("elicitation/create params: %w", err)
		}
		res, err = sess.cs.(server.SessionWithElicitation).RequestElicitation(ctx, mcp.ElicitationRequest{
			Request: mcp.Request{Method: method}, Params: p})
	case string(mcp.MethodListRoots):
		res, err = sess.cs.(server.SessionWithRoots).ListRoots(ctx, mcp.ListRootsRequest{Request: mcp.Request{Method: method}})
	default:
		return nil, fmt.Errorf("the front end does not relay %q", method)
	}
	if err != nil {
		return nil, err
	}
	return json.Marshal(res)
}

// Notify delivers an upstream notification to this session: log messages
// on the stream of a call in flight (so they precede its response), other
// notifications through mcp-go's session channel.
func (sess *session) Notify(method string, params json.RawMessage) {
	if method == string(mcp.MethodNotificationMessage) {
		sess.log(params)
		return
	}
	var m map[string]any
	_ = json.Unmarshal(params, &m)
	_ = sess.s.mcp.SendNotificationToSpecificClient(sess.cs.SessionID(), method, m)
}

// log sends a notifications/message if the session's level lets it through.
func (sess *session) log(params json.RawMessage) {
	var p struct {
		Level string `json:"level"`
	}
	_ = json.Unmarshal(params, &p)
	if lc, ok := sess.cs.(server.SessionWithLogging); ok {
		if min := lc.GetLogLevel(); min != "" && !mcp.LoggingLevel(p.Level).ShouldSendTo(min) {
			return
		}
	}
	var m map[string]any
	_ = json.Unmarshal(params, &m)
	if c := sess.latestCall(); c != nil && c.n != nil {
		msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": string(mcp.MethodNotificationMessage), "params": json.RawMessage(params)})
		if c.n.send(msg) == nil {
			return
		}
	}
	_ = sess.s.mcp.SendNotificationToSpecificClient(sess.cs.SessionID(), string(mcp.MethodNotificationMessage), m)
}

// --- per-session server subsets (hub tools) ---

// filterTools hides the tools of servers a session disconnected from.
func (s *Server) filterTools(ctx context.Context, tools []mcp.Tool) []mcp.Tool {
	if s.builtinsOnly {
		out := tools[:0:0]
		for _, t := range tools {
			if s.isBuiltin(t.Name) {
				out = append(out, t)
			}
		}
		return out
	}
	caller := callerOf(ctx)
	_, narrowed := s.g.SessionServers(caller)
	_, restricted := caller.Principal.AllowedServers()
	if !narrowed && !restricted {
		return tools
	}
	out := tools[:0:0]
	for _, t := range tools {
		if gt, ok := s.g.Tool(t.Name); ok && !s.isBuiltin(t.Name) && !s.g.Sees(caller, gt.Server) {
			continue
		}
		out = append(out, t)
	}
	return out
}

// filterPrompts hides the prompts of servers the caller may not see.
func (s *Server) filterPrompts(ctx context.Context, prompts []mcp.Prompt) []mcp.Prompt {
	caller := callerOf(ctx)
	byWire := map[string]string{}
	for _, p := range s.g.Prompts() {
		byWire[p.WireName] = p.Server
	}
	out := prompts[:0:0]
	for _, p := range prompts {
		if server, ok := byWire[p.Name]; ok && !s.g.Sees(caller, server) {
			continue
		}
		out = append(out, p)
	}
	return out
}

func (s *Server) isBuiltin(wire string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.builtins[wire]
}

// Hub tool names (prefixed with the reserved server name "gateway").
const (
	HubListServers      = "gateway__list_servers"
	HubConnectServers   = "gateway__connect_servers"
	HubDisconnectServer = "gateway__disconnect_servers"
)

func (s *Server) addHubTools() {
	_ = s.AddTool(toolspec.Spec{Name: HubListServers,
		Description: "List the MCP servers behind this gateway with their state (ready, restarting, failed, ...), tool count, last error and restarts, and whether this session is connected to each.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`),
		Handler: func(ctx context.Context, req toolspec.Request) (*gateway.CallResult, error) {
			return s.listServers(ctx), nil
		}})
	serversSchema := json.RawMessage(`{"type":"object","properties":{"servers":{"type":"array","items":{"type":"string"},"minItems":1,"description":"Server names, as gateway__list_servers shows them."}},"required":["servers"],"additionalProperties":false}`)
	_ = s.AddTool(toolspec.Spec{Name: HubConnectServers,
		Description: "Connect this session to servers. The first call narrows the session to exactly these servers (it then sees only their tools); later calls add more. Sends tools/list_changed.",
		InputSchema: serversSchema,
		Handler: func(ctx context.Context, req toolspec.Request) (*gateway.CallResult, error) {
			return s.changeSubset(ctx, req, true)
		}})
	_ = s.AddTool(toolspec.Spec{Name: HubDisconnectServer,
		Description: "Disconnect this session from servers: their tools disappear from this session's tools/list (other sessions are not affected). Sends tools/list_changed.",
		InputSchema: serversSchema,
		Handler: func(ctx context.Context, req toolspec.Request) (*gateway.CallResult, error) {
			return s.changeSubset(ctx, req, false)
		}})
}

func (s *Server) listServers(ctx context.Context) *gateway.CallResult {
	caller := callerOf(ctx)
	type row struct {
		gateway.ServerStatus
		Connected bool `json:"connected"`
	}
	rows := []row{}
	for _, st := range s.g.Servers() {
		if caller.Principal.MaySee(st.Name) { // servers it may not use are not its business
			rows = append(rows, row{st.ForAgents(), s.g.Sees(caller, st.Name)})
		}
	}
	b, _ := json.Marshal(map[string]any{"servers": rows})
	text, _ := json.Marshal(map[string]any{"type": "text", "text": string(b)})
	return &gateway.CallResult{Content: []json.RawMessage{text}, StructuredContent: b}
}

func (s *Server) changeSubset(ctx context.Context, req toolspec.Request, connect bool) (*gateway.CallResult, error) {
	var args struct {
		Servers []string `json:"servers"`
	}
	if err := json.Unmarshal(req.Arguments, &args); err != nil || len(args.Servers) == 0 {
		return nil, fmt.Errorf(`give the servers as {"servers": ["name", ...]}; see gateway__list_servers for the names`)
	}
	caller := callerOf(ctx)
	known := map[string]bool{}
	var names []string
	for _, n := range s.g.ServerNames() {
		if caller.Principal.MaySee(n) {
			known[n] = true
			names = append(names, n)
		}
	}
	for _, n := range args.Servers {
		if !known[n] {
			return nil, fmt.Errorf("there is no server %q you may use; the servers are %v", n, names)
		}
	}
	sess := s.sessionFor(ctx)
	if sess == nil {
		return nil, fmt.Errorf("this request has no session (protocol 2026-07-28 is stateless), so there is nothing to connect; pass the servers you want in each request instead")
	}
	now := map[string]bool{}
	if cur, narrowed := sess.gw.Servers(); narrowed {
		for _, n := range cur {
			now[n] = true
		}
	} else if !connect {
		now = known
	}
	for _, n := range args.Servers {
		now[n] = connect
	}
	connected := []string{}
	for n, on := range now {
		if on {
			connected = append(connected, n)
		}
	}
	sort.Strings(connected)
	// The other replicas learn the choice first: refused there, it is
	// refused here too, and the session stays as it was everywhere.
	raw, _ := json.Marshal(connected)
	if err := s.shareState(ctx, caller, partServers, raw); err != nil {
		return nil, fmt.Errorf("the servers could not be changed: %w", err)
	}
	sess.gw.Narrow(connected)
	s.notify(ctx, notifierFrom(ctx), string(mcp.MethodNotificationToolsListChanged), map[string]any{})
	b, _ := json.Marshal(map[string]any{"connected": connected})
	text, _ := json.Marshal(map[string]any{"type": "text", "text": string(b)})
	return &gateway.CallResult{Content: []json.RawMessage{text}, StructuredContent: b}, nil
}
