package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/sandboxrt/sandbox/gateway"
)

// A gateway in front of one (in-process) MCP server: list the catalog, make
// a call, and see how a bad call fails.
func Example() {
	weather := server.NewMCPServer("weather", "1.0.0")
	weather.AddTool(mcp.NewToolWithRawSchema("get_forecast", "Forecast for a city.",
		json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)),
		func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("Sunny in " + r.GetString("city", "?")), nil
		})

	// With a config file: file, err := config.Load("mcp.json"); gateway.New(file.Gateway).
	g, err := gateway.New(nil, gateway.WithInProcessServer("weather", weather, nil))
	if err != nil {
		panic(err)
	}
	defer g.Close()
	if err := g.Start(context.Background()); err != nil {
		panic(err)
	}

	for _, t := range g.Tools() {
		fmt.Println(t.ID, "on the wire as", t.WireName)
	}

	res, err := g.Call(context.Background(), gateway.CallRequest{
		Tool:      "weather:get_forecast",
		Arguments: json.RawMessage(`{"city":"Lisbon"}`),
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(string(res.Content[0]))

	_, err = g.Call(context.Background(), gateway.CallRequest{Tool: "weather:get_forecast", Arguments: json.RawMessage(`{}`)})
	var ge *gateway.Error
	if errors.As(err, &ge) {
		fmt.Println(ge.Code)
		fmt.Println(ge.Message)
	}
	// Output:
	// weather:get_forecast on the wire as weather__get_forecast
	// {"type":"text","text":"Sunny in Lisbon"}
	// VALIDATION_FAILED
	// The arguments for weather:get_forecast do not match its input schema; the call was not sent. Fix the fields below and call it again.
	// Tool: Forecast for a city.
	// Errors:
	//   - /city: required field is missing
	// Required: city (string)
	// Valid example: weather:get_forecast {"city":"city"}
}
