package statetest_test

import (
	"testing"

	"github.com/sandboxrt/sandbox/gateway"
	"github.com/sandboxrt/sandbox/state/statetest"
)

func TestMemoryTokenStore(t *testing.T) {
	statetest.TestTokenStore(t, func(*testing.T) gateway.TokenStore { return gateway.NewMemoryTokenStore() })
}
