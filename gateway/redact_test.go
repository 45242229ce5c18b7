package gateway

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// TestSecretsAreRedacted: a configured secret and an operator token that a
// server echoes (in text, in structured content, JSON-escaped, in an
// error) reach the caller as [redacted]; short config values are left.
func TestSecretsAreRedacted(t *testing.T) {
	t.Parallel()
	const secret, token = `s3cret"value-123`, "operator-token-abcdef"
	s := server.NewMCPServer("leaky", "1")
	s.AddTool(mcp.NewTool("echo"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res := mcp.NewToolResultText("key " + secret + ", token " + token + ", mode prod")
		res.StructuredContent = map[string]any{"key": secret, "nested": []any{"Bearer " + token}}
		return res, nil
	})
	s.AddTool(mcp.NewTool("fail"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultError("auth failed for " + token), nil
	})
	settings := DefaultSettings()
	settings.Secrets = []string{secret, "prod"}
	g, err := New(&Config{Servers: map[string]*ServerConfig{}, Settings: settings}, WithInProcessServer("leaky", s, nil))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := g.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := g.SetOperatorToken(ctx, "other", token); err != nil {
		t.Fatal(err)
	}
	res, err := g.Call(ctx, CallRequest{Tool: "leaky:echo"})
	if err != nil {
		t.Fatal(err)
	}
	all := string(res.StructuredContent)
	for _, b := range res.Content {
		all += string(b)
	}
	if strings.Contains(all, "s3cret") || strings.Contains(all, token) || !strings.Contains(all, redacted) || !strings.Contains(all, "mode prod") {
		t.Errorf("result: %s", all)
	}
	_, err = g.Call(ctx, CallRequest{Tool: "leaky:fail"})
	var ge *Error
	if !errors.As(err, &ge) || strings.Contains(ge.Message, token) || strings.Contains(string(ge.Data), token) || !strings.Contains(ge.Message, redacted) {
		t.Errorf("error: %v %s", err, ge.Data)
	}
}

func TestConfigSecretsAreTheSecretOnes(t *testing.T) {
	cfg := &Config{Servers: map[string]*ServerConfig{
		"a": {Env: map[string]string{"GITHUB_TOKEN": "ghp_abcdefgh123", "ALLOWED_DIR": "/home/user/projects", "API_KEY": "short"}},
		"b": {Headers: map[string]string{"Authorization": "Bearer tok-1234567890", "Accept": "application/json"}},
	}}
	got := strings.Join(newRedactor(configSecrets(cfg)).secrets, ",")
	for _, want := range []string{"ghp_abcdefgh123", "tok-1234567890", "Bearer tok-1234567890"} {
		if !strings.Contains(got, want) {
			t.Errorf("secrets lack %q: %s", want, got)
		}
	}
	for _, not := range []string{"/home/user/projects", "application/json", "short"} {
		if strings.Contains(got, not) {
			t.Errorf("secrets hold %q, which is not one: %s", not, got)
		}
	}
}
