package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/sandboxrt/sandbox/gateway/internal/upstream"
)

// TestBrokenRequestOfAConnectedServer: a transport failure that is neither
// a lost connection nor a JSON-RPC error, on a server that is still ready,
// is UPSTREAM_ERROR (not "unavailable, being reconnected"), and the Go
// error stays out of what the agent reads. Once the server is no longer
// ready, the same failure is UPSTREAM_UNAVAILABLE with its state.
func TestBrokenRequestOfAConnectedServer(t *testing.T) {
	g, _ := startGateway(t, `{"mcpServers": {"off": {"command": "true", "disabled": true}}}`, WithInProcessServer("t", server.NewMCPServer("t", "1"), nil))
	cause := errors.New("failed to write request: write |1: broken pipe")
	e := g.forwardError(context.Background(), g.upstreams["t"], "t:x", cause, time.Second)
	if e.Code != CodeUpstreamError || !errors.Is(e, cause) || strings.Contains(e.Message, "pipe") ||
		!strings.Contains(e.Message, `server "t", which is still connected`) || !strings.Contains(e.Message, "may or may not have run") {
		t.Fatalf("ready server: %s: %s (cause kept: %v)", e.Code, e.Message, errors.Is(e, cause))
	}
	if e := g.forwardError(context.Background(), g.upstreams["off"], "off:x", cause, time.Second); e.Code != CodeUpstreamUnavailable {
		t.Fatalf("a server that is not ready: %s: %s", e.Code, e.Message)
	}
}

// TestMissingCapabilityIsActionable: a 2026-07-28 server that refuses a call
// for a capability the gateway did not declare for its caller (-32021) is
// reported naming the capability and what to do, with the server's code
// and data kept for a client that can declare it.
func TestMissingCapabilityIsActionable(t *testing.T) {
	g, _ := startGateway(t, `{"mcpServers": {}}`, WithInProcessServer("t", server.NewMCPServer("t", "1"), nil))
	for data, want := range map[string]string{
		`{"capability":"elicitation"}`:                        "support elicitation, which",
		`{"requiredCapabilities":{"sampling":{},"roots":{}}}`: "support roots, sampling, which",
		``: "support a client capability, which",
	} {
		cause := &upstream.RPCError{Code: -32021, Message: "missing required client capability", Data: json.RawMessage(data)}
		e := g.forwardError(context.Background(), g.upstreams["t"], "t:x", cause, time.Second)
		if e.Code != CodeProtocolError || !strings.Contains(e.Message, want) || !strings.Contains(e.Message, "call it from an MCP client that supports") ||
			!strings.Contains(string(e.Data), "-32021") {
			t.Errorf("data %s: %s: %s (data %s)", data, e.Code, e.Message, e.Data)
		}
	}
}
