package config_test

import (
	"errors"
	"fmt"

	"github.com/sandboxrt/sandbox/config"
)

// Parse an mcp.json and hand each block to the package it configures; a
// mistake is an *Error at its line and column.
func Example() {
	file, err := config.Parse("mcp.json", []byte(`{
  "mcpServers": {
    "tracker": {"command": "example-mcpserver", "timeout": "10s"},
    "github":  {"url": "https://api.example.com/mcp", "rateLimit": {"perSecond": 5}}
  },
  "gateway": {"toolNames": "passthrough"},
  "codeMode": {"k": 8, "workers": 2, "limits": {"timeout": "20s"}}
}`))
	if err != nil {
		panic(err)
	}
	for _, name := range file.Gateway.ServerNames() {
		fmt.Println(name, file.Gateway.Servers[name].Transport)
	}
	fmt.Println("tool names:", file.Gateway.Settings.ToolNames)
	cm := file.CodeMode
	fmt.Println("k:", cm.Engine.K, "workers:", cm.Runtime.Workers, "snippet timeout:", cm.Engine.Limits.Timeout)
	// Then: g, err := gateway.New(file.Gateway, gateway.WithLogger(log))
	//       rt, err := runtime.New(cm.Runtime)
	//       engine, err := codemode.New(g, rt, cm.Engine)

	_, err = config.Parse("mcp.json", []byte(`{
  "mcpServers": {
    "tracker": {"command": "example-mcpserver", "timeout": "10"}
  }
}`))
	var ce *config.Error
	if errors.As(err, &ce) {
		fmt.Println(ce)
	}
	// Output:
	// github streamable-http
	// tracker stdio
	// tool names: passthrough
	// k: 8 workers: 2 snippet timeout: 20s
	// mcp.json:3:60: "timeout": "10" is not a duration; write it like "500ms", "30s" or "2m"
}
