package codemode

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Store keeps the values of sandbox.store: JSON values by key, in scopes
// (a principal's own values, or one session's), between runs and across
// restarts. The in-memory default (NewMemoryStore) can keep a file; a
// store replicas share (Redis) implements the same interface and passes
// state/statetest.TestStore. Every method takes ctx and may fail.
//
// Limits are the store's to enforce, atomically with the write: a Set
// over StoreLimits fails with a *StoreLimitError and changes nothing.
type Store interface {
	// Get returns a key's value; false when there is none or it expired.
	Get(ctx context.Context, scope StoreScope, key string) (json.RawMessage, bool, error)
	// Set stores a value (valid JSON) for ttl (0: until deleted).
	Set(ctx context.Context, scope StoreScope, key string, value json.RawMessage, ttl time.Duration) error
	// Delete removes a key; false when there was none.
	Delete(ctx context.Context, scope StoreScope, key string) (bool, error)
	// Keys lists a scope's live keys that start with prefix, sorted, at
	// most StoreLimits.KeysListed of them.
	Keys(ctx context.Context, scope StoreScope, prefix string) ([]string, error)
}

// StoreScope names whose values a call sees: a principal's own (Session
// empty), or one of its sessions'. Principal is auth.Principal.Key().
type StoreScope struct {
	Principal string `json:"principal"`
	Session   string `json:"session,omitempty"`
}

// StoreLimits bound what one principal keeps (its own values and all its
// sessions' together).
type StoreLimits struct {
	ValueBytes int // one value's JSON (default 1 MiB)
	Keys       int // keys per principal (default 10,000)
	TotalBytes int // keys and values per principal (default 16 MiB)
	KeysListed int // keys one Keys call returns (default 1,000)
}

// WithDefaults fills zero fields with the defaults.
func (l StoreLimits) WithDefaults() StoreLimits {
	if l.ValueBytes <= 0 {
		l.ValueBytes = 1 << 20
	}
	if l.Keys <= 0 {
		l.Keys = 10000
	}
	if l.TotalBytes <= 0 {
		l.TotalBytes = 16 << 20
	}
	if l.KeysListed <= 0 {
		l.KeysListed = 1000
	}
	return l
}

// StoreLimitError is a Set refused by a limit; the message says which and
// what to do.
type StoreLimitError struct {
	Limit   string // "value", "keys" or "total"
	Message string
}

func (e *StoreLimitError) Error() string { return e.Message }

// MaxStoreKeyBytes bounds a key; keys are UTF-8 text.
const MaxStoreKeyBytes = 512

// ValidStoreKey explains what is wrong with a key, or returns "".
func ValidStoreKey(key string) string {
	switch {
	case key == "":
		return "the key is empty"
	case len(key) > MaxStoreKeyBytes:
		return fmt.Sprintf("the key is %d bytes; keys are at most %d", len(key), MaxStoreKeyBytes)
	case !utf8.ValidString(key):
		return "the key is not valid UTF-8 text"
	}
	return ""
}

// SessionValueTTL is how long a session's values live when set without a
// ttl: sessions end without notice, and their values must not pile up.
const SessionValueTTL = 24 * time.Hour

// MemoryStore is the default Store: in memory, and in a file when given
// a path (written by Save, which the engine calls every few seconds while
// values change and when it closes).
type MemoryStore struct {
	mu     sync.Mutex
	limits StoreLimits
	now    func() time.Time
	path   string
	dirty  bool
	// principals -> their scopes -> keys
	data map[string]*principalValues
}

type principalValues struct {
	Scopes map[string]map[string]*storedValue `json:"scopes"` // session ("" for the principal's own) -> key -> value
	Bytes  int                                `json:"bytes"`
	Keys   int                                `json:"keys"`
}

type storedValue struct {
	Value   json.RawMessage `json:"v"`
	Expires int64           `json:"e,omitempty"` // unix ms; 0: never
}

// NewMemoryStore makes a store with limits (zero fields: defaults) and a
// clock (nil: time.Now). With a path, it loads what the file holds.
func NewMemoryStore(path string, limits StoreLimits, now func() time.Time) (*MemoryStore, error) {
	if now == nil {
		now = time.Now
	}
	s := &MemoryStore{limits: limits.WithDefaults(), now: now, path: path, data: map[string]*principalValues{}}
	if path == "" {
		return s, nil
	}
	raw, err := os.ReadFile(path)
	switch {
	case os.IsNotExist(err):
		return s, nil
	case err != nil:
		return nil, fmt.Errorf("codemode: reading the store: %w", err)
	}
	var f struct {
		Version    int                         `json:"version"`
		Principals map[string]*principalValues `json:"principals"`
	}
	if err := json.Unmarshal(raw, &f); err != nil || f.Version != 1 {
		return nil, fmt.Errorf("codemode: %s is not a sandbox.store file (move it away to start empty): %v", path, err)
	}
	if f.Principals != nil {
		s.data = f.Principals
	}
	return s, nil
}

func (s *MemoryStore) live(v *storedValue) bool {
	return v != nil && (v.Expires == 0 || v.Expires > s.now().UnixMilli())
}

// Get implements Store.
func (s *MemoryStore) Get(_ context.Context, scope StoreScope, key string) (json.RawMessage, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.data[scope.Principal]
	if p == nil {
		return nil, false, nil
	}
	v := p.Scopes[scope.Session][key]
	if !s.live(v) {
		return nil, false, nil
	}
	return v.Value, true, nil
}

// Set implements Store.
func (s *MemoryStore) Set(_ context.Context, scope StoreScope, key string, value json.RawMessage, ttl time.Duration) error {
	if len(value) > s.limits.ValueBytes {
		return &StoreLimitError{Limit: "value", Message: fmt.Sprintf("the value is %d bytes of JSON; a value is at most %d: store less, or split it over several keys", len(value), s.limits.ValueBytes)}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.data[scope.Principal]
	if p == nil {
		p = &principalValues{Scopes: map[string]map[string]*storedValue{}}
		s.data[scope.Principal] = p
	}
	after := func() (bytes, keys int) {
		bytes, keys = p.Bytes+len(key)+len(value), p.Keys+1
		if old := p.Scopes[scope.Session][key]; old != nil {
			bytes -= len(key) + len(old.Value)
			keys--
		}
		return bytes, keys
	}
	bytes, keys := after()
	if keys > s.limits.Keys || bytes > s.limits.TotalBytes {
		s.expire(p) // expired values count against nothing; drop them only when it matters
		bytes, keys = after()
	}
	values := p.Scopes[scope.Session]
	if keys > s.limits.Keys {
		return &StoreLimitError{Limit: "keys", Message: fmt.Sprintf("this principal already keeps %d keys, the most it may; delete some (sandbox.store.keys lists them) or give values a ttlSeconds", s.limits.Keys)}
	}
	if bytes > s.limits.TotalBytes {
		return &StoreLimitError{Limit: "total", Message: fmt.Sprintf("this would make %d bytes kept by this principal; the most is %d: delete some keys or store less", bytes, s.limits.TotalBytes)}
	}
	if values == nil {
		values = map[string]*storedValue{}
		p.Scopes[scope.Session] = values
	}
	v := &storedValue{Value: append(json.RawMessage(nil), value...)}
	if ttl > 0 {
		v.Expires = s.now().Add(ttl).UnixMilli()
	}
	values[key] = v
	p.Bytes, p.Keys = bytes, keys
	s.dirty = true
	return nil
}

// expire drops a principal's expired values (they count against nothing).
func (s *MemoryStore) expire(p *principalValues) {
	for session, values := range p.Scopes {
		for k, v := range values {
			if !s.live(v) {
				p.Bytes -= len(k) + len(v.Value)
				p.Keys--
				delete(values, k)
				s.dirty = true
			}
		}
		if len(values) == 0 {
			delete(p.Scopes, session)
		}
	}
}

// Delete implements Store.
func (s *MemoryStore) Delete(_ context.Context, scope StoreScope, key string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.data[scope.Principal]
	if p == nil {
		return false, nil
	}
	values := p.Scopes[scope.Session]
	v := values[key]
	if v == nil {
		return false, nil
	}
	delete(values, key)
	p.Bytes -= len(key) + len(v.Value)
	p.Keys--
	s.dirty = true
	return s.live(v), nil
}

// Keys implements Store.
func (s *MemoryStore) Keys(_ context.Context, scope StoreScope, prefix string) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := []string{}
	p := s.data[scope.Principal]
	if p == nil {
		return keys, nil
	}
	for k, v := range p.Scopes[scope.Session] {
		if strings.HasPrefix(k, prefix) && s.live(v) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	if len(keys) > s.limits.KeysListed {
		keys = keys[:s.limits.KeysListed]
	}
	return keys, nil
}

// Save writes the store to its file if anything changed (expired values
// are dropped first). A store without a path saves nothing.
func (s *MemoryStore) Save() error {
	s.mu.Lock()
	if s.path == "" || !s.dirty {
		s.mu.Unlock()
		return nil
	}
	for id, p := range s.data {
		s.expire(p)
		if len(p.Scopes) == 0 {
			delete(s.data, id)
		}
	}
	data, err := json.Marshal(map[string]any{"version": 1, "principals": s.data})
	s.dirty = false
	s.mu.Unlock()
	if err != nil {
		return err
	}
	if err := writeFileAtomic(s.path, data); err != nil {
		return fmt.Errorf("codemode: saving the store: %w", err)
	}
	return nil
}
