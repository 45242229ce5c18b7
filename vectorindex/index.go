package vectorindex

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
)

// Options configure an Index.
type Options struct {
	// Dir persists the index: tool definitions, their vectors and analysed
	// terms are kept there (one file, store.go), keyed by a hash of the tool
	// definition, so that reopening the index does not re-embed unchanged
	// tools. Empty keeps everything in memory.
	Dir string
	// Embedder selects the vector half of the hybrid score; the zero value
	// is the built-in offline embedder.
	Embedder Embedder
}

// Index is a hybrid (BM25 + vector) search index over MCP tools. All
// methods are safe for concurrent use: searches run while the catalog is
// being updated and see either the old or the new set of tools, never a
// mix. The vectors live in the published state beside the terms, and a
// search's nearest neighbours are found by one pass over that state's
// vectors (RATIONALE.md: why not a chromem-go collection).
type Index struct {
	emb embedder
	an  *analyzer
	dir string

	updateMu sync.Mutex // serialises Sync, Upsert and Remove
	state    atomic.Pointer[state]
}

// state is an immutable view of the indexed tools.
type state struct {
	lex     *lexIndex
	entries []*entry // aligned with lex.ids
	byID    map[string]*entry
	names   *nameTable
	// replacedBy maps a deprecated tool to the tools its description
	// names as its replacement.
	replacedBy map[int32][]int32
	// boilerplate holds, per server, the terms most of its tools share
	// ("Only works within allowed directories"): a match on them alone is
	// incidental (see Hit.Weak).
	boilerplate map[string]map[string]bool
}

type entry struct {
	tool   Tool
	hash   string
	terms  docTerms
	traits traits    // of tool; set before the entry is published
	vec    []float32 // unit length; shared with chromem, never modified
}

// New opens an index. With Options.Dir set, the tools persisted there by an
// earlier process are loaded and searchable at once; Sync then embeds only
// what changed.
func New(opts Options) (*Index, error) {
	// Reading the persisted store and building the embedder (for the
	// built-in one, decoding its embedded lexicon) are independent and
	// each about a third of a warm start: do them at once.
	var stored <-chan persisted
	if opts.Dir != "" {
		stored = readStoreAsync(opts.Dir)
	}
	emb, err := opts.Embedder.build()
	if err != nil {
		return nil, err
	}
	return newIndex(opts.Dir, emb, stored)
}

// persisted is what readStore found: entries, and the embedder and
// analyser (analyzerVersion) they were made by.
type persisted struct {
	embedderID, analyzer string
	entries              []*entry
}

func readStoreAsync(dir string) <-chan persisted {
	c := make(chan persisted, 1)
	go func() { c <- readStore(dir) }()
	return c
}

// newIndex opens the index in dir (none: in memory) with emb; stored, when
// not nil, delivers what readStore found there.
func newIndex(dir string, emb embedder, stored <-chan persisted) (*Index, error) {
	ix := &Index{emb: emb, an: defaultAnalyzer(), dir: dir}
	// The persisted copy is our own file (store.go), read here and written
	// after each change.
	var entries []*entry
	reanalysed := false
	if dir != "" {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("vectorindex: cannot create index directory: %w", err)
		}
		dropLegacyLayout(dir)
		var p persisted
		if stored != nil {
			p = <-stored
		} else {
			p = readStore(dir)
		}
		// Only our embedder's vectors are read: vectors of another embedder
		// (or an older built-in version) can never be compared with ours.
		// Anything unusable is a cache miss: the next Sync embeds again.
		if p.embedderID == emb.id() {
			entries = p.entries
		}
		// Terms of another analyser are made again; the vectors, whose
		// making may have cost calls to an embedding service, are kept.
		reanalysed = len(entries) > 0 && p.analyzer != analyzerVersion
		var effects effectCache
		parallelFor(len(entries), func(i int) {
			if reanalysed {
				entries[i].terms = ix.an.analyzeDoc(entries[i].tool)
			}
			entries[i].traits = toolTraits(ix.an, entries[i].tool, &effects)
		})
	}
	ix.state.Store(newState(entries))
	if reanalysed {
		_ = ix.save() // a cache: if it cannot be written now, the next change writes it
	}
	return ix, nil
}

// save writes the published state to the store file.
func (ix *Index) save() error {
	if ix.dir == "" {
		return nil
	}
	return writeStore(ix.dir, ix.emb.id(), ix.state.Load().entries)
}

// dropLegacyLayout removes what earlier versions kept in dir: chromem's
// per-document directories (named by 8 hex digits), then chromem's export
// file and our manifest beside it. They were a cache; the next Sync embeds
// the tools again.
func dropLegacyLayout(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if e.IsDir() && len(e.Name()) == 8 && isHex(e.Name()) {
			os.RemoveAll(filepath.Join(dir, e.Name()))
		}
	}
	os.Remove(filepath.Join(dir, "index.gob"))
	os.Remove(filepath.Join(dir, "vectorindex.json"))
}

func isHex(s string) bool {
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

func newState(entries []*entry) *state {
	sort.Slice(entries, func(i, j int) bool { return entries[i].tool.ID < entries[j].tool.ID })
	ids := make([]string, len(entries))
	docs := make([]docTerms, len(entries))
	byID := make(map[string]*entry, len(entries))
	for i, e := range entries {
		ids[i] = e.tool.ID
		docs[i] = e.terms
		byID[e.tool.ID] = e
	}
	st := &state{lex: buildLexIndex(ids, docs), entries: entries, byID: byID, names: newNameTable(entries)}
	st.replacedBy = replacements(entries, st.names)
	st.boilerplate = boilerplate(defaultAnalyzer(), entries)
	return st
}

func validVector(v []float32, dims int) bool {
	if len(v) == 0 || len(v) != dims {
		return false
	}
	for _, x := range v {
		if x != x { // NaN
			return false
		}
	}
	return true
}

// Len is the number of indexed tools.
func (ix *Index) Len() int { return len(ix.state.Load().entries) }

// SyncStats says what a Sync changed.
type SyncStats struct {
	Added, Updated, Removed, Unchanged int
}

// Sync makes the index hold exactly the given tools: new tools are added,
// changed ones (by hash of their definition) re-embedded, missing ones
// removed, unchanged ones left alone. Tool ids must be unique.
func (ix *Index) Sync(ctx context.Context, tools []Tool) (SyncStats, error) {
	return ix.update(ctx, tools, nil, true)
}

// Upsert adds tools or replaces those with the same id.
func (ix *Index) Upsert(ctx context.Context, tools []Tool) error {
	_, err := ix.update(ctx, tools, nil, false)
	return err
}

// Remove deletes tools by id; unknown ids are ignored.
func (ix *Index) Remove(ctx context.Context, ids ...string) error {
	_, err := ix.update(ctx, nil, ids, false)
	return err
}

func (ix *Index) update(ctx context.Context, tools []Tool, remove []string, exact bool) (SyncStats, error) {
	var st SyncStats
	// Normalising and hashing every tool (a schema compacted, then hashed)
	// was most of a Sync that finds nothing changed: on all CPUs, and a tool
	// identical to the one indexed under its id takes that one's hash (a
	// restart's Sync, where every tool is, hashes none).
	norm := make([]Tool, len(tools))
	hashes := make([]string, len(tools))
	errs := make([]error, len(tools))
	indexed := ix.state.Load()
	parallelFor(len(tools), func(i int) {
		norm[i], errs[i] = tools[i].normalized()
		if errs[i] != nil {
			return
		}
		if e, ok := indexed.byID[norm[i].ID]; ok && e.tool.same(norm[i]) {
			hashes[i] = e.hash
			return
		}
		hashes[i] = norm[i].hash()
	})
	seen := make(map[string]bool, len(tools))
	for i, t := range norm {
		if errs[i] != nil {
			return st, fmt.Errorf("vectorindex: tool %d: %w", i, errs[i])
		}
		if seen[t.ID] {
			return st, fmt.Errorf("vectorindex: tool id %q appears twice; ids must be unique (\"server:tool\")", t.ID)
		}
		seen[t.ID] = true
	}

	ix.updateMu.Lock()
	defer ix.updateMu.Unlock()
	old := ix.state.Load()

	// What changed.
	var changed []*entry
	next := make(map[string]*entry, len(old.byID)+len(norm))
	if !exact {
		for id, e := range old.byID {
			next[id] = e
		}
	}
	for i, t := range norm {
		h := hashes[i]
		if e, ok := old.byID[t.ID]; ok && e.hash == h {
			next[t.ID] = e
			st.Unchanged++
			continue
		}
		if _, ok := old.byID[t.ID]; ok {
			st.Updated++
		} else {
			st.Added++
		}
		e := &entry{tool: t, hash: h}
		changed = append(changed, e)
		next[t.ID] = e
	}
	for _, id := range remove {
		delete(next, id)
	}
	var gone []string
	for id := range old.byID {
		if _, ok := next[id]; !ok {
			gone = append(gone, id)
		}
	}
	st.Removed = len(gone)
	if len(changed) == 0 && len(gone) == 0 {
		return st, nil
	}

	// Embed and analyse outside any lock searches take.
	dims := 0
	for _, e := range old.entries {
		dims = len(e.vec)
		break
	}
	if err := ix.embedAll(ctx, changed, dims); err != nil {
		return SyncStats{}, err
	}

	entries := make([]*entry, 0, len(next))
	for _, e := range next {
		entries = append(entries, e)
	}
	ix.state.Store(newState(entries))
	if err := ix.save(); err != nil {
		return st, err
	}
	return st, nil
}

// embedAll analyses and embeds the given entries, concurrently: remote
// embedders are network-bound, the built-in one CPU-bound.
func (ix *Index) embedAll(ctx context.Context, es []*entry, dims int) error {
	workers := runtime.GOMAXPROCS(0)
	if ix.emb.remote() {
		workers = 4
	}
	workers = min(workers, len(es))
	var (
		wg       sync.WaitGroup
		next     atomic.Int64
		firstErr error
		errOnce  sync.Once
	)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var dimsMu sync.Mutex
	effects := &effectCache{}
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(es) || ctx.Err() != nil {
					return
				}
				e := es[i]
				e.terms = ix.an.analyzeDoc(e.tool)
				e.traits = toolTraits(ix.an, e.tool, effects)
				v, err := ix.emb.embedTool(ctx, e.tool)
				if err == nil {
					dimsMu.Lock()
					if dims == 0 {
						dims = len(v)
					} else if len(v) != dims {
						err = fmt.Errorf("the embedder returned a %d-dimensional vector where the index holds %d dimensions (a different model behind the same name?); delete the index directory to rebuild it", len(v), dims)
					}
					dimsMu.Unlock()
				}
				if err != nil {
					errOnce.Do(func() {
						firstErr = fmt.Errorf("vectorindex: embedding tool %q: %w", e.tool.ID, err)
						cancel()
					})
					return
				}
				e.vec = v
			}
		}()
	}
	wg.Wait()
	if firstErr == nil && ctx.Err() != nil {
		firstErr = ctx.Err()
	}
	if firstErr != nil {
		return firstErr
	}
	return nil
}

// ErrEmptyIntent is returned by Search for an intent with nothing to
// search for: empty, blank, or only words like "the" and "it".
var ErrEmptyIntent = errors.New("vectorindex: the intent has no words to search for: describe the task, e.g. \"list open pull requests in acme/webapp\"")

// parallelFor runs f(0) ... f(n-1) on GOMAXPROCS goroutines; each i once.
func parallelFor(n int, f func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range max(1, min(runtime.GOMAXPROCS(0), n)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				f(i)
			}
		}()
	}
	wg.Wait()
}
