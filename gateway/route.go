package gateway

// One configured server as the gateway sees it (route), and what the
// gateway reports about it (ServerStatus). Keeping the connection alive is
// the supervisor's, in internal/upstream; route is its Host.

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/gateway/internal/upstream"
)

// ServerState is the lifecycle state of one upstream.
type ServerState string

// The states of an upstream: its supervisor's (internal/upstream), spelled
// the same (TestServerStatesAreTheSupervisors).
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
	Name      string      `json:"name"`
	Transport Transport   `json:"transport"`
	State     ServerState `json:"state"`
	Tools     int         `json:"tools"`
	Resources int         `json:"resources"`
	Prompts   int         `json:"prompts"`
	// Reason says why the server is not ready, for anyone: it never holds
	// what the server printed or answered.
	Reason string `json:"reason,omitempty"`
	// LastError is Reason with the operator's detail (the server's stderr
	// tail, transport errors), the gateway's secrets redacted. Only
	// operators see it (`sandbox servers`, the log, the console);
	// ForAgents drops it.
	LastError string `json:"lastError,omitempty"`
	Restarts  int    `json:"restarts"`
	// Failures counts the connection attempts that failed in a row (0 once
	// connected); NextRetry is when the next one is due, while not ready.
	Failures        int        `json:"failures,omitempty"`
	NextRetry       *time.Time `json:"nextRetry,omitempty"`
	Since           time.Time  `json:"since"`
	ProtocolVersion string     `json:"protocolVersion,omitempty"`
	ServerName      string     `json:"serverName,omitempty"` // serverInfo.name the upstream reported
	// Instructions is what the server said about itself at initialize (at
	// most 300 characters), for agents choosing among servers.
	Instructions string `json:"instructions,omitempty"`
	InFlight     int    `json:"inFlight"`
	// Auth is the operator's OAuth login state, filled in by `sandbox
	// servers` ("" when the server takes no login or nobody asked).
	Auth string `json:"auth,omitempty"`
}

// NeedsOperator reports a server that failed to connect
// upstream.FailedAfter times in a row: calling again will not help until
// the operator acts (its Reason says so too), so messages say to use other
// tools or tell the user rather than "call again in a few seconds".
func (st ServerStatus) NeedsOperator() bool {
	return st.State == StateFailed && st.Failures >= upstream.FailedAfter
}

// ForAgents is the status as agents may see it: without LastError.
func (st ServerStatus) ForAgents() ServerStatus {
	st.LastError = ""
	return st
}

// transportInProcess marks servers added with WithInProcessServer.
const transportInProcess = Transport(upstream.InProcess)

// spills reports whether the server's answers too large for memory can be
// spilled (spill.go): a stdio server's are staged as they are read, an
// in-process server's are whole in memory already. An HTTP server's are
// not (mcp-go reads a body or an SSE event whole): MaxResultBytes is their
// most.
func (u *route) spills() bool {
	return u.sc.Transport == TransportStdio || u.sc.Transport == transportInProcess
}

// route is one configured server as the call pipeline sees it: its
// configuration, what a call to it passes (limits, each session's share,
// path roots), and the supervisor of its connection, whose Host it is.
type route struct {
	g    *Gateway
	name string
	sc   *ServerConfig
	sup  *upstream.Supervisor

	limiter    *limiter
	shares     *callerShares // each session's share of this server
	roots      []string
	maxWait    time.Duration
	checkPaths bool
}

func newRoute(g *Gateway, sc *ServerConfig, inproc *server.MCPServer) *route {
	u := &route{
		g:          g,
		name:       sc.Name,
		sc:         sc,
		limiter:    newLimiter(sc.Name, sc.RateLimit, sc.MaxConcurrent),
		shares:     newCallerShares(sc.MaxConcurrentPerSession, sc.MaxInFlightBytesPerSession),
		roots:      g.cfg.rootsFor(sc),
		maxWait:    g.cfg.maxWaitFor(sc),
		checkPaths: sc.CheckPaths,
	}
	spec := upstream.Spec{
		Name: sc.Name, Transport: upstream.Transport(sc.Transport),
		Command: sc.Command, Args: sc.Args, Env: sc.Env, Cwd: sc.Cwd,
		URL: sc.URL, Headers: sc.Headers, ProtocolVersion: sc.ProtocolVersion, InProcess: inproc,
	}
	u.sup = upstream.New(spec, u, g.upstreamOptions())
	return u
}

// upstreamOptions are the settings every supervisor shares.
func (g *Gateway) upstreamOptions() upstream.Options {
	s := g.cfg.Settings
	return upstream.Options{
		StartupTimeout: s.StartupTimeout, MaxResultBytes: s.MaxResultBytes, MaxStagedBytes: g.maxStagedBytes(), StageDir: g.stageDir,
		RestartBackoff: s.RestartBackoff, MaxRestartBackoff: s.MaxRestartBackoff, HealthInterval: s.HealthInterval,
		ClientName: g.clientName, ClientVersion: g.clientVersion, Log: g.log,
	}
}

// maxInstructions is the most of a server's instructions agents read (in
// every search answer's roster).
const maxInstructions = 300

// status is what the gateway reports about the server. What the server
// says about itself is redacted (redact.go) before it is cut; LastError
// too (what it printed), since the operator console shows it to every
// principal marked operator, who hold none of the gateway's secrets.
func (u *route) status() ServerStatus {
	s := u.sup.Status()
	secrets := u.g.redactor().secrets
	return ServerStatus{
		Name: u.name, Transport: u.sc.Transport, State: ServerState(s.State), Reason: s.Reason, LastError: secrets.text(s.LastError),
		Restarts: s.Restarts, Failures: s.Failures, NextRetry: s.NextRetry, Since: s.Since,
		ProtocolVersion: secrets.text(s.ProtocolVersion), ServerName: secrets.text(s.ServerName),
		Instructions: truncate(secrets.text(s.Instructions), maxInstructions),
		InFlight:     u.g.sessions.inFlight(u.name),
	}
}

// --- upstream.Host ---

// OperatorToken is the token of the gateway's connection-level requests:
// the operator's OAuth login, or its --token-env token for a
// "sessionToken" server.
func (u *route) OperatorToken(ctx context.Context) string {
	if usesOAuth(u.sc) {
		tok, err := u.g.oauthToken(ctx, u, auth.Operator().Key())
		if err != nil {
			u.g.log.Warn("the operator's OAuth login cannot be used", "server", u.name, "error", err)
		}
		return tok
	}
	if !u.sc.SessionToken {
		return ""
	}
	tok, _, err := u.g.tokens.Token(ctx, operatorTokens(), u.name)
	if err != nil {
		u.g.log.Warn("reading the operator's token failed", "server", u.name, "error", err)
	}
	return tok
}

// ConnectRefused explains a connection the server refused with 401: the
// operator's OAuth login is missing or was refused (then it is renewed at
// the next attempt), or the configured credentials are wrong.
func (u *route) ConnectRefused(ctx context.Context, err error) error {
	if usesOAuth(u.sc) {
		u.g.oauthRejected(ctx, u, auth.Operator().Key(), upstream.TokenFrom(ctx))
		return fmt.Errorf("the server asks for an OAuth login: run `sandbox login %s --config <your mcp.json>` (%w)", u.name, err)
	}
	if u.sc.SessionToken {
		return fmt.Errorf("the server refused the operator's token: pass a valid one with --token-env %s=VAR (%w)", u.name, err)
	}
	return fmt.Errorf("the server refused the connection's credentials: check its \"headers\" in the config (%w)", err)
}

// Listed publishes what the server listed: the kinds re-listed replace the
// server's entries in the catalog, the others stay.
func (u *route) Listed(kinds upstream.Kinds, l upstream.Listing) {
	next := &serverListing{}
	if prev := u.g.catalog.listing(u.name); prev != nil {
		*next = *prev
	}
	if kinds&upstream.Tools != 0 {
		next.tools = u.parseTools(l.Tools)
	}
	if kinds&upstream.Resources != 0 {
		next.resources, next.templates = u.parseResources(l.Resources), u.parseTemplates(l.Templates)
	}
	if kinds&upstream.Prompts != 0 {
		next.prompts = u.parsePrompts(l.Prompts)
	}
	u.g.catalog.setServer(u.name, next)
}

// StateChanged records the server's new state (metrics).
func (u *route) StateChanged(s upstream.State) { u.g.observe.serverState(u.name, ServerState(s)) }

// Restarted records a reconnection after the connection was lost.
func (u *route) Restarted() { u.g.observe.restart(u.name) }

// InFlight is how many calls are under way on the server.
func (u *route) InFlight() int { return u.g.sessions.inFlight(u.name) }

// ClientRequest relays a request of the server to the calling session's
// client (relay.go).
func (u *route) ClientRequest(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	return u.g.relayClientRequest(ctx, u, method, params)
}

// LogMessage relays the server's log message (relay.go).
func (u *route) LogMessage(params json.RawMessage) { u.g.relayLog(u, params) }

// ResourceUpdated forwards a resource update to its subscribers.
func (u *route) ResourceUpdated(uri string, params json.RawMessage) {
	u.g.resourceUpdated(u.name, uri, params)
}

// SubscribedURIs are the server's resources some session subscribed to.
func (u *route) SubscribedURIs() []string { return u.g.subscribedURIs(u.name) }

// LogLevel is the most verbose log level any session asked for.
func (u *route) LogLevel() string { return u.g.mostVerboseLogLevel() }
