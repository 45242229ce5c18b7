package frontend_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/sandboxrt/sandbox/gateway"
	"github.com/sandboxrt/sandbox/gateway/frontend"
	"github.com/sandboxrt/sandbox/gateway/toolspec"
)

// The gateway served as one MCP server, as `sandbox serve` does: an MCP client
// sees the upstream's tools under their wire names ("server__tool"), the hub
// tools and any built-in tool, and calls them all through the gateway.
func Example() {
	ctx := context.Background()
	weather := server.NewMCPServer("weather", "1.0.0")
	weather.AddTool(mcp.NewToolWithRawSchema("get_forecast", "Forecast for a city.",
		json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)),
		func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("Sunny in " + r.GetString("city", "?")), nil
		})
	g, err := gateway.New(nil, gateway.WithInProcessServer("weather", weather, nil))
	if err != nil {
		panic(err)
	}
	defer g.Close()
	if err := g.Start(ctx); err != nil {
		panic(err)
	}

	front := frontend.New(g)
	defer front.Close()
	// A built-in tool beside the upstream ones (sandbox serve adds code
	// mode's search_tools and execute_code this way).
	err = front.AddTool(toolspec.Spec{Name: "whoami", Description: "Say whether the caller has a session.", InputSchema: json.RawMessage(`{"type":"object"}`),
		Handler: func(ctx context.Context, req toolspec.Request) (*gateway.CallResult, error) {
			text, _ := json.Marshal(map[string]string{"type": "text", "text": fmt.Sprint("in a session: ", req.Caller.HasSession())})
			return &gateway.CallResult{Content: []json.RawMessage{text}}, nil
		}})
	if err != nil {
		panic(err)
	}

	// Streamable HTTP at /mcp; `sandbox serve --http` listens on a real port,
	// and front.ServeStdio serves one client on stdin/stdout instead.
	mux := http.NewServeMux()
	mux.Handle("/mcp", front.HTTPHandler(frontend.HTTPOptions{}))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	c, err := client.NewStreamableHttpClient(srv.URL + "/mcp")
	if err != nil {
		panic(err)
	}
	defer c.Close()
	if err := c.Start(ctx); err != nil {
		panic(err)
	}
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{
		ProtocolVersion: mcp.ProtocolVersion20251125,
		ClientInfo:      mcp.Implementation{Name: "example", Version: "1"},
	}}); err != nil {
		panic(err)
	}
	list, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		panic(err)
	}
	for _, t := range list.Tools {
		fmt.Println(t.Name)
	}
	for _, call := range []mcp.CallToolParams{
		{Name: "weather__get_forecast", Arguments: map[string]any{"city": "Lisbon"}},
		{Name: "weather__get_forecast", Arguments: map[string]any{}},
		{Name: "whoami"},
	} {
		res, err := c.CallTool(ctx, mcp.CallToolRequest{Params: call})
		if err != nil {
			panic(err)
		}
		// A gateway error is a tool result the model can read: isError and
		// "CODE: message".
		firstLine, _, _ := strings.Cut(res.Content[0].(mcp.TextContent).Text, "\n")
		fmt.Printf("%s isError=%v: %s\n", call.Name, res.IsError, firstLine)
	}
	// Output:
	// gateway__connect_servers
	// gateway__disconnect_servers
	// gateway__list_servers
	// weather__get_forecast
	// whoami
	// weather__get_forecast isError=false: Sunny in Lisbon
	// weather__get_forecast isError=true: VALIDATION_FAILED: The arguments for weather:get_forecast do not match its input schema; the call was not sent. Fix the fields below and call it again.
	// whoami isError=false: in a session: true
}
