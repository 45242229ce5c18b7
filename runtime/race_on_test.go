//go:build race

package runtime

// raceEnabled: ThreadSanitizer maps shadow memory in large blocks, which a
// worker's address-space cap refuses; tests of the memory limit cannot run
// under the race detector.
const raceEnabled = true
