package gateway_test

import (
	"github.com/sandboxrt/sandbox/config"
	"github.com/sandboxrt/sandbox/gateway"
)

// The internal tests write configs as mcp.json text; see gateway.ParseConfig
// in config_test.go.
func init() {
	gateway.ParseConfig = func(name string, data []byte) (*gateway.Config, error) {
		f, err := config.Parse(name, data)
		if err != nil {
			return nil, err
		}
		return f.Gateway, nil
	}
}
