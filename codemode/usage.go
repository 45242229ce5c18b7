package codemode

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"sync"
	"time"
)

// UsageStore keeps what code mode learns from use: which tools principals
// called after searching with which words (learning.go reads it to rank).
// The in-memory default (NewMemoryUsage) can keep a file; replicas share
// one in Redis (state/redisstate), and every implementation passes
// state/statetest.TestUsageStore. Every method takes ctx and may fail.
//
// The bounds are the store's, so that they hold across replicas: a
// principal counts once per (word, tool) however often it records the pair
// (Evidence counts principals, never calls), holds at most
// MaxUsagePairsPerPrincipal pairs (recording more drops its oldest), and a
// pair expires UsageTTL after it was last recorded. So what one principal
// can add to the ranking of another is bounded (learning.go says by how
// much), and evidence nobody renews goes away.
type UsageStore interface {
	// Record notes that principal called tools after a search with words:
	// a pair (word, tool) for each. Only the first MaxUsageWords words and
	// MaxUsageTools tools count; a word or tool over MaxUsageTermBytes is
	// skipped.
	Record(ctx context.Context, principal string, words, tools []string) error
	// Evidence returns, for each of words that has any live pair, the tools
	// recorded with it and how many principals recorded each: at most
	// MaxUsageToolsPerWord of them, the most recorded first (ties by tool).
	Evidence(ctx context.Context, words []string) (map[string]map[string]int, error)
}

// The bounds every UsageStore keeps.
const (
	// MaxUsagePairsPerPrincipal bounds the (word, tool) pairs one
	// principal holds: a principal that records more loses its oldest.
	MaxUsagePairsPerPrincipal = 1000
	// UsageTTL is how long a pair lasts after it was last recorded.
	UsageTTL = 30 * 24 * time.Hour
	// MaxUsageWords and MaxUsageTools bound what one Record counts.
	MaxUsageWords = 16
	MaxUsageTools = 4
	// MaxUsageTermBytes bounds a word or a tool id.
	MaxUsageTermBytes = 256
	// MaxUsageToolsPerWord bounds the tools Evidence returns for a word.
	MaxUsageToolsPerWord = 32
)

// UsagePairs are the (word, tool) pairs one Record counts, within the
// bounds above: the first MaxUsageWords distinct words and MaxUsageTools
// distinct tools that are neither empty nor over MaxUsageTermBytes. For
// stores, which keep the bounds.
func UsagePairs(words, tools []string) []UsagePair {
	words = usageTerms(words, MaxUsageWords)
	tools = usageTerms(tools, MaxUsageTools)
	pairs := make([]UsagePair, 0, len(words)*len(tools))
	for _, w := range words {
		for _, t := range tools {
			pairs = append(pairs, UsagePair{Word: w, Tool: t})
		}
	}
	return pairs
}

// usageTerms are the first n distinct terms that are neither empty nor over
// MaxUsageTermBytes.
func usageTerms(terms []string, n int) []string {
	var out []string
	seen := map[string]bool{}
	for _, t := range terms {
		if len(out) == n {
			break
		}
		if t == "" || len(t) > MaxUsageTermBytes || seen[t] {
			continue
		}
		seen[t] = true
		out = append(out, t)
	}
	return out
}

// UsagePair is one word of a search and one tool called after it.
type UsagePair struct {
	Word string `json:"w"`
	Tool string `json:"t"`
}

// TopUsageTools orders one word's evidence as Evidence returns it: the most
// recorded first, ties by tool, at most MaxUsageToolsPerWord. For stores
// that count in a map.
func TopUsageTools(counts map[string]int) map[string]int {
	if len(counts) <= MaxUsageToolsPerWord {
		return counts
	}
	tools := make([]string, 0, len(counts))
	for t := range counts {
		tools = append(tools, t)
	}
	sort.Slice(tools, func(i, j int) bool {
		if counts[tools[i]] != counts[tools[j]] {
			return counts[tools[i]] > counts[tools[j]]
		}
		return tools[i] < tools[j]
	})
	out := make(map[string]int, MaxUsageToolsPerWord)
	for _, t := range tools[:MaxUsageToolsPerWord] {
		out[t] = counts[t]
	}
	return out
}

// MemoryUsage is the default UsageStore: in memory, and with a path kept
// in a file (usage.json in codeMode.dataDir), written every 10 s while it
// changes and when the engine closes.
type MemoryUsage struct {
	mu    sync.Mutex
	now   func() time.Time
	path  string
	dirty bool
	swept time.Time // when expired pairs were last dropped (Save)
	// when each principal last recorded each of its pairs, and who
	// recorded each pair (the two sides of one relation)
	byPrincipal map[string]map[UsagePair]time.Time
	byPair      map[UsagePair]map[string]time.Time
	byWord      map[string]map[string]bool // word -> tools with a pair
}

// NewMemoryUsage opens the default UsageStore, kept in the file at path
// ("" keeps it in memory only), with a clock (nil: time.Now).
func NewMemoryUsage(path string, now func() time.Time) (*MemoryUsage, error) {
	if now == nil {
		now = time.Now
	}
	u := &MemoryUsage{now: now, path: path, byPrincipal: map[string]map[UsagePair]time.Time{},
		byPair: map[UsagePair]map[string]time.Time{}, byWord: map[string]map[string]bool{}}
	if path == "" {
		return u, nil
	}
	raw, err := os.ReadFile(path)
	switch {
	case os.IsNotExist(err):
		return u, nil
	case err != nil:
		return nil, fmt.Errorf("codemode: reading what was learnt from use: %w", err)
	}
	var f usageFile
	if err := json.Unmarshal(raw, &f); err != nil || f.Version != 1 {
		return nil, fmt.Errorf("codemode: %s is not a file of what code mode learnt from use (move it away to start over): %v", path, err)
	}
	for p, pairs := range f.Principals {
		for _, e := range pairs {
			u.add(p, e.UsagePair, time.UnixMilli(e.At))
		}
	}
	return u, nil
}

type usageFile struct {
	Version    int                     `json:"version"`
	Principals map[string][]usageEntry `json:"principals"`
}

type usageEntry struct {
	UsagePair
	At int64 `json:"at"` // Unix ms
}

// Record implements UsageStore.
func (u *MemoryUsage) Record(_ context.Context, principal string, words, tools []string) error {
	pairs := UsagePairs(words, tools)
	if len(pairs) == 0 {
		return nil
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	now := u.now()
	u.expire(principal, now)
	for _, pair := range pairs {
		u.add(principal, pair, now)
	}
	// a principal holds at most MaxUsagePairsPerPrincipal: its oldest go
	if over := len(u.byPrincipal[principal]) - MaxUsagePairsPerPrincipal; over > 0 {
		mine := make([]UsagePair, 0, len(u.byPrincipal[principal]))
		for pair := range u.byPrincipal[principal] {
			mine = append(mine, pair)
		}
		at := u.byPrincipal[principal]
		sort.Slice(mine, func(i, j int) bool {
			if !at[mine[i]].Equal(at[mine[j]]) {
				return at[mine[i]].Before(at[mine[j]])
			}
			return mine[i].Word+"\x00"+mine[i].Tool < mine[j].Word+"\x00"+mine[j].Tool
		})
		for _, pair := range mine[:over] {
			u.remove(principal, pair)
		}
	}
	u.dirty = true
	return nil
}

// Evidence implements UsageStore.
func (u *MemoryUsage) Evidence(_ context.Context, words []string) (map[string]map[string]int, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	since := u.now().Add(-UsageTTL)
	out := map[string]map[string]int{}
	for _, w := range words {
		counts := map[string]int{}
		for tool := range u.byWord[w] {
			n := 0
			for _, at := range u.byPair[UsagePair{Word: w, Tool: tool}] {
				if at.After(since) {
					n++
				}
			}
			if n > 0 {
				counts[tool] = n
			}
		}
		if len(counts) > 0 {
			out[w] = TopUsageTools(counts)
		}
	}
	return out, nil
}

// Save drops the pairs that expired (what nobody renews must not stay in
// memory: principals come and go) and writes the file, when there is one
// and something changed.
func (u *MemoryUsage) Save() error {
	u.mu.Lock()
	defer u.mu.Unlock()
	now := u.now()
	if u.dirty || now.Sub(u.swept) > time.Hour {
		for p := range u.byPrincipal {
			u.expire(p, now)
		}
		u.swept = now
	}
	if u.path == "" || !u.dirty {
		u.dirty = false
		return nil
	}
	f := usageFile{Version: 1, Principals: map[string][]usageEntry{}}
	for p, pairs := range u.byPrincipal {
		for pair, at := range pairs {
			f.Principals[p] = append(f.Principals[p], usageEntry{pair, at.UnixMilli()})
		}
		sort.Slice(f.Principals[p], func(i, j int) bool { return f.Principals[p][i].At < f.Principals[p][j].At })
	}
	data, err := json.Marshal(f)
	if err != nil {
		return err
	}
	if err := writeFileAtomic(u.path, data); err != nil {
		return err
	}
	u.dirty = false
	return nil
}

// add notes a pair of principal at time at; u.mu is held.
func (u *MemoryUsage) add(principal string, pair UsagePair, at time.Time) {
	if u.byPrincipal[principal] == nil {
		u.byPrincipal[principal] = map[UsagePair]time.Time{}
	}
	u.byPrincipal[principal][pair] = at
	if u.byPair[pair] == nil {
		u.byPair[pair] = map[string]time.Time{}
	}
	u.byPair[pair][principal] = at
	if u.byWord[pair.Word] == nil {
		u.byWord[pair.Word] = map[string]bool{}
	}
	u.byWord[pair.Word][pair.Tool] = true
}

// remove drops a pair of principal; u.mu is held.
func (u *MemoryUsage) remove(principal string, pair UsagePair) {
	delete(u.byPrincipal[principal], pair)
	if len(u.byPrincipal[principal]) == 0 {
		delete(u.byPrincipal, principal)
	}
	delete(u.byPair[pair], principal)
	if len(u.byPair[pair]) == 0 {
		delete(u.byPair, pair)
		delete(u.byWord[pair.Word], pair.Tool)
		if len(u.byWord[pair.Word]) == 0 {
			delete(u.byWord, pair.Word)
		}
	}
}

// expire drops principal's pairs older than UsageTTL; u.mu is held.
func (u *MemoryUsage) expire(principal string, now time.Time) {
	since := now.Add(-UsageTTL)
	for pair, at := range u.byPrincipal[principal] {
		if !at.After(since) {
			u.remove(principal, pair)
		}
	}
}
