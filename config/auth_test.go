package config

import (
	"strings"
	"testing"
	"time"

	"github.com/sandboxrt/sandbox/auth"
)

// TestAuthBlock: "gateway.auth" becomes the auth package's own Config, with
// secrets from the environment and positioned errors.
func TestAuthBlock(t *testing.T) {
	t.Setenv("AGENT_A_KEY", "a-long-random-secret-0123456789")
	file, err := Parse("gw.json", []byte(`{"mcpServers": {}, "gateway": {"auth": {
  "apiKeys": [
    {"name": "agent-a", "key": "${AGENT_A_KEY}", "servers": ["demo"]},
    {"name": "ci", "sha256": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", "tenant": "acme", "operator": true}],
  "oauth": {"issuer": "https://login.example.com", "audience": "https://mcp.example.com/mcp", "scopes": ["mcp:tools"], "operatorClaim": "ops"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	a := file.Auth
	if len(a.APIKeys) != 2 || a.APIKeys[0].Key != "a-long-random-secret-0123456789" || a.APIKeys[0].Servers[0] != "demo" ||
		a.APIKeys[1].Tenant != "acme" || a.APIKeys[0].Operator || !a.APIKeys[1].Operator || a.OAuth == nil || a.OAuth.OperatorClaim != "ops" || a.OAuth.Issuer != "https://login.example.com" || a.OAuth.Scopes[0] != "mcp:tools" {
		t.Fatalf("auth = %+v %+v", a, a.OAuth)
	}
	if _, err := auth.NewVerifier(a, auth.Options{}); err != nil {
		t.Fatalf("the parsed block does not make a verifier: %v", err)
	}

	for _, c := range []struct{ json, want string }{
		{`{"apiKeys": {}}`, `1:52: "apiKeys" must be an array`},
		{`{"apiKeys": [{"name": "a", "kee": "x"}]}`, `unknown key "kee" in an API key`},
		{`{"apiKeys": [{"name": "a"}]}`, `"auth": `},
		{`{"apiKeys": [{"name": "a", "key": "short"}]}`, `"auth": `},
		{`{"oauth": {"issuer": "https://x"}}`, `audience`},
		{`{"basic": true}`, `unknown key "basic" in "auth"`},
	} {
		_, err := Parse("gw.json", []byte(`{"mcpServers": {}, "gateway": {"auth": `+c.json+`}}`))
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "gw.json:1:") {
			t.Errorf("%s: %v, want an error at a position containing %q", c.json, err, c.want)
		}
	}
}

func TestMaxLimitsBlock(t *testing.T) {
	file, err := Parse("gw.json", []byte(`{"mcpServers": {}, "codeMode": {"limits": {"timeout": "10s"}, "maxLimits": {"timeout": "2m", "outputKB": 4096}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if m := file.CodeMode.Engine.MaxLimits; m.Timeout != 2*time.Minute || m.OutputBytes != 4096<<10 {
		t.Fatalf("maxLimits = %+v", m)
	}
	_, err = Parse("gw.json", []byte(`{"mcpServers": {}, "codeMode": {"maxLimits": {"cpu": 1}}}`))
	if err == nil || !strings.Contains(err.Error(), `unknown key "cpu" in "maxLimits"`) {
		t.Fatalf("bad maxLimits: %v", err)
	}
}
