package gateway

import (
	"testing"
	"time"
)

// ParseConfig parses mcp.json text for this package's tests, which write
// their upstreams as users do. The parser is package config, which imports
// this one, so these internal tests cannot import it: parse_test.go, an
// external test file of the same test binary, sets it.
var ParseConfig func(name string, data []byte) (*Config, error)

// TestSettingsFallBackFromToolToServerToGateway: a tool's timeout, a
// server's wait and path roots fall back to the server's, then the
// gateway-wide option, then the default.
func TestSettingsFallBackFromToolToServerToGateway(t *testing.T) {
	t.Parallel()
	zero := time.Duration(0)
	opts := DefaultSettings()
	opts.MaxWait, opts.PathRoots = 250*time.Millisecond, []string{"/srv"}
	c := &Config{Settings: opts}
	plain := &ServerConfig{}
	tuned := &ServerConfig{Timeout: 10 * time.Second, ToolTimeouts: map[string]time.Duration{"search_code": time.Minute},
		MaxWait: &zero, PathRoots: []string{}}

	for _, tc := range []struct {
		sc   *ServerConfig
		tool string
		want time.Duration
	}{{plain, "read_file", DefaultTimeout}, {tuned, "search_code", time.Minute}, {tuned, "other", 10 * time.Second}} {
		if got := c.timeoutFor(tc.sc, tc.tool); got != tc.want {
			t.Errorf("timeoutFor(%+v, %s) = %v, want %v", tc.sc, tc.tool, got, tc.want)
		}
	}
	if got := (&Config{}).timeoutFor(plain, "x"); got != DefaultTimeout {
		t.Errorf("timeout without options = %v", got)
	}
	if got := c.maxWaitFor(plain); got != 250*time.Millisecond {
		t.Errorf("gateway maxWait = %v", got)
	}
	if got := c.maxWaitFor(tuned); got != 0 {
		t.Errorf("a server's explicit zero maxWait = %v", got)
	}
	if roots := c.rootsFor(plain); len(roots) != 1 {
		t.Errorf("gateway pathRoots = %v", roots)
	}
	if roots := c.rootsFor(tuned); roots == nil || len(roots) != 0 {
		t.Errorf("a server's explicit empty pathRoots must override the gateway's: %v", roots)
	}
}
