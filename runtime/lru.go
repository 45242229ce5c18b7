package runtime

import (
	"container/list"
	"sync"
)

// lru is a small, mutex-guarded least-recently-used cache bounded both by
// entry count and by a total cost (bytes, roughly): caches keyed by agent
// code must not let large snippets hold memory that later runs are charged for.
type lru[K comparable, V any] struct {
	mu       sync.Mutex
	max      int
	maxCost  int
	cost     int
	order    *list.List // front = most recent; elements hold *lruEntry
	items    map[K]*list.Element
	maxEntry int // entries costing more are not kept
}

type lruEntry[K comparable, V any] struct {
	key  K
	val  V
	cost int
}

// newLRU makes a cache of at most max entries and maxCost total cost; a
// single entry may take at most an eighth of maxCost.
func newLRU[K comparable, V any](max, maxCost int) *lru[K, V] {
	return &lru[K, V]{max: max, maxCost: maxCost, maxEntry: maxCost / 8, order: list.New(), items: map[K]*list.Element{}}
}

func (c *lru[K, V]) get(k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[k]; ok {
		c.order.MoveToFront(el)
		return el.Value.(*lruEntry[K, V]).val, true
	}
	var zero V
	return zero, false
}

func (c *lru[K, V]) put(k K, v V, cost int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cost > c.maxEntry {
		return
	}
	if el, ok := c.items[k]; ok {
		e := el.Value.(*lruEntry[K, V])
		c.cost += cost - e.cost
		e.val, e.cost = v, cost
		c.order.MoveToFront(el)
	} else {
		c.items[k] = c.order.PushFront(&lruEntry[K, V]{key: k, val: v, cost: cost})
		c.cost += cost
	}
	for c.order.Len() > c.max || c.cost > c.maxCost {
		last := c.order.Back()
		e := last.Value.(*lruEntry[K, V])
		c.order.Remove(last)
		delete(c.items, e.key)
		c.cost -= e.cost
	}
}
