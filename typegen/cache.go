package typegen

import (
	"encoding/binary"
	"hash/maphash"
	"sync"
)

// Cache remembers the declarations of single tools, keyed by the tool's id
// and a 64-bit hash of everything its declarations depend on: the assigned
// names, its name, title, description, annotations and raw schemas, and the
// options that shape the text. A tool whose definition changes gets a new
// key; stale entries age out.
//
// The hash is seeded per process (hash/maphash), so a server cannot craft a
// new definition that collides with its old entry, and ids keep tools apart.
//
// A Cache is safe for concurrent use. Share one per catalog.
type Cache struct {
	seed maphash.Seed
	max  int

	mu       sync.Mutex
	current  map[cacheKey]fragment
	previous map[cacheKey]fragment
	hits     uint64
	misses   uint64
}

type cacheKey struct {
	id   string
	hash uint64
}

// NewCache returns a cache of about maxEntries tools (0 means 4096). When the
// newest maxEntries/2 entries fill up, the older generation is dropped: an
// entry used since then survives, so this behaves like a cheap LRU.
func NewCache(maxEntries int) *Cache {
	if maxEntries <= 0 {
		maxEntries = 4096
	}
	return &Cache{
		seed:    maphash.MakeSeed(),
		max:     maxEntries,
		current: map[cacheKey]fragment{},
	}
}

// Stats returns how many lookups found an entry and how many did not.
func (c *Cache) Stats() (hits, misses uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hits, c.misses
}

func (c *Cache) key(t *Tool, b Binding, maxDoc int) cacheKey {
	var h maphash.Hash
	h.SetSeed(c.seed)
	// Every field is length-prefixed so that no two inputs share a stream.
	var n [8]byte
	length := func(l int) {
		binary.LittleEndian.PutUint64(n[:], uint64(l))
		h.Write(n[:])
	}
	for _, s := range []string{b.Namespace, b.Function, t.Server, t.Name, t.Title, t.Description} {
		length(len(s))
		h.WriteString(s)
	}
	length(t.InferredFrom)
	length(len(t.Notes))
	for _, n := range t.Notes {
		length(len(n))
		h.WriteString(n)
	}
	for _, raw := range [][]byte{t.InputSchema, t.OutputSchema, t.InferredOutput} {
		length(len(raw))
		h.Write(raw)
	}
	if a := t.Annotations; a != nil {
		length(len(a.Title))
		h.WriteString(a.Title)
		for _, p := range []*bool{a.ReadOnlyHint, a.DestructiveHint, a.IdempotentHint, a.OpenWorldHint} {
			switch {
			case p == nil:
				h.WriteByte('-')
			case *p:
				h.WriteByte('1')
			default:
				h.WriteByte('0')
			}
		}
	} else {
		h.WriteByte('n')
	}
	length(maxDoc)
	return cacheKey{id: b.ID, hash: h.Sum64()}
}

func (c *Cache) get(k cacheKey) (fragment, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if f, ok := c.current[k]; ok {
		c.hits++
		return f, true
	}
	if f, ok := c.previous[k]; ok {
		c.hits++
		c.insert(k, f) // promote
		return f, true
	}
	c.misses++
	return fragment{}, false
}

func (c *Cache) put(k cacheKey, f fragment) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.insert(k, f)
}

func (c *Cache) insert(k cacheKey, f fragment) {
	if len(c.current) >= (c.max+1)/2 {
		c.previous = c.current
		c.current = make(map[cacheKey]fragment, len(c.previous))
	}
	c.current[k] = f
}
