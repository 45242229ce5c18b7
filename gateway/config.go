package gateway

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Config is what New takes: the upstream servers and the settings that
// apply to all of them. Package config builds it from the "mcpServers" and
// "gateway" blocks of an mcp.json file (config.Load), checking every key;
// in Go, start from DefaultSettings.
type Config struct {
	// Servers by normalized name.
	Servers map[string]*ServerConfig
	// Settings that apply to every server unless a server overrides them.
	Settings Settings
}

// Transport is how the gateway talks to one upstream server.
type Transport string

const (
	TransportStdio          Transport = "stdio"
	TransportStreamableHTTP Transport = "streamable-http"
	TransportSSE            Transport = "sse"
)

// ServerConfig is one entry of "mcpServers".
type ServerConfig struct {
	Name string // normalized; the "server" half of tool ids

	Transport Transport
	// stdio; the server inherits only a small safe set of the gateway's
	// environment variables (PATH, HOME, ...) plus Env.
	Command string
	Args    []string
	Env     map[string]string
	Cwd     string
	// streamable-http and sse
	URL     string
	Headers map[string]string

	// Timeout bounds each call to this server (0: Settings.Timeout).
	Timeout time.Duration
	// ToolTimeouts overrides Timeout per tool (keys are normalized tool names).
	ToolTimeouts map[string]time.Duration
	// RateLimit caps calls per second (nil: unlimited).
	RateLimit *RateLimit
	// MaxConcurrent caps calls in flight (0: unlimited).
	MaxConcurrent int
	// MaxConcurrentPerSession caps one session's calls in flight to this
	// server (a stateless request counts as its principal's), and
	// MaxInFlightBytesPerSession their request bytes; past either a call
	// waits for one of the session's own calls to end, up to the call's
	// timeout (0: DefaultMaxConcurrentPerSession, DefaultMaxInFlightBytesPerSession).
	MaxConcurrentPerSession    int
	MaxInFlightBytesPerSession int64
	// MaxWait bounds how long a call waits for the rate limit or a
	// concurrency slot before failing with RATE_LIMITED (nil: Settings.MaxWait).
	MaxWait *time.Duration
	// PathRoots overrides Settings.PathRoots for this server when non-nil.
	PathRoots []string
	// CheckPaths turns the path-traversal check off for this server when false.
	CheckPaths bool
	// SessionToken: every call needs "Authorization: Bearer <token>" from the
	// calling session's token store entry for this server (HTTP only).
	SessionToken bool
	// ProtocolVersion pins the MCP protocol version ("" negotiates: the
	// 2026-07-28 stateless protocol when the server offers it, else the newest
	// 2025 version).
	ProtocolVersion string
	// OAuth configures logins to this server (oauth.go); nil is fine:
	// any HTTP server takes a login when it asks for one.
	OAuth *OAuthConfig
	// Disabled servers are listed but never started.
	Disabled bool
	// ReadOnly lets only the server's tools annotated readOnlyHint be
	// called (policy.go).
	ReadOnly bool
}

// RateLimit is a token bucket: PerSecond calls on average, bursts up to Burst.
type RateLimit struct {
	PerSecond float64
	Burst     int
}

// Settings apply to every server unless the server overrides them (the
// "gateway" block of mcp.json).
type Settings struct {
	// Timeout is the default per-call deadline (30 s).
	Timeout time.Duration
	// StartupTimeout bounds connecting to one server (30 s).
	StartupTimeout time.Duration
	// MaxResultBytes caps one upstream answer held in memory (32 MiB): a
	// tool call's result, a resource, a listing page. A larger one is never
	// held whole: a call that takes a spilled result (CallRequest.Spill,
	// code mode) receives it in a file, up to MaxSpilledResultBytes; any
	// other is refused with RESULT_TOO_LARGE.
	MaxResultBytes int64
	// MaxSpilledResultBytes is the largest tool result a call that takes a
	// spilled one receives (256 MiB; 0: that default), counted once (the
	// value a snippet receives, not the server's whole answer, which may
	// carry it twice). At most MaxResultBytes: nothing is spilled.
	MaxSpilledResultBytes int64
	// MaxWait is the default bounded wait for rate limits and concurrency caps (1 s).
	MaxWait time.Duration
	// PathRoots: absolute paths in arguments must lie inside one of these.
	// Empty: absolute paths are not restricted (../ still is).
	PathRoots []string
	// ToolNames chooses the MCP front end's tool names.
	ToolNames WireNaming
	// RestartBackoff and MaxRestartBackoff bound the delay before restarting
	// a crashed stdio server (0.5 s doubling up to 30 s).
	RestartBackoff    time.Duration
	MaxRestartBackoff time.Duration
	// HealthInterval is how often an idle connection is checked with a real
	// request (30 s; 0 turns health checks off).
	HealthInterval time.Duration
	// Policy decides which calls may run (policy.go); nil allows all.
	Policy *Policy
	// Audit, when set, writes an audit log (audit.go).
	Audit *AuditConfig
	// OAuthTokenFile is where OAuth logins to upstreams are kept ("": the
	// user's config folder, ~/.config/sandbox/oauth-tokens.json on Linux).
	OAuthTokenFile string
	// Secrets are values redacted from everything an agent receives, beside
	// the servers' env and header values (redact.go).
	Secrets []string
}

// Defaults for Settings.
const (
	DefaultTimeout        = 30 * time.Second
	DefaultStartupTimeout = 30 * time.Second
	DefaultMaxResultBytes = 32 << 20
	// DefaultMaxSpilledResultBytes is the most a call that takes a spilled
	// result receives (spill.go).
	DefaultMaxSpilledResultBytes = 256 << 20
	DefaultMaxWait               = time.Second
)

// DefaultSettings returns the settings used when the "gateway" block is absent.
func DefaultSettings() Settings {
	return Settings{
		Timeout:               DefaultTimeout,
		StartupTimeout:        DefaultStartupTimeout,
		MaxResultBytes:        DefaultMaxResultBytes,
		MaxSpilledResultBytes: DefaultMaxSpilledResultBytes,
		MaxWait:               DefaultMaxWait,
		ToolNames:             WirePrefixed,
		RestartBackoff:        500 * time.Millisecond,
		MaxRestartBackoff:     30 * time.Second,
		HealthInterval:        30 * time.Second,
	}
}

// reservedServerNames are the names no upstream server may take, each with
// what owns it. A server of such a name would collide with its owner: the
// front end's hub tools are gateway__*, and in a snippet `sandbox` and
// `scripts` are code mode's namespaces, so a server called sandbox would
// bind as sandbox_ and every call to it would reach code mode instead.
// Every server passes through the gateway, so the list lives here and not
// with each owner.
var reservedServerNames = map[string]string{
	"gateway": "the gateway's own hub tools (gateway__list_servers, gateway__connect_servers, ...)",
	"sandbox": "code mode's sandbox global (sandbox.store, sandbox.results)",
	"scripts": "code mode's saved scripts (scripts.<name> in a snippet)",
}

// CheckServerName is the one check of a server's name, made however the
// server is added: an "mcpServers" entry (package config reports the error
// at its position), a Config built in Go (New), WithInProcessServer. The
// name must be valid, already in normal form, and not reserved; the error
// says what to write instead.
func CheckServerName(name string) error {
	n, err := ValidateName(name)
	if err != nil {
		return fmt.Errorf("server name: %w", err)
	}
	if n != name {
		return fmt.Errorf("server name %q must be written in normal form: use %q", name, n)
	}
	if owner, reserved := reservedServerNames[name]; reserved {
		return fmt.Errorf("server name %q is reserved for %s; rename the server", name, owner)
	}
	// Separators around a name are dropped in a snippet's namespace
	// ("scripts_" is `scripts`): such a name is the reserved one there.
	if bare := strings.Trim(name, "_-"); bare != name {
		if owner, reserved := reservedServerNames[bare]; reserved {
			return fmt.Errorf("server name %q reads as %q in a snippet, which is reserved for %s; rename the server", name, bare, owner)
		}
	}
	return nil
}

// ServerNames returns the configured server names, sorted.
func (c *Config) ServerNames() []string {
	names := make([]string, 0, len(c.Servers))
	for n := range c.Servers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// timeoutFor returns the deadline for one tool of a server.
func (c *Config) timeoutFor(sc *ServerConfig, tool string) time.Duration {
	if d, ok := sc.ToolTimeouts[tool]; ok {
		return d
	}
	if sc.Timeout > 0 {
		return sc.Timeout
	}
	if c.Settings.Timeout > 0 {
		return c.Settings.Timeout
	}
	return DefaultTimeout
}

func (c *Config) maxWaitFor(sc *ServerConfig) time.Duration {
	if sc.MaxWait != nil {
		return *sc.MaxWait
	}
	return c.Settings.MaxWait
}

func (c *Config) rootsFor(sc *ServerConfig) []string {
	if sc.PathRoots != nil {
		return sc.PathRoots
	}
	return c.Settings.PathRoots
}
