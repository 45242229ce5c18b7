// Package lru is the runtime's bounded cache: transpiled snippets, compiled
// programs and rewritten regular expressions are kept by it, bounded both by
// entries and by bytes.
package lru

import (
	"container/list"
	"sync"
)

// Cache is a small, mutex-guarded least-recently-used cache bounded both by
// entry count and by a total cost (bytes, roughly): caches keyed by agent
// code must not let large snippets hold memory that later runs are charged for.
type Cache[K comparable, V any] struct {
	mu       sync.Mutex
	max      int
	maxCost  int
	cost     int
	order    *list.List // front = most recent; elements hold *entry
	items    map[K]*list.Element
	maxEntry int // entries costing more are not kept
}

type entry[K comparable, V any] struct {
	key  K
	val  V
	cost int
}

// New makes a cache of at most max entries and maxCost total cost; a
// single entry may take at most an eighth of maxCost.
func New[K comparable, V any](max, maxCost int) *Cache[K, V] {
	return &Cache[K, V]{max: max, maxCost: maxCost, maxEntry: maxCost / 8, order: list.New(), items: map[K]*list.Element{}}
}

// Get is the value kept for k, if any.
func (c *Cache[K, V]) Get(k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[k]; ok {
		c.order.MoveToFront(el)
		return el.Value.(*entry[K, V]).val, true
	}
	var zero V
	return zero, false
}

// Put keeps v for k at a cost, unless the cost is over an eighth of the
// whole; older entries go to make room.
func (c *Cache[K, V]) Put(k K, v V, cost int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cost > c.maxEntry {
		return
	}
	if el, ok := c.items[k]; ok {
		e := el.Value.(*entry[K, V])
		c.cost += cost - e.cost
		e.val, e.cost = v, cost
		c.order.MoveToFront(el)
	} else {
		c.items[k] = c.order.PushFront(&entry[K, V]{key: k, val: v, cost: cost})
		c.cost += cost
	}
	for c.order.Len() > c.max || c.cost > c.maxCost {
		last := c.order.Back()
		e := last.Value.(*entry[K, V])
		c.order.Remove(last)
		delete(c.items, e.key)
		c.cost -= e.cost
	}
}

// Size is how many entries the cache holds and their total cost.
func (c *Cache[K, V]) Size() (entries, cost int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len(), c.cost
}
