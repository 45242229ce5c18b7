package mcpserver_test

import (
	"context"
	"fmt"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/sandboxrt/sandbox/examples/mcpserver"
)

// Example calls the tracker in-process through mcp-go's client, the way a
// test or benchmark uses it without a subprocess.
func Example() {
	ctx := context.Background()
	c, err := client.NewInProcessClient(mcpserver.New())
	if err != nil {
		panic(err)
	}
	defer c.Close()
	if err := c.Start(ctx); err != nil {
		panic(err)
	}
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{}); err != nil {
		panic(err)
	}

	req := mcp.CallToolRequest{}
	req.Params.Name = "create_task"
	req.Params.Arguments = map[string]any{"project_id": "PRJ-3", "title": "Reopen billing"}
	res, err := c.CallTool(ctx, req)
	if err != nil {
		panic(err)
	}
	fmt.Println(res.IsError, res.Content[0].(mcp.TextContent).Text)

	req.Params.Name = "read_document"
	req.Params.Arguments = map[string]any{"path": "runbooks/"}
	res, _ = c.CallTool(ctx, req)
	fmt.Println(res.Content[0].(mcp.TextContent).Text)
	// Output:
	// true create_task: project PRJ-3 (Legacy billing migration) is archived and takes no new tasks; pick an active project (list_projects)
	// runbooks/deploy.md
}
