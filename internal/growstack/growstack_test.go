package growstack

import (
	"runtime"
	"testing"
)

// stackInUse is the bytes of stack the runtime holds for goroutines.
func stackInUse() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.StackInuse
}

// TestGrowKeepsTheStack: a goroutine that called To16K or To32K holds a
// stack of that size while it runs (the runtime's stacks in use grow by it,
// less the stack the goroutine started with).
func TestGrowKeepsTheStack(t *testing.T) {
	for _, c := range []struct {
		name string
		grow func()
		min  uint64
	}{{"16K", To16K, 16 << 10}, {"32K", To32K, 32 << 10}} {
		before := stackInUse()
		held := make(chan uint64)
		release := make(chan struct{})
		go func() {
			c.grow()
			held <- stackInUse()
			<-release
		}()
		during := <-held
		close(release)
		if during < before+c.min-8<<10 { // the goroutine's own stack, less what it started with
			t.Errorf("%s: stacks in use %d -> %d, want at least %d more", c.name, before, during, c.min-8<<10)
		}
	}
}
