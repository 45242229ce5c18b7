package runtime

import "testing"

// TestAPauseBeforeTheListenerIsNotLost: a call can be asked about (the
// clock paused) before the run's awaiter listens; the listener set then
// hears at once that the clock stands, and hears it run again.
func TestAPauseBeforeTheListenerIsNotLost(t *testing.T) {
	var c runClock
	resume := c.pause()
	var heard []bool
	c.setNotify(func(stopped bool) { heard = append(heard, stopped) })
	resume()
	if len(heard) != 2 || !heard[0] || heard[1] {
		t.Fatalf("the listener heard %v, want [true false]", heard)
	}
	// A listener set while the clock runs hears nothing until it stops.
	var later []bool
	c.setNotify(func(stopped bool) { later = append(later, stopped) })
	if len(later) != 0 {
		t.Fatalf("a running clock told its new listener %v", later)
	}
}
