package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sandboxrt/sandbox/gateway"
)

func TestParseConfigClaudeDesktopShape(t *testing.T) {
	data := []byte(`{
  "mcpServers": {
    "fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"], "env": {"A": "1"}},
    "remote": {"url": "https://example.com/mcp", "headers": {"X-Key": "k"}},
    "legacy": {"url": "http://127.0.0.1:9/sse", "transport": "sse"},
    "vscode-style": {"type": "http", "url": "http://127.0.0.1:9/mcp"}
  }
}`)
	file, err := Parse("mcp.json", data)
	if err != nil {
		t.Fatal(err)
	}
	cfg := file.Gateway
	if got := strings.Join(cfg.ServerNames(), ","); got != "fs,legacy,remote,vscode-style" {
		t.Fatalf("servers = %s", got)
	}
	fs := cfg.Servers["fs"]
	if fs.Transport != gateway.TransportStdio || fs.Command != "npx" || len(fs.Args) != 3 || fs.Env["A"] != "1" || !fs.CheckPaths {
		t.Fatalf("fs = %+v", fs)
	}
	if r := cfg.Servers["remote"]; r.Transport != gateway.TransportStreamableHTTP || r.Headers["X-Key"] != "k" {
		t.Fatalf("remote = %+v", r)
	}
	if cfg.Servers["legacy"].Transport != gateway.TransportSSE || cfg.Servers["vscode-style"].Transport != gateway.TransportStreamableHTTP {
		t.Fatal("transport not taken from \"transport\"/\"type\"")
	}
	if cfg.Settings.Timeout != gateway.DefaultTimeout || cfg.Settings.MaxResultBytes != gateway.DefaultMaxResultBytes || cfg.Settings.ToolNames != gateway.WirePrefixed {
		t.Fatalf("defaults = %+v", cfg.Settings)
	}
	if fs.Timeout != 0 || fs.ToolTimeouts != nil || fs.MaxWait != nil || fs.PathRoots != nil {
		t.Fatalf("fs has settings it did not write (the gateway's apply): %+v", fs)
	}
}

func TestParseConfigGatewaySettings(t *testing.T) {
	data := []byte(`{
  "mcpServers": {
    "gh": {"url": "https://example.com/mcp", "sessionToken": true, "timeout": "10s",
           "toolTimeouts": {"Search.Code": "1m"}, "rateLimit": {"perSecond": 2.5, "burst": 3},
           "maxConcurrent": 4, "maxWait": "0s", "pathRoots": [], "protocolVersion": "2025-06-18"},
    "linear": {"url": "https://mcp.linear.example/mcp", "oauth": {"clientId": "cli", "clientSecret": "${SANDBOX_TEST_SECRET}", "scopes": ["read"], "redirectPort": 8976}}
  },
  "gateway": {"timeout": "5s", "maxResultBytes": 1024, "maxSpilledResultBytes": 536870912, "maxWait": "250ms", "pathRoots": ["/srv/data", "rel"],
              "toolNames": "passthrough", "healthInterval": "0s",
              "policy": {"rules": [{"tools": "gh:delete_*", "action": "deny"}, {"tools": "*:*", "annotations": {"destructiveHint": true}, "action": "approve"}], "approvalTimeout": "1m", "operatorApprovals": true},
              "audit": {"path": "audit.jsonl", "maxBytes": 1000, "keep": 2}, "oauthTokens": "tokens.json", "console": {"disabled": true}}
}`)
	t.Setenv("SANDBOX_TEST_SECRET", "s3cret")
	file, err := Parse("/etc/sandbox/gw.json", data)
	if err != nil {
		t.Fatal(err)
	}
	cfg := file.Gateway
	if o := cfg.Servers["linear"].OAuth; o == nil || o.ClientID != "cli" || o.ClientSecret != "s3cret" || len(o.Scopes) != 1 || o.RedirectPort != 8976 {
		t.Fatalf("linear oauth = %+v", o)
	}
	if cfg.Settings.OAuthTokenFile != "/etc/sandbox/tokens.json" {
		t.Fatalf("oauthTokens = %q (relative to the config's folder)", cfg.Settings.OAuthTokenFile)
	}
	gh := cfg.Servers["gh"]
	if !gh.SessionToken || gh.MaxConcurrent != 4 || gh.RateLimit.PerSecond != 2.5 || gh.RateLimit.Burst != 3 || gh.ProtocolVersion != "2025-06-18" {
		t.Fatalf("gh = %+v", gh)
	}
	if got := gh.ToolTimeouts["search_code"]; got != time.Minute || len(gh.ToolTimeouts) != 1 {
		t.Fatalf("tool timeouts (normalized keys) = %v", gh.ToolTimeouts)
	}
	if gh.Timeout != 10*time.Second {
		t.Fatalf("server timeout = %v", gh.Timeout)
	}
	if gh.MaxWait == nil || *gh.MaxWait != 0 {
		t.Fatalf("an explicit \"maxWait\": \"0s\" must be kept to override the gateway's: %v", gh.MaxWait)
	}
	if gh.PathRoots == nil || len(gh.PathRoots) != 0 {
		t.Fatalf("an explicit empty pathRoots must be kept to override the gateway's: %v", gh.PathRoots)
	}
	o := cfg.Settings
	if o.Timeout != 5*time.Second || o.MaxResultBytes != 1024 || o.MaxSpilledResultBytes != 512<<20 || o.MaxWait != 250*time.Millisecond || o.ToolNames != gateway.WirePassthrough || o.HealthInterval != 0 {
		t.Fatalf("options = %+v", o)
	}
	if want := []string{"/srv/data", "/etc/sandbox/rel"}; strings.Join(o.PathRoots, ",") != strings.Join(want, ",") {
		t.Fatalf("pathRoots = %v, want %v (relative to the config file)", o.PathRoots, want)
	}
	if p := o.Policy; p == nil || len(p.Rules) != 2 || p.Rules[1].Action != gateway.PolicyApprove || !p.Rules[1].Annotations["destructiveHint"] || p.ApprovalTimeout != time.Minute || !p.OperatorApprovals {
		t.Fatalf("policy = %+v", o.Policy)
	}
	if a := o.Audit; a == nil || a.Path != "/etc/sandbox/audit.jsonl" || a.MaxBytes != 1000 || a.Keep != 2 {
		t.Fatalf("audit = %+v", o.Audit)
	}
	if !file.Console.Disabled {
		t.Fatalf("console = %+v", file.Console)
	}
}

func TestParseConfigErrorsCarryPositions(t *testing.T) {
	cases := []struct {
		name, json, want string
	}{
		{"syntax", "{\n  \"mcpServers\": {,}\n}", "gw.json:2:"},
		{"unknown top key", "{\n  \"mcpServers\": {},\n  \"mcp_servers\": \"x\"\n}", `gw.json:3:3: unknown key "mcp_servers"`},
		{"unknown server key", "{\"mcpServers\": {\n  \"a\": {\"command\": \"x\",\n        \"comand\": \"y\"}}}", `gw.json:3:9: unknown key "comand" in server "a"`},
		{"bad duration", "{\"mcpServers\": {\"a\": {\"command\": \"x\", \"timeout\": true}}}", `gw.json:1:50: "timeout" must be a duration string`},
		{"bad duration text", "{\"mcpServers\": {\"a\": {\"command\": \"x\", \"timeout\": \"30 secs\"}}}", `"30 secs" is not a duration`},
		{"no command or url", "{\"mcpServers\": {\"a\": {}}}", `needs "command"`},
		{"both", "{\"mcpServers\": {\"a\": {\"command\": \"x\", \"url\": \"http://h/\"}}}", `both "command" and "url"`},
		{"bad url", "{\"mcpServers\": {\"a\": {\"url\": \"ftp://h/\"}}}", `must be an absolute http://`},
		{"reserved name", "{\"mcpServers\": {\"__proto__\": {\"command\": \"x\"}}}", `reserved`},
		{"hub name", "{\"mcpServers\": {\"gateway\": {\"command\": \"x\"}}}", `reserved for the gateway's own hub tools`},
		{"scripts name", "{\"mcpServers\": {\"scripts\": {\"command\": \"x\"}}}", `reserved for code mode's saved scripts`},
		{"sandbox name", "{\"mcpServers\": {\"sandbox\": {\"command\": \"x\"}}}", `gw.json:1:17: server name "sandbox" is reserved for code mode's sandbox global (sandbox.store, sandbox.results); rename the server`},
		{"policy action", "{\"mcpServers\": {}, \"gateway\": {\"policy\": {\"rules\": [{\"tools\": \"a:*\", \"action\": \"ask\"}]}}}", `policy rule 1: "action" is "allow", "deny" or "approve", got "ask"`},
		{"policy pattern", "{\"mcpServers\": {}, \"gateway\": {\"policy\": {\"rules\": [{\"tools\": \"delete_*\", \"action\": \"deny\"}]}}}", `a pattern over "server:tool"`},
		{"policy hint", "{\"mcpServers\": {}, \"gateway\": {\"policy\": {\"rules\": [{\"tools\": \"*:*\", \"annotations\": {\"dangerous\": true}, \"action\": \"deny\"}]}}}", `unknown annotation "dangerous"`},
		{"audit path", "{\"mcpServers\": {}, \"gateway\": {\"audit\": {\"keep\": 3}}}", `"audit" needs "path"`},
		{"upper case name", "{\"mcpServers\": {\"GitHub\": {\"command\": \"x\"}}}", `use "github"`},
		{"bad char", "{\"mcpServers\": {\"a/b\": {\"command\": \"x\"}}}", `'/'`},
		{"oauth on stdio", "{\"mcpServers\": {\"a\": {\"command\": \"x\", \"oauth\": {}}}}", `"oauth" needs an HTTP server`},
		{"oauth key", "{\"mcpServers\": {\"a\": {\"url\": \"http://h/\", \"oauth\": {\"client\": \"x\"}}}}", `unknown key "client" in "oauth"; known keys: clientId`},
		{"oauth secret alone", "{\"mcpServers\": {\"a\": {\"url\": \"http://h/\", \"oauth\": {\"clientSecret\": \"x\"}}}}", `"clientSecret" but no "clientId"`},
		{"oauth port", "{\"mcpServers\": {\"a\": {\"url\": \"http://h/\", \"oauth\": {\"redirectPort\": 70000}}}}", `must be a TCP port`},
		{"token on stdio", "{\"mcpServers\": {\"a\": {\"command\": \"x\", \"sessionToken\": true}}}", `"sessionToken" needs an HTTP server`},
		{"stdio transport with url", "{\"mcpServers\": {\"a\": {\"url\": \"http://h/\", \"type\": \"stdio\"}}}", `not "stdio"`},
		{"bad transport", "{\"mcpServers\": {\"a\": {\"url\": \"http://h/\", \"transport\": \"ws\"}}}", `must be "stdio", "streamable-http" or "sse"`},
		{"args not list", "{\"mcpServers\": {\"a\": {\"command\": \"x\", \"args\": \"-v\"}}}", `"args" must be an array of strings`},
		{"env not string", "{\"mcpServers\": {\"a\": {\"command\": \"x\", \"env\": {\"N\": 1}}}}", `env.N must be a string`},
		{"negative concurrency", "{\"mcpServers\": {\"a\": {\"command\": \"x\", \"maxConcurrent\": -1}}}", `positive whole number`},
		{"rate without perSecond", "{\"mcpServers\": {\"a\": {\"command\": \"x\", \"rateLimit\": {\"burst\": 2}}}}", `needs "perSecond"`},
		{"unknown version", "{\"mcpServers\": {\"a\": {\"command\": \"x\", \"protocolVersion\": \"2020-01-01\"}}}", `unknown MCP protocol version`},
		{"duplicate key", "{\"mcpServers\": {\"a\": {\"command\": \"x\"}, \"a\": {\"command\": \"y\"}}}", `duplicate key "a"`},
		{"missing servers", "{}", `missing "mcpServers"`},
		{"not object", "[]", `must be a JSON object`},
		{"trailing", "{\"mcpServers\": {}} x", `after the top-level`},
		{"bad toolNames", "{\"mcpServers\": {}, \"gateway\": {\"toolNames\": \"short\"}}", `"toolNames" must be`},
		{"unset env", "{\"mcpServers\": {\"a\": {\"command\": \"${SANDBOX_TEST_SURELY_UNSET}\"}}}", `SANDBOX_TEST_SURELY_UNSET is not set`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("gw.json", []byte(tc.json))
			if err == nil {
				t.Fatalf("no error for %s", tc.json)
			}
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("error %T is not a *Error: %v", err, err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q does not contain %q", err, tc.want)
			}
			if ce.Line < 1 || ce.Col < 1 {
				t.Fatalf("no position in %v", err)
			}
		})
	}
}

func TestParseConfigExpandsEnvironmentOnce(t *testing.T) {
	t.Setenv("SANDBOX_TEST_TOKEN", "s3cret")
	data := []byte(`{"mcpServers": {
  "a": {"command": "srv", "args": ["--token=${SANDBOX_TEST_TOKEN}", "${SANDBOX_TEST_MISSING:-fallback}"], "env": {"T": "${SANDBOX_TEST_TOKEN}"}},
  "b": {"url": "https://h/mcp", "headers": {"Authorization": "Bearer ${SANDBOX_TEST_TOKEN}"}}}}`)
	file, err := Parse("", data)
	if err != nil {
		t.Fatal(err)
	}
	cfg := file.Gateway
	a := cfg.Servers["a"]
	if a.Args[0] != "--token=s3cret" || a.Args[1] != "fallback" || a.Env["T"] != "s3cret" {
		t.Fatalf("a = %+v", a)
	}
	if cfg.Servers["b"].Headers["Authorization"] != "Bearer s3cret" {
		t.Fatalf("b = %+v", cfg.Servers["b"])
	}
}

func TestLoadConfigMissingFileSaysWhatToDo(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "nope.json"))
	if err == nil || !strings.Contains(err.Error(), "mcpServers") {
		t.Fatalf("err = %v", err)
	}
	path := filepath.Join(t.TempDir(), "ok.json")
	if err := os.WriteFile(path, []byte(`{"mcpServers": {"x": {"command": "true", "cwd": "sub"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	file, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg := file.Gateway
	if want := filepath.Join(filepath.Dir(path), "sub"); cfg.Servers["x"].Cwd != want {
		t.Fatalf("cwd = %q, want %q", cfg.Servers["x"].Cwd, want)
	}
}

// FuzzParseConfig: arbitrary bytes never panic, and every error is a
// *Error with a position inside the input.
func FuzzParseConfig(f *testing.F) {
	f.Add([]byte(`{"mcpServers": {"a": {"command": "x", "args": ["1"], "timeout": "1s"}}}`))
	f.Add([]byte(`{"mcpServers": {"b": {"url": "http://h/", "rateLimit": {"perSecond": 1}}}, "gateway": {"pathRoots": ["/"]}}`))
	f.Add([]byte(`{"mcpServers": {"a": {"command": "${X:-y}"}}, "gateway": {"toolNames": "passthrough"}}`))
	f.Add([]byte(`[[[[[[[[[[`))
	f.Add([]byte("{\"mcpServers\":\n{\"\xff\": 1}}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Parse("f.json", data)
		if err != nil {
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("%T: %v", err, err)
			}
			if ce.Line < 1 || ce.Col < 1 {
				t.Fatalf("bad position: %v", err)
			}
			return
		}
		for name, sc := range file.Gateway.Servers {
			if n, err := gateway.ValidateName(name); err != nil || n != name || sc.Name != name {
				t.Fatalf("accepted bad server name %q", name)
			}
		}
	})
}

// TestReferenceServersExample: the sample config the README gives for MCP
// clients loads, with its paths expanded from the environment.
func TestReferenceServersExample(t *testing.T) {
	t.Setenv("HOME", "/home/agent")
	file, err := Load("../examples/reference-servers.mcp.json")
	if err != nil {
		t.Fatal(err)
	}
	fs, mem := file.Gateway.Servers["filesystem"], file.Gateway.Servers["memory"]
	if fs == nil || mem == nil || fs.Args[2] != "/home/agent/projects" || fs.PathRoots[0] != "/home/agent/projects" || mem.Env["MEMORY_FILE_PATH"] != "/home/agent/.sandbox-memory.jsonl" {
		t.Fatalf("%+v %+v", fs, mem)
	}
}
