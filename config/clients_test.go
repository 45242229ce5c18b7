package config

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandboxrt/sandbox/gateway"
)

// warningText joins a file's warnings, one a line.
func warningText(f *File) string {
	var b strings.Builder
	for _, w := range f.Warnings {
		b.WriteString(w.Error() + "\n")
	}
	return b.String()
}

// A claude_desktop_config.json as Claude Desktop writes it: the servers and
// the app's own settings beside them.
func TestParseClaudeDesktopConfig(t *testing.T) {
	data := []byte(`{
  "mcpServers": {
    "filesystem": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-filesystem", "/Users/me/Desktop"]
    }
  },
  "globalShortcut": "Alt+Space"
}`)
	f, err := Parse("claude_desktop_config.json", data)
	if err != nil {
		t.Fatal(err)
	}
	if s := f.Gateway.Servers["filesystem"]; s == nil || s.Command != "npx" {
		t.Fatalf("servers = %v", f.Gateway.ServerNames())
	}
	if got := warningText(f); !strings.Contains(got, `claude_desktop_config.json:8:3: ignoring "globalShortcut"`) {
		t.Fatalf("warnings:\n%s", got)
	}
}

// cline_mcp_settings.json as Cline (and Roo Code) write it: approval lists,
// "disabled", a timeout in seconds and the older "transportType".
func TestParseClineConfig(t *testing.T) {
	data := []byte(`{
  "mcpServers": {
    "github": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-github"],
      "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "tok"},
      "disabled": false,
      "autoApprove": ["list_issues"],
      "timeout": 60
    },
    "old-remote": {"url": "https://example.com/sse", "transportType": "sse", "disabled": true, "alwaysAllow": []},
    "roo": {"command": "node", "args": ["server.js"], "alwaysAllow": ["read"], "watchPaths": ["server.js"], "disabledTools": ["write"]}
  }
}`)
	f, err := Parse("cline_mcp_settings.json", data)
	if err != nil {
		t.Fatal(err)
	}
	gh := f.Gateway.Servers["github"]
	if gh.Disabled || gh.Timeout != 0 || gh.Env["GITHUB_PERSONAL_ACCESS_TOKEN"] != "tok" {
		t.Fatalf("github = %+v (a numeric timeout must not be guessed at)", gh)
	}
	old := f.Gateway.Servers["old-remote"]
	if !old.Disabled || old.Transport != gateway.TransportSSE {
		t.Fatalf("old-remote = %+v: \"disabled\": true skips it, \"transportType\" is its transport", old)
	}
	got := warningText(f)
	for _, want := range []string{
		`cline_mcp_settings.json:8:7: ignoring "autoApprove" in server "github": the tools a client runs without asking; sandbox decides that with "gateway.policy"`,
		`cline_mcp_settings.json:9:18: ignoring "timeout": 60 in server "github"`,
		`"60s"`,
		`ignoring "alwaysAllow" in server "old-remote"`,
		`ignoring "watchPaths" in server "roo"`,
		`ignoring "disabledTools" in server "roo"`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("warnings lack %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, `"disabled"`) || strings.Contains(got, "transportType") {
		t.Errorf("a mapped key is warned about:\n%s", got)
	}
}

// .vscode/mcp.json as VS Code writes it: "servers" instead of
// "mcpServers", "inputs" it prompts for, "${env:NAME}", "envFile".
func TestParseVSCodeConfig(t *testing.T) {
	data := []byte(`{
  "inputs": [
    {"type": "promptString", "id": "api-key", "description": "API key", "password": true}
  ],
  "servers": {
    "fetch": {"type": "stdio", "command": "uvx", "args": ["mcp-server-fetch"], "env": {"TOKEN": "${env:SANDBOX_TEST_VSCODE_TOKEN}"}, "envFile": "${workspaceFolder}/.env"},
    "github": {"type": "http", "url": "https://api.githubcopilot.com/mcp/"}
  }
}`)
	t.Setenv("SANDBOX_TEST_VSCODE_TOKEN", "from-env")
	f, err := Parse("mcp.json", data)
	if err != nil {
		t.Fatal(err)
	}
	if fe := f.Gateway.Servers["fetch"]; fe == nil || fe.Transport != gateway.TransportStdio || fe.Env["TOKEN"] != "from-env" {
		t.Fatalf("fetch = %+v", fe)
	}
	if gh := f.Gateway.Servers["github"]; gh == nil || gh.Transport != gateway.TransportStreamableHTTP {
		t.Fatalf("github = %+v", gh)
	}
	got := warningText(f)
	for _, want := range []string{`mcp.json:2:3: ignoring "inputs"`, `${NAME}`, `ignoring "envFile" in server "fetch"`, `put the variables in "env"`} {
		if !strings.Contains(got, want) {
			t.Errorf("warnings lack %q:\n%s", want, got)
		}
	}

	// ${workspaceFolder} is the folder above .vscode/, as in VS Code.
	ws := t.TempDir()
	vscode := []byte(`{"servers": {"fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "${workspaceFolder}/docs"]}}}`)
	f, err = Parse(filepath.Join(ws, ".vscode", "mcp.json"), vscode)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Gateway.Servers["fs"].Args[2]; got != filepath.Join(ws, "docs") {
		t.Fatalf("${workspaceFolder} = %q, want %q", got, filepath.Join(ws, "docs"))
	}

	// A value VS Code would prompt for cannot be had: say what to write.
	withInput := strings.Replace(string(data), "${env:SANDBOX_TEST_VSCODE_TOKEN}", "${input:api-key}", 1)
	_, err = Parse("mcp.json", []byte(withInput))
	if err == nil || !strings.Contains(err.Error(), "mcp.json:6:") || !strings.Contains(err.Error(), "${input:api-key} is a value VS Code prompts for") {
		t.Fatalf("err = %v", err)
	}
}

// Strictness stays for sandbox's own keys: a typo is an error, and so is a
// file with both "mcpServers" and "servers".
func TestParseClientKeysKeepOwnKeysStrict(t *testing.T) {
	for _, tc := range []struct{ data, want string }{
		{`{"mcpServers": {"a": {"comand": "x"}}}`, `config:1:23: unknown key "comand" in server "a"`},
		{`{"mcpServers": {"a": {"command": "x", "timeout": "soon"}}}`, `"timeout": "soon" is not a duration`},
		{`{"mcpServers": {"a": {"command": "x", "transportType": "carrier-pigeon"}}}`, `"type" must be "stdio"`},
		{`{"mcpServers": {}, "servers": {}}`, `config:1:20: both "mcpServers" and "servers"`},
		{`{"mcpServers": {}, "mcpservers": {}}`, `unknown key "mcpservers"`},
		// Cline names servers it installs from its marketplace by their repository path.
		{`{"mcpServers": {"github.com/modelcontextprotocol/servers/tree/main/src/github": {"command": "npx"}}}`,
			`has the character '/' at byte 10; only letters, digits, '_', '-' and '.' are allowed; rename the server (its name is its namespace in snippets), e.g. "github"`},
	} {
		_, err := Parse("", []byte(tc.data))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.data, err, tc.want)
		}
	}
}
