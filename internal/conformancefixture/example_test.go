package conformancefixture_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/sandboxrt/sandbox/internal/conformancefixture"
)

// Example serves the fixture over streamable HTTP, as the conformance suite
// reaches it, and calls one scenario tool with mcp-go's client.
func Example() {
	mux := http.NewServeMux()
	mux.Handle("/mcp", conformancefixture.NewHTTPHandler(conformancefixture.New()))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	ctx := context.Background()
	c, err := client.NewStreamableHttpClient(srv.URL + "/mcp")
	if err != nil {
		panic(err)
	}
	defer c.Close()
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{}); err != nil {
		panic(err)
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = conformancefixture.ToolSimpleText
	res, err := c.CallTool(ctx, req)
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Content[0].(mcp.TextContent).Text)
	// Output: This is a simple text response for testing.
}
