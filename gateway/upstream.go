package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// ServerState is the lifecycle state of one upstream.
type ServerState string

const (
	StateStarting   ServerState = "starting"   // first connection attempt under way
	StateReady      ServerState = "ready"      // connected; calls are forwarded
	StateRestarting ServerState = "restarting" // connection lost; reconnecting with backoff
	StateFailed     ServerState = "failed"     // never connected yet; retrying with backoff
	StateStopped    ServerState = "stopped"    // the gateway is closed
	StateDisabled   ServerState = "disabled"   // "disabled": true in the configuration
)

// ServerStatus is what `sandbox servers` and the hub tool report per server.
type ServerStatus struct {
	Name            string      `json:"name"`
	Transport       Transport   `json:"transport"`
	State           ServerState `json:"state"`
	Tools           int         `json:"tools"`
	Resources       int         `json:"resources"`
	Prompts         int         `json:"prompts"`
	LastError       string      `json:"lastError,omitempty"`
	Restarts        int         `json:"restarts"`
	Since           time.Time   `json:"since"`
	ProtocolVersion string      `json:"protocolVersion,omitempty"`
	ServerName      string      `json:"serverName,omitempty"` // serverInfo.name the upstream reported
	InFlight        int         `json:"inFlight"`
}

// upstream is one configured server and its current connection.
type upstream struct {
	g      *Gateway
	name   string
	sc     *ServerConfig
	inproc *server.MCPServer

	limiter    *limiter
	roots      []string
	maxWait    time.Duration
	checkPaths bool

	conn atomic.Pointer[connection] // nil unless ready

	mu       sync.Mutex
	state    ServerState
	lastErr  string
	restarts int
	since    time.Time

	refreshMu sync.Mutex
}

func newUpstream(g *Gateway, sc *ServerConfig, inproc *server.MCPServer) *upstream {
	return &upstream{
		g:          g,
		name:       sc.Name,
		sc:         sc,
		inproc:     inproc,
		limiter:    newLimiter(sc.RateLimit, sc.MaxConcurrent),
		roots:      g.cfg.rootsFor(sc),
		maxWait:    g.cfg.maxWaitFor(sc),
		checkPaths: sc.CheckPaths,
		state:      StateStarting,
		since:      time.Now(),
	}
}

func (u *upstream) setState(s ServerState, lastErr string) {
	u.mu.Lock()
	u.state, u.since = s, time.Now()
	if lastErr != "" {
		u.lastErr = lastErr
	}
	u.mu.Unlock()
	u.g.observe.serverState(u.name, s)
	if lastErr != "" && s != StateReady {
		u.g.log.Warn("upstream state", "server", u.name, "state", string(s), "error", lastErr)
	} else {
		u.g.log.Info("upstream state", "server", u.name, "state", string(s))
	}
}

func (u *upstream) status() ServerStatus {
	u.mu.Lock()
	st := ServerStatus{Name: u.name, Transport: u.sc.Transport, State: u.state, LastError: u.lastErr, Restarts: u.restarts, Since: u.since}
	u.mu.Unlock()
	if c := u.conn.Load(); c != nil {
		st.ProtocolVersion, st.ServerName = c.version, c.serverInfo.Name
	}
	st.InFlight = u.g.sessions.inFlight(u.name)
	return st
}

// run is the supervisor: connect, serve until the connection dies, restart
// with exponential backoff; forever, until the gateway closes.
func (u *upstream) run(ctx context.Context, firstTry chan<- struct{}) {
	defer u.setState(StateStopped, "")
	opts := u.g.cfg.Options
	backoff := opts.RestartBackoff
	first := true
	for {
		conn, err := u.connect(ctx)
		// Start returns once every server has connected or failed once: the
		// state must be published before that.
		signal := func() {
			if first {
				first = false
				firstTry <- struct{}{}
			}
		}
		if ctx.Err() != nil {
			signal()
			if conn != nil {
				conn.close()
			}
			return
		}
		if err != nil {
			u.mu.Lock()
			state := StateFailed
			if u.restarts > 0 || u.state == StateRestarting {
				state = StateRestarting
			}
			u.mu.Unlock()
			u.setState(state, err.Error())
			signal()
		} else {
			connectedAt := time.Now()
			u.conn.Store(conn)
			u.setState(StateReady, "")
			signal()
			stopHealth := u.startHealth(ctx, conn)
			select {
			case <-conn.dead:
			case <-ctx.Done():
			}
			stopHealth()
			u.conn.Store(nil)
			conn.close()
			if ctx.Err() != nil {
				return
			}
			u.mu.Lock()
			u.restarts++
			u.mu.Unlock()
			u.setState(StateRestarting, conn.deathReason())
			u.g.observe.restart(u.name)
			if time.Since(connectedAt) > 4*opts.MaxRestartBackoff {
				backoff = opts.RestartBackoff // it ran fine for a good while
			}
		}
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return
		}
		backoff = min(2*backoff, opts.MaxRestartBackoff)
	}
}

// startHealth checks an idle connection with a real request (ping is a no-op
// on the current protocol): a server that stops answering is restarted.
func (u *upstream) startHealth(ctx context.Context, c *connection) (stop func()) {
	interval := u.g.cfg.Options.HealthInterval
	if interval <= 0 {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-c.dead:
				return
			case <-t.C:
				if time.Since(time.Unix(0, c.lastOK.Load())) < interval {
					continue // traffic proved it alive
				}
				// A healthy server answers a list at once; one that takes longer
				// than the interval (at least 1 s, at most 10 s) is hung.
				hctx, cancel := context.WithTimeout(ctx, min(max(interval, time.Second), 10*time.Second))
				err := c.healthCheck(hctx)
				cancel()
				if err != nil && ctx.Err() == nil {
					c.markDead(fmt.Sprintf("health check failed: %v", err))
					return
				}
			}
		}
	}()
	return func() { close(done) }
}

// clientCapabilities are advertised upstream: the union of what downstream
// clients can do, so that tools which depend on sampling, elicitation or
// roots are listed. A request for something the calling session's client
// cannot do is answered with an error at call time.
func clientCapabilities() mcp.ClientCapabilities {
	caps := mcp.ClientCapabilities{
		Sampling:    &mcp.SamplingCapability{},
		Elicitation: &mcp.ElicitationCapability{Form: &struct{}{}, URL: &struct{}{}},
	}
	caps.Roots = &struct {
		ListChanged bool `json:"listChanged,omitempty"`
	}{ListChanged: true}
	return caps
}

// connect starts the transport, negotiates the protocol and lists everything.
func (u *upstream) connect(ctx context.Context) (*connection, error) {
	opts := u.g.cfg.Options
	c := newConnection(u)
	initCtx, cancel := context.WithTimeout(ctx, opts.StartupTimeout)
	defer cancel()
	// Connection-level requests carry the operator's token.
	initCtx = u.withOperatorToken(initCtx)

	pinned := u.sc.ProtocolVersion
	legacyListen := pinned != "" && !mcp.IsModernProtocol(pinned)
	tr, err := u.newTransport(c, legacyListen)
	if err != nil {
		return nil, err
	}
	if err := c.start(ctx, initCtx, tr, pinned); err != nil {
		c.close()
		return nil, err
	}
	// A streamable-HTTP server that turned out not to speak the stateless
	// protocol sends its notifications (list_changed, resources/updated) on
	// the GET stream, which only a transport set up for it listens to:
	// reconnect with one, pinned to the version just negotiated.
	if u.sc.Transport == TransportStreamableHTTP && !c.modern && !legacyListen {
		version := c.version
		c.close()
		c = newConnection(u)
		if tr, err = u.newTransport(c, true); err != nil {
			return nil, err
		}
		if err := c.start(ctx, initCtx, tr, version); err != nil {
			c.close()
			return nil, err
		}
	}
	if err := u.refresh(initCtx, c, refreshAll); err != nil {
		c.close()
		return nil, fmt.Errorf("listing after connecting: %w", err)
	}
	if c.modern {
		c.startListen(ctx)
	}
	u.resubscribe(initCtx, c)
	u.g.applyLogLevel(initCtx, c)
	return c, nil
}

// newTransport builds the mcp-go transport for the server's configuration.
func (u *upstream) newTransport(c *connection, legacyListen bool) (transport.Interface, error) {
	max := u.g.cfg.Options.MaxResultBytes
	httpClient := &http.Client{Transport: &cappedTransport{base: http.DefaultTransport, max: max}}
	headerFunc := func(ctx context.Context) map[string]string {
		if tok, ok := ctx.Value(tokenKey{}).(string); ok && tok != "" {
			return map[string]string{"Authorization": "Bearer " + tok}
		}
		return nil
	}
	switch u.sc.Transport {
	case TransportStdio:
		p, err := startProcess(u.sc, max)
		if err != nil {
			return nil, err
		}
		c.proc = p
		go func() {
			<-p.exited
			c.markDead("the server process " + p.exitReason())
		}()
		return transport.NewIO(p.stdout, p.stdin, nil), nil
	case TransportStreamableHTTP:
		topts := []transport.StreamableHTTPCOption{
			transport.WithHTTPBasicClient(httpClient),
			transport.WithHTTPHeaders(u.sc.Headers),
			transport.WithHTTPHeaderFunc(headerFunc),
			transport.WithHTTPLogger(quietLogger(u.g.log)),
		}
		if legacyListen {
			//lint:ignore SA1019 the 2025-era protocol (its logging, GET stream and subscriptions) is served and tested on purpose
			topts = append(topts, transport.WithContinuousListening())
		}
		c.isHTTP = true
		return transport.NewStreamableHTTP(u.sc.URL, topts...)
	case TransportSSE:
		c.isHTTP = true
		return transport.NewSSE(u.sc.URL,
			transport.WithHTTPClient(httpClient),
			transport.WithHeaders(u.sc.Headers),
			transport.WithHeaderFunc(headerFunc),
			transport.WithSSELogger(quietLogger(u.g.log)),
			transport.WithResponseTimeout(24*time.Hour), // the router's deadlines apply
		)
	case transportInProcess:
		return transport.NewInProcessTransportWithOptions(u.inproc,
			transport.WithSamplingHandler(inprocSampling{c}),
			transport.WithElicitationHandler(inprocElicitation{c}),
			transport.WithRootsHandler(inprocRoots{c}),
		), nil
	}
	return nil, fmt.Errorf("unknown transport %q", u.sc.Transport)
}

// tokenKey carries the bearer token of the request being sent to the
// transport's header function.
type tokenKey struct{}

// withOperatorToken gives a connection-level request (initialize, listing,
// health checks, subscriptions) the operator's token for a "sessionToken"
// server: those requests serve every caller, so no caller's token is used.
func (u *upstream) withOperatorToken(ctx context.Context) context.Context {
	if !u.sc.SessionToken {
		return ctx
	}
	tok, ok, err := u.g.tokens.Token(ctx, OperatorTokens, u.name)
	if err != nil {
		u.g.log.Warn("reading the operator's token failed", "server", u.name, "error", err)
	}
	if ok {
		return context.WithValue(ctx, tokenKey{}, tok)
	}
	return ctx
}

// --- listing ---

type refreshKind int

const (
	refreshTools refreshKind = 1 << iota
	refreshResources
	refreshPrompts
	refreshAll = refreshTools | refreshResources | refreshPrompts
)

// maxListPages and maxListItems bound what one server may list.
const (
	maxListPages = 1000
	maxListItems = 20000
)

// refresh re-lists what kind says and publishes the server's new listing.
func (u *upstream) refresh(ctx context.Context, c *connection, kind refreshKind) error {
	// One refresh at a time per server: a partial refresh (after a
	// list_changed) must start from the listing a full one just published.
	u.refreshMu.Lock()
	defer u.refreshMu.Unlock()
	if c.isDead() {
		return &connLostError{c.deathReason()}
	}
	prev := u.g.catalog.load().servers[u.name]
	l := &serverListing{}
	if prev != nil {
		*l = *prev
	}
	caps := c.caps
	if kind&refreshTools != 0 {
		l.tools = nil
		if caps.Tools != nil {
			raws, err := c.listAll(ctx, "tools/list", "tools")
			if err != nil {
				return fmt.Errorf("tools/list: %w", err)
			}
			l.tools = u.parseTools(raws)
		}
	}
	if kind&refreshResources != 0 {
		l.resources, l.templates = nil, nil
		if caps.Resources != nil {
			raws, err := c.listAll(ctx, "resources/list", "resources")
			if err != nil {
				return fmt.Errorf("resources/list: %w", err)
			}
			l.resources = u.parseResources(raws)
			raws, err = c.listAll(ctx, "resources/templates/list", "resourceTemplates")
			if err != nil {
				u.g.log.Warn("resources/templates/list failed", "server", u.name, "error", err)
			} else {
				l.templates = u.parseTemplates(raws)
			}
		}
	}
	if kind&refreshPrompts != 0 {
		l.prompts = nil
		if caps.Prompts != nil {
			raws, err := c.listAll(ctx, "prompts/list", "prompts")
			if err != nil {
				return fmt.Errorf("prompts/list: %w", err)
			}
			l.prompts = u.parsePrompts(raws)
		}
	}
	u.g.catalog.setServer(u.name, l)
	return nil
}

// parseTools turns raw tool definitions into catalog entries, refusing (with
// a logged reason) names that fail validation, duplicates after
// normalization, and oversized schemas.
func (u *upstream) parseTools(raws []json.RawMessage) []*Tool {
	type rawTool struct {
		Name         string          `json:"name"`
		Title        string          `json:"title"`
		Description  string          `json:"description"`
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema"`
		Annotations  json.RawMessage `json:"annotations"`
	}
	byName := map[string]*Tool{}
	var order []string
	for _, raw := range raws {
		var rt rawTool
		if err := json.Unmarshal(raw, &rt); err != nil {
			u.g.log.Warn("tool refused", "server", u.name, "reason", "definition is not a JSON object: "+err.Error())
			continue
		}
		name, err := ValidateName(rt.Name)
		if err != nil {
			u.g.log.Warn("tool refused", "server", u.name, "tool", truncate(rt.Name, 80), "reason", err.Error())
			continue
		}
		if len(rt.InputSchema) > maxSchemaBytes {
			u.g.log.Warn("tool refused", "server", u.name, "tool", rt.Name, "reason", fmt.Sprintf("input schema is %d bytes, more than %d", len(rt.InputSchema), maxSchemaBytes))
			continue
		}
		if len(rt.InputSchema) == 0 || string(rt.InputSchema) == "null" {
			rt.InputSchema = json.RawMessage(`{"type":"object"}`)
		}
		if rt.InputSchema[0] != '{' {
			u.g.log.Warn("tool refused", "server", u.name, "tool", rt.Name, "reason", "inputSchema is not a JSON object")
			continue
		}
		if string(rt.OutputSchema) == "null" {
			rt.OutputSchema = nil
		}
		if string(rt.Annotations) == "null" {
			rt.Annotations = nil
		}
		if rt.Title == "" && len(rt.Annotations) > 0 {
			var a struct {
				Title string `json:"title"`
			}
			_ = json.Unmarshal(rt.Annotations, &a)
			rt.Title = a.Title
		}
		if prev, dup := byName[name]; dup {
			// Keep the one whose upstream name sorts first, whatever the order listed.
			u.g.log.Warn("tool refused", "server", u.name, "tool", rt.Name, "reason", fmt.Sprintf("normalizes to %q like %q", name, prev.UpstreamName))
			if rt.Name > prev.UpstreamName {
				continue
			}
		} else {
			order = append(order, name)
		}
		byName[name] = &Tool{
			ID: ToolID(u.name, name), Server: u.name, Name: name, UpstreamName: rt.Name,
			Title: rt.Title, Description: rt.Description,
			InputSchema: rt.InputSchema, OutputSchema: rt.OutputSchema, Annotations: rt.Annotations,
			Raw:       stripMeta(raw),
			validator: newInputValidator(rt.InputSchema),
		}
	}
	sort.Strings(order)
	out := make([]*Tool, 0, len(order))
	for _, n := range order {
		out = append(out, byName[n])
	}
	return out
}

func (u *upstream) parseResources(raws []json.RawMessage) []Resource {
	out := make([]Resource, 0, len(raws))
	for _, raw := range raws {
		var r struct {
			URI  string `json:"uri"`
			Name string `json:"name"`
		}
		if json.Unmarshal(raw, &r) != nil || r.URI == "" {
			u.g.log.Warn("resource refused", "server", u.name, "reason", "no uri")
			continue
		}
		out = append(out, Resource{Server: u.name, URI: r.URI, Name: r.Name, Raw: stripMeta(raw)})
	}
	return out
}

func (u *upstream) parseTemplates(raws []json.RawMessage) []ResourceTemplate {
	out := make([]ResourceTemplate, 0, len(raws))
	for _, raw := range raws {
		var r struct {
			URITemplate string `json:"uriTemplate"`
			Name        string `json:"name"`
		}
		if json.Unmarshal(raw, &r) != nil || r.URITemplate == "" {
			u.g.log.Warn("resource template refused", "server", u.name, "reason", "no uriTemplate")
			continue
		}
		out = append(out, ResourceTemplate{Server: u.name, URITemplate: r.URITemplate, Name: r.Name, Raw: stripMeta(raw)})
	}
	return out
}

func (u *upstream) parsePrompts(raws []json.RawMessage) []Prompt {
	out := make([]Prompt, 0, len(raws))
	for _, raw := range raws {
		var r struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(raw, &r) != nil {
			continue
		}
		if _, err := ValidateName(r.Name); err != nil {
			u.g.log.Warn("prompt refused", "server", u.name, "prompt", truncate(r.Name, 80), "reason", err.Error())
			continue
		}
		out = append(out, Prompt{Server: u.name, Name: r.Name, Raw: stripMeta(raw)})
	}
	return out
}

// stripMeta removes a top-level "_meta" member (upstream metadata is not
// passed on: it can carry the upstream's own session or tracing state).
func stripMeta(raw json.RawMessage) json.RawMessage {
	if !strings.Contains(string(raw), `"_meta"`) {
		return raw
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return raw
	}
	if _, ok := m["_meta"]; !ok {
		return raw
	}
	delete(m, "_meta")
	b, err := json.Marshal(m)
	if err != nil {
		return raw
	}
	return b
}

// --- subscriptions ---

// resubscribe re-establishes resource subscriptions after a (re)connect.
func (u *upstream) resubscribe(ctx context.Context, c *connection) {
	for _, uri := range u.g.subscribedURIs(u.name) {
		if err := c.subscribe(ctx, uri, true); err != nil {
			u.g.log.Warn("resubscribe failed", "server", u.name, "uri", uri, "error", err)
		}
	}
}

// ensure the in-process handler types satisfy mcp-go's interfaces.
var (
	_ server.SamplingHandler    = inprocSampling{}
	_ server.ElicitationHandler = inprocElicitation{}
	_ server.RootsHandler       = inprocRoots{}
	_                           = client.NewClient
)
