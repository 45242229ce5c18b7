package mcpserver_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// TestStdioBinary builds the command and talks to it over stdio, as the
// gateway does with examples/mcp.json.
func TestStdioBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts the example server binary; skipped with -short")
	}
	bin := filepath.Join(t.TempDir(), "example-mcpserver")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/example-mcpserver").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	c, err := client.NewStdioMCPClient(bin, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{}); err != nil {
		t.Fatal(err)
	}
	tools, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil || len(tools.Tools) != 8 {
		t.Fatalf("tools/list over stdio: %d tools, %v", len(tools.Tools), err)
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = "get_project"
	req.Params.Arguments = map[string]any{"project_id": "PRJ-2"}
	res, err := c.CallTool(ctx, req)
	if err != nil || res.IsError || res.StructuredContent == nil {
		t.Fatalf("get_project over stdio: %+v, %v", res, err)
	}
}
