package mcpserver_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// TestMCPJSONStartsTheServer starts the "demo" server exactly as
// examples/mcp.json describes it (command, args, cwd relative to the file)
// and lists its tools: the config works on a fresh clone, with only Go.
func TestMCPJSONStartsTheServer(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles and starts the server with go run; skipped with -short")
	}
	cfgPath, err := filepath.Abs("../mcp.json")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		MCPServers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
			Cwd     string   `json:"cwd"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal(data, &cfg); err != nil {
		t.Fatalf("examples/mcp.json: %v", err)
	}
	demo, ok := cfg.MCPServers["demo"]
	if !ok || len(cfg.MCPServers) != 1 {
		t.Fatalf("examples/mcp.json should configure exactly the server \"demo\": %s", data)
	}
	dir := filepath.Join(filepath.Dir(cfgPath), demo.Cwd)
	tr := transport.NewStdioWithOptions(demo.Command, nil, demo.Args, transport.WithCommandFunc(
		func(ctx context.Context, command string, env []string, args []string) (*exec.Cmd, error) {
			cmd := exec.CommandContext(ctx, command, args...)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), env...)
			return cmd, nil
		}))
	c := client.NewClient(tr)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // go run compiles first
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{}); err != nil {
		t.Fatalf("initialize the server started from examples/mcp.json: %v", err)
	}
	tools, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil || len(tools.Tools) != 8 {
		t.Fatalf("tools/list: %v, %v", tools, err)
	}
}
