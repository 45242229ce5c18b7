package frontend

import (
	"testing"
	"time"
)

// waitFor polls cond until it holds, failing the test with what it waited
// for after timeout. Tests wait for a state this way instead of sleeping:
// it returns as soon as the state is reached, and a loaded machine only
// makes it poll longer.
func waitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for pause := time.Millisecond; !cond(); pause = min(2*pause, 50*time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s", timeout, what)
		}
		time.Sleep(pause)
	}
}
