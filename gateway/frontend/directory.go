package frontend

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/sandboxrt/sandbox/auth"
)

// SessionDirectory tells replicas of sandbox serve about each other's MCP
// sessions (2025-era clients; 2026-07-28 clients have none), so that a
// request that lands on a replica other than the one that made its session
// is served there as it would be on its first: the session is adopted by
// that replica, for the same principal only, with what it chose (the
// servers it narrowed itself to, its log level). What lives in a replica
// alone (a client's GET stream, resumable call streams, subscriptions) does
// not move; docs/deploy.md says why and what that costs.
//
// The directory shared by replicas is Redis (state/redisstate); without one
// a session is valid on its own replica only, as before.
type SessionDirectory interface {
	// Claim records a new session of principal with an empty state, kept
	// while it is used at least once per idle. An id already claimed is
	// left as it is.
	Claim(ctx context.Context, id, principal string, idle time.Duration) error
	// Lookup returns the owner and state (its parts, by name) of a live
	// session (ok false: none, or it ended or idled out); when principal
	// owns it, it is kept alive for another idle.
	Lookup(ctx context.Context, id, principal string, idle time.Duration) (owner string, state map[string][]byte, ok bool, err error)
	// Save sets one part of the state of a live session of principal
	// (another principal's, or an ended one, is left). Parts are saved
	// apart, so replicas saving different parts at once lose neither.
	Save(ctx context.Context, id, principal, part string, value []byte) error
	// Release ends a session of principal (another principal's is left).
	Release(ctx context.Context, id, principal string) error
}

// The parts of a session's state that every replica serving it must know
// (SessionDirectory.Save): what it chose.
const (
	partServers  = "servers"  // JSON: the servers it narrowed itself to; null: all
	partLogLevel = "logLevel" // the level it asked for
)

// directoryResolver gives mcp-go a session id manager per request, bound to
// the request's principal.
type directoryResolver struct {
	s    *Server
	dir  SessionDirectory
	idle time.Duration

	// idled: sessions the idle sweeper ended here (their end here is a
	// Detach, not a Close: they live on elsewhere), until sessionEnded.
	idled idSet
	// unclaimed: sessions made here while the directory did not answer,
	// claimed at their next request.
	unclaimed idSet
}

var (
	errNoSuchSession      = errors.New("no such session")
	errDirectoryDown      = errors.New("the session directory is unavailable")
	errSessionOfAnother   = errors.New("a session of another principal")
	errSessionEndedByPeer = errors.New("the session ended on another replica")
)

// verifiedSessionKey carries, in a request's context, the directory's
// entry for the session the request names, read once by attach.
type verifiedSessionKey struct{}

type verifiedSession struct {
	id    string
	state map[string][]byte // nil: the directory could not be asked; serve this replica's copy
}

// attach checks, before anything else reads a request, that the session
// it names is the requester's in the directory (for every method: a GET
// would otherwise take its id for another principal here, and a DELETE end
// it everywhere), and keeps it alive there. It returns the request to serve,
// carrying the entry for mcp-go's session check and the adoption hook.
//
// When the directory cannot be asked, a session this replica holds is
// served as it is here; one it does not hold cannot be checked and is
// refused with errDirectoryDown. A session gone from the directory (ended by
// a DELETE on another replica) ends here too.
func (d *directoryResolver) attach(r *http.Request, id string) (*http.Request, error) {
	principal := auth.PrincipalFrom(r.Context()).Key()
	local := d.s.sessionByID(id)
	if local != nil && local.caller.Principal.Key() != principal {
		return r, errSessionOfAnother
	}
	owner, state, ok, err := d.dir.Lookup(r.Context(), id, principal, d.idle)
	switch {
	case err != nil && local != nil:
		d.s.log.Warn("the session directory is unavailable: serving this replica's copy of the session", "error", err)
		state = nil
	case err != nil:
		return r, errDirectoryDown
	case !ok && local != nil && d.unclaimed.take(id):
		// Made here while the directory did not answer: record it now.
		if err := d.dir.Claim(r.Context(), id, principal, d.idle); err != nil {
			d.unclaimed.add(id)
		}
		state = nil
	case !ok && local != nil:
		d.s.endHere(r.Context(), local)
		return r, errSessionEndedByPeer
	case !ok || owner != principal:
		return r, errNoSuchSession
	case state == nil:
		state = map[string][]byte{} // found, nothing chosen yet
	}
	return r.WithContext(context.WithValue(r.Context(), verifiedSessionKey{}, verifiedSession{id: id, state: state})), nil
}

// adoptRequest runs before mcp-go handles a request (its request
// initialization hook): a session attach verified that this replica does
// not hold is adopted here, and the state replicas share is applied to it.
func (s *Server) adoptRequest(ctx context.Context) {
	v, ok := ctx.Value(verifiedSessionKey{}).(verifiedSession)
	if !ok {
		return
	}
	cs := server.ClientSessionFromContext(ctx)
	if cs == nil || cs.SessionID() != v.id {
		return
	}
	sess := s.sessionByID(v.id)
	if sess == nil {
		sess = s.adopt(ctx, cs)
	}
	if v.state != nil {
		s.applyShared(ctx, sess, cs, v.state)
	}
}

// adopt makes this replica's copy of a session made on another, with
// mcp-go's per-request session object standing in for the client (mcp-go
// keeps a session's tools and log level by id, so any of its request
// objects will do; it has no client capabilities: this replica cannot ask
// the client anything).
func (s *Server) adopt(ctx context.Context, cs server.ClientSession) *session {
	return s.hold(ctx, cs, true, false)
}

// applyShared brings this replica's copy of a session up to the state the
// directory holds (another replica may have changed it since). A part the
// directory does not hold was never chosen.
func (s *Server) applyShared(ctx context.Context, sess *session, cs server.ClientSession, state map[string][]byte) {
	if raw, ok := state[partServers]; ok {
		var want []string // nil: every server
		if err := json.Unmarshal(raw, &want); err != nil {
			s.log.Warn("a session's shared narrowing is unreadable; ignored", "session", string(sess.caller.Session), "error", err)
		} else if servers, narrowed := sess.gw.Servers(); narrowed != (want != nil) || !slices.Equal(servers, want) {
			sess.gw.Narrow(want)
		}
	}
	if level := string(state[partLogLevel]); level != "" && sess.gw.LogLevel() != level {
		s.g.SetLogLevel(ctx, sess.caller, level)
		if lc, ok := cs.(server.SessionWithLogging); ok {
			lc.SetLogLevel(mcp.LoggingLevel(level))
		}
	}
}

// shareState records one part of what a session chose for the other
// replicas; without a directory there is nothing to do.
func (s *Server) shareState(ctx context.Context, caller auth.Caller, part string, value []byte) error {
	d := s.directory.Load()
	if d == nil || !caller.HasSession() {
		return nil
	}
	return d.dir.Save(ctx, string(caller.Session), caller.Principal.Key(), part, value)
}

// endHere ends this replica's copy of a session that ended elsewhere.
func (s *Server) endHere(ctx context.Context, sess *session) {
	if !sess.adopted {
		s.mcp.UnregisterSession(ctx, string(sess.caller.Session)) // sessionEnded does the rest
		return
	}
	if s.dropAdopted(string(sess.caller.Session), sess) {
		sess.gw.Close()
	}
}

// dropAdopted forgets an adopted session here, reporting whether it did.
func (s *Server) dropAdopted(id string, sess *session) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sessions[id] != sess {
		return false
	}
	delete(s.sessions, id)
	return true
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

// idSet is a set of session ids, each taken at most once.
type idSet struct {
	mu  sync.Mutex
	ids map[string]bool
}

func (s *idSet) add(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ids == nil {
		s.ids = map[string]bool{}
	}
	s.ids[id] = true
}

// take reports whether id was in the set, and removes it.
func (s *idSet) take(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	ok := s.ids[id]
	delete(s.ids, id)
	return ok
}

// Generate mints an id and claims it for the principal. A directory that
// cannot be reached leaves the session to its own replica.
func (m *directoryIDs) Generate() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	id := "mcp-" + hex.EncodeToString(b[:])
	if err := m.d.dir.Claim(m.ctx, id, m.principal, m.d.idle); err != nil {
		m.d.s.log.Warn("the session directory could not record a session: it is served by this replica only until it answers again", "error", err)
		m.d.unclaimed.add(id)
	}
	return id
}

// Validate accepts a session this replica holds, or one attach found to be
// the principal's in the directory (every request passes attach first).
func (m *directoryIDs) Validate(id string) (bool, error) {
	if sess := m.d.s.sessionByID(id); sess != nil {
		return false, nil // attach already refused another principal's
	}
	if v, _ := m.ctx.Value(verifiedSessionKey{}).(verifiedSession); v.id == id {
		return false, nil
	}
	return false, errNoSuchSession
}

func (m *directoryIDs) Terminate(id string) (bool, error) {
	if m.local {
		// Idled out here: the directory's entry lives on for the replicas
		// still serving it, and idles out there by itself.
		if sess := m.d.s.sessionByID(id); sess != nil && sess.adopted {
			if m.d.s.dropAdopted(id, sess) {
				sess.gw.Detach()
			}
			return false, nil
		}
		if m.d.s.sessionByID(id) != nil { // its end here follows (sessionEnded)
			m.d.idled.add(id)
		}
		return false, nil
	}
	if err := m.d.dir.Release(m.ctx, id, m.principal); err != nil {
		m.d.s.log.Warn("the session directory could not end a session", "error", err)
	}
	if sess := m.d.s.sessionByID(id); sess != nil && sess.adopted && m.d.s.dropAdopted(id, sess) {
		sess.gw.Close() // ended by its client: its tokens go too
	}
	return false, nil
}
