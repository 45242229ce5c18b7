// Package growstack grows a new goroutine's stack at once to the size its
// work will need, while almost nothing is on it to copy.
//
// A goroutine starts with a small stack that doubles whenever a call goes
// past its end, copying every frame on it each time. A goroutine started
// for one request that goes deep (a tool call through the gateway's steps
// to the upstream; an MCP request through mcp-go's handler into code mode)
// paid for two or three such copies of deep stacks: 16 µs a tool call and
// 28-40 µs an execute_code request (RATIONALE.md). Calling one of these
// first thing makes that one copy of an empty stack.
package growstack

// To16K leaves the calling goroutine with a stack of at least 16 KiB, the
// largest size Go hands out from its per-thread caches.
//
//go:noinline
func To16K() { grow16K(0) }

// To32K leaves the calling goroutine with a stack of at least 32 KiB.
//
//go:noinline
func To32K() { grow32K(0) }

// The frames are a little under the sizes, so that with the caller's frames
// the stack ends at the size and not at the next one. The index comes from
// the caller so that the compiler cannot drop the array.

//go:noinline
func grow16K(i int) byte {
	var pad [12 << 10]byte
	pad[i] = 1
	return pad[len(pad)-1-i]
}

//go:noinline
func grow32K(i int) byte {
	var pad [24 << 10]byte
	pad[i] = 1
	return pad[len(pad)-1-i]
}
