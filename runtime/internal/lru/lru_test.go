package lru

import "testing"

func TestCacheEvictsByCountAndCost(t *testing.T) {
	c := New[int, string](3, 800)
	for i := 0; i < 5; i++ {
		c.Put(i, "v", 10)
	}
	if n, cost := c.Size(); n != 3 || cost != 30 {
		t.Fatalf("after 5 puts into 3 slots: %d entries costing %d", n, cost)
	}
	if _, ok := c.Get(1); ok {
		t.Error("the oldest entries must go first")
	}
	c.Get(2) // 2 is now the most recent: 3 goes next
	c.Put(5, "v", 90)
	c.Put(6, "v", 90)
	if _, ok := c.Get(3); ok {
		t.Error("entry 3 was least recently used and must be gone")
	}
	if _, ok := c.Get(2); !ok {
		t.Error("entry 2 was read and must be kept")
	}
	c.Put(7, "huge", 101) // over an eighth of 800
	if _, ok := c.Get(7); ok {
		t.Error("an entry over an eighth of the cost bound must not be kept")
	}
	c2 := New[int, string](100, 800)
	for i := 0; i < 20; i++ {
		c2.Put(i, "v", 100)
	}
	if n, cost := c2.Size(); cost > 800 || n != 8 {
		t.Errorf("cost bound 800 with entries of 100: %d entries costing %d", n, cost)
	}
}
