package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"go.opentelemetry.io/otel/trace"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/gateway/internal/upstream"
)

// CallRequest is one tool call.
type CallRequest struct {
	// Tool is "server:tool" (normalized or the upstream's own tool name) or
	// the tool's wire name.
	Tool string
	// Arguments is a JSON object; nil or empty means {}.
	Arguments json.RawMessage
	// Caller is who calls: the principal (whose tokens and limits apply) and
	// the session (whose narrowing, tokens and client apply). The zero Caller
	// is an anonymous caller without a session.
	Caller auth.Caller
	// Run names the code-mode run the call comes from, if any: a person
	// asked to approve a call may approve every call of the tool in it.
	Run string
	// Progress, when set, receives the upstream's progress notifications.
	// It is called from the connection's reader goroutine: return quickly.
	Progress func(Progress)
	// PauseClock, when set, is called when the call starts waiting for a
	// person (an approval the policy asks for) and returns the function that
	// ends the pause: a caller under a time limit (a code-mode run) does not
	// spend it on a person's reading.
	PauseClock func() (resume func())
	// Spill says the caller takes a result too large to hold in memory
	// (over Settings.MaxResultBytes, up to MaxSpilledResultBytes) in a file:
	// CallResult.Spilled, which it must Remove. Code mode does, and hands
	// the snippet a handle to it. Without it, such a result is
	// RESULT_TOO_LARGE.
	Spill bool
}

// Progress is one progress notification relayed from the upstream.
type Progress struct {
	Progress float64 `json:"progress"`
	Total    float64 `json:"total,omitempty"` // 0 when the upstream did not say
	Message  string  `json:"message,omitempty"`
}

// CallResult is the upstream's result, kept faithfully: the raw content
// blocks in order, the raw structuredContent, and isError. Only the
// upstream's _meta is dropped. ARCHITECTURE.md contract 2 (what a call
// resolves to in the VM) is applied by the bindings on top of this.
type CallResult struct {
	Content           []json.RawMessage `json:"content"`
	StructuredContent json.RawMessage   `json:"structuredContent,omitempty"`
	IsError           bool              `json:"isError,omitempty"`
	// Spilled, for a call with Spill, is a result too large to hold in
	// memory, in a file (spill.go); Content is then empty.
	Spilled *SpilledResult `json:"-"`
	// InputRequired, for a call made WithAsking, is the upstream's answer
	// that it needs the client's input first (asking.go); Content is then
	// empty.
	InputRequired *InputRequired `json:"-"`
}

// Call routes one tool call through the pipeline, in order (each step is a
// method below, with its own errors):
//
//	lookup   -> the tool and its server, among those  UNKNOWN_TOOL, SERVICE_NOT_FOUND, UPSTREAM_UNAVAILABLE
//	            the caller's principal may use
//	scope    -> the caller's session sees the server  SERVICE_NOT_FOUND
//	validate -> the arguments match the schema       VALIDATION_FAILED
//	paths    -> no path escapes the server's roots   PATH_TRAVERSAL
//	policy   -> the policy allows it, or a person     DENIED
//	            approves (asked only of valid calls)
//	token    -> the caller's bearer token, or its     AUTH_REQUIRED
//	            principal's OAuth grant (renewed when
//	            expired, and once more on a 401)
//	limits   -> the session's share of the server,    RATE_LIMITED
//	            rate limit and concurrency cap
//	forward  -> the upstream call                    TIMEOUT, CANCELLED, UPSTREAM_*, PROTOCOL_ERROR, RESULT_TOO_LARGE,
//	                                                 TOOL_ERROR (the tool's own isError)
//
// Every failure is a *Error naming the tool. The observer records each call
// once, whatever its outcome (metrics, the log).
//
// When the tool ran and reported failure (isError: true), Call returns BOTH
// the result and an *Error with code TOOL_ERROR (message: the tool's
// text, data: its content blocks): the MCP front end passes the result on
// unchanged, while the code-mode bindings throw a catchable MCPToolError.
// Otherwise exactly one of the two is non-nil.
func (g *Gateway) Call(ctx context.Context, req CallRequest) (*CallResult, error) {
	if req.Caller.Principal.ID == "" {
		req.Caller.Principal = auth.Anonymous()
	}
	c := &call{req: req, id: strconv.FormatUint(g.callSeq.Add(1), 10), toolID: req.Tool, start: time.Now()}
	ctx = startCall(ctx, c)
	defer c.span.End()
	startAsking(ctx, c)
	res, gerr := g.route(ctx, c)
	if gerr != nil {
		// The result was redacted as it arrived (forwardStep); an error can
		// quote the server, or the call's own token, from any step.
		secrets := c.secrets
		if secrets == nil {
			s := g.redactor().with(c.token)
			secrets = &s
		}
		secrets.error(gerr)
	}
	if res != nil {
		c.resultBytes = int64(len(res.StructuredContent))
		for _, b := range res.Content {
			c.resultBytes += int64(len(b))
		}
		if res.Spilled != nil { // redacted as it was written
			c.resultBytes = res.Spilled.Bytes
		}
	}
	g.observe.callEnded(ctx, c, gerr)
	if gerr != nil {
		return res, gerr
	}
	return res, nil
}

// call is one call's way through the pipeline: each step fills in what the
// next needs.
type call struct {
	req    CallRequest
	id     string // this process's sequence number, for logs
	start  time.Time
	toolID string // the resolved "server:tool", or what was asked for

	tool    *Tool
	u       *route
	args    json.RawMessage // after validateStep: the canonical encoding of decoded, never the caller's bytes
	decoded any             // args, decoded once for validation and path checks
	token   string          // the bearer token to send, "" for none
	// oauthOwner is whose OAuth grant the call carries ("" for a server
	// that takes no OAuth login).
	oauthOwner string

	// secrets are what the server's answer is redacted of, once it came:
	// the gateway's and the tokens in flight on the server (redact.go).
	secrets *secretSet
	// asking is the Asking of a call made WithAsking (asking.go), state
	// what its earlier rounds left, ask the input it must ask for first
	// (a person's approval) when it answers input_required before it runs.
	asking *Asking
	state  callState
	ask    *InputRequired

	decision    string // what the policy decided, for the audit log
	resultBytes int64
	span        trace.Span // the call's span (observe.go)
}

// step is one stage of the pipeline.
type step func(context.Context, *call) *Error

// route runs the steps in order, then forwards.
func (g *Gateway) route(ctx context.Context, c *call) (*CallResult, *Error) {
	for _, s := range []step{g.lookupStep, g.scopeStep, g.validateStep, g.pathsStep, g.policyStep, g.tokenStep} {
		if err := s(ctx, c); err != nil {
			return nil, err
		}
		if c.ask != nil { // a person must approve first: ask, run nothing
			return &CallResult{Content: []json.RawMessage{}, InputRequired: c.ask}, nil
		}
	}
	release, err := g.limitsStep(ctx, c)
	if err != nil {
		return nil, err
	}
	defer release()
	res, err := g.forwardStep(ctx, c)
	if err != nil && c.oauthOwner != "" && errors.Is(err, transport.ErrAuthorizationRequired) {
		// The server refused the token (401): it ran nothing, so once the
		// token is renewed the call is sent again.
		return g.reauthorize(ctx, c)
	}
	return res, err
}

// reauthorize renews the OAuth token a server refused and sends the call
// again, or says to log in.
func (g *Gateway) reauthorize(ctx context.Context, c *call) (*CallResult, *Error) {
	if c.token == "" {
		// The principal may sign itself in by URL (oauth_signin.go).
		if err := g.signInStep(ctx, c, "the server asks for one and there is none"); err != nil {
			return nil, err
		}
		if c.ask != nil {
			return &CallResult{Content: []json.RawMessage{}, InputRequired: c.ask}, nil
		}
		res, err := g.forwardStep(ctx, c)
		if err != nil && errors.Is(err, transport.ErrAuthorizationRequired) {
			return nil, g.loginRequired(c.toolID, c.u, c.oauthOwner, "the server refused the token of the sign-in just made; the login may lack its scopes")
		}
		return res, err
	}
	refused := c.token
	g.oauthRejected(ctx, c.u, c.oauthOwner, refused)
	if err := g.oauthStep(ctx, c); err != nil {
		return nil, err
	}
	if c.ask != nil { // asked to sign in again (oauth_signin.go)
		return &CallResult{Content: []json.RawMessage{}, InputRequired: c.ask}, nil
	}
	if c.token == "" || c.token == refused {
		return nil, g.loginRequired(c.toolID, c.u, c.oauthOwner, "the server refused the token")
	}
	res, err := g.forwardStep(ctx, c)
	if err != nil && errors.Is(err, transport.ErrAuthorizationRequired) {
		return nil, g.loginRequired(c.toolID, c.u, c.oauthOwner, "the server refused the renewed token too; the login may be for another server or lack its scopes")
	}
	return res, err
}

// lookupStep resolves the tool and its server.
func (g *Gateway) lookupStep(_ context.Context, c *call) *Error {
	tool, u, err := g.lookup(c.req.Caller, c.req.Tool)
	if err != nil {
		return err
	}
	c.tool, c.u, c.toolID = tool, u, tool.ID
	return nil
}

// scopeStep refuses the servers the caller's session narrowed itself away
// from (gateway__disconnect_servers); lookup already made those its
// principal may not use unknown.
func (g *Gateway) scopeStep(_ context.Context, c *call) *Error {
	return g.scope(c.req.Caller, c.u.name, c.toolID)
}

// scope is the one scope check of everything a caller asks of a server
// (calls, pass-through requests, subscriptions): SERVICE_NOT_FOUND, in the
// words of a server that does not exist, when its principal may not use the
// server (the lookups never resolve to one: this is the check behind
// them), and SERVICE_NOT_FOUND saying how to connect it again when its
// session narrowed itself away from it.
func (g *Gateway) scope(caller auth.Caller, server, toolID string) *Error {
	if !caller.Principal.MaySee(server) {
		return g.noServer(caller, toolID, server)
	}
	if g.Sees(caller, server) {
		return nil
	}
	connected, _ := g.SessionServers(caller)
	return newError(CodeServiceNotFound, toolID, nil, map[string]any{"server": server, "connected": connected},
		"this session is not connected to server %q (it is connected to: %s); connect it with gateway__connect_servers and call again",
		server, strings.Join(connected, ", "))
}

// validateStep checks the arguments against the tool's input schema.
func (g *Gateway) validateStep(_ context.Context, c *call) *Error {
	c.args = c.req.Arguments
	if t := bytes.TrimSpace(c.args); len(t) == 0 || string(t) == "null" {
		c.args = json.RawMessage(`{}`)
	}
	canonical, decoded, derr := canonicalArgs(c.args)
	if derr != nil {
		return validationError(c.tool, []fieldError{{Path: derr.Path, Message: derr.Message}})
	}
	// From here on the call carries what was decoded, re-encoded: the checks
	// judge exactly the bytes that are forwarded (args.go).
	c.args, c.decoded = canonical, decoded
	return validateDecoded(c.tool, decoded)
}

// pathsStep refuses string arguments that escape the server's path roots.
func (g *Gateway) pathsStep(_ context.Context, c *call) *Error {
	if !c.u.checkPaths {
		return nil
	}
	if t := checkPaths(c.decoded, c.u.roots); t != nil {
		return pathTraversalError(c.toolID, t)
	}
	return nil
}

// tokenStep finds the caller's bearer token for a "sessionToken" server.
func (g *Gateway) tokenStep(ctx context.Context, c *call) *Error {
	if usesOAuth(c.u.sc) {
		return g.oauthStep(ctx, c)
	}
	if !c.u.sc.SessionToken {
		return nil
	}
	tok, err := g.callerToken(ctx, c.req.Caller, c.u.name, c.toolID)
	c.token = tok
	return err
}

// callerToken is the bearer token a caller's request to a "sessionToken"
// server carries, or AUTH_REQUIRED.
func (g *Gateway) callerToken(ctx context.Context, caller auth.Caller, server, toolID string) (string, *Error) {
	tok, ok, err := g.tokenFor(ctx, caller, server)
	if err != nil {
		return "", newError(CodeInternal, toolID, err, map[string]any{"server": server},
			"the gateway could not read the token store (%v); call again, and tell the operator if it persists", err)
	}
	if !ok {
		return "", authRequired(toolID, server)
	}
	return tok, nil
}

func authRequired(id, server string) *Error {
	return newError(CodeAuthRequired, id, nil, map[string]any{"server": server},
		"server %q needs a token for this session and none is set; give the session a token for %q (for `sandbox serve` over HTTP, send the header \"Sandbox-Token-%s: <token>\") and call again", server, server, server)
}

// limitsStep waits (boundedly) for the caller's share of the server (its
// session's calls and request bytes in flight: a session over it waits for
// its own calls, up to the call's timeout, and holds nobody else back), then
// for the server's rate limit and concurrency cap (at most the server's
// maxWait). On success the caller must call release.
func (g *Gateway) limitsStep(ctx context.Context, c *call) (release func(), _ *Error) {
	releaseShare, kind, err := c.u.shares.acquire(ctx, c.req.Caller, int64(len(c.args)), g.cfg.timeoutFor(c.u.sc, c.tool.Name))
	if err != nil {
		return nil, g.limitError(ctx, c, kind, 0, err)
	}
	releaseSlot, kind, retryAfter, err := c.u.limiter.acquire(ctx, g.rates, c.req.Caller.Principal.Key(), c.u.maxWait)
	if err == nil {
		return func() { releaseSlot(); releaseShare() }, nil
	}
	releaseShare()
	return nil, g.limitError(ctx, c, kind, retryAfter, err)
}

// limitError is the *Error of a call the limits step stopped.
func (g *Gateway) limitError(ctx context.Context, c *call, kind limitKind, retryAfter time.Duration, err error) *Error {
	var storeErr *rateStoreError
	if errors.As(err, &storeErr) {
		return newError(CodeInternal, c.toolID, err, map[string]any{"server": c.u.name},
			"the gateway could not reach its rate limiter (%v); call again, and tell the operator if it persists", storeErr.err)
	}
	if !errors.Is(err, errLimited) {
		return g.contextError(ctx, c.toolID, err, 0)
	}
	data := map[string]any{"server": c.u.name, "limit": string(kind)}
	hint := "wait a moment and call again"
	if retryAfter > 0 {
		data["retryAfterMs"] = retryAfter.Milliseconds()
		hint = fmt.Sprintf("call again in %s or later", retryAfter.Round(time.Millisecond))
	}
	return newError(CodeRateLimited, c.toolID, nil, data, "server %q is at its %s; %s, and make fewer calls at once", c.u.name, kind, hint)
}

// forwardStep sends the call upstream under the tool's deadline, with the
// caller's token, progress relay and the result size cap.
func (g *Gateway) forwardStep(ctx context.Context, c *call) (*CallResult, *Error) {
	conn := c.u.sup.Conn()
	if conn == nil {
		return nil, g.unavailable(c.u, c.toolID, nil)
	}
	timeout := g.cfg.timeoutFor(c.u.sc, c.tool.Name)
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if c.token != "" {
		cctx = upstream.WithToken(cctx, c.token)
	}
	cctx = upstream.WithCaller(cctx, c.req.Caller, g.answering(cctx, c.req.Caller))
	if c.asking != nil {
		cctx = upstream.WithAsking(cctx, c.forwardAsking())
	}
	defer g.sessions.enter(cctx, c.u.name, callOwner(c.req.Caller, c.id))()
	defer g.sentTokens.hold(c.u.name, c.token)()
	var progress func(upstream.Progress)
	if fn := c.req.Progress; fn != nil {
		progress = func(p upstream.Progress) {
			if p.Message != "" {
				p.Message = g.serverSecrets(c.u.name).text(p.Message)
			}
			fn(Progress(p))
		}
	}
	spill := c.req.Spill && g.spillCeiling() > 0 && c.u.spills()
	raw, staged, err := conn.CallTool(cctx, c.tool.UpstreamName, c.tool.Raw, c.args, progress, g.sessionLogLevel(c.req.Caller), spill)
	secrets := g.serverSecrets(c.u.name)
	c.secrets = &secrets
	if err != nil {
		secrets.rpcError(err) // before its message is cut to fit ours
		if ctx.Err() == nil && cctx.Err() == context.DeadlineExceeded {
			return nil, newError(CodeTimeout, c.toolID, err, map[string]any{"timeoutMs": timeout.Milliseconds()},
				"%s did not answer within %s and was cancelled; call it again with less work (a smaller query, fewer items), or raise its timeout in the gateway config (\"toolTimeouts\")", c.toolID, timeout)
		}
		if errors.Is(err, upstream.ErrResultTooLarge) {
			return nil, g.resultTooLarge(c, 0)
		}
		return nil, g.forwardError(ctx, c.u, c.toolID, err, timeout)
	}
	if staged == nil && spill && int64(len(raw)) > g.cfg.Settings.MaxResultBytes && int64(len(raw)) <= g.maxStagedBytes() {
		// An in-process server's answer is whole in memory already; spilled
		// all the same, it is read as a stdio server's is.
		if staged, err = g.stageInMemory(raw); err != nil {
			return nil, g.spillFailed(c, err)
		}
	}
	if staged != nil {
		return g.spill(c, staged)
	}
	if int64(len(raw)) > g.cfg.Settings.MaxResultBytes {
		return nil, g.resultTooLarge(c, int64(len(raw)))
	}
	// Only a call made WithAsking can take input_required for an answer
	// (code mode's calls never do): the others skip a decode of the whole
	// result, which parseCallResult makes again below.
	if ir := c.inputRequired(raw); ir != nil {
		st := c.state
		st.Upstream, st.AskedAt = ir.State, 0
		if st.Approved {
			g.releaseQuestion(ctx, st.Question) // the next round runs on it
		}
		return &CallResult{Content: []json.RawMessage{}, InputRequired: &InputRequired{Requests: secrets.json(ir.Requests), State: st.encode()}}, nil
	}
	// Every transport a connection is made with reads an answer as JSON
	// before it hands its result on (upstream.Conn.ResultsChecked), so the
	// result is not scanned again to check it.
	res, perr := parseCallResult(raw, conn.ResultsChecked())
	if perr != nil {
		return nil, newError(CodeProtocolError, c.toolID, perr, map[string]any{"server": c.u.name},
			"%s answered with something that is not a valid tool result (%v); the server may be broken — try another tool or report it", c.toolID, perr)
	}
	secrets.result(res) // before an isError result's text is cut into a message
	if res.IsError {
		return res, toolRefusal(c.toolID, res)
	}
	return res, nil
}

// inputRequired is the upstream's input_required answer to a call made
// WithAsking, or nil. A result that cannot be one (no "input_required" in
// it, and no \u escape that could spell it) is not decoded for it.
func (c *call) inputRequired(raw json.RawMessage) *InputRequired {
	if c.asking == nil || !bytes.Contains(raw, []byte("input_required")) && !bytes.Contains(raw, []byte(`\u`)) {
		return nil
	}
	return ParseInputRequired(raw)
}

// validateDecoded checks decoded arguments against the tool's schema.
func validateDecoded(tool *Tool, decoded any) *Error {
	if _, ok := decoded.(map[string]any); !ok {
		return validationError(tool, []fieldError{{Message: fmt.Sprintf("arguments must be a JSON object, got %s", jsonTypeName(decoded))}})
	}
	schema, err := tool.validator.compiled()
	if err != nil {
		return nil
	}
	return validationResult(tool, schema.Validate(decoded))
}
