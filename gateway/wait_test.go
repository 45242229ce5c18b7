package gateway

import (
	"context"
	"encoding/json"
	"sync"
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

// running asks the test server (tool "running") how many calls of tool are
// under way on server.
func running(t testing.TB, g *Gateway, server, tool string) string {
	t.Helper()
	args, _ := json.Marshal(map[string]string{"tool": tool})
	res, err := g.Call(context.Background(), CallRequest{Tool: server + ":running", Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	return callText(t, res)
}

// manualClock is a clock for a MemoryRateLimiter that moves only when told.
type manualClock struct {
	mu  sync.Mutex
	now time.Time
}

func newManualClock() *manualClock {
	return &manualClock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
}

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *manualClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// inFlight is how many calls hold a slot of server name.
func inFlight(g *Gateway, name string) int {
	for _, st := range g.Servers() {
		if st.Name == name {
			return st.InFlight
		}
	}
	return -1
}
