package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sandboxrt/sandbox/gateway/internal/testserver"
)

// The token bucket's own contract is checked by state/statetest
// (TestMemoryRateLimiter); these tests are about how the pipeline uses it.

// failingRates is a RateLimiter whose store is down; it records the keys
// it was asked for.
type failingRates struct {
	mu   sync.Mutex
	keys []string
}

func (f *failingRates) Reserve(_ context.Context, key string, _ RateLimit, _ time.Duration) (time.Duration, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.keys = append(f.keys, key)
	return 0, false, errors.New("connection refused")
}

func TestRateLimiterStoreErrors(t *testing.T) {
	t.Parallel()
	rates := &failingRates{}
	g, _ := startGateway(t, `{"mcpServers": {}}`, WithRateLimiter(rates),
		WithInProcessServer("limited", testserver.New(), &ServerConfig{RateLimit: &RateLimit{PerSecond: 1}, CheckPaths: true}),
		WithInProcessServer("free", testserver.New(), nil))
	ctx := context.Background()
	_, err := g.Call(ctx, CallRequest{Tool: "limited:echo", Arguments: json.RawMessage(`{"text":"x"}`)})
	if e := wantCode(t, err, CodeInternal); !strings.Contains(e.Message, "rate limiter") || !strings.Contains(e.Message, "connection refused") {
		t.Fatalf("message = %s", e.Message)
	}
	// A server without a rate limit never asks the store.
	if _, err := g.Call(ctx, CallRequest{Tool: "free:echo", Arguments: json.RawMessage(`{"text":"x"}`)}); err != nil {
		t.Fatal(err)
	}
	rates.mu.Lock()
	defer rates.mu.Unlock()
	if len(rates.keys) != 1 || rates.keys[0] != "limited" {
		t.Fatalf("buckets asked for: %q, want the server's name once", rates.keys)
	}
}
