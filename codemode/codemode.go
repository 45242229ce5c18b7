// Package codemode joins the pipeline into the product: an agent states an
// intent, the vector index picks the relevant tools, typegen shows their
// TypeScript declarations, and a snippet that calls them runs in the runtime
// with every call routed through the gateway.
//
//	engine, _ := codemode.New(gw, rt, codemode.Options{})
//	found, _ := engine.Search(ctx, codemode.SearchRequest{Intent: "list recent commits", K: 5}) // .d.ts of the top 5
//	res, _ := engine.Execute(ctx, codemode.ExecuteRequest{Code: snippet, Intent: "..."})
//
// The engine keeps the index and the TypeScript names in step with the
// gateway's catalog as servers come, go and change their tools.
package codemode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sandboxrt/sandbox/gateway"
	"github.com/sandboxrt/sandbox/runtime"
	"github.com/sandboxrt/sandbox/typegen"
	"github.com/sandboxrt/sandbox/vectorindex"
)

// Options configure an Engine.
type Options struct {
	// K is how many tools an intent binds and a search shows by default (5).
	K int
	// Limits are the defaults of every Execute (zero fields: runtime defaults).
	Limits runtime.Limits
	// MaxLimits is the most a request may ask for (zero fields: the default
	// limits). A request over it gets the ceiling, and its result says which
	// limits were clamped. This is what keeps one agent from asking the
	// service for gigabytes of output or minutes of CPU.
	MaxLimits runtime.Limits
	// IndexDir persists the vector index (see vectorindex.Options.Dir); empty
	// keeps it in memory.
	IndexDir string
	// Embedder selects the index's embedder; zero is the offline built-in.
	Embedder vectorindex.Embedder
	// DataDir keeps what code mode stores for callers: sandbox.store's
	// values (store.json). Empty keeps them in memory only.
	DataDir string
	// Store, when set, keeps sandbox.store's values instead of the default
	// (a MemoryStore in DataDir); StoreLimits bound the default's.
	Store       Store
	StoreLimits StoreLimits
	// Results, when set, keeps the tool results too large to hand to a run
	// whole (sandbox.results) instead of the default (a FileResultStore in
	// DataDir/results, or in a temporary folder without DataDir);
	// ResultLimits bound the default's.
	Results      ResultStore
	ResultLimits ResultLimits
	// Scripts, when set, keeps saved scripts instead of the default (a
	// ScriptBook in DataDir).
	Scripts ScriptStore
	// Shapes, when set, pools the result types learned from calls with
	// other replicas (shapes.go) instead of keeping them in IndexDir.
	Shapes ShapeStore
	// Usage, when set, keeps what code mode learns from use (which tools
	// callers went on to call after a search: learning.go) instead of the
	// default, a MemoryUsage in DataDir (usage.json).
	Usage UsageStore
	// Index, when set, is the tool index, already opened with OpenIndex
	// (say, while the gateway was starting: reading a large persisted index
	// takes as long as listing the servers); else New opens it.
	Index  *vectorindex.Index
	Logger *slog.Logger
	// ContextKey is the key execute_code's context handles are minted and
	// checked with (contexts.go): replicas that share state share it (serve
	// derives it from gateway.redis's encryptionKey). Empty: a key of this
	// process's own, so a handle works in this process only.
	// (A string, so Options stay comparable.)
	ContextKey string
	// Audit, when set, records each execute_code run and each saved
	// script saved or deleted (cmd/sandbox hands it the gateway, whose
	// audit log it goes to); nil records nothing.
	Audit AuditSink
}

// AuditSink takes audit records; *gateway.Gateway is one.
type AuditSink interface {
	Audit(gateway.AuditRecord)
}

// Engine serves search and execution over one gateway. Safe for concurrent use.
type Engine struct {
	contextKey     []byte // of context handles (contexts.go)
	gw             *gateway.Gateway
	rt             *runtime.Runtime
	ix             *vectorindex.Index
	opts           Options
	types          *typegen.Cache
	log            *slog.Logger
	shapes         *shapeBook   // result types learned from calls (shapes.go)
	store          Store        // sandbox.store (store.go, services.go)
	results        *resultBook  // big tool results, read in parts (results.go)
	closeResults   func() error // removes the default result store's temporary folder
	scripts        ScriptStore  // saved scripts (scripts.go)
	learn          *learning    // what searches led to (learning.go)
	watchMu        sync.Mutex
	scriptWatchers []func(principal string) // hear whose scripts changed (OnScriptsChanged)
	watch          runWatch                 // who hears runs, and their counts (watch.go)

	state        atomic.Pointer[catalogState]
	hits         hitCache
	instructions instructionsOnce // which servers' instructions each session was shown (search.go)
	syncMu       sync.Mutex       // one catalog sync at a time
	pending      atomic.Bool
	unsub        func()
	closeCtx     context.Context
	stopSync     context.CancelFunc // ends closeCtx: no re-sync starts after Close
}

// catalogState is an immutable view of the catalog in the forms code mode
// needs: typegen's tools and the one naming of them in TypeScript.
type catalogState struct {
	tools []typegen.Tool
	byID  map[string]int // id -> index in tools
	names *typegen.Names
	// namespaces maps the namespace of each server with tools to its name,
	// built once per catalog so that a run's binding costs per server, not
	// per tool.
	namespaces map[string]string
	// members lists each namespace's tools, for suggestions within it.
	members map[string][]typegen.Binding
	// defs is each tool's definition hash (by index in tools; see def),
	// which keys its learned result shape.
	defs []atomic.Pointer[string]
	// denied are the tools the gateway's policy never lets run: search
	// does not show them, nor count or suggest them, and a run does not
	// bind them (a call is refused with DENIED).
	denied map[string]bool
	// approval are the tools whose every call waits for a person's
	// approval: their declarations say so (approvalNote).
	approval map[string]bool
}

// OpenIndex opens the tool index of opts (IndexDir, Embedder), for
// Options.Index.
func OpenIndex(opts Options) (*vectorindex.Index, error) {
	ix, err := vectorindex.New(vectorindex.Options{Dir: opts.IndexDir, Embedder: opts.Embedder})
	if err != nil {
		return nil, fmt.Errorf("codemode: opening the tool index: %w", err)
	}
	return ix, nil
}

// New builds an engine over a started gateway and indexes its catalog. rt
// may be nil for an engine that only searches.
func New(gw *gateway.Gateway, rt *runtime.Runtime, opts Options) (*Engine, error) {
	if opts.K <= 0 {
		opts.K = vectorindex.DefaultK
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if err := opts.Limits.Validate(); err != nil {
		return nil, err
	}
	if err := opts.MaxLimits.Validate(); err != nil {
		return nil, fmt.Errorf("codemode: maxLimits: %w", err)
	}
	ix := opts.Index
	if ix == nil {
		var err error
		if ix, err = OpenIndex(opts); err != nil {
			return nil, err
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	store := opts.Store
	if store == nil {
		path := ""
		if opts.DataDir != "" {
			path = filepath.Join(opts.DataDir, "store.json")
		}
		ms, err := NewMemoryStore(path, opts.StoreLimits, nil)
		if err != nil {
			cancel()
			return nil, err
		}
		store = ms
	}
	results := opts.Results
	closeResults := func() error { return nil }
	if results == nil {
		dir := ""
		if opts.DataDir != "" {
			dir = filepath.Join(opts.DataDir, "results")
		}
		fs, err := NewFileResultStore(dir, opts.ResultLimits, nil)
		if err != nil {
			cancel()
			return nil, err
		}
		results, closeResults = fs, fs.Close
	}
	scripts := opts.Scripts
	if scripts == nil {
		book, err := OpenScripts(opts.DataDir)
		if err != nil {
			cancel()
			return nil, fmt.Errorf("codemode: %w", err)
		}
		scripts = book
	}
	usage := opts.Usage
	if usage == nil {
		path := ""
		if opts.DataDir != "" {
			path = filepath.Join(opts.DataDir, usageFileName)
		}
		mu, err := NewMemoryUsage(path, nil)
		if err != nil {
			cancel()
			return nil, err
		}
		usage = mu
	}
	shapes := newShapeBook(opts.IndexDir)
	if opts.Shapes != nil {
		var err error
		if shapes, err = newSharedShapeBook(opts.Shapes); err != nil {
			opts.Logger.Warn("code mode: the result types other replicas learned could not be read; they will be at the next pooling", "err", err)
		}
	}
	e := &Engine{contextKey: contextMACKey(opts.ContextKey), gw: gw, rt: rt, ix: ix, opts: opts, scripts: scripts, types: typegen.NewCache(4096), log: opts.Logger, closeCtx: ctx, stopSync: cancel,
		shapes: shapes, store: store, results: &resultBook{store: results}, closeResults: closeResults, learn: newLearning(usage, opts.Logger)}
	e.watch.init()
	if err := e.sync(ctx); err != nil {
		cancel()
		_ = closeResults()
		e.learn.close()
		return nil, err
	}
	go e.persist(ctx)
	// Catalog changes arrive on the gateway's goroutines: re-sync in the
	// background, coalescing bursts (a server restarting lists everything).
	e.unsub = gw.Subscribe(func(gateway.CatalogChange) {
		if e.pending.Swap(true) {
			return
		}
		go func() {
			e.pending.Store(false)
			if err := e.sync(e.closeCtx); err != nil && e.closeCtx.Err() == nil {
				e.log.Warn("code mode: re-indexing the catalog failed", "err", err)
			}
		}()
	})
	return e, nil
}

// Close stops following the catalog.
func (e *Engine) Close() error {
	if e.unsub != nil {
		e.unsub()
	}
	e.stopSync()
	e.learn.close()
	return errors.Join(e.shapes.save(), e.saveStore(), e.saveUsage(), e.closeResults())
}

// resultLimits are the limits of the default result store, which errors
// quote (a store of its own keeps its own, and it is configured alike).
func (e *Engine) resultLimits() ResultLimits { return e.opts.ResultLimits.WithDefaults() }

// persist writes the learned result types, the default store's values and
// what was learnt from use every saveInterval while they change, until the engine closes (Close
// writes the last ones).
func (e *Engine) persist(ctx context.Context) {
	t := time.NewTicker(saveInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := e.shapes.save(); err != nil {
				e.log.Warn("code mode: saving learned result types failed", "err", err)
			}
			if err := e.saveStore(); err != nil {
				e.log.Warn("code mode: saving sandbox.store failed", "err", err)
			}
			if err := e.saveUsage(); err != nil {
				e.log.Warn("code mode: saving what was learnt from use failed", "err", err)
			}
		}
	}
}

func (e *Engine) saveStore() error {
	if ms, ok := e.store.(*MemoryStore); ok {
		return ms.Save()
	}
	return nil
}

// saveUsage writes the default UsageStore's file (and drops what expired).
func (e *Engine) saveUsage() error {
	if mu, ok := e.learn.store.(*MemoryUsage); ok {
		return mu.Save()
	}
	return nil
}

// usageFileName is the default UsageStore's file in Options.DataDir.
const usageFileName = "usage.json"

const saveInterval = 10 * time.Second

// sync brings the index and the names up to date with the gateway's catalog.
// Unchanged tools are not re-embedded (the index diffs by definition hash).
func (e *Engine) sync(ctx context.Context) error {
	e.syncMu.Lock()
	defer e.syncMu.Unlock()
	gwTools := e.gw.Tools()
	sort.Slice(gwTools, func(i, j int) bool { return gwTools[i].ID < gwTools[j].ID })
	st := &catalogState{byID: make(map[string]int, len(gwTools)), denied: map[string]bool{}, approval: map[string]bool{}}
	ixTools := make([]vectorindex.Tool, 0, len(gwTools))
	// A server's own description (its initialize instructions) is indexed
	// with each of its tools (apart from the tool's text, at a low weight):
	// "remember a fact" finds the tools of a server that calls itself a
	// knowledge-graph memory though no tool says so.
	about := map[string]string{}
	for _, s := range e.gw.Servers() {
		about[s.Name] = s.Instructions
	}
	// Catalogs repeat a few annotation objects over thousands of tools;
	// each distinct one is decoded once (10,230 tools: 37 ms of CPU).
	annotations := map[string]*typegen.Annotations{}
	for _, t := range gwTools {
		st.byID[t.ID] = len(st.tools)
		if e.gw.Denied(&t) {
			st.denied[t.ID] = true
		} else if e.gw.NeedsApproval(&t) {
			st.approval[t.ID] = true
		}
		a, ok := annotations[string(t.Annotations)]
		if !ok {
			a = decodeAnnotations(t.Annotations)
			annotations[string(t.Annotations)] = a
		}
		st.tools = append(st.tools, typegenTool(t, a))
		it := IndexTool(t)
		it.ServerInstructions = about[t.Server]
		ixTools = append(ixTools, it)
	}
	st.defs = make([]atomic.Pointer[string], len(st.tools))
	st.names = typegen.AssignNames(st.tools)
	st.namespaces = map[string]string{}
	st.members = map[string][]typegen.Binding{}
	for _, b := range st.names.Bindings() {
		st.namespaces[b.Namespace] = b.Server
		st.members[b.Namespace] = append(st.members[b.Namespace], b)
	}
	if _, err := e.ix.Sync(ctx, ixTools); err != nil {
		return fmt.Errorf("codemode: indexing %d tools: %w", len(ixTools), err)
	}
	e.state.Store(st)
	e.hits.reset() // answers for the old catalog must not keep it alive
	e.shapes.forget(st.byID)
	return nil
}

// def is tool i's definition hash, made when first asked for: one JSON
// encoding of the definition, which for a whole catalog was most of code
// mode's own start (10,230 tools: ~150 ms of CPU), while only the tools an
// agent finds or calls ever need theirs.
func (st *catalogState) def(i int) string {
	if d := st.defs[i].Load(); d != nil {
		return *d
	}
	d := definitionHash(st.tools[i])
	st.defs[i].Store(&d)
	return d
}

// search runs the index search for an intent over the tools of scope,
// remembering recent answers per catalog version and scope: an agent's
// search_tools and the execute_code that follows usually state the same
// intent. A filtered search's hits are the best of what its caller may
// call, and the key holds the set of servers they were drawn from, so they
// are served again only to a caller who may call exactly those tools
// (several agents of one scoped key share them), never to one with other
// rights.
func (e *Engine) search(ctx context.Context, st *catalogState, intent string, k int, scope searchScope) ([]vectorindex.Hit, error) {
	key := hitKey{st: st, intent: intent, k: k, scope: scope.key}
	if hits, ok := e.hits.get(key); ok {
		return hits, nil
	}
	var hits []vectorindex.Hit
	var err error
	if scope.allow == nil {
		hits, err = e.ix.Search(ctx, intent, k)
	} else {
		hits, err = e.ix.SearchAmong(ctx, intent, k, scope.allow)
	}
	if err != nil {
		return nil, err
	}
	e.hits.put(key, hits)
	return hits, nil
}

type hitKey struct {
	st     *catalogState // a new catalog version never sees old answers
	intent string
	k      int
	scope  string // searchScope.key: "" for the whole catalog
}

// hitCache is a small bounded map; when full it starts over, which is enough
// for a cache whose entries are a few hits each and cheap to recompute.
type hitCache struct {
	mu sync.Mutex
	m  map[hitKey][]vectorindex.Hit
}

const hitCacheSize = 256

func (c *hitCache) get(k hitKey) ([]vectorindex.Hit, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	h, ok := c.m[k]
	return h, ok
}

func (c *hitCache) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m = nil
}

func (c *hitCache) put(k hitKey, h []vectorindex.Hit) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= hitCacheSize {
		c.m = make(map[hitKey][]vectorindex.Hit, hitCacheSize)
	}
	c.m[k] = h
}

// DeclaredTools is the gateway's catalog as code mode declares it to
// agents: a tool the policy always denies is left out, and one whose every
// call waits for a person's approval says so (what `sandbox types
// --config` writes, as search_tools does).
func DeclaredTools(gw *gateway.Gateway) []typegen.Tool {
	var out []typegen.Tool
	for _, t := range gw.Tools() {
		if gw.Denied(&t) {
			continue
		}
		tt := TypegenTool(t)
		if gw.NeedsApproval(&t) {
			tt.Notes = []string{approvalNote}
		}
		out = append(out, tt)
	}
	return out
}

// TypegenTool is a catalog tool as typegen reads it.
func TypegenTool(t gateway.Tool) typegen.Tool {
	return typegenTool(t, decodeAnnotations(t.Annotations))
}

func typegenTool(t gateway.Tool, a *typegen.Annotations) typegen.Tool {
	return typegen.Tool{Server: t.Server, Name: t.Name, Title: t.Title, Description: t.Description,
		InputSchema: t.InputSchema, OutputSchema: t.OutputSchema, Annotations: a}
}

// decodeAnnotations reads a tool's annotations; nil when it has none or
// they are not an object of the known hints.
func decodeAnnotations(raw json.RawMessage) *typegen.Annotations {
	if len(raw) == 0 {
		return nil
	}
	var a typegen.Annotations
	if json.Unmarshal(raw, &a) != nil {
		return nil
	}
	return &a
}

// IndexTool is a catalog tool as the vector index reads it: what it
// accepts and returns, and its annotations, are part of what is searched.
func IndexTool(t gateway.Tool) vectorindex.Tool {
	return vectorindex.Tool{ID: t.ID, Server: t.Server, Name: t.Name, Title: t.Title,
		Description: t.Description, InputSchema: t.InputSchema, OutputSchema: t.OutputSchema,
		Annotations: t.Annotations}
}

// ToolCount is the number of tools in the catalog.
func (e *Engine) ToolCount() int { return len(e.state.Load().tools) }

// ErrNoIntent is returned by Search for an empty intent.
var ErrNoIntent = errors.New("codemode: the intent is empty; describe the task in a few words, e.g. \"list open pull requests\"")
