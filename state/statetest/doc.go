// Package statetest is the conformance suite of every store interface that
// replicas can share. The in-memory default of each passes it in this
// repository's tests (memory_test.go); a shared backend (Redis) must pass the
// same functions before it is used:
//
//	func TestRedisTokenStore(t *testing.T) {
//		statetest.TestTokenStore(t, func(t *testing.T) gateway.TokenStore { return newRedisStore(t) })
//	}
//
// One file per interface:
//
//   - tokens.go: TestTokenStore (gateway.TokenStore)
//   - oauth.go: TestOAuthStore (gateway.OAuthStore, OAuth grants to upstreams)
//   - ratelimit.go: TestRateLimiter (gateway.RateLimiter)
//   - questions.go: TestQuestionLedger (gateway.QuestionLedger, approvals answered by input_required)
//   - store.go: TestStore (codemode.Store, the values of sandbox.store)
//   - scripts.go: TestScriptStore (codemode.ScriptStore, saved scripts)
//   - usage.go: TestUsageStore (codemode.UsageStore, what search learns from use)
//   - results.go: TestResultStore (codemode.ResultStore, the results of sandbox.results)
//   - runs.go: TestRunStore and TestRunLease (runs.Store, the runs that outlive their request: tasks)
//   - released.go: TestReleasedRunStore (frontend.ReleasedRunStore, runs released from their workers)
//   - console.go: TestConsoleRevocations (console.Revocations, the operator console's sign-outs)
//
// A suite whose contract depends on time (rate limits) hands the backend a
// clock it moves by hand; a backend takes it as an option for its tests
// (for Redis: the time passed to its script instead of the server's TIME).
package statetest
