package gateway

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// Config is a parsed gateway configuration file: the "mcpServers" block that
// MCP clients already use (.mcp.json, Claude Desktop), plus optional gateway
// settings, per server and in a top-level "gateway" block:
//
//	{
//	  "mcpServers": {
//	    "fs":     {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/data"],
//	               "pathRoots": ["/data"]},
//	    "github": {"url": "https://api.example.com/mcp", "sessionToken": true,
//	               "timeout": "60s", "rateLimit": {"perSecond": 5, "burst": 10}, "maxConcurrent": 4}
//	  },
//	  "gateway": {"timeout": "30s", "maxResultBytes": 33554432, "toolNames": "prefixed"}
//	}
//
// Every key is checked: an unknown key or a bad value is an error naming the
// file, line and column.
type Config struct {
	// Servers by normalized name.
	Servers map[string]*ServerConfig
	// Options that apply to every server unless a server overrides them.
	Options Options
	// CodeMode is the "codeMode" block, for `sandbox serve`'s code-mode tools.
	CodeMode CodeModeConfig
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

	// Timeout bounds each call to this server (0: Options.Timeout).
	Timeout time.Duration
	// ToolTimeouts overrides Timeout per tool (keys are normalized tool names).
	ToolTimeouts map[string]time.Duration
	// RateLimit caps calls per second (nil: unlimited).
	RateLimit *RateLimit
	// MaxConcurrent caps calls in flight (0: unlimited).
	MaxConcurrent int
	// MaxWait bounds how long a call waits for the rate limit or a
	// concurrency slot before failing with RATE_LIMITED (nil: Options.MaxWait).
	MaxWait *time.Duration
	// PathRoots overrides Options.PathRoots for this server when non-nil.
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
	// Disabled servers are listed but never started.
	Disabled bool
}

// RateLimit is a token bucket: PerSecond calls on average, bursts up to Burst.
type RateLimit struct {
	PerSecond float64
	Burst     int
}

// Options are the gateway-wide settings (the "gateway" block).
type Options struct {
	// Timeout is the default per-call deadline (30 s).
	Timeout time.Duration
	// StartupTimeout bounds connecting to one server (30 s).
	StartupTimeout time.Duration
	// MaxResultBytes caps one upstream answer (32 MiB). Larger answers are
	// refused with RESULT_TOO_LARGE and never held in memory whole.
	MaxResultBytes int64
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
}

// Defaults for Options.
const (
	DefaultTimeout        = 30 * time.Second
	DefaultStartupTimeout = 30 * time.Second
	DefaultMaxResultBytes = 32 << 20
	DefaultMaxWait        = time.Second
)

// DefaultOptions returns the options used when the "gateway" block is absent.
func DefaultOptions() Options {
	return Options{
		Timeout:           DefaultTimeout,
		StartupTimeout:    DefaultStartupTimeout,
		MaxResultBytes:    DefaultMaxResultBytes,
		MaxWait:           DefaultMaxWait,
		ToolNames:         WirePrefixed,
		RestartBackoff:    500 * time.Millisecond,
		MaxRestartBackoff: 30 * time.Second,
		HealthInterval:    30 * time.Second,
	}
}

// ReservedServerName is the server name of the gateway's own hub tools.
const ReservedServerName = "gateway"

// ConfigError is a configuration problem at a position in a file.
type ConfigError struct {
	File      string // "" when parsed from bytes without a name
	Line, Col int
	Msg       string
}

func (e *ConfigError) Error() string {
	file := e.File
	if file == "" {
		file = "config"
	}
	return fmt.Sprintf("%s:%d:%d: %s", file, e.Line, e.Col, e.Msg)
}

// LoadConfig reads and parses a configuration file.
func LoadConfig(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading gateway config: %w (pass the path of a JSON file with an \"mcpServers\" object)", err)
	}
	return ParseConfig(path, data)
}

// ParseConfig parses configuration bytes; name is used in error positions.
// Relative "cwd" and "pathRoots" are resolved against the directory of name.
// "${VAR}" and "${VAR:-default}" in command, args, env, cwd, url and headers
// are replaced from the environment now, once, never during calls.
func ParseConfig(name string, data []byte) (*Config, error) {
	p := &configParser{file: name, data: data, getenv: os.LookupEnv}
	if name != "" {
		if abs, err := filepath.Abs(filepath.Dir(name)); err == nil {
			p.baseDir = abs
		}
	}
	return p.parse()
}

type configParser struct {
	file    string
	data    []byte
	baseDir string
	getenv  func(string) (string, bool)
}

func (p *configParser) errAt(off int64, format string, args ...any) *ConfigError {
	line, col := lineCol(p.data, off)
	return &ConfigError{File: p.file, Line: line, Col: col, Msg: fmt.Sprintf(format, args...)}
}

func (p *configParser) parse() (*Config, error) {
	root, err := parsePositioned(p.data)
	if err != nil {
		if pe, ok := err.(*posError); ok {
			return nil, p.errAt(pe.offset, "%s", pe.msg)
		}
		return nil, err
	}
	if root.kind != jsonObject {
		return nil, p.errAt(root.offset, "the configuration must be a JSON object with an \"mcpServers\" object, found %s", root.kind)
	}
	cfg := &Config{Servers: map[string]*ServerConfig{}, Options: DefaultOptions()}
	var servers *jsonNode
	for _, k := range root.keys {
		switch k.name {
		case "mcpServers":
			servers = k.value
		case "gateway":
			if err := p.parseOptions(k.value, &cfg.Options); err != nil {
				return nil, err
			}
		case "codeMode":
			if err := p.parseCodeMode(k.value, &cfg.CodeMode); err != nil {
				return nil, err
			}
		case "$schema":
		default:
			return nil, p.errAt(k.offset, "unknown key %q; the top level takes \"mcpServers\", \"gateway\" and \"codeMode\"", k.name)
		}
	}
	if servers == nil {
		return nil, p.errAt(root.offset, "missing \"mcpServers\": add an object that maps server names to {\"command\": ...} or {\"url\": ...}")
	}
	if servers.kind != jsonObject {
		return nil, p.errAt(servers.offset, "\"mcpServers\" must be an object mapping server names to server settings, found %s", servers.kind)
	}
	for _, k := range servers.keys {
		name, err := ValidateName(k.name)
		if err != nil {
			return nil, p.errAt(k.offset, "server name: %v", err)
		}
		if name != k.name {
			return nil, p.errAt(k.offset, "server name %q must be written in normal form: use %q", k.name, name)
		}
		if name == ReservedServerName {
			return nil, p.errAt(k.offset, "server name %q is reserved for the gateway's own hub tools; choose another name", name)
		}
		sc, err := p.parseServer(name, k.value)
		if err != nil {
			return nil, err
		}
		cfg.Servers[name] = sc
	}
	return cfg, nil
}

var serverKeys = []string{"command", "args", "env", "cwd", "url", "headers", "transport", "type",
	"timeout", "toolTimeouts", "rateLimit", "maxConcurrent", "maxWait", "pathRoots", "checkPaths",
	"sessionToken", "protocolVersion", "disabled"}

func (p *configParser) parseServer(name string, n *jsonNode) (*ServerConfig, error) {
	if n.kind != jsonObject {
		return nil, p.errAt(n.offset, "server %q must be an object such as {\"command\": \"npx\", \"args\": [...]} or {\"url\": \"https://...\"}, found %s", name, n.kind)
	}
	sc := &ServerConfig{Name: name, CheckPaths: true}
	var transportNode *jsonNode
	var err error
	for _, k := range n.keys {
		v := k.value
		switch k.name {
		case "command":
			sc.Command, err = p.expandedString(v, "command")
		case "args":
			sc.Args, err = p.stringList(v, "args", true)
		case "env":
			sc.Env, err = p.stringMap(v, "env", true)
		case "cwd":
			sc.Cwd, err = p.expandedString(v, "cwd")
			if err == nil && sc.Cwd != "" && !filepath.IsAbs(sc.Cwd) && p.baseDir != "" {
				sc.Cwd = filepath.Join(p.baseDir, sc.Cwd)
			}
		case "url":
			sc.URL, err = p.expandedString(v, "url")
			if err == nil {
				u, perr := url.Parse(sc.URL)
				if perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
					err = p.errAt(v.offset, "\"url\" must be an absolute http:// or https:// URL, got %q", sc.URL)
				}
			}
		case "headers":
			sc.Headers, err = p.stringMap(v, "headers", true)
		case "transport", "type":
			transportNode = v
			var s string
			if s, err = p.str(v, k.name); err == nil {
				switch s {
				case "stdio":
					sc.Transport = TransportStdio
				case "streamable-http", "http", "streamableHttp":
					sc.Transport = TransportStreamableHTTP
				case "sse":
					sc.Transport = TransportSSE
				default:
					err = p.errAt(v.offset, "%q must be \"stdio\", \"streamable-http\" or \"sse\", got %q", k.name, s)
				}
			}
		case "timeout":
			sc.Timeout, err = p.duration(v, "timeout")
		case "toolTimeouts":
			sc.ToolTimeouts, err = p.toolTimeouts(v)
		case "rateLimit":
			sc.RateLimit, err = p.rateLimit(v)
		case "maxConcurrent":
			sc.MaxConcurrent, err = p.positiveInt(v, "maxConcurrent")
		case "maxWait":
			var d time.Duration
			if d, err = p.durationAllowZero(v, "maxWait"); err == nil {
				sc.MaxWait = &d
			}
		case "pathRoots":
			sc.PathRoots, err = p.pathRoots(v)
			if sc.PathRoots == nil && err == nil {
				sc.PathRoots = []string{}
			}
		case "checkPaths":
			sc.CheckPaths, err = p.boolean(v, "checkPaths")
		case "sessionToken":
			sc.SessionToken, err = p.boolean(v, "sessionToken")
		case "protocolVersion":
			sc.ProtocolVersion, err = p.str(v, "protocolVersion")
			if err == nil && !knownProtocolVersion(sc.ProtocolVersion) {
				err = p.errAt(v.offset, "unknown MCP protocol version %q; use one of %s, or leave it out to negotiate", sc.ProtocolVersion, strings.Join(supportedProtocolVersions(), ", "))
			}
		case "disabled":
			sc.Disabled, err = p.boolean(v, "disabled")
		default:
			return nil, p.errAt(k.offset, "unknown key %q in server %q; known keys: %s", k.name, name, strings.Join(serverKeys, ", "))
		}
		if err != nil {
			return nil, err
		}
	}
	// Transport follows from command/url unless stated; contradictions are errors.
	switch {
	case sc.Command != "" && sc.URL != "":
		return nil, p.errAt(n.offset, "server %q has both \"command\" and \"url\"; a stdio server has a command, an HTTP server a url", name)
	case sc.Command == "" && sc.URL == "":
		return nil, p.errAt(n.offset, "server %q needs \"command\" (a local stdio server) or \"url\" (a remote streamable-http or sse server)", name)
	case sc.Command != "":
		if sc.Transport != "" && sc.Transport != TransportStdio {
			return nil, p.errAt(transportNode.offset, "server %q has a \"command\", so its transport is \"stdio\", not %q", name, sc.Transport)
		}
		sc.Transport = TransportStdio
		if len(sc.Headers) > 0 {
			return nil, p.errAt(n.offset, "server %q: \"headers\" only apply to url servers", name)
		}
		if sc.SessionToken {
			return nil, p.errAt(n.offset, "server %q: \"sessionToken\" needs an HTTP server (\"url\"); pass a stdio server its token through \"env\"", name)
		}
	default:
		if sc.Transport == "" {
			sc.Transport = TransportStreamableHTTP
		}
		if sc.Transport == TransportStdio {
			return nil, p.errAt(transportNode.offset, "server %q has a \"url\", so its transport is \"streamable-http\" or \"sse\", not \"stdio\"", name)
		}
		if len(sc.Args) > 0 || len(sc.Env) > 0 || sc.Cwd != "" {
			return nil, p.errAt(n.offset, "server %q: \"args\", \"env\" and \"cwd\" only apply to command (stdio) servers", name)
		}
	}
	return sc, nil
}

func (p *configParser) parseOptions(n *jsonNode, o *Options) error {
	if n.kind != jsonObject {
		return p.errAt(n.offset, "\"gateway\" must be an object, found %s", n.kind)
	}
	var err error
	for _, k := range n.keys {
		v := k.value
		switch k.name {
		case "timeout":
			o.Timeout, err = p.duration(v, "timeout")
		case "startupTimeout":
			o.StartupTimeout, err = p.duration(v, "startupTimeout")
		case "maxResultBytes":
			var i int
			if i, err = p.positiveInt(v, "maxResultBytes"); err == nil {
				o.MaxResultBytes = int64(i)
			}
		case "maxWait":
			o.MaxWait, err = p.durationAllowZero(v, "maxWait")
		case "pathRoots":
			o.PathRoots, err = p.pathRoots(v)
		case "toolNames":
			var s string
			if s, err = p.str(v, "toolNames"); err == nil {
				switch WireNaming(s) {
				case WirePrefixed, WirePassthrough:
					o.ToolNames = WireNaming(s)
				default:
					err = p.errAt(v.offset, "\"toolNames\" must be \"prefixed\" (server__tool) or \"passthrough\" (the upstream's own names), got %q", s)
				}
			}
		case "restartBackoff":
			o.RestartBackoff, err = p.duration(v, "restartBackoff")
		case "maxRestartBackoff":
			o.MaxRestartBackoff, err = p.duration(v, "maxRestartBackoff")
		case "healthInterval":
			o.HealthInterval, err = p.durationAllowZero(v, "healthInterval")
		default:
			return p.errAt(k.offset, "unknown key %q in \"gateway\"; known keys: timeout, startupTimeout, maxResultBytes, maxWait, pathRoots, toolNames, restartBackoff, maxRestartBackoff, healthInterval", k.name)
		}
		if err != nil {
			return err
		}
	}
	if o.MaxRestartBackoff < o.RestartBackoff {
		o.MaxRestartBackoff = o.RestartBackoff
	}
	return nil
}

// --- typed value readers ---

func (p *configParser) str(n *jsonNode, what string) (string, error) {
	if n.kind != jsonString {
		return "", p.errAt(n.offset, "%q must be a string, found %s", what, n.kind)
	}
	return n.str, nil
}

func (p *configParser) expandedString(n *jsonNode, what string) (string, error) {
	s, err := p.str(n, what)
	if err != nil {
		return "", err
	}
	return p.expand(n, s)
}

// expand replaces ${VAR} and ${VAR:-default}.
func (p *configParser) expand(n *jsonNode, s string) (string, error) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		b.WriteString(s[:i])
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			return "", p.errAt(n.offset, "unclosed \"${\" in %q; write ${NAME} or ${NAME:-default}", s)
		}
		expr := s[i+2 : i+j]
		name, def, hasDef := strings.Cut(expr, ":-")
		if val, ok := p.getenv(name); ok && (val != "" || !hasDef) {
			b.WriteString(val)
		} else if hasDef {
			b.WriteString(def)
		} else {
			return "", p.errAt(n.offset, "environment variable %s is not set; set it or write ${%s:-default}", name, name)
		}
		s = s[i+j+1:]
	}
}

func (p *configParser) boolean(n *jsonNode, what string) (bool, error) {
	if n.kind != jsonBool {
		return false, p.errAt(n.offset, "%q must be true or false, found %s", what, n.kind)
	}
	return n.b, nil
}

func (p *configParser) positiveInt(n *jsonNode, what string) (int, error) {
	if n.kind != jsonNumber {
		return 0, p.errAt(n.offset, "%q must be a positive whole number, found %s", what, n.kind)
	}
	i, err := strconv.Atoi(n.num.String())
	if err != nil || i <= 0 {
		return 0, p.errAt(n.offset, "%q must be a positive whole number, got %s", what, n.num)
	}
	return i, nil
}

func (p *configParser) duration(n *jsonNode, what string) (time.Duration, error) {
	d, err := p.durationAllowZero(n, what)
	if err == nil && d <= 0 {
		return 0, p.errAt(n.offset, "%q must be longer than zero", what)
	}
	return d, err
}

func (p *configParser) durationAllowZero(n *jsonNode, what string) (time.Duration, error) {
	if n.kind != jsonString {
		return 0, p.errAt(n.offset, "%q must be a duration string such as \"30s\" or \"1m30s\", found %s", what, n.kind)
	}
	d, err := time.ParseDuration(n.str)
	if err != nil || d < 0 {
		return 0, p.errAt(n.offset, "%q: %q is not a duration; write it like \"500ms\", \"30s\" or \"2m\"", what, n.str)
	}
	return d, nil
}

func (p *configParser) stringList(n *jsonNode, what string, expand bool) ([]string, error) {
	if n.kind != jsonArray {
		return nil, p.errAt(n.offset, "%q must be an array of strings, found %s", what, n.kind)
	}
	out := make([]string, 0, len(n.arr))
	for _, e := range n.arr {
		if e.kind != jsonString {
			return nil, p.errAt(e.offset, "every element of %q must be a string, found %s", what, e.kind)
		}
		s := e.str
		if expand {
			var err error
			if s, err = p.expand(e, s); err != nil {
				return nil, err
			}
		}
		out = append(out, s)
	}
	return out, nil
}

func (p *configParser) stringMap(n *jsonNode, what string, expand bool) (map[string]string, error) {
	if n.kind != jsonObject {
		return nil, p.errAt(n.offset, "%q must be an object of string values, found %s", what, n.kind)
	}
	out := make(map[string]string, len(n.keys))
	for _, k := range n.keys {
		if k.value.kind != jsonString {
			return nil, p.errAt(k.value.offset, "%s.%s must be a string, found %s", what, k.name, k.value.kind)
		}
		s := k.value.str
		if expand {
			var err error
			if s, err = p.expand(k.value, s); err != nil {
				return nil, err
			}
		}
		out[k.name] = s
	}
	return out, nil
}

func (p *configParser) toolTimeouts(n *jsonNode) (map[string]time.Duration, error) {
	if n.kind != jsonObject {
		return nil, p.errAt(n.offset, "\"toolTimeouts\" must map tool names to durations, e.g. {\"search\": \"60s\"}, found %s", n.kind)
	}
	out := make(map[string]time.Duration, len(n.keys))
	for _, k := range n.keys {
		tool, err := ValidateName(k.name)
		if err != nil {
			return nil, p.errAt(k.offset, "toolTimeouts: %v", err)
		}
		d, err := p.duration(k.value, "toolTimeouts."+k.name)
		if err != nil {
			return nil, err
		}
		out[tool] = d
	}
	return out, nil
}

func (p *configParser) rateLimit(n *jsonNode) (*RateLimit, error) {
	if n.kind != jsonObject {
		return nil, p.errAt(n.offset, "\"rateLimit\" must be an object such as {\"perSecond\": 5, \"burst\": 10}, found %s", n.kind)
	}
	rl := &RateLimit{}
	for _, k := range n.keys {
		switch k.name {
		case "perSecond":
			if k.value.kind != jsonNumber {
				return nil, p.errAt(k.value.offset, "\"perSecond\" must be a number, found %s", k.value.kind)
			}
			f, err := k.value.num.Float64()
			if err != nil || f <= 0 {
				return nil, p.errAt(k.value.offset, "\"perSecond\" must be greater than zero, got %s", k.value.num)
			}
			rl.PerSecond = f
		case "burst":
			b, err := p.positiveInt(k.value, "burst")
			if err != nil {
				return nil, err
			}
			rl.Burst = b
		default:
			return nil, p.errAt(k.offset, "unknown key %q in \"rateLimit\"; known keys: perSecond, burst", k.name)
		}
	}
	if rl.PerSecond == 0 {
		return nil, p.errAt(n.offset, "\"rateLimit\" needs \"perSecond\"")
	}
	if rl.Burst == 0 {
		rl.Burst = max(1, int(rl.PerSecond))
	}
	return rl, nil
}

func (p *configParser) pathRoots(n *jsonNode) ([]string, error) {
	list, err := p.stringList(n, "pathRoots", true)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(list))
	for i, r := range list {
		if r == "" {
			return nil, p.errAt(n.arr[i].offset, "an empty path root would allow nothing; remove it")
		}
		if !filepath.IsAbs(r) {
			if p.baseDir == "" {
				return nil, p.errAt(n.arr[i].offset, "path root %q must be absolute", r)
			}
			r = filepath.Join(p.baseDir, r)
		}
		out = append(out, filepath.Clean(r))
	}
	return out, nil
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
	if c.Options.Timeout > 0 {
		return c.Options.Timeout
	}
	return DefaultTimeout
}

func (c *Config) maxWaitFor(sc *ServerConfig) time.Duration {
	if sc.MaxWait != nil {
		return *sc.MaxWait
	}
	return c.Options.MaxWait
}

func (c *Config) rootsFor(sc *ServerConfig) []string {
	if sc.PathRoots != nil {
		return sc.PathRoots
	}
	return c.Options.PathRoots
}

func knownProtocolVersion(v string) bool { return mcp.IsValidProtocolVersion(v) }

func supportedProtocolVersions() []string { return mcp.ValidProtocolVersions }
