// Package testwait lets tests wait for a state instead of sleeping for a
// time they hope is enough.
package testwait

import (
	"testing"
	"time"
)

// Until polls cond until it holds, and fails the test naming what it waited
// for when timeout passes first. It returns as soon as the state is reached;
// a loaded machine only makes it poll longer, so timeout can be generous.
// Polls start 1 ms apart and back off to 50 ms.
func Until(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for pause := time.Millisecond; !cond(); pause = min(2*pause, 50*time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s", timeout, what)
		}
		time.Sleep(pause)
	}
}
