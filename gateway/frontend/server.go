// Package frontend serves a gateway as one MCP server (`sandbox serve`):
// every upstream's tools under their wire names, their resources, resource
// templates and prompts, completions, logging, progress, and the sampling,
// elicitation and roots requests upstreams make during a call, relayed to
// the client whose call it is. Hub tools let each session list the servers
// and narrow what it sees; built-in tools, which this process answers itself
// (the code-mode tools), are added as toolspec.Specs with AddTool, and a
// caller's own (its saved scripts) with SetCallerTools.
//
// mcp-go's server does the protocol work (both eras, sessions, pagination);
// this package adds what a gateway needs on top: raw pass-through of
// schemas and content blocks, per-call notification streams (mcp-go can
// drop or misroute notifications sent through its per-session channel, see
// docs/fixtures.md), DNS-rebinding protection on Host and Origin, and
// session identity for the gateway's router.
package frontend

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/gateway"
	"github.com/sandboxrt/sandbox/gateway/toolspec"
)

// Server is the gateway's MCP front end.
type Server struct {
	g   *gateway.Gateway
	mcp *server.MCPServer
	log *slog.Logger

	// directory is the session directory of the HTTP handler, when
	// replicas share one (directory.go).
	directory atomic.Pointer[directoryResolver]
	adoptMu   sync.Mutex // one copy of a session made at a time (hold)

	mu       sync.Mutex
	builtins map[string]bool // wire names of built-in and hub tools
	argLimit map[string]int  // the most bytes of arguments a built-in tool takes (toolspec.Spec.MaxArgumentBytes)
	// builtinsOnly hides upstream tools (WithBuiltinToolsOnly).
	builtinsOnly bool
	upstream     map[string]string   // wire name -> raw definition, as registered
	sessions     map[string]*session // by mcp-go session id
	callerTools  func(auth.Caller) []toolspec.Spec
	stdioTools   map[string]bool   // the stdio client's caller tools, registered server-wide (setStdioTools)
	resReg       map[string]string // what the resources and prompts were synced from (resources.go, syncPrompts)
	resources    []listedResource  // the catalog's resources, for callers' lists (resources.go)
	templates    []listedTemplate
	stop         func()
	hub          bool
	name         string
	version      string
	extra        []server.ServerOption
	syncMu       sync.Mutex
	// states seals the requestStates of input_required answers
	// (requeststate.go); paused are the built-in tools' runs waiting for
	// their 2026-07-28 client's answers (pausedrun.go).
	states   *stateSealer
	paused   pausedRuns
	released ReleasedRunStore // runs released from their workers (releasedruns.go)
	tasks    *taskServer      // nil: no tasks extension (tasks.go)
}

// Option configures a Server.
type Option func(*Server)

// WithLogger sets the logger (default: discard).
func WithLogger(l *slog.Logger) Option { return func(s *Server) { s.log = l } }

// WithImplementation sets the server name and version reported to clients.
func WithImplementation(name, version string) Option {
	return func(s *Server) { s.name, s.version = name, version }
}

// WithoutHubTools leaves out the gateway__* hub tools.
func WithoutHubTools() Option { return func(s *Server) { s.hub = false } }

// WithBuiltinToolsOnly lists and serves only the built-in tools (AddTool:
// the code-mode tools) and the hub tools: upstream tools are reached through
// a built-in (execute_code), and a direct tools/call of one is answered as
// for a tool that does not exist. Resources and prompts are served as ever.
// It is `sandbox serve --expose code`: an agent's tools/list then costs the
// code-mode tools' schemas, not every upstream's.
func WithBuiltinToolsOnly() Option { return func(s *Server) { s.builtinsOnly = true } }

// WithInstructions sets the instructions returned at initialization.
func WithInstructions(text string) Option {
	return func(s *Server) { s.extra = append(s.extra, server.WithInstructions(text)) }
}

// New builds the front end of a started (or starting) gateway. It keeps
// itself in sync with the gateway's catalog until Close.
func New(g *gateway.Gateway, opts ...Option) *Server {
	s := &Server{
		g:        g,
		log:      slog.New(slog.NewTextHandler(io.Discard, nil)),
		builtins: map[string]bool{},
		argLimit: map[string]int{},
		upstream: map[string]string{},
		sessions: map[string]*session{},
		resReg:   map[string]string{},
		hub:      true,
		name:     "sandbox-gateway",
		version:  "0.1.0",
		states:   randomStateSealer(),
		released: NewMemoryReleasedRuns(0, nil),
	}
	for _, o := range opts {
		o(s)
	}
	hooks := &server.Hooks{}
	hooks.AddOnRegisterSession(func(ctx context.Context, cs server.ClientSession) { s.sessionStarted(ctx, cs) })
	hooks.AddOnUnregisterSession(func(ctx context.Context, cs server.ClientSession) { s.sessionEnded(cs) })
	hooks.AddOnRequestInitialization(func(ctx context.Context, _ any, _ any) error {
		s.adoptRequest(ctx) // a session made on another replica (directory.go)
		return nil
	})
	hooks.AddAfterInitialize(func(ctx context.Context, _ any, r *mcp.InitializeRequest, _ *mcp.InitializeResult) {
		s.noteSessionExtensions(ctx, r) // tasksession.go
	})
	hooks.AddAfterSetLevel(func(ctx context.Context, id any, r *mcp.SetLevelRequest, _ *mcp.EmptyResult) {
		caller := callerOf(ctx)
		s.g.SetLogLevel(ctx, caller, string(r.Params.Level))
		if s.sessionFor(ctx) != nil {
			if err := s.shareState(ctx, caller, partLogLevel, []byte(r.Params.Level)); err != nil {
				s.log.Warn("the session's log level could not be shared with the other replicas", "session", string(caller.Session), "error", err)
			}
		}
	})
	hooks.AddAfterSubscribe(func(ctx context.Context, id any, r *mcp.SubscribeRequest, _ *mcp.EmptyResult) {
		if err := s.g.SubscribeResource(ctx, callerOf(ctx), r.Params.URI); err != nil {
			s.log.Warn("subscribe", "uri", r.Params.URI, "error", err)
		}
	})
	// mcp-go's registry holds no upstream resource (resources.go): a read
	// is routed before mcp-go looks it up, and its after-hooks, which get a
	// list before it is sent, put the caller's own in it.
	hooks.AddBeforeReadResource(func(ctx context.Context, _ any, r *mcp.ReadResourceRequest) { s.routeRead(ctx, r) })
	hooks.AddAfterListResources(func(ctx context.Context, id any, _ *mcp.ListResourcesRequest, res *mcp.ListResourcesResult) {
		res.Resources = s.callerResources(callerOf(ctx))
	})
	hooks.AddAfterListResourceTemplates(func(ctx context.Context, id any, _ *mcp.ListResourceTemplatesRequest, res *mcp.ListResourceTemplatesResult) {
		res.ResourceTemplates = s.callerTemplates(callerOf(ctx))
	})
	hooks.AddAfterUnsubscribe(func(ctx context.Context, id any, r *mcp.UnsubscribeRequest, _ *mcp.EmptyResult) {
		_ = s.g.UnsubscribeResource(ctx, callerOf(ctx), r.Params.URI)
	})
	serverOpts := []server.ServerOption{
		server.WithToolCapabilities(true),
		server.WithResourceCapabilities(true, true),
		server.WithPromptCapabilities(true),
		server.WithLogging(),
		server.WithCompletions(),
		server.WithPromptCompletionProvider(completions{s}),
		server.WithResourceCompletionProvider(completions{s}),
		server.WithHooks(hooks),
		server.WithToolFilter(s.filterTools),
		server.WithPromptFilter(s.filterPrompts),
		server.WithRecovery(),
		server.WithResourceRecovery(),
		server.WithToolHandlerMiddleware(traceToolCall),
		server.WithToolHandlerMiddleware(primeStream),
		server.WithToolHandlerMiddleware(handBackArguments),
	}
	s.mcp = server.NewMCPServer(s.name, s.version, append(serverOpts, s.extra...)...)
	if s.hub {
		s.addHubTools()
	}
	s.sync()
	s.stop = g.Subscribe(func(gateway.CatalogChange) { go s.sync() })
	return s
}

// MCPServer returns the underlying mcp-go server (for transports other than
// the ones this package serves).
func (s *Server) MCPServer() *server.MCPServer { return s.mcp }

// Close stops following the catalog. It does not close the gateway.
func (s *Server) Close() {
	if s.stop != nil {
		s.stop()
	}
}

// --- built-in tools ---

// AddTool registers a built-in tool (such as the code-mode tools
// search_tools and execute_code) beside the upstream tools, for every
// session. Its name is used as is on the wire and reserved in the gateway's
// catalog naming. Over HTTP a call whose arguments are over the spec's
// MaxArgumentBytes is answered before mcp-go decodes it: decoding holds
// about 7 times a body's size at the peak (measured with 16 MiB bodies).
func (s *Server) AddTool(spec toolspec.Spec) error {
	if err := checkSpec(spec); err != nil {
		return err
	}
	name := spec.Name
	s.mu.Lock()
	if s.builtins[name] {
		s.mu.Unlock()
		return fmt.Errorf("frontend: tool %q is already registered", name)
	}
	s.builtins[name] = true
	if spec.MaxArgumentBytes > 0 {
		s.argLimit[name] = spec.MaxArgumentBytes
	}
	s.mu.Unlock()
	s.g.ReserveWireNames(name)
	s.mu.Lock()
	_, held := s.upstream[name]
	s.mu.Unlock()
	s.mcp.AddTool(mcp.NewToolWithRawSchema(name, spec.Description, spec.InputSchema), s.builtinHandler(spec))
	if held {
		// An upstream tool had the name; the reservation renamed it (to
		// its hashed name): the sync exposes it under that one.
		s.sync()
	}
	return nil
}

// checkSpec says what is wrong with a tool's spec, or nil.
func checkSpec(spec toolspec.Spec) error {
	switch {
	case !validWire(spec.Name):
		return fmt.Errorf("frontend: tool name %q must be 1-64 characters of [A-Za-z0-9_-]", spec.Name)
	case !json.Valid(spec.InputSchema):
		return fmt.Errorf("frontend: tool %q: input schema is not valid JSON", spec.Name)
	case spec.Handler == nil:
		return fmt.Errorf("frontend: tool %q has no handler", spec.Name)
	}
	return nil
}

// argumentsTooLarge returns the error for arguments of n bytes to a
// built-in tool, or nil when the tool takes them; slack is what n may hold
// besides the arguments (the JSON-RPC envelope around them, when n is a
// body's size).
func (s *Server) argumentsTooLarge(tool string, n, slack int) error {
	s.mu.Lock()
	limit := s.argLimit[tool]
	s.mu.Unlock()
	return argumentsOver(tool, limit, n, slack)
}

// argumentsOver is argumentsTooLarge for a tool whose cap is limit.
func argumentsOver(tool string, limit, n, slack int) error {
	if limit <= 0 || n <= limit+slack {
		return nil
	}
	return &gateway.Error{Code: gateway.CodeValidationFailed, Message: fmt.Sprintf(
		"the arguments of %s are %s, over the %s it takes; send less (pass data through tool calls, not in the arguments)",
		tool, byteSize(n), byteSize(limit))}
}

func byteSize(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

func validWire(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	for _, c := range []byte(name) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func (s *Server) builtinHandler(spec toolspec.Spec) server.ToolHandlerFunc {
	h := spec.Handler
	return func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args := rawArguments(r)
		if err := argumentsOver(spec.Name, spec.MaxArgumentBytes, len(args), 0); err != nil {
			return errorResult(err), nil // stdio, a body under the HTTP check's slack, or a caller's own tool
		}
		sess := s.sessionFor(ctx)
		n := notifierFrom(ctx)
		if sess != nil {
			defer sess.enterCall(ctx, n)()
		}
		token := progressToken(r)
		req := toolspec.Request{
			Caller:            callerOf(ctx),
			Arguments:         args,
			ProgressRequested: token != nil,
			Progress: func(p, total float64, msg string) {
				if token != nil {
					s.sendProgress(ctx, n, token, gateway.Progress{Progress: p, Total: total, Message: msg})
				}
			},
			Log: func(level string, data any) {
				params, _ := json.Marshal(map[string]any{"level": level, "logger": "sandbox", "data": data})
				if sess != nil {
					sess.log(json.RawMessage(params))
				}
			},
		}
		call := func(ctx context.Context) (*mcp.CallToolResult, error) {
			res, err := h(ctx, req)
			if err != nil {
				return errorResult(err), nil
			}
			if res == nil {
				res = &gateway.CallResult{}
			}
			return toMCPResult(res), nil
		}
		if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.Modern {
			// No session to ask through: what the run asks pauses it
			// and the call answers input_required (pausedrun.go).
			return s.runAsking(ctx, r, requestBinding(string(mcp.MethodToolsCall), spec.Name, args), call)
		}
		return call(ctx)
	}
}

// --- upstream tools ---

// sync mirrors the gateway's catalog into the mcp-go server: tools added,
// changed or removed, resources, templates and prompts replaced when they
// changed. mcp-go sends the list_changed notifications.
func (s *Server) sync() {
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	if !s.builtinsOnly {
		s.syncTools()
	}
	s.syncResources()
	s.syncPrompts()
}

// syncTools registers the upstream tools with mcp-go. Not under
// WithBuiltinToolsOnly: there mcp-go's tool filter would hide every one of
// them from lists and calls alike, and registering them cost a large
// catalog's start most of the front end's time (mcp-go re-encodes each
// schema to check its header annotations: 10,230 tools, ~0.4 s) and a copy
// of every definition in memory.
func (s *Server) syncTools() {
	tools := s.g.Tools()
	want := make(map[string]gateway.Tool, len(tools))
	for _, t := range tools {
		if s.g.Denied(&t) {
			continue // the policy refuses every call: listing it only invites one
		}
		want[t.WireName] = t
	}
	s.mu.Lock()
	var add []server.ServerTool
	var del []string
	for wire, t := range want {
		if s.builtins[wire] {
			continue
		}
		if prev, ok := s.upstream[wire]; ok && prev == t.ID+"\x00"+string(t.Raw) {
			continue
		}
		mt, err := mcpTool(t, s.g.NeedsApproval(&t))
		if err != nil {
			s.log.Warn("tool not exposed", "tool", t.ID, "error", err)
			continue
		}
		s.upstream[wire] = t.ID + "\x00" + string(t.Raw)
		s.noteUpstreamTaskSupport(wire, t.Raw)
		s.serveRequiredAsOptional(&mt)
		add = append(add, server.ServerTool{Tool: mt, Handler: s.upstreamHandler(wire)})
	}
	for wire := range s.upstream {
		if _, ok := want[wire]; ok && !s.builtins[wire] {
			continue
		}
		delete(s.upstream, wire)
		s.noteUpstreamTaskSupport(wire, nil)
		if !s.builtins[wire] { // a built-in that took the name keeps its registration
			del = append(del, wire)
		}
	}
	s.mu.Unlock()
	if len(add) > 0 {
		sort.Slice(add, func(i, j int) bool { return add[i].Tool.Name < add[j].Tool.Name })
		s.mcp.AddTools(add...)
	}
	if len(del) > 0 {
		s.mcp.DeleteTools(del...)
	}
}

// mcpTool re-exposes an upstream tool definition under its wire name, with
// the raw input and output schemas (mcp-go's typed schema would drop parts).
// A tool whose every call waits for a person's approval says so at the end
// of its description, as code mode's declarations do, so that a client
// knows before it calls.
func mcpTool(t gateway.Tool, needsApproval bool) (mcp.Tool, error) {
	// The schemas are kept raw: decoded into mcp-go's typed schemas they
	// were most of the front end's start with a large catalog (10,230
	// tools: ~0.45 s of CPU), only to be thrown away. The outer fields
	// shadow the embedded Tool's (encoding/json prefers the shallower).
	var w struct {
		mcp.Tool
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema"`
	}
	mt := &w.Tool
	if err := json.Unmarshal(t.Raw, &w); err != nil {
		// Odd fields (say, annotations of the wrong type) must not hide the tool.
		*mt = mcp.Tool{Title: t.Title, Description: t.Description}
	}
	mt.Name = t.WireName
	mt.Meta = nil
	if needsApproval {
		mt.Description = strings.TrimSpace(mt.Description + "\n\n" + ApprovalNote)
	}
	mt.InputSchema = mcp.ToolInputSchema{}
	mt.RawInputSchema = t.InputSchema
	mt.OutputSchema = mcp.ToolOutputSchema{}
	mt.RawOutputSchema = t.OutputSchema
	return *mt, nil
}

// ApprovalNote ends the description of an upstream tool whose every call
// the gateway's policy sends to a person for approval.
const ApprovalNote = "Each call of this tool waits for a person's approval (the gateway's policy)."

func (s *Server) upstreamHandler(wire string) server.ToolHandlerFunc {
	return func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		sess := s.sessionFor(ctx)
		n := notifierFrom(ctx)
		if sess != nil {
			defer sess.enterCall(ctx, n)()
		}
		req := gateway.CallRequest{Tool: wire, Arguments: rawArguments(r), Caller: callerOf(ctx)}
		binding := requestBinding(string(mcp.MethodToolsCall), wire, req.Arguments)
		if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.Modern {
			// A 2025-era upstream asks by a request of its own, which a
			// session-less client can only be asked by pausing the call
			// (pausedrun.go); a 2026-07-28 upstream's input_required is
			// passed on, sealed, and its retry is an ordinary call.
			if id, ok := s.pausedRunOf(ctx, binding, r.Params.RequestState); ok {
				return resumeRun(s, ctx, r.Params.MultiRoundTripParams, binding, id, toolAnswers)
			}
			return startRun(s, ctx, binding, func(ctx context.Context) (*mcp.CallToolResult, error) {
				return s.callUpstream(ctx, n, r, req, binding)
			}, toolAnswers)
		}
		return s.callUpstream(ctx, n, r, req, binding)
	}
}

// callUpstream is an upstream tool's call for the front end's client.
func (s *Server) callUpstream(ctx context.Context, n notifier, r mcp.CallToolRequest, req gateway.CallRequest, binding string) (*mcp.CallToolResult, error) {
	callCtx, modern, err := s.askingContext(ctx, binding, r.Params.MultiRoundTripParams)
	if err != nil {
		return nil, err
	}
	if token := progressToken(r); token != nil {
		req.Progress = func(p gateway.Progress) { s.sendProgress(ctx, n, token, p) }
	}
	res, err := s.g.Call(callCtx, req)
	if capability := lackedCapability(ctx); capability != "" && (res == nil || res.IsError) {
		// The upstream (2025-era) asked for a capability this request did
		// not declare, and failed without it: SEP-2575's -32021.
		data, _ := json.Marshal(map[string]any{"requiredCapabilities": map[string]any{capability: map[string]any{}}})
		return nil, answerError(ctx, rpcError{Code: mcp.MISSING_REQUIRED_CLIENT_CAPABILITY, Data: data,
			Message: fmt.Sprintf("%s needs the client's %s capability, which this request did not declare in _meta[%q]", req.Tool, capability, mcp.MetaKeyClientCapabilities)})
	}
	if res != nil && res.InputRequired != nil {
		reqs, err := inputRequests(res.InputRequired)
		if err != nil {
			return errorResult(err), nil
		}
		out := &mcp.CallToolResult{Content: []mcp.Content{}}
		out.ResultType = mcp.ResultTypeInputRequired
		out.InputRequests = reqs
		out.RequestState = s.states.seal(req.Caller.Principal, binding, res.InputRequired.State)
		return out, nil
	}
	if res != nil {
		// isError results (err is TOOL_ERROR) pass through unchanged.
		return toMCPResult(res), nil
	}
	if e, ok := upstreamRPCError(err); ok && modern && e.Code == mcp.MISSING_REQUIRED_CLIENT_CAPABILITY {
		// The upstream needs a capability this request did not
		// declare: the client learns which, as the upstream said it.
		return nil, answerError(ctx, e)
	}
	if err := taskProtocolError(ctx, err); err != nil {
		return nil, err
	}
	return errorResult(err), nil
}

func rawArguments(r mcp.CallToolRequest) json.RawMessage {
	if len(r.Params.RawArguments) > 0 {
		return r.Params.RawArguments
	}
	if r.Params.Arguments == nil {
		return nil
	}
	b, _ := json.Marshal(r.Params.Arguments)
	return b
}

func progressToken(r mcp.CallToolRequest) mcp.ProgressToken {
	if r.Params.Meta == nil {
		return nil
	}
	return r.Params.Meta.ProgressToken
}

// sendProgress relays one progress notification with the client's own token.
func (s *Server) sendProgress(ctx context.Context, n notifier, token mcp.ProgressToken, p gateway.Progress) {
	params := map[string]any{"progressToken": token, "progress": p.Progress}
	if p.Total > 0 {
		params["total"] = p.Total
	}
	if p.Message != "" {
		params["message"] = p.Message
	}
	s.notify(ctx, n, string(mcp.MethodNotificationProgress), params)
}

// notify sends a notification for the current call: on the call's own
// stream when there is one (so it arrives before the response), else
// through mcp-go's session channel.
func (s *Server) notify(ctx context.Context, n notifier, method string, params any) {
	if n != nil {
		msg, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
		if err == nil && n.send(msg) == nil {
			return
		}
	}
	var m map[string]any
	b, _ := json.Marshal(params)
	_ = json.Unmarshal(b, &m)
	_ = s.mcp.SendNotificationToClient(ctx, method, m)
}

// toMCPResult converts a gateway result, keeping content blocks raw.
func toMCPResult(res *gateway.CallResult) *mcp.CallToolResult {
	out := &mcp.CallToolResult{IsError: res.IsError, Content: make([]mcp.Content, 0, len(res.Content))}
	for _, b := range res.Content {
		out.Content = append(out.Content, rawContent{raw: b})
	}
	if len(res.StructuredContent) > 0 {
		out.RawStructuredContent = res.StructuredContent
	}
	return out
}

// upstreamRPCError is the JSON-RPC error an upstream answered, when err is
// one (PROTOCOL_ERROR keeps it as its data).
func upstreamRPCError(err error) (rpcError, bool) {
	var ge *gateway.Error
	var e rpcError
	if !errors.As(err, &ge) || ge.Code != gateway.CodeProtocolError || json.Unmarshal(ge.Data, &e) != nil || e.Code == 0 {
		return rpcError{}, false
	}
	return e, true
}

// errorResult reports a gateway error to the client as a tool error (an
// isError result), which the model sees and can act on, rather than a
// JSON-RPC error.
func errorResult(err error) *mcp.CallToolResult {
	var ge *gateway.Error
	if errors.As(err, &ge) {
		return mcp.NewToolResultError(fmt.Sprintf("%s: %s", ge.Code, ge.Message))
	}
	return mcp.NewToolResultError(err.Error())
}

// rawContent is a content block passed on byte for byte. It embeds a
// TextContent only to satisfy mcp-go's sealed Content interface.
type rawContent struct {
	mcp.TextContent
	raw json.RawMessage
}

func (c rawContent) MarshalJSON() ([]byte, error) { return c.raw, nil }

// --- prompts ---

func (s *Server) syncPrompts() {
	prompts := s.g.Prompts()
	var b strings.Builder
	for _, p := range prompts {
		b.WriteString(p.WireName)
		b.Write(p.Raw)
	}
	s.mu.Lock()
	if s.resReg["\x00prompts"] == b.String() {
		s.mu.Unlock()
		return
	}
	s.resReg["\x00prompts"] = b.String()
	s.mu.Unlock()
	sps := make([]server.ServerPrompt, 0, len(prompts))
	for _, p := range prompts {
		var mp mcp.Prompt
		if err := json.Unmarshal(p.Raw, &mp); err != nil {
			mp = mcp.Prompt{}
		}
		mp.Name, mp.Meta = p.WireName, nil
		wire := p.WireName
		sps = append(sps, server.ServerPrompt{Prompt: mp, Handler: func(ctx context.Context, r mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return s.getPrompt(ctx, wire, r)
		}})
	}
	s.mcp.SetPrompts(sps...)
}

func (s *Server) getPrompt(ctx context.Context, wire string, r mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	args, _ := json.Marshal(r.Params.Arguments)
	binding := requestBinding(string(mcp.MethodPromptsGet), wire, args)
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.Modern {
		// As for an upstream tool (upstreamHandler): a 2025-era
		// upstream's question pauses the request.
		if id, ok := s.pausedRunOf(ctx, binding, r.Params.RequestState); ok {
			return resumeRun(s, ctx, r.Params.MultiRoundTripParams, binding, id, promptAnswers)
		}
		return startRun(s, ctx, binding, func(ctx context.Context) (*mcp.GetPromptResult, error) {
			return s.promptFromUpstream(ctx, wire, r, binding)
		}, promptAnswers)
	}
	return s.promptFromUpstream(ctx, wire, r, binding)
}

// promptAnswers are a paused prompts/get's: input_required results, errors.
var promptAnswers = answers[*mcp.GetPromptResult]{
	input: func(_ context.Context, reqs mcp.InputRequests, state string) (*mcp.GetPromptResult, error) {
		out := &mcp.GetPromptResult{Messages: []mcp.PromptMessage{}}
		out.ResultType = mcp.ResultTypeInputRequired
		out.InputRequests, out.RequestState = reqs, state
		return out, nil
	},
	refuse: func(err error) (*mcp.GetPromptResult, error) { return nil, err },
}

// promptFromUpstream renders a prompt through its upstream.
func (s *Server) promptFromUpstream(ctx context.Context, wire string, r mcp.GetPromptRequest, binding string) (*mcp.GetPromptResult, error) {
	callCtx, modern, err := s.askingContext(ctx, binding, r.Params.MultiRoundTripParams)
	if err != nil {
		return nil, err
	}
	caller := callerOf(ctx)
	raw, err := s.g.GetPrompt(callCtx, caller, wire, r.Params.Arguments)
	if err != nil {
		if e, ok := upstreamRPCError(err); ok && modern {
			return nil, answerError(ctx, e) // the upstream's code and data, as it said them
		}
		return nil, err
	}
	if ir := gateway.ParseInputRequired(raw); ir != nil && modern {
		reqs, err := inputRequests(ir)
		if err != nil {
			return nil, err
		}
		out := &mcp.GetPromptResult{Messages: []mcp.PromptMessage{}}
		out.ResultType = mcp.ResultTypeInputRequired
		out.InputRequests = reqs
		out.RequestState = s.states.seal(caller.Principal, binding, ir.State)
		return out, nil
	}
	var res struct {
		Description string `json:"description"`
		Messages    []struct {
			Role    mcp.Role        `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("the upstream's prompts/get result is not valid: %w", err)
	}
	out := &mcp.GetPromptResult{Description: res.Description, Messages: make([]mcp.PromptMessage, 0, len(res.Messages))}
	for _, m := range res.Messages {
		out.Messages = append(out.Messages, mcp.PromptMessage{Role: m.Role, Content: rawContent{raw: m.Content}})
	}
	return out, nil
}

// completions forwards completion/complete to the upstream that owns the
// prompt or resource template.
type completions struct{ s *Server }

func (c completions) CompletePromptArgument(ctx context.Context, prompt string, arg mcp.CompleteArgument, cctx mcp.CompleteContext) (*mcp.Completion, error) {
	return c.complete(ctx, map[string]any{"type": "ref/prompt", "name": prompt}, arg, cctx)
}

func (c completions) CompleteResourceArgument(ctx context.Context, uri string, arg mcp.CompleteArgument, cctx mcp.CompleteContext) (*mcp.Completion, error) {
	return c.complete(ctx, map[string]any{"type": "ref/resource", "uri": uri}, arg, cctx)
}

func (c completions) complete(ctx context.Context, ref map[string]any, arg mcp.CompleteArgument, cctx mcp.CompleteContext) (*mcp.Completion, error) {
	params := map[string]any{"ref": ref, "argument": arg}
	if len(cctx.Arguments) > 0 {
		params["context"] = cctx
	}
	b, _ := json.Marshal(params)
	raw, err := c.s.g.Complete(ctx, callerOf(ctx), b)
	if err != nil {
		return nil, err
	}
	var res struct {
		Completion mcp.Completion `json:"completion"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("the upstream's completion result is not valid: %w", err)
	}
	return &res.Completion, nil
}
