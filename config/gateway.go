package config

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/sandboxrt/sandbox/gateway"
)

// The "mcpServers" and "gateway" blocks: a *gateway.Config.

func (p *parser) parseServers(servers *jsonNode, out map[string]*gateway.ServerConfig) error {
	if servers.kind != jsonObject {
		return p.errAt(servers.offset, "\"mcpServers\" must be an object mapping server names to server settings, found %s", servers.kind)
	}
	for _, k := range servers.keys {
		if err := gateway.CheckServerName(k.name); err != nil {
			return p.errAt(k.offset, "%v%s", err, renameHint(k.name))
		}
		name := k.name
		sc, err := p.parseServer(name, k.value)
		if err != nil {
			return err
		}
		out[name] = sc
	}
	return nil
}

var serverKeys = []string{"command", "args", "env", "cwd", "url", "headers", "transport", "type",
	"timeout", "toolTimeouts", "rateLimit", "maxConcurrent", "maxConcurrentPerSession", "maxInFlightBytesPerSession",
	"maxWait", "pathRoots", "checkPaths",
	"sessionToken", "protocolVersion", "disabled", "readOnly", "oauth"}

// parseServer reads one entry of "mcpServers". Its keys say either how to
// reach the server (transportField) or how calls to it are routed and
// limited (routingField); they are read in document order, so the first bad
// key is the error. Then the transport is settled from what was written.
func (p *parser) parseServer(name string, n *jsonNode) (*gateway.ServerConfig, error) {
	if n.kind != jsonObject {
		return nil, p.errAt(n.offset, "server %q must be an object such as {\"command\": \"npx\", \"args\": [...]} or {\"url\": \"https://...\"}, found %s", name, n.kind)
	}
	sc := &gateway.ServerConfig{Name: name, CheckPaths: true}
	var transportNode *jsonNode // the last "transport" or "type", for errors
	for _, k := range n.keys {
		known, err := p.clientServerKey(name, sc, k)
		if !known {
			known, err = p.transportField(sc, k)
		}
		if !known {
			known, err = p.routingField(sc, k)
		}
		if !known {
			return nil, p.errAt(k.offset, "unknown key %q in server %q; known keys: %s", k.name, name, strings.Join(serverKeys, ", "))
		}
		if err != nil {
			return nil, err
		}
		if k.name == "transport" || k.name == "type" || k.name == "transportType" {
			transportNode = k.value
		}
	}
	if err := p.settleTransport(name, n, sc, transportNode); err != nil {
		return nil, err
	}
	return sc, nil
}

// transportField reads a key that says how to reach a server: command,
// args, env, cwd (stdio), url, headers (HTTP), transport or its alias type.
// known is false for any other key.
func (p *parser) transportField(sc *gateway.ServerConfig, k jsonKey) (known bool, err error) {
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
		var s string
		if s, err = p.str(v, k.name); err == nil {
			switch s {
			case "stdio":
				sc.Transport = gateway.TransportStdio
			case "streamable-http", "http", "streamableHttp":
				sc.Transport = gateway.TransportStreamableHTTP
			case "sse":
				sc.Transport = gateway.TransportSSE
			default:
				err = p.errAt(v.offset, "%q must be \"stdio\", \"streamable-http\" or \"sse\", got %q", k.name, s)
			}
		}
	default:
		return false, nil
	}
	return true, err
}

// routingField reads a key that says how calls to a server are routed:
// deadlines, rate and concurrency limits, path checks, session tokens, the
// protocol version, whether it runs at all. known is false for any other
// key.
func (p *parser) routingField(sc *gateway.ServerConfig, k jsonKey) (known bool, err error) {
	v := k.value
	switch k.name {
	case "timeout":
		sc.Timeout, err = p.duration(v, "timeout")
	case "toolTimeouts":
		sc.ToolTimeouts, err = p.toolTimeouts(v)
	case "rateLimit":
		sc.RateLimit, err = p.rateLimit(v)
	case "maxConcurrent":
		sc.MaxConcurrent, err = p.positiveInt(v, "maxConcurrent")
	case "maxConcurrentPerSession":
		sc.MaxConcurrentPerSession, err = p.positiveInt(v, "maxConcurrentPerSession")
	case "maxInFlightBytesPerSession":
		var n int
		n, err = p.positiveInt(v, "maxInFlightBytesPerSession")
		sc.MaxInFlightBytesPerSession = int64(n)
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
		if err == nil && !mcp.IsValidProtocolVersion(sc.ProtocolVersion) {
			err = p.errAt(v.offset, "unknown MCP protocol version %q; use one of %s, or leave it out to negotiate", sc.ProtocolVersion, strings.Join(mcp.ValidProtocolVersions, ", "))
		}
	case "disabled":
		sc.Disabled, err = p.boolean(v, "disabled")
	case "readOnly":
		sc.ReadOnly, err = p.boolean(v, "readOnly")
	case "oauth":
		sc.OAuth, err = p.parseOAuthClient(v)
	default:
		return false, nil
	}
	return true, err
}

// settleTransport derives the transport from command or url unless it was
// stated, and refuses contradictions: command and url, a stated transport
// that does not fit, and keys that only apply to the other kind of server.
// Errors point at the server (n) or at the stated transport.
func (p *parser) settleTransport(name string, n *jsonNode, sc *gateway.ServerConfig, transportNode *jsonNode) error {
	switch {
	case sc.Command != "" && sc.URL != "":
		return p.errAt(n.offset, "server %q has both \"command\" and \"url\"; a stdio server has a command, an HTTP server a url", name)
	case sc.Command == "" && sc.URL == "":
		return p.errAt(n.offset, "server %q needs \"command\" (a local stdio server) or \"url\" (a remote streamable-http or sse server)", name)
	case sc.Command != "":
		if sc.Transport != "" && sc.Transport != gateway.TransportStdio {
			return p.errAt(transportNode.offset, "server %q has a \"command\", so its transport is \"stdio\", not %q", name, sc.Transport)
		}
		sc.Transport = gateway.TransportStdio
		if len(sc.Headers) > 0 {
			return p.errAt(n.offset, "server %q: \"headers\" only apply to url servers", name)
		}
		if sc.SessionToken {
			return p.errAt(n.offset, "server %q: \"sessionToken\" needs an HTTP server (\"url\"); pass a stdio server its token through \"env\"", name)
		}
		if sc.OAuth != nil {
			return p.errAt(n.offset, "server %q: \"oauth\" needs an HTTP server (\"url\"); a stdio server gets its credentials through \"env\"", name)
		}
	default:
		if sc.Transport == "" {
			sc.Transport = gateway.TransportStreamableHTTP
		}
		if sc.Transport == gateway.TransportStdio {
			return p.errAt(transportNode.offset, "server %q has a \"url\", so its transport is \"streamable-http\" or \"sse\", not \"stdio\"", name)
		}
		if len(sc.Args) > 0 || len(sc.Env) > 0 || sc.Cwd != "" {
			return p.errAt(n.offset, "server %q: \"args\", \"env\" and \"cwd\" only apply to command (stdio) servers", name)
		}
	}
	return nil
}

func (p *parser) parseSettings(n *jsonNode, f *File) error {
	o, a := &f.Gateway.Settings, &f.Auth
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
		case "maxSpilledResultBytes":
			var i int
			if i, err = p.positiveInt(v, "maxSpilledResultBytes"); err == nil {
				o.MaxSpilledResultBytes = int64(i)
			}
		case "maxWait":
			o.MaxWait, err = p.durationAllowZero(v, "maxWait")
		case "pathRoots":
			o.PathRoots, err = p.pathRoots(v)
		case "toolNames":
			var s string
			if s, err = p.str(v, "toolNames"); err == nil {
				switch gateway.WireNaming(s) {
				case gateway.WirePrefixed, gateway.WirePassthrough:
					o.ToolNames = gateway.WireNaming(s)
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
		case "auth":
			err = p.parseAuth(v, a)
		case "console":
			err = p.parseConsole(v, &f.Console)
		case "policy":
			o.Policy, err = p.parsePolicy(v)
		case "audit":
			o.Audit, err = p.parseAudit(v)
		case "secrets":
			o.Secrets, err = p.stringList(v, "secrets", true)
		case "redis":
			f.Redis, err = p.parseRedis(v)
		case "pprof":
			f.Pprof, err = p.boolean(v, "pprof")
		case "tasks":
			f.Tasks, err = p.parseTasks(v)
		case "publicURL":
			f.PublicURL, err = p.expandedString(v, "publicURL")
			if err == nil {
				err = checkPublicURL(f.PublicURL)
				if err != nil {
					err = p.errAt(k.offset, "%v", err)
				}
			}
		case "oauthTokens":
			o.OAuthTokenFile, err = p.expandedString(v, "oauthTokens")
			if err == nil && !filepath.IsAbs(o.OAuthTokenFile) && p.baseDir != "" {
				o.OAuthTokenFile = filepath.Join(p.baseDir, o.OAuthTokenFile)
			}
		default:
			return p.errAt(k.offset, "unknown key %q in \"gateway\"; known keys: timeout, startupTimeout, maxResultBytes, maxSpilledResultBytes, maxWait, pathRoots, toolNames, restartBackoff, maxRestartBackoff, healthInterval, auth, policy, audit, secrets, oauthTokens, publicURL, redis, pprof, console, tasks", k.name)
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

// checkPublicURL refuses a "publicURL" a browser could not be sent to.
func checkPublicURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("\"publicURL\" %q is not an http(s) URL without query: give where browsers reach sandbox serve, such as \"https://gw.example.com\" or \"https://example.com/sandbox\" behind a proxy's prefix", s)
	}
	return nil
}
