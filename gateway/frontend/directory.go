package frontend

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/sandboxrt/sandbox/auth"
)

// SessionDirectory tells replicas of sandbox serve about each other's MCP
// sessions (2025-era clients; 2026-07-28 clients have none), so that a
// request that lands on a replica other than the one that made its session
// is served there: the session is re-established on that replica, for the
// same principal only. What lives in a session's replica alone (its
// server-to-client stream, resumable call streams, narrowing, subscriptions)
// does not move; docs/deploy.md says why and what that costs.
//
// The directory shared by replicas is Redis (state/redisstate); without one
// a session is valid on its own replica only, as before.
type SessionDirectory interface {
	// Claim records a new session of principal, kept while it is used at
	// least once per idle.
	Claim(ctx context.Context, id, principal string, idle time.Duration) error
	// Owner returns the principal of a live session (ok false: none, or
	// it ended or idled out), and keeps it alive for another idle.
	Owner(ctx context.Context, id string, idle time.Duration) (principal string, ok bool, err error)
	// Release ends a session of principal (another principal's is left).
	Release(ctx context.Context, id, principal string) error
}

// directoryResolver gives mcp-go a session id manager per request, bound to
// the request's principal.
type directoryResolver struct {
	s    *Server
	dir  SessionDirectory
	idle time.Duration

	mu        sync.Mutex
	refreshed map[string]time.Time // session id -> when its entry was last kept alive from here
	idled     map[string]bool      // sessions the sweeper ended here, until their end is handled
}

// keepAlive renews a session's directory entry while this replica serves
// it, at most four times per idle period, so it does not expire there while
// the client keeps using it here.
func (d *directoryResolver) keepAlive(id string) {
	now := time.Now()
	d.mu.Lock()
	if last, ok := d.refreshed[id]; ok && now.Sub(last) < d.idle/4 {
		d.mu.Unlock()
		return
	}
	if d.refreshed == nil || len(d.refreshed) > 4096 {
		for k, t := range d.refreshed { // sessions idle this long are gone
			if now.Sub(t) > d.idle {
				delete(d.refreshed, k)
			}
		}
		if d.refreshed == nil {
			d.refreshed = map[string]time.Time{}
		}
	}
	d.refreshed[id] = now
	d.mu.Unlock()
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, _, _ = d.dir.Owner(ctx, id, d.idle)
	}()
}

func (d *directoryResolver) ResolveSessionIdManager(r *http.Request) server.SessionIdManager {
	if r == nil {
		// mcp-go's idle sweeper (and its shutdown) ask without a request:
		// what they end is this replica's copy only.
		return &directoryIDs{d: d, ctx: context.Background(), local: true}
	}
	return &directoryIDs{d: d, ctx: r.Context(), principal: auth.PrincipalFrom(r.Context()).Key()}
}

type directoryIDs struct {
	d         *directoryResolver
	ctx       context.Context
	principal string
	local     bool // ends sessions here only (the idle sweeper)
}

// endedHere records a session that idled out on this replica: its end here
// is a Detach, not a Close (directory.go's sessions live on elsewhere).
func (d *directoryResolver) endedHere(id string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.idled == nil {
		d.idled = map[string]bool{}
	}
	d.idled[id] = true
}

// takeEndedHere reports (once) whether a session ended by idling out here.
func (d *directoryResolver) takeEndedHere(id string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	ok := d.idled[id]
	delete(d.idled, id)
	return ok
}

// owns reports whether the directory says principal owns a session this
// replica does not hold (for every request naming one: POST, GET, DELETE).
func (d *directoryResolver) owns(ctx context.Context, id, principal string) (bool, error) {
	owner, ok, err := d.dir.Owner(ctx, id, d.idle)
	return ok && owner == principal, err
}

var errNoSuchSession = errors.New("no such session")

// verifiedSessionKey carries, in a request's context, the id of the session
// the directory confirmed as the requester's (foreignSession).
type verifiedSessionKey struct{}

// Generate mints an id and claims it for the principal. A directory that
// cannot be reached leaves the session to its own replica.
func (m *directoryIDs) Generate() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	id := "mcp-" + hex.EncodeToString(b[:])
	if err := m.d.dir.Claim(m.ctx, id, m.principal, m.d.idle); err != nil {
		m.d.s.log.Warn("the session directory could not record a session: it is served by this replica only", "error", err)
	}
	return id
}

// Validate accepts a session this replica holds, or one the directory says
// is the same principal's.
func (m *directoryIDs) Validate(id string) (bool, error) {
	if sess := m.d.s.sessionByID(id); sess != nil {
		m.d.keepAlive(id)
		return false, nil // foreignSession already refused another principal's
	}
	if v, _ := m.ctx.Value(verifiedSessionKey{}).(string); v == id {
		return false, nil // foreignSession asked the directory for this request
	}
	owner, ok, err := m.d.dir.Owner(m.ctx, id, m.d.idle)
	if err != nil {
		return false, err
	}
	if !ok || owner != m.principal {
		return false, errNoSuchSession
	}
	return false, nil
}

func (m *directoryIDs) Terminate(id string) (bool, error) {
	m.d.mu.Lock()
	delete(m.d.refreshed, id)
	m.d.mu.Unlock()
	if m.local {
		m.d.endedHere(id) // the directory's entry idles out by itself
		return false, nil
	}
	if err := m.d.dir.Release(m.ctx, id, m.principal); err != nil {
		m.d.s.log.Warn("the session directory could not end a session", "error", err)
	}
	return false, nil
}
