package vectorindex

import (
	"sync"
	"sync/atomic"
)

// memo is a concurrent memo table that stops growing at a fixed size.
// Intents come from agents and can be any text: a long-running server must
// not remember every distinct word it was ever sent. Past the cap, values
// are computed each time (they are pure functions of the key).
type memo[V any] struct {
	m   sync.Map
	n   atomic.Int64
	cap int64
}

// memoCap bounds each memo table; the corpus' whole vocabulary with its
// WordNet neighbourhood is a few tens of thousands of words.
const memoCap = 200_000

func (c *memo[V]) get(k string) (V, bool) {
	v, ok := c.m.Load(k)
	if !ok {
		var zero V
		return zero, false
	}
	return v.(V), true
}

func (c *memo[V]) put(k string, v V) {
	if len(k) > maxCachedWordLen || c.n.Load() >= memoCapOr(c.cap) {
		return
	}
	if _, loaded := c.m.LoadOrStore(k, v); !loaded {
		c.n.Add(1)
	}
}

func memoCapOr(c int64) int64 {
	if c > 0 {
		return c
	}
	return memoCap
}
