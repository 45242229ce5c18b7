// Package gateway connects to many MCP servers (upstreams), keeps one catalog
// of their tools ("server:tool"), resources and prompts, routes every tool
// call through a fixed pipeline (lookup, schema validation, path-traversal
// check, session token, rate limit, forward), and serves all of it again as
// one MCP server (package gateway/frontend, `sandbox serve`).
//
// Code mode and the front end use the Go API: New, Start, Tools, Subscribe
// and Call, sessions and credentials (ARCHITECTURE.md, "What the Go API
// promises", lists it all). Every call error is a *Error with a stable
// Code. Keeping each upstream connected is internal/upstream's work.
package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/server"
	"github.com/prometheus/client_golang/prometheus"
)

// Gateway is the set of upstream connections, the catalog and the router.
// All methods are safe for concurrent use.
type Gateway struct {
	cfg     *Config
	log     *slog.Logger
	tokens  TokenStore
	oauth   oauthClients // OAuth grants to upstreams (oauth.go)
	rates   RateLimiter
	catalog *catalog
	observe *observer

	upstreams map[string]*route // fixed after New
	names     []string          // sorted server names
	// inProcess are the servers WithInProcessServer added, until New makes
	// their routes.
	inProcess map[string]*server.MCPServer

	sessions *sessions

	callSeq      atomic.Uint64
	approved     approvals                // "approve every call of this tool in this run"
	questions    QuestionLedger           // approval questions answered by input_required (questions.go)
	desk         approvalDesk             // calls waiting for an operator's decision (desk.go)
	signIns      signInDesk               // principals signing in by URL (oauth_signin.go)
	approvalPage approvalPage             // approvals asked by URL (approval_page.go)
	redactP      atomic.Pointer[redactor] // secrets never handed to agents (redact.go)
	// sentTokens are the tokens of the requests in flight, by server (redact.go).
	sentTokens sentTokens

	ctx       context.Context
	cancel    context.CancelFunc
	wg        sync.WaitGroup
	startOnce sync.Once
	closeOnce sync.Once

	clientName, clientVersion string

	// Answers too large for memory are written under spillBase
	// (WithSpillDir) while they are read, in spillDir (spill.go).
	spillBase string
	spillOnce sync.Once
	spillDir  string
	spillLock *os.File // held while spillDir is ours (spillsweep_unix.go)
	spillErr  error
}

// Option configures a Gateway.
type Option func(*Gateway) error

// WithLogger sets the structured logger (default: discard). Every routed
// call is logged at Info with its id, tool, caller, duration and outcome.
func WithLogger(l *slog.Logger) Option {
	return func(g *Gateway) error {
		if l != nil {
			g.log = l
		}
		return nil
	}
}

// WithTokenStore replaces the in-memory session token store.
func WithTokenStore(ts TokenStore) Option {
	return func(g *Gateway) error {
		if ts != nil {
			g.tokens = ts
		}
		return nil
	}
}

// WithMetrics registers the gateway's Prometheus metrics (per-tool call
// counts, errors by code, latency histograms, server states) with reg.
func WithMetrics(reg prometheus.Registerer) Option {
	return func(g *Gateway) error {
		m, err := newMetrics(reg)
		if err != nil {
			return err
		}
		g.observe.metrics = m
		return nil
	}
}

// WithInProcessServer adds an upstream that is an mcp-go server in this
// process (no serialization over a pipe): for built-in tool sets and for
// measuring the gateway's own overhead. name must be a valid, unused server
// name; sc may be nil (defaults) and its transport fields are ignored.
func WithInProcessServer(name string, srv *server.MCPServer, sc *ServerConfig) Option {
	return func(g *Gateway) error {
		if err := CheckServerName(name); err != nil {
			return fmt.Errorf("in-process server: %w", err)
		}
		if _, dup := g.cfg.Servers[name]; dup {
			return fmt.Errorf("in-process server %q: a server of that name is already configured", name)
		}
		cp := ServerConfig{CheckPaths: true}
		if sc != nil {
			cp = *sc
		}
		cp.Name, cp.Transport = name, transportInProcess
		g.cfg.Servers[name] = &cp
		g.inProcess[name] = srv
		return nil
	}
}

// WithClientInfo sets the client name and version the gateway presents to
// upstream servers (default "sandbox-gateway").
func WithClientInfo(name, version string) Option {
	return func(g *Gateway) error {
		g.clientName, g.clientVersion = name, version
		return nil
	}
}

// New builds a gateway from a configuration; nothing is started until Start.
func New(cfg *Config, opts ...Option) (*Gateway, error) {
	if cfg == nil {
		cfg = &Config{Servers: map[string]*ServerConfig{}, Settings: DefaultSettings()}
	}
	// The gateway owns its copy: WithInProcessServer adds servers to it.
	own := &Config{Servers: make(map[string]*ServerConfig, len(cfg.Servers)), Settings: cfg.Settings}
	for name, sc := range cfg.Servers {
		if err := CheckServerName(name); err != nil {
			return nil, err
		}
		if sc == nil || sc.Name != name {
			return nil, fmt.Errorf("server %q: its ServerConfig must be non-nil and have Name %q, as its key in Config.Servers", name, name)
		}
		own.Servers[name] = sc
	}
	if own.Settings.Timeout == 0 {
		own.Settings = mergeDefaults(own.Settings)
	}
	g := &Gateway{
		cfg:           own,
		log:           slog.New(slog.DiscardHandler),
		tokens:        NewMemoryTokenStore(),
		rates:         NewMemoryRateLimiter(nil),
		questions:     NewMemoryQuestionLedger(),
		catalog:       newCatalog(own.Settings.ToolNames),
		upstreams:     map[string]*route{},
		inProcess:     map[string]*server.MCPServer{},
		sessions:      newSessions(),
		observe:       &observer{metrics: noMetrics()},
		clientName:    "sandbox-gateway",
		clientVersion: "0.1.0",
	}
	g.desk.store = NewMemoryDeskStore(nil)
	g.signIns.store = NewMemorySignInStore(nil)
	for _, o := range opts {
		if err := o(g); err != nil {
			return nil, err
		}
	}
	// The routes are made once every option is applied: their supervisors
	// take the logger and the client info.
	for name, sc := range own.Servers {
		g.upstreams[name] = newRoute(g, sc, g.inProcess[name])
		g.names = append(g.names, name)
	}
	g.inProcess = nil
	sort.Strings(g.names)
	g.observe.log = g.log
	g.redactP.Store(newRedactor(configSecrets(own)))
	if a := own.Settings.Audit; a != nil && a.Path != "" {
		log, err := openAudit(*a, func(err error) { g.log.Error("writing the audit log failed", "err", err) })
		if err != nil {
			return nil, err
		}
		g.observe.auditLog = log
	}
	g.ctx, g.cancel = context.WithCancel(context.Background())
	return g, nil
}

// mergeDefaults fills zero options (a Config built in Go rather than parsed).
func mergeDefaults(o Settings) Settings {
	d := DefaultSettings()
	if o.Timeout == 0 {
		o.Timeout = d.Timeout
	}
	if o.StartupTimeout == 0 {
		o.StartupTimeout = d.StartupTimeout
	}
	if o.MaxResultBytes == 0 {
		o.MaxResultBytes = d.MaxResultBytes
	}
	if o.ToolNames == "" {
		o.ToolNames = d.ToolNames
	}
	if o.RestartBackoff == 0 {
		o.RestartBackoff = d.RestartBackoff
	}
	if o.MaxRestartBackoff == 0 {
		o.MaxRestartBackoff = d.MaxRestartBackoff
	}
	return o
}

// Start connects to every enabled upstream concurrently and returns once
// each has connected or failed its first attempt (at most StartupTimeout).
// A server that fails keeps being retried with backoff in the background; it
// never holds up the others. ctx bounds only this wait.
func (g *Gateway) Start(ctx context.Context) error {
	started := false
	g.startOnce.Do(func() { started = true })
	if !started {
		return fmt.Errorf("gateway: Start called twice")
	}
	firstTry := make(chan struct{}, len(g.upstreams))
	// The first listings are published together, once: see catalog.hold.
	g.catalog.hold()
	defer g.catalog.release()
	n := 0
	for _, name := range g.names {
		u := g.upstreams[name]
		if u.sc.Disabled {
			u.sup.Disable()
			continue
		}
		n++
		g.wg.Add(1)
		go func() {
			defer g.wg.Done()
			u.sup.Run(g.ctx, firstTry)
		}()
	}
	timeout := time.NewTimer(g.cfg.Settings.StartupTimeout + time.Second)
	defer timeout.Stop()
	for i := 0; i < n; i++ {
		select {
		case <-firstTry:
		case <-timeout.C:
			return nil
		case <-ctx.Done():
			return nil
		}
	}
	return nil
}

// Close disconnects every upstream (stopping stdio servers) and waits for
// the background work to end. Calls in flight fail with UPSTREAM_UNAVAILABLE.
func (g *Gateway) Close() error {
	g.closeOnce.Do(func() {
		g.cancel()
		g.wg.Wait()
		if g.observe.auditLog != nil {
			g.observe.auditLog.close()
		}
		g.spillOnce.Do(func() {}) // none is made from now on
		if g.spillDir != "" {
			_ = os.RemoveAll(g.spillDir)
		}
		if g.spillLock != nil {
			g.spillLock.Close()
		}
	})
	return nil
}

// Tools returns the catalog's tools, sorted by id. The slice is a copy.
func (g *Gateway) Tools() []Tool {
	snap := g.catalog.load()
	out := make([]Tool, len(snap.tools))
	copy(out, snap.tools)
	return out
}

// Tool returns one tool by id ("server:tool") or by wire name.
func (g *Gateway) Tool(name string) (Tool, bool) {
	snap := g.catalog.load()
	if t, ok := snap.byID[name]; ok {
		return *t, true
	}
	if t, ok := snap.byWire[name]; ok {
		return *t, true
	}
	return Tool{}, false
}

// Subscribe calls fn with every change of the catalog, one server at a time,
// in order, from a single goroutine; fn must return quickly. The returned
// function stops the subscription.
func (g *Gateway) Subscribe(fn func(CatalogChange)) (cancel func()) {
	return g.catalog.subscribe(fn)
}

// Resources returns every listed resource, sorted by server then URI.
func (g *Gateway) Resources() []Resource {
	snap := g.catalog.load()
	var out []Resource
	for _, name := range g.names {
		if l := snap.servers[name]; l != nil {
			out = append(out, l.resources...)
		}
	}
	return out
}

// ResourceTemplates returns every listed resource template.
func (g *Gateway) ResourceTemplates() []ResourceTemplate {
	snap := g.catalog.load()
	var out []ResourceTemplate
	for _, name := range g.names {
		if l := snap.servers[name]; l != nil {
			out = append(out, l.templates...)
		}
	}
	return out
}

// Prompts returns every listed prompt with its wire name.
func (g *Gateway) Prompts() []Prompt {
	snap := g.catalog.load()
	out := make([]Prompt, 0, len(snap.prompts))
	for _, p := range snap.prompts {
		out = append(out, *p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].WireName < out[j].WireName })
	return out
}

// ServerNames returns the configured server names, sorted.
func (g *Gateway) ServerNames() []string { return append([]string(nil), g.names...) }

// Servers reports the state of every upstream, sorted by name.
func (g *Gateway) Servers() []ServerStatus {
	snap := g.catalog.load()
	out := make([]ServerStatus, 0, len(g.names))
	for _, name := range g.names {
		st := g.upstreams[name].status()
		if l := snap.servers[name]; l != nil {
			st.Tools, st.Resources, st.Prompts = len(l.tools), len(l.resources)+len(l.templates), len(l.prompts)
		}
		out = append(out, st)
	}
	return out
}

// ServerStderr is what a stdio server's last process wrote to stderr: its
// first and last kilobytes, with a line saying how much was dropped between
// (`sandbox servers --logs`). ok is false for an unknown server, one that is
// not a process, or one that has not been started. For the operator only: a
// server may print secrets, so nothing serves this to clients.
func (g *Gateway) ServerStderr(name string) (text string, ok bool) {
	u := g.upstreams[NormalizeName(name)]
	if u == nil {
		return "", false
	}
	return u.sup.Stderr()
}

// Peer is a connected client session that can answer what upstream servers
// ask of their client during a call (sampling, elicitation, roots) and
// receive their notifications (log messages, resource updates).
type Peer interface {
	// Request sends a request (sampling/createMessage, elicitation/create,
	// roots/list) to the client and returns its raw result.
	Request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)
	// Notify sends a notification to the client; it must not block.
	Notify(method string, params json.RawMessage)
	// Supports reports whether the client declared a capability
	// ("sampling", "elicitation", "roots"). A Peer that also has a method
	// Lacks(capability string) is told when an upstream asked for one its
	// client did not declare (the front end answers a 2026-07-28 call so
	// refused with -32021).
	Supports(capability string) bool
}

// ReserveWireNames keeps names (the front end's built-in and hub tools) from
// being given to upstream tools; a colliding upstream tool gets a hashed name.
func (g *Gateway) ReserveWireNames(names ...string) { g.catalog.reserveWireNames(names...) }
