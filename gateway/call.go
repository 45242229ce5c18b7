package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// CallRequest is one tool call.
type CallRequest struct {
	// Tool is "server:tool" (normalized or the upstream's own tool name) or
	// the tool's wire name.
	Tool string
	// Arguments is a JSON object; nil or empty means {}.
	Arguments json.RawMessage
	// Session is the calling session (DefaultSession when empty).
	Session SessionID
	// Progress, when set, receives the upstream's progress notifications.
	// It is called from the connection's reader goroutine: return quickly.
	Progress func(Progress)
}

// CallResult is the upstream's result, kept faithfully: the raw content
// blocks in order, the raw structuredContent, and isError. Only the
// upstream's _meta is dropped. ARCHITECTURE.md contract 2 (what a call
// resolves to in the VM) is applied by the bindings on top of this.
type CallResult struct {
	Content           []json.RawMessage `json:"content"`
	StructuredContent json.RawMessage   `json:"structuredContent,omitempty"`
	IsError           bool              `json:"isError,omitempty"`
}

// Call routes one tool call through the pipeline, in order: lookup, argument
// validation, path-traversal check, session token, rate limit and
// concurrency cap, forward (with the deadline, cancellation, progress and
// the result size cap). Every failure is a *Error naming the tool.
//
// When the tool ran and reported failure (isError: true), Call returns BOTH
// the result and an *Error with code UPSTREAM_ERROR (message: the tool's
// text, data: its content blocks): the MCP front end passes the result on
// unchanged, while the code-mode bindings throw a catchable MCPToolError.
// Otherwise exactly one of the two is non-nil.
func (g *Gateway) Call(ctx context.Context, req CallRequest) (*CallResult, error) {
	start := time.Now()
	if req.Session == "" {
		req.Session = DefaultSession
	}
	callID := strconv.FormatUint(g.callSeq.Add(1), 10)
	res, tool, gerr := g.route(ctx, req)
	code := "OK"
	if gerr != nil {
		code = string(gerr.Code)
	}
	elapsed := time.Since(start)
	g.metrics.call(tool, code, elapsed)
	if gerr != nil && gerr.Code != CodeUpstreamError {
		g.log.LogAttrs(ctx, logLevelFor(gerr.Code), "call", slogCall(callID, tool, req.Session, elapsed, code, gerr.Message)...)
	} else {
		g.log.LogAttrs(ctx, infoLevel, "call", slogCall(callID, tool, req.Session, elapsed, code, "")...)
	}
	if gerr != nil {
		return res, gerr
	}
	return res, nil
}

// route runs the pipeline; tool is the resolved id (or what was asked for).
func (g *Gateway) route(ctx context.Context, req CallRequest) (*CallResult, string, *Error) {
	// 1. Lookup.
	tool, u, lerr := g.lookup(req.Tool)
	if lerr != nil {
		return nil, req.Tool, lerr
	}
	id := tool.ID

	// 2. Schema validation (and one decoding of the arguments for step 3).
	args := req.Arguments
	if len(bytes.TrimSpace(args)) == 0 || string(bytes.TrimSpace(args)) == "null" {
		args = json.RawMessage(`{}`)
	}
	decoded, derr := decodeArgs(args)
	if derr != nil {
		return nil, id, validationError(tool, []fieldError{{Message: "arguments are not valid JSON: " + derr.Error()}})
	}
	if verr := validateDecoded(tool, decoded); verr != nil {
		return nil, id, verr
	}

	// 3. Path traversal.
	if u.checkPaths {
		if t := checkPaths(decoded, u.roots); t != nil {
			return nil, id, pathTraversalError(id, t)
		}
	}

	// 4. Session token.
	if u.sc.SessionToken {
		tok, ok := g.tokens.Token(req.Session, u.name)
		if !ok {
			return nil, id, newError(CodeAuthRequired, id, nil, map[string]any{"server": u.name},
				"server %q needs a token for this session and none is set; give the session a token for %q (for `sandbox serve` over HTTP, send the header \"Sandbox-Token-%s: <token>\") and call again", u.name, u.name, u.name)
		}
		ctx = context.WithValue(ctx, tokenKey{}, tok)
	}

	// 5. Rate limit and concurrency cap.
	release, kind, retryAfter, lerr2 := u.limiter.acquire(ctx, u.maxWait)
	if lerr2 != nil {
		if errors.Is(lerr2, errLimited) {
			data := map[string]any{"server": u.name, "limit": string(kind)}
			hint := "wait a moment and call again"
			if retryAfter > 0 {
				data["retryAfterMs"] = retryAfter.Milliseconds()
				hint = fmt.Sprintf("call again in %s or later", retryAfter.Round(time.Millisecond))
			}
			return nil, id, newError(CodeRateLimited, id, nil, data, "server %q is at its %s; %s, and make fewer calls at once", u.name, kind, hint)
		}
		return nil, id, g.contextError(ctx, id, lerr2, 0)
	}
	defer release()

	// 6. Forward.
	conn := u.conn.Load()
	if conn == nil {
		return nil, id, g.unavailable(u, id, nil)
	}
	timeout := g.cfg.timeoutFor(u.sc, tool.Name)
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cctx = context.WithValue(cctx, callSessionKey{}, req.Session)
	u.enter(req.Session)
	defer u.leave(req.Session)
	raw, err := conn.callTool(cctx, tool, args, req.Progress, g.sessionLogLevel(req.Session))
	if err != nil {
		if ctx.Err() == nil && cctx.Err() == context.DeadlineExceeded {
			return nil, id, newError(CodeTimeout, id, err, map[string]any{"timeoutMs": timeout.Milliseconds()},
				"%s did not answer within %s and was cancelled; call it again with less work (a smaller query, fewer items), or raise its timeout in the gateway config (\"toolTimeouts\")", id, timeout)
		}
		return nil, id, g.forwardError(ctx, u, id, err, timeout)
	}
	if int64(len(raw)) > g.cfg.Options.MaxResultBytes {
		return nil, id, tooLarge(id, g.cfg.Options.MaxResultBytes)
	}
	res, perr := parseCallResult(raw)
	if perr != nil {
		return nil, id, newError(CodeProtocolError, id, perr, map[string]any{"server": u.name},
			"%s answered with something that is not a valid tool result (%v); the server may be broken — try another tool or report it", id, perr)
	}
	if res.IsError {
		return res, id, upstreamToolError(id, res)
	}
	return res, id, nil
}

// callSessionKey carries the calling session to the handlers of requests
// the upstream sends back while the call runs (HTTP transports pass the
// call's context through).
type callSessionKey struct{}

func sessionFromContext(ctx context.Context) (SessionID, bool) {
	s, ok := ctx.Value(callSessionKey{}).(SessionID)
	return s, ok
}

// lookup resolves "server:tool", a tool's upstream name after "server:", or
// a wire name.
func (g *Gateway) lookup(name string) (*Tool, *upstream, *Error) {
	snap := g.catalog.load()
	if t, ok := snap.byID[name]; ok {
		return t, g.upstreams[t.Server], nil
	}
	server, toolName, ok := SplitToolID(name)
	if !ok {
		if t, ok := snap.byWire[name]; ok {
			return t, g.upstreams[t.Server], nil
		}
		return nil, nil, newError(CodeUnknownTool, name, nil, map[string]any{"closest": closestTools(snap, "", name)},
			"%q is not a tool id; ids look like \"server:tool\"%s", name, suggest(closestTools(snap, "", name)))
	}
	u, ok := g.upstreams[NormalizeName(server)]
	if !ok {
		return nil, nil, newError(CodeServiceNotFound, name, nil, map[string]any{"servers": g.names},
			"there is no server %q; the servers are: %s", server, strings.Join(g.names, ", "))
	}
	if n, err := ValidateName(toolName); err == nil {
		if t, ok := snap.byID[ToolID(u.name, n)]; ok {
			return t, u, nil
		}
	}
	closest := closestTools(snap, u.name, toolName)
	if l := snap.servers[u.name]; l == nil || len(l.tools) == 0 {
		st := u.status()
		if st.State != StateReady {
			return nil, nil, g.unavailable(u, ToolID(u.name, toolName), nil)
		}
	}
	return nil, nil, newError(CodeUnknownTool, ToolID(u.name, toolName), nil, map[string]any{"closest": closest},
		"server %q has no tool %q%s", u.name, toolName, suggest(closest))
}

func suggest(names []string) string {
	if len(names) == 0 {
		return ""
	}
	return "; did you mean " + strings.Join(names, ", ") + "?"
}

// closestTools returns up to 3 tool ids nearest to name (edit distance on
// the tool part; substring matches first), from one server or all.
func closestTools(snap *catalogSnapshot, server, name string) []string {
	want := NormalizeName(name)
	type cand struct {
		id   string
		dist int
	}
	var cands []cand
	for _, t := range snap.tools {
		if server != "" && t.Server != server {
			continue
		}
		d := editDistance(want, t.Name)
		if strings.Contains(t.Name, want) || strings.Contains(want, t.Name) {
			d = min(d, 1)
		}
		if d <= max(3, len(want)/2) {
			cands = append(cands, cand{t.ID, d})
		}
	}
	sort.Slice(cands, func(i, j int) bool {
		if cands[i].dist != cands[j].dist {
			return cands[i].dist < cands[j].dist
		}
		return cands[i].id < cands[j].id
	})
	out := []string{}
	for i := 0; i < len(cands) && i < 3; i++ {
		out = append(out, cands[i].id)
	}
	return out
}

func editDistance(a, b string) int {
	if len(a) > 128 || len(b) > 128 {
		return 1 << 20
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
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

// callParams is the tools/call params the gateway sends.
type callParams struct {
	Name           string          `json:"name"`
	Arguments      json.RawMessage `json:"arguments"`
	Meta           map[string]any  `json:"_meta,omitempty"`
	InputResponses json.RawMessage `json:"inputResponses,omitempty"`
	RequestState   string          `json:"requestState,omitempty"`
}

// maxInputRoundTrips bounds the 2026-07-28 multi round-trip exchange.
const maxInputRoundTrips = 10

// callTool sends tools/call and, when a 2026-07-28 server answers that it
// needs input first (resultType "input_required"), relays each embedded
// request to the calling session's client and retries with the answers.
func (c *connection) callTool(ctx context.Context, tool *Tool, args json.RawMessage, progress func(Progress), logLevel string) (json.RawMessage, error) {
	token := ""
	if progress != nil {
		token = "sbx-p-" + strconv.FormatUint(c.nextID.Add(1), 10)
		defer c.watchProgress(token, progress)()
	}
	p := callParams{Name: tool.UpstreamName, Arguments: args, Meta: c.requestMeta(token, logLevel)}
	var header http.Header
	if c.modern && c.isHTTP && hasParamHeaders(tool.Raw) {
		var mt mcp.Tool
		if json.Unmarshal(tool.Raw, &mt) == nil {
			enc, _ := json.Marshal(map[string]any{"name": tool.UpstreamName, "arguments": args})
			header = http.Header{}
			for k, v := range mcp.GenerateParamHeaders(&mt, enc) {
				header.Set(k, v)
			}
		}
	}
	for round := 0; ; round++ {
		raw, err := c.request(ctx, "tools/call", p, header)
		if err != nil {
			return nil, err
		}
		if !bytes.Contains(raw, []byte(`"input_required"`)) {
			return raw, nil
		}
		var ir struct {
			ResultType    string                     `json:"resultType"`
			InputRequests map[string]json.RawMessage `json:"inputRequests"`
			RequestState  string                     `json:"requestState"`
		}
		if json.Unmarshal(raw, &ir) != nil || ir.ResultType != "input_required" {
			return raw, nil
		}
		if round >= maxInputRoundTrips {
			return nil, &rpcError{Code: mcp.INTERNAL_ERROR, Message: fmt.Sprintf("the server asked for input more than %d times", maxInputRoundTrips)}
		}
		answers := make(map[string]json.RawMessage, len(ir.InputRequests))
		for key, rawReq := range ir.InputRequests {
			var r struct {
				Method string          `json:"method"`
				Params json.RawMessage `json:"params"`
			}
			if err := json.Unmarshal(rawReq, &r); err != nil {
				return nil, &rpcError{Code: mcp.INVALID_PARAMS, Message: "malformed input request: " + err.Error()}
			}
			ans, err := c.u.g.relayClientRequest(ctx, c.u, r.Method, r.Params)
			if err != nil {
				return nil, err
			}
			answers[key] = ans
		}
		p.InputResponses, _ = json.Marshal(answers)
		p.RequestState = ir.RequestState
	}
}

// parseCallResult decodes a tools/call result, keeping blocks raw.
func parseCallResult(raw json.RawMessage) (*CallResult, error) {
	var r struct {
		Content           *[]json.RawMessage `json:"content"`
		StructuredContent json.RawMessage    `json:"structuredContent"`
		IsError           bool               `json:"isError"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("result is not a JSON object: %w", err)
	}
	res := &CallResult{IsError: r.IsError, Content: []json.RawMessage{}}
	if r.Content != nil {
		res.Content = *r.Content
	}
	if len(r.StructuredContent) > 0 && string(r.StructuredContent) != "null" {
		res.StructuredContent = r.StructuredContent
	}
	for i, b := range res.Content {
		if len(b) == 0 || b[0] != '{' {
			return nil, fmt.Errorf("content block %d is not a JSON object", i)
		}
		res.Content[i] = stripMeta(b)
	}
	return res, nil
}

// upstreamToolError turns an isError result into UPSTREAM_ERROR: the tool's
// own text as the message, its content blocks as data.
func upstreamToolError(id string, res *CallResult) *Error {
	var texts []string
	for _, b := range res.Content {
		var t struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if json.Unmarshal(b, &t) == nil && t.Type == "text" && t.Text != "" {
			texts = append(texts, t.Text)
		}
	}
	msg := truncate(strings.Join(texts, "\n"), 2000)
	if msg == "" {
		msg = "the tool reported an error without a message"
	}
	data, _ := json.Marshal(map[string]any{"content": res.Content, "structuredContent": res.StructuredContent})
	return &Error{Code: CodeUpstreamError, Tool: id, Message: msg, Data: data}
}

func tooLarge(id string, limit int64) *Error {
	return newError(CodeResultTooLarge, id, errResultTooLarge, map[string]any{"limitBytes": limit},
		"the result of %s is larger than the gateway's cap of %d bytes and was refused; ask for less (a page, a range, a filter) and call again", id, limit)
}

// forwardError maps what went wrong while forwarding.
func (g *Gateway) forwardError(ctx context.Context, u *upstream, id string, err error, timeout time.Duration) *Error {
	var re *rpcError
	var lost *connLostError
	switch {
	case errors.Is(err, errResultTooLarge):
		return tooLarge(id, g.cfg.Options.MaxResultBytes)
	case ctx.Err() != nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return g.contextError(ctx, id, err, timeout)
	case errors.As(err, &re):
		data, _ := json.Marshal(re)
		return &Error{Code: CodeProtocolError, Tool: id, Data: data, cause: err,
			Message: fmt.Sprintf("%s failed with JSON-RPC error %d: %s (check the arguments against the tool's schema, or try another tool)", id, re.Code, truncate(re.Message, 500))}
	case errors.As(err, &lost):
		return g.unavailable(u, id, err)
	}
	return g.unavailable(u, id, err)
}

// contextError distinguishes the caller's cancellation from a deadline.
func (g *Gateway) contextError(ctx context.Context, id string, err error, timeout time.Duration) *Error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) || (ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded)) {
		return newError(CodeTimeout, id, err, map[string]any{"timeoutMs": timeout.Milliseconds()},
			"%s did not finish before the caller's deadline and was cancelled; call it again with more time or less work", id)
	}
	return newError(CodeCancelled, id, err, nil, "the call to %s was cancelled by its caller; the upstream was told to stop", id)
}

// unavailable is UPSTREAM_UNAVAILABLE with the server's state and last error.
func (g *Gateway) unavailable(u *upstream, id string, cause error) *Error {
	st := u.status()
	reason := st.LastError
	var lost *connLostError
	if errors.As(cause, &lost) {
		reason = lost.reason
	} else if cause != nil && reason == "" {
		reason = cause.Error()
	}
	hint := "it is being reconnected; call again in a few seconds"
	switch st.State {
	case StateDisabled:
		hint = "it is disabled in the gateway config"
	case StateStopped:
		hint = "the gateway is shutting down"
	}
	msg := fmt.Sprintf("server %q is not available (%s", u.name, st.State)
	if reason != "" {
		msg += ": " + truncate(reason, 300)
	}
	msg += "); " + hint
	return newError(CodeUpstreamUnavailable, id, cause, map[string]any{"server": u.name, "state": st.State, "lastError": reason, "restarts": st.Restarts}, "%s", msg)
}

// --- requests the upstream sends to its client, relayed to the caller's ---

// relayClientRequest answers sampling, elicitation and roots requests from
// an upstream by relaying them to the client of the session whose call is
// being served.
func (g *Gateway) relayClientRequest(ctx context.Context, u *upstream, method string, params json.RawMessage) (json.RawMessage, error) {
	capability := map[string]string{
		string(mcp.MethodSamplingCreateMessage): "sampling",
		string(mcp.MethodElicitationCreate):     "elicitation",
		string(mcp.MethodListRoots):             "roots",
	}[method]
	if capability == "" {
		return nil, &rpcError{Code: mcp.METHOD_NOT_FOUND, Message: fmt.Sprintf("the gateway does not relay %q", method)}
	}
	session, ok := sessionFromContext(ctx)
	if !ok {
		session, ok = u.soleSession()
	}
	var p Peer
	if ok {
		p = g.peer(session)
	}
	if p == nil || !p.Supports(capability) {
		if capability == "roots" {
			return g.configuredRoots(u), nil
		}
		if !ok {
			return nil, &rpcError{Code: mcp.INVALID_REQUEST, Message: fmt.Sprintf("%s: the gateway cannot tell which client session this request belongs to (several sessions have calls in flight on server %q)", method, u.name)}
		}
		return nil, &rpcError{Code: mcp.METHOD_NOT_FOUND, Message: fmt.Sprintf("%s: the client of this session does not support %s", method, capability)}
	}
	g.log.Debug("relaying upstream request", "server", u.name, "method", method, "session", string(session))
	return p.Request(ctx, method, params)
}

// configuredRoots answers roots/list from the server's path roots.
func (g *Gateway) configuredRoots(u *upstream) json.RawMessage {
	type root struct {
		URI  string `json:"uri"`
		Name string `json:"name,omitempty"`
	}
	roots := []root{}
	for _, r := range u.roots {
		roots = append(roots, root{URI: "file://" + r})
	}
	b, _ := json.Marshal(map[string]any{"roots": roots})
	return b
}

// relayLog forwards an upstream log message to the one session whose calls
// are in flight on that server; with none or several it is only logged here
// (sessions never see each other's upstream logs).
func (g *Gateway) relayLog(u *upstream, params json.RawMessage) {
	session, ok := u.soleSession()
	if !ok {
		g.log.Debug("upstream log", "server", u.name, "params", truncate(string(params), 500))
		return
	}
	if p := g.peer(session); p != nil {
		p.Notify(string(mcp.MethodNotificationMessage), params)
	}
}

// sessionLogLevel is the log level a session asked for ("" if none).
func (g *Gateway) sessionLogLevel(s SessionID) string {
	g.logLevelMu.RLock()
	defer g.logLevelMu.RUnlock()
	return g.logLevels[s]
}

// SetLogLevel records a session's minimum log level and asks the upstreams
// that log (2025 protocol) to send at least that level. On the 2026-07-28
// protocol the level travels with each request instead.
func (g *Gateway) SetLogLevel(ctx context.Context, session SessionID, level string) {
	g.logLevelMu.Lock()
	g.logLevels[session] = level
	g.logLevelMu.Unlock()
	for _, name := range g.names {
		if c := g.upstreams[name].conn.Load(); c != nil {
			g.applyLogLevel(ctx, c)
		}
	}
}

var levelRank = map[string]int{"debug": 0, "info": 1, "notice": 2, "warning": 3, "error": 4, "critical": 5, "alert": 6, "emergency": 7}

// applyLogLevel sends logging/setLevel with the most verbose level any
// session asked for (each session's own level filters what it receives).
func (g *Gateway) applyLogLevel(ctx context.Context, c *connection) {
	if c.modern || c.caps.Logging == nil {
		return
	}
	g.logLevelMu.RLock()
	best := ""
	for _, l := range g.logLevels {
		if r, ok := levelRank[l]; ok && (best == "" || r < levelRank[best]) {
			best = l
		}
	}
	g.logLevelMu.RUnlock()
	if best == "" {
		return
	}
	if _, err := c.request(c.u.withSessionToken(ctx, DefaultSession), "logging/setLevel", map[string]any{"level": best}, nil); err != nil {
		g.log.Debug("logging/setLevel failed", "server", c.u.name, "error", err)
	}
}
