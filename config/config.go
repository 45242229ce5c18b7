// Package config reads sandbox's configuration file, mcp.json, and builds
// each package's options from it: the "mcpServers" and "gateway" blocks
// become a *gateway.Config, the "codeMode" block codemode.Options and
// runtime.Options.
//
// The file is the "mcpServers" object MCP clients already use (.mcp.json,
// Claude Desktop), plus optional settings per server and in top-level
// "gateway" and "codeMode" blocks:
//
//	{
//	  "mcpServers": {
//	    "fs":     {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/data"],
//	               "pathRoots": ["/data"]},
//	    "github": {"url": "https://api.example.com/mcp", "sessionToken": true,
//	               "timeout": "60s", "rateLimit": {"perSecond": 5, "burst": 10}, "maxConcurrent": 4}
//	  },
//	  "gateway": {"timeout": "30s", "maxResultBytes": 33554432, "toolNames": "prefixed"},
//	  "codeMode": {"k": 5, "limits": {"timeout": "30s"}}
//	}
//
// Every key is checked: an unknown key or a bad value is an *Error naming
// the file, line and column. Keys that MCP clients write for themselves
// (Cline's "autoApprove", VS Code's "inputs", ...: clients.go) are
// File.Warnings instead, so that a config pasted from a client works.
package config

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/gateway"
	"github.com/sandboxrt/sandbox/runs"
)

// File is a parsed configuration file: the options of each package it
// configures.
type File struct {
	// Gateway is the "mcpServers" and "gateway" blocks, for gateway.New.
	Gateway *gateway.Config
	// CodeMode is the "codeMode" block, for the code-mode tools.
	CodeMode CodeMode
	// Auth is the "auth" block of "gateway": how network clients of
	// `sandbox serve --http` authenticate. Zero: nobody is authenticated.
	Auth auth.Config
	// Console is the "console" block of "gateway": the operator console
	// `sandbox serve --http` serves at /ui/.
	Console Console
	// Redis is the "redis" block of "gateway": the state replicas share
	// (nil: everything stays in the process).
	Redis *Redis
	// Pprof is "pprof" of "gateway": serve Go's profiler at /debug/pprof/
	// beside /metrics (`sandbox serve --pprof`). Off by default.
	Pprof bool
	// PublicURL is "publicURL" of "gateway": where browsers reach
	// `sandbox serve --http`, with a proxy's path prefix if any (the
	// sign-in links of principals and their OAuth redirect are built on
	// it). "": the listener's own address when it is loopback.
	PublicURL string
	// Warnings are keys that MCP clients (Claude Desktop, Cline, VS Code)
	// write into their configs and sandbox ignores, each at its position
	// with what sandbox does instead; the caller shows them.
	Warnings []*Error
	// Tasks is the "tasks" block of "gateway": the caps and TTLs of the
	// runs that outlive their request (zero fields: runs' defaults).
	Tasks runs.Limits
}

// Error is a configuration problem at a position in a file.
type Error struct {
	File      string // "" when parsed from bytes without a name
	Line, Col int
	Msg       string
}

func (e *Error) Error() string {
	file := e.File
	if file == "" {
		file = "config"
	}
	return fmt.Sprintf("%s:%d:%d: %s", file, e.Line, e.Col, e.Msg)
}

// Load reads and parses a configuration file.
func Load(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading gateway config: %w (pass the path of a JSON file with an \"mcpServers\" object)", err)
	}
	return Parse(path, data)
}

// Parse parses configuration bytes; name is used in error positions.
// Relative "cwd", "pathRoots" and "indexDir" are resolved against the
// directory of name. "${VAR}" and "${VAR:-default}" in command, args, env,
// cwd, url, headers and pathRoots (and codeMode's indexDir and embedder url)
// are replaced from the environment now, once, never during calls.
func Parse(name string, data []byte) (*File, error) {
	p := &parser{file: name, data: data, getenv: os.LookupEnv}
	if name != "" {
		if abs, err := filepath.Abs(filepath.Dir(name)); err == nil {
			p.baseDir = abs
		}
	}
	return p.parse()
}

type parser struct {
	file    string
	data    []byte
	baseDir string
	getenv  func(string) (string, bool)
	// warnings collects what File.Warnings reports.
	warnings []*Error
}

func (p *parser) errAt(off int64, format string, args ...any) *Error {
	line, col := lineCol(p.data, off)
	return &Error{File: p.file, Line: line, Col: col, Msg: fmt.Sprintf(format, args...)}
}

func (p *parser) parse() (*File, error) {
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
	f := &File{Gateway: &gateway.Config{Servers: map[string]*gateway.ServerConfig{}, Settings: gateway.DefaultSettings()}}
	var servers *jsonNode
	serversKey := ""
	for _, k := range root.keys {
		if why, ok := clientTopLevelKeys[k.name]; ok {
			p.warnAt(k.offset, "ignoring %q: %s", k.name, why)
			continue
		}
		switch k.name {
		case "mcpServers", "servers": // "servers": VS Code's name for it
			if servers != nil {
				return nil, p.errAt(k.offset, "both %q and %q: keep one object of servers", serversKey, k.name)
			}
			servers, serversKey = k.value, k.name
		case "gateway":
			if err := p.parseSettings(k.value, f); err != nil {
				return nil, err
			}
		case "codeMode":
			if err := p.parseCodeMode(k.value, &f.CodeMode); err != nil {
				return nil, err
			}
		case "$schema":
		default:
			return nil, p.errAt(k.offset, "unknown key %q; the top level takes \"mcpServers\" (or VS Code's \"servers\"), \"gateway\" and \"codeMode\"", k.name)
		}
	}
	if servers == nil {
		return nil, p.errAt(root.offset, "missing \"mcpServers\": add an object that maps server names to {\"command\": ...} or {\"url\": ...}")
	}
	if err := p.parseServers(servers, f.Gateway.Servers); err != nil {
		return nil, err
	}
	slices.SortFunc(p.warnings, func(a, b *Error) int { return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Col, b.Col)) })
	f.Warnings = p.warnings
	return f, nil
}
