package gateway

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"
)

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
