package growstack

import (
	"testing"
	"unsafe"
)

// deep recurses about n KiB of frames.
//
//go:noinline
func deep(n int) int {
	var pad [1 << 10]byte
	pad[n%len(pad)] = byte(n)
	if n <= 0 {
		return int(pad[0])
	}
	return deep(n-1) + int(pad[1])
}

// moved reports whether a new goroutine's stack was copied (grown) while
// it went kib KiB deep, after grow: a copy moves its locals, so the address
// of one differs before and after.
func moved(grow func(), kib int) bool {
	out := make(chan bool)
	go func() {
		grow()
		var x int
		before := uintptr(unsafe.Pointer(&x))
		deep(kib)
		out <- uintptr(unsafe.Pointer(&x)) != before
	}()
	return <-out
}

// TestGrowKeepsTheStack: after To16K or To32K a goroutine goes that deep,
// less a margin, without its stack being copied again; without them it
// would be (the check can see a copy: one 48 KiB deep always moves).
func TestGrowKeepsTheStack(t *testing.T) {
	if !moved(func() {}, 48) {
		t.Fatal("48 KiB deep without growing first: the stack did not move, so this test cannot see a copy")
	}
	if moved(To16K, 4) {
		t.Error("after To16K, 4 KiB deep copied the stack")
	}
	if moved(To32K, 12) {
		t.Error("after To32K, 12 KiB deep copied the stack")
	}
}
