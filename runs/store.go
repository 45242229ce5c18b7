package runs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"
)

// Store keeps runs, for one process (MemoryStore) or for replicas
// (state/redisstate). Every method is atomic against every other, across
// replicas for a shared store. state/statetest.TestRunStore is its contract.
type Store interface {
	// Create stores a new run of r.Owner. It first forgets the owner's
	// expired runs and, at limits.KeptPerPrincipal, its oldest final ones;
	// then it refuses (*LimitError) when the owner has
	// limits.LivePerPrincipal runs live (orphaned ones not counted).
	Create(ctx context.Context, r Run, limits Limits) error
	// Get returns the owner's run: ErrNotFound for one never made, expired,
	// or another owner's.
	Get(ctx context.Context, owner, id string) (Run, error)
	// Modify changes the owner's run in one step: change gets the run and
	// what the owner holds besides it. An error from change is returned and
	// nothing is written (ErrUnchanged: the run as it is, no error).
	Modify(ctx context.Context, owner, id string, change func(r *Run, others Held) error) (Run, error)
	// List returns every owner's runs not expired, the most recently
	// changed first, at most limit of them, as their Metas tell them
	// (Meta.Listed: id, owner, tool, state, times): a listing opens no run,
	// so it costs no result's bytes; Get has the rest.
	List(ctx context.Context, limit int) ([]Run, error)
}

// Newest sorts metas by their last change, newest first (ids break ties,
// so a listing is stable): the order of Store.List.
func Newest(metas []Meta) {
	sort.Slice(metas, func(i, j int) bool {
		if !metas[i].Updated.Equal(metas[j].Updated) {
			return metas[i].Updated.After(metas[j].Updated)
		}
		return metas[i].ID < metas[j].ID
	})
}

// Change runs change on r and its owner's others, as every Store's Modify
// does: the one place the rule lives. It reports whether to write.
func Change(r *Run, others Held, change func(*Run, Held) error) (write bool, err error) {
	err = change(r, others)
	if errors.Is(err, ErrUnchanged) {
		return false, nil
	}
	return err == nil, err
}

// Prune is what a store does before it creates a run for an owner whose runs
// are runs: the ids to forget (expired, then the oldest final ones over
// KeptPerPrincipal) and what the owner holds after. Every Store uses it, so
// the rule is one.
func Prune(runs []Meta, limits Limits, now time.Time) (forget []string, held Held) {
	var final []Meta
	for _, r := range runs {
		switch {
		case r.Expired(now):
			forget = append(forget, r.ID)
		case r.State.Live():
			held.Kept++
			if !r.Orphaned(now) {
				held.Live++
			}
		default:
			held.Kept++
			final = append(final, r)
			held.ResultBytes += r.Bytes
		}
	}
	sort.Slice(final, func(i, j int) bool { return final[i].Updated.Before(final[j].Updated) })
	for _, r := range final {
		if held.Kept < limits.KeptPerPrincipal {
			break
		}
		forget = append(forget, r.ID)
		held.Kept--
		held.ResultBytes -= r.Bytes
	}
	return forget, held
}

// HeldBesides is what the owner's runs hold besides the one with id.
func HeldBesides(runs []Meta, id string, now time.Time) Held {
	var h Held
	for _, r := range runs {
		if r.ID == id || r.Expired(now) {
			continue
		}
		h.Kept++
		if r.State.Live() {
			if !r.Orphaned(now) {
				h.Live++
			}
		} else {
			h.ResultBytes += r.Bytes
		}
	}
	return h
}

// MemoryStore is the Store of one process.
type MemoryStore struct {
	mu  sync.Mutex
	by  map[string]map[string]stored // owner -> id -> the run
	now func() time.Time

	// maxResults caps the bytes of final answers kept for every owner
	// together (0: no cap): what the process holds for tasks, whatever the
	// number of principals. results is what is kept now.
	maxResults, results int64
	swept               time.Time // when every owner's expired runs were last dropped
}

// stored is a run as the memory store keeps it: its JSON (a copy no caller
// shares) and its Meta, so counting an owner's runs decodes none.
type stored struct {
	json   []byte
	meta   Meta
	result int64 // bytes of its result (what LimitResultBytes counts)
}

// sweepEvery is how often the store drops every owner's expired runs (an
// owner's own are dropped whenever it starts one): what a principal that
// never comes back left does not stay.
const sweepEvery = time.Minute

// sweep drops every owner's expired runs, at most every sweepEvery.
func (m *MemoryStore) sweep(now time.Time) {
	if now.Sub(m.swept) < sweepEvery {
		return
	}
	m.swept = now
	for owner, byID := range m.by {
		for id, st := range byID {
			if !st.meta.Expired(now) {
				continue
			}
			m.results -= st.result
			delete(byID, id)
		}
		if len(byID) == 0 {
			delete(m.by, owner)
		}
	}
}

// LimitResultBytes caps the bytes of results the store keeps for every
// principal together (Limits.ResultBytesTotal): past it a result is not
// kept, and its run fails saying so. It returns m.
func (m *MemoryStore) LimitResultBytes(n int64) *MemoryStore {
	m.mu.Lock()
	m.maxResults = n
	m.mu.Unlock()
	return m
}

// NewMemoryStore returns an empty store with a clock (nil: time.Now).
func NewMemoryStore(now func() time.Time) *MemoryStore {
	if now == nil {
		now = time.Now
	}
	return &MemoryStore{by: map[string]map[string]stored{}, now: now}
}

func (m *MemoryStore) runsOf(owner string) []Meta {
	out := make([]Meta, 0, len(m.by[owner]))
	for _, st := range m.by[owner] {
		out = append(out, st.meta)
	}
	return out
}

func (m *MemoryStore) Create(_ context.Context, r Run, limits Limits) error {
	limits = limits.WithDefaults()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweep(m.now())
	forget, held := Prune(m.runsOf(r.Owner), limits, m.now())
	for _, id := range forget {
		st := m.by[r.Owner][id]
		m.results -= st.result
		delete(m.by[r.Owner], id)
	}
	if err := CheckLive(held, limits); err != nil {
		return err
	}
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if m.by[r.Owner] == nil {
		m.by[r.Owner] = map[string]stored{}
	}
	m.by[r.Owner][r.ID] = stored{json: b, meta: r.Meta(), result: int64(len(r.Result))}
	return nil
}

func (m *MemoryStore) get(owner, id string) (Run, bool) {
	st, ok := m.by[owner][id]
	if !ok || st.meta.Expired(m.now()) {
		return Run{}, false
	}
	var r Run
	if json.Unmarshal(st.json, &r) != nil {
		return Run{}, false
	}
	return r, true
}

func (m *MemoryStore) Get(_ context.Context, owner, id string) (Run, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.get(owner, id)
	if !ok {
		return Run{}, ErrNotFound
	}
	return r, nil
}

func (m *MemoryStore) List(_ context.Context, limit int) ([]Run, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	var metas []Meta
	owners := map[string]string{} // id -> owner
	for owner, byID := range m.by {
		for id, st := range byID {
			if !st.meta.Expired(now) {
				metas = append(metas, st.meta)
				owners[id] = owner
			}
		}
	}
	Newest(metas)
	metas = metas[:min(len(metas), max(limit, 0))]
	out := make([]Run, 0, len(metas))
	for _, meta := range metas {
		out = append(out, meta.Listed(owners[meta.ID]))
	}
	return out, nil
}

func (m *MemoryStore) Modify(_ context.Context, owner, id string, change func(*Run, Held) error) (Run, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.get(owner, id)
	if !ok {
		return Run{}, ErrNotFound
	}
	orig := r
	write, err := Change(&r, HeldBesides(m.runsOf(owner), id, m.now()), change)
	if err != nil {
		return orig, err
	}
	if !write {
		return orig, nil
	}
	r.ID, r.Owner = id, owner // a change moves no run
	// Results count, not errors: an error is short (the gateway cuts its
	// message), and the one that says a result was not kept must be kept.
	had, has := int64(len(orig.Result)), int64(len(r.Result))
	if m.maxResults > 0 && has > had && m.results-had+has > m.maxResults {
		msg := fmt.Sprintf("the result is %d bytes, more than this server keeps for tasks right now (%d bytes for everyone); have the run return less (a big result can stay in sandbox.results), or try again when other tasks' results expired", has, m.maxResults)
		r.State, r.Result, r.Error, r.Message = Failed, nil, rpcError(-32603, msg), msg
		has = 0
	}
	b, err := json.Marshal(r)
	if err != nil {
		return orig, err
	}
	m.by[owner][id] = stored{json: b, meta: r.Meta(), result: has}
	m.results += has - had
	return r, nil
}
