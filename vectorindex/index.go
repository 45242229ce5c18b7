package vectorindex

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/philippgille/chromem-go"
)

// Options configure an Index.
type Options struct {
	// Dir persists the index: tool definitions and their vectors are kept
	// there (one gzip'd gob file per tool, chromem-go's format), keyed by a
	// hash of the tool definition, so that reopening the index does not
	// re-embed unchanged tools. Empty keeps everything in memory.
	Dir string
	// Embedder selects the vector half of the hybrid score; the zero value
	// is the built-in offline embedder.
	Embedder Embedder
}

// Index is a hybrid (BM25 + vector) search index over MCP tools, backed by
// an embedded chromem-go collection. All methods are safe for concurrent
// use: searches run while the catalog is being updated and see either the
// old or the new set of tools, never a mix.
type Index struct {
	emb  embedder
	an   *analyzer
	db   *chromem.DB
	coll *chromem.Collection
	dir  string

	updateMu sync.Mutex // serialises Sync, Upsert and Remove
	state    atomic.Pointer[state]
}

// state is an immutable view of the indexed tools.
type state struct {
	lex     *lexIndex
	entries []*entry // aligned with lex.ids
	byID    map[string]*entry
}

type entry struct {
	tool  Tool
	hash  string
	terms docTerms
	vec   []float32 // unit length; shared with chromem, never modified
}

// collectionPrefix marks the chromem collections this package owns in Dir.
const collectionPrefix = "sandbox-tools|"

// metaHash is the metadata key of a document's tool-definition hash.
const metaHash = "hash"

// New opens an index. With Options.Dir set, the tools persisted there by an
// earlier process are loaded and searchable at once; Sync then embeds only
// what changed.
func New(opts Options) (*Index, error) {
	emb, err := opts.Embedder.build()
	if err != nil {
		return nil, err
	}
	return newIndex(opts.Dir, emb)
}

func newIndex(dir string, emb embedder) (*Index, error) {
	var err error
	ix := &Index{emb: emb, an: defaultAnalyzer(), dir: dir}
	// chromem holds the index in memory; with a directory, the collection
	// is kept in one file (storeFile), written whole after each change and
	// read whole at start. chromem's own persistence writes a gzip+gob file
	// per document: 10,000 tools took ~8 s to write and 1.2 s to read, and
	// two ids whose hashes share 4 bytes shared a file.
	ix.db = chromem.NewDB()
	if dir != "" {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("vectorindex: cannot create index directory: %w", err)
		}
		dropLegacyLayout(dir)
		path := filepath.Join(dir, storeFile)
		if _, statErr := os.Stat(path); statErr == nil {
			if err := ix.db.ImportFromFile(path, "", collectionPrefix+emb.id()); err != nil {
				// A damaged file (the disk, not a crash: it is replaced by a
				// rename). The index is only a cache of the catalog: start
				// over; the next Sync embeds the tools again.
				os.Remove(path)
				os.Remove(filepath.Join(dir, manifestFile))
				ix.db = chromem.NewDB()
			}
		}
	}
	// Only our embedder's collection is read: vectors of another embedder
	// (or an older built-in version) can never be compared with ours, and
	// the next save keeps ours alone.
	name := collectionPrefix + emb.id()
	ix.coll, err = ix.db.GetOrCreateCollection(name, nil, emb.chromemFunc())
	if err != nil {
		return nil, fmt.Errorf("vectorindex: %w", err)
	}
	if err := ix.load(); err != nil {
		return nil, err
	}
	return ix, nil
}

// load rebuilds the in-memory state from the persisted collection. Documents
// that do not decode, or whose hash does not match their content, are
// dropped: the next Sync embeds those tools again.
func (ix *Index) load() error {
	var entries []*entry
	var bad []string
	dims := ix.readManifest()
	ids := ix.collectionIDs()
	if len(ids) < ix.coll.Count() {
		// Documents we cannot enumerate (no manifest, or written by a
		// crashed process before it): start the collection over.
		name := ix.coll.Name
		if err := ix.db.DeleteCollection(name); err != nil {
			return fmt.Errorf("vectorindex: resetting %s: %w", ix.dir, err)
		}
		c, err := ix.db.GetOrCreateCollection(name, nil, ix.emb.chromemFunc())
		if err != nil {
			return fmt.Errorf("vectorindex: %w", err)
		}
		ix.coll, ids = c, nil
	}
	// Decoding, checking and analysing each document is independent of the
	// others and is most of a warm start (10,000 tools: ~1 s on one core):
	// spread it over the CPUs, keeping the collection's order.
	loaded := make([]*entry, len(ids))
	rejected := make([]bool, len(ids))
	parallelFor(len(ids), func(i int) {
		doc, err := ix.coll.GetByID(context.Background(), ids[i])
		if err != nil {
			return
		}
		t, err := decodeTool(doc.Content)
		if err != nil || t.ID != doc.ID ||
			t.hash() != doc.Metadata[metaHash] || !validVector(doc.Embedding, dims) {
			rejected[i] = true
			return
		}
		loaded[i] = &entry{tool: t, hash: doc.Metadata[metaHash], terms: ix.an.analyzeDoc(t), vec: doc.Embedding}
	})
	for i, e := range loaded {
		switch {
		case rejected[i]:
			bad = append(bad, ids[i])
		case e != nil:
			entries = append(entries, e)
		}
	}
	if len(bad) > 0 {
		if err := ix.coll.Delete(context.Background(), nil, nil, bad...); err != nil {
			return fmt.Errorf("vectorindex: removing unreadable documents: %w", err)
		}
		if err := ix.save(); err != nil {
			return err
		}
	}
	ix.state.Store(newState(entries))
	return nil
}

// storeFile is the file in Dir that holds the collection (chromem's export
// format: gob, not compressed: gzip took most of the time of a save and
// of a load, for a file of a few tens of MB at 10,000 tools).
const storeFile = "index.gob"

// save writes the collection to storeFile: to a temporary file first, then
// renamed over it, so a crash leaves the old file or the new one whole.
func (ix *Index) save() error {
	if ix.dir == "" {
		return nil
	}
	path := filepath.Join(ix.dir, storeFile)
	tmp := path + ".tmp"
	if err := ix.db.ExportToFile(tmp, false, "", ix.coll.Name); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("vectorindex: saving the index: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("vectorindex: saving the index: %w", err)
	}
	return nil
}

// dropLegacyLayout removes what earlier versions kept in dir: chromem's
// per-document directories (named by 8 hex digits). It was a cache; the
// next Sync embeds the tools again.
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
}

func isHex(s string) bool {
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// collectionIDs lists the document ids in the chromem collection. chromem
// has no listing call, but a query for all documents returns them all; the
// query vector needs the collection's dimensions, which the manifest keeps.
func (ix *Index) collectionIDs() []string {
	n := ix.coll.Count()
	dims := ix.readManifest()
	if n == 0 || dims <= 0 {
		return nil
	}
	probe := make([]float32, dims)
	probe[0] = 1
	res, err := ix.coll.QueryEmbedding(context.Background(), probe, n, nil, nil)
	if err != nil {
		return nil
	}
	ids := make([]string, len(res))
	for i, r := range res {
		ids[i] = r.ID
	}
	return ids
}

// manifest is the one file of our own in Dir, beside chromem's collection
// directories (which chromem ignores files next to).
type manifest struct {
	Collection string `json:"collection"`
	Dims       int    `json:"dims"`
}

const manifestFile = "vectorindex.json"

func (ix *Index) readManifest() int {
	if ix.dir == "" {
		return 0
	}
	b, err := os.ReadFile(filepath.Join(ix.dir, manifestFile))
	if err != nil {
		return 0
	}
	var m manifest
	if json.Unmarshal(b, &m) != nil || m.Collection != ix.coll.Name || m.Dims <= 0 || m.Dims > 1<<16 {
		return 0
	}
	return m.Dims
}

func (ix *Index) writeManifest(dims int) error {
	if ix.dir == "" || dims <= 0 || ix.readManifest() == dims {
		return nil
	}
	b, _ := json.Marshal(manifest{Collection: ix.coll.Name, Dims: dims})
	tmp := filepath.Join(ix.dir, manifestFile+".tmp")
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(ix.dir, manifestFile))
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
	return &state{lex: buildLexIndex(ids, docs), entries: entries, byID: byID}
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
	// Normalising and hashing every tool (a schema decoded and encoded
	// again) is most of a Sync that finds nothing changed: on all CPUs.
	norm := make([]Tool, len(tools))
	hashes := make([]string, len(tools))
	errs := make([]error, len(tools))
	parallelFor(len(tools), func(i int) {
		norm[i], errs[i] = tools[i].normalized()
		if errs[i] == nil {
			hashes[i] = norm[i].hash()
		}
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

	// Add to chromem first, then publish the new state, then delete: the
	// collection always holds at least the tools the published state names.
	if len(changed) > 0 {
		docs := make([]chromem.Document, len(changed))
		for i, e := range changed {
			content, err := encodeTool(e.tool)
			if err != nil {
				return SyncStats{}, fmt.Errorf("vectorindex: tool %q: %w", e.tool.ID, err)
			}
			docs[i] = chromem.Document{ID: e.tool.ID, Embedding: e.vec, Content: content,
				Metadata: map[string]string{metaHash: e.hash}}
		}
		if err := ix.coll.AddDocuments(ctx, docs, 1); err != nil {
			return SyncStats{}, fmt.Errorf("vectorindex: storing embeddings: %w", err)
		}
		if err := ix.writeManifest(len(changed[0].vec)); err != nil {
			return SyncStats{}, fmt.Errorf("vectorindex: writing %s: %w", manifestFile, err)
		}
	}
	entries := make([]*entry, 0, len(next))
	for _, e := range next {
		entries = append(entries, e)
	}
	ix.state.Store(newState(entries))
	if len(gone) > 0 {
		if err := ix.coll.Delete(ctx, nil, nil, gone...); err != nil {
			return st, fmt.Errorf("vectorindex: removing tools from the store: %w", err)
		}
	}
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
