package statetest_test

import (
	"testing"
	"time"

	"github.com/sandboxrt/sandbox/gateway"
	"github.com/sandboxrt/sandbox/state/statetest"
)

func TestMemoryTokenStore(t *testing.T) {
	statetest.TestTokenStore(t, func(*testing.T) gateway.TokenStore { return gateway.NewMemoryTokenStore() })
}

func TestMemoryRateLimiter(t *testing.T) {
	statetest.TestRateLimiter(t, func(_ *testing.T, now func() time.Time) gateway.RateLimiter {
		return gateway.NewMemoryRateLimiter(now)
	})
}
