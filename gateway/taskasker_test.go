package gateway

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/gateway/internal/testserver"
)

// TestUpstreamAsksATaskOverEveryTransport: an upstream that asks its
// client while it serves a task's call (here sampling, through mcp-go's
// 2025 bridge, which sends sampling/createMessage back on the connection)
// asks the task's InputAsker over stdio and in-process too, where the
// upstream's request does not carry the call's context: the one call in
// flight on the server is the task's.
func TestUpstreamAsksATaskOverEveryTransport(t *testing.T) {
	t.Parallel()
	stdio, _ := startGateway(t, `{"mcpServers": {"t": `+testServerConfig(t, "stdio", `"protocolVersion": "2025-11-25"`)+`}, "gateway": {"healthInterval": "0s"}}`)
	inproc, err := New(&Config{Servers: map[string]*ServerConfig{}, Settings: DefaultSettings()}, WithInProcessServer("t", testserver.New(), &ServerConfig{ProtocolVersion: "2025-11-25"}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inproc.Close() })
	if err := inproc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	task := auth.Caller{Principal: auth.Anonymous()} // a 2026-07-28 task's call: no session
	for name, g := range map[string]*Gateway{"stdio": stdio, "in-process": inproc} {
		t.Run(name, func(t *testing.T) {
			var mu sync.Mutex
			var asked []string
			ctx := WithInputAsker(context.Background(), func(_ context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
				mu.Lock()
				asked = append(asked, method+" "+string(params))
				mu.Unlock()
				return json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"from the task's client"},"model":"m"}`), nil
			})
			res, err := g.Call(ctx, CallRequest{Tool: "t:ask_llm", Caller: task, Arguments: json.RawMessage(`{"prompt":"meaning of life?"}`)})
			if err != nil {
				t.Fatal(err)
			}
			if got := callText(t, res); got != "LLM said: from the task's client" {
				t.Fatalf("got %q", got)
			}
			if len(asked) != 1 || !strings.HasPrefix(asked[0], "sampling/createMessage") || !strings.Contains(asked[0], "meaning of life?") {
				t.Fatalf("the task was asked %v", asked)
			}
		})
	}
}
