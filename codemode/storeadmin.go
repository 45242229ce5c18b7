package codemode

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"time"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/gateway"
)

// What an operator sees of sandbox.store (the operator console): whose
// values there are, their keys, sizes and expiry, and a value only when
// asked for it, each read audited.

// StoreEntry is one stored value as an operator's listing shows it: never
// the value itself.
type StoreEntry struct {
	Scope   StoreScope
	Key     string
	Bytes   int
	Expires time.Time // zero: never
}

// StoreInventory is what a Store may offer besides Store: every
// principal's live values, listed. MemoryStore and the Redis store do
// (state/statetest.TestStore checks it); a store that does not makes
// StorePrincipals and StoreEntries answer ErrNoStoreInventory.
type StoreInventory interface {
	Principals(ctx context.Context) ([]string, error)
	Entries(ctx context.Context, principal string) ([]StoreEntry, error)
}

// ErrNoStoreInventory is the answer of a store that cannot list its values
// for an operator.
var ErrNoStoreInventory = errors.New("this store cannot list its values (it is not a codemode.StoreInventory)")

// StorePrincipals lists the principals that have live values, sorted.
func (e *Engine) StorePrincipals(ctx context.Context) ([]string, error) {
	inv, ok := e.store.(StoreInventory)
	if !ok {
		return nil, ErrNoStoreInventory
	}
	return inv.Principals(ctx)
}

// StoreEntries lists a principal's live values, its own and its
// sessions', by scope and key.
func (e *Engine) StoreEntries(ctx context.Context, principal string) ([]StoreEntry, error) {
	inv, ok := e.store.(StoreInventory)
	if !ok {
		return nil, ErrNoStoreInventory
	}
	return inv.Entries(ctx, principal)
}

// ReadStoreValue reads one stored value for an operator (by). Every read
// is audited (kind "store", tool "read_store_value", name the scope and
// the key), found or not.
func (e *Engine) ReadStoreValue(ctx context.Context, by auth.Caller, scope StoreScope, key string) (json.RawMessage, bool, error) {
	start := time.Now()
	v, found, err := e.store.Get(ctx, scope, key)
	outcome := "OK"
	switch {
	case err != nil:
		outcome = string(gateway.CodeInternal)
	case !found:
		outcome = string(gateway.CodeNotFound)
	}
	if e.opts.Audit != nil {
		name := scope.Principal
		if scope.Session != "" {
			name += " session " + scope.Session
		}
		e.opts.Audit.Audit(gateway.AuditRecord{Kind: gateway.AuditKindStore, Principal: by.Principal.Key(), Session: string(by.Session), Tool: "read_store_value",
			Name: truncateRunes(name+": "+key, 200), Outcome: outcome, DurationMs: float64(time.Since(start).Microseconds()) / 1000, ResultBytes: len(v)})
	}
	return v, found, err
}

// Principals implements StoreInventory.
func (s *MemoryStore) Principals(context.Context) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for id, p := range s.data {
		live := false
		for _, values := range p.Scopes {
			for _, v := range values {
				live = live || s.live(v)
			}
		}
		if live {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out, nil
}

// Entries implements StoreInventory.
func (s *MemoryStore) Entries(_ context.Context, principal string) ([]StoreEntry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []StoreEntry
	p := s.data[principal]
	if p == nil {
		return out, nil
	}
	for session, values := range p.Scopes {
		for k, v := range values {
			if !s.live(v) {
				continue
			}
			e := StoreEntry{Scope: StoreScope{Principal: principal, Session: session}, Key: k, Bytes: len(v.Value)}
			if v.Expires != 0 {
				e.Expires = time.UnixMilli(v.Expires)
			}
			out = append(out, e)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Scope.Session != out[j].Scope.Session {
			return out[i].Scope.Session < out[j].Scope.Session
		}
		return out[i].Key < out[j].Key
	})
	return out, nil
}
