// Package statetest is the conformance suite of every store interface that
// replicas can share (gateway.TokenStore, ...). The in-memory default of each
// passes it in this repository's tests; a shared backend (Redis) must pass
// the same functions before it is used:
//
//	func TestRedisTokenStore(t *testing.T) {
//		statetest.TestTokenStore(t, func(t *testing.T) gateway.TokenStore { return newRedisStore(t) })
//	}
package statetest
