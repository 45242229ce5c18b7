package console

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"sync"
	"time"
)

// A sign-in is a session: the sealed cookie holds its id beside the
// credential, and signing out revokes the id (Revocations), so the cookie
// stops working everywhere the console runs, not only in the browser that
// forgets it. A revocation lasts as long as the cookie could (cookieLife).

// Revocations keeps the ids of the console's sessions that were signed
// out, until the time their cookies would have ended by themselves. Behind
// a balancer every replica must see the same ones: serve passes a Redis
// one with "gateway.redis" (state/redisstate's ConsoleRevocations), else
// the process keeps its own (NewMemoryRevocations).
type Revocations interface {
	// Revoke records that session id is signed out until until.
	Revoke(ctx context.Context, id string, until time.Time) error
	// Revoked reports whether session id, whose cookie was sealed at
	// issued, was signed out. An error (the store does not answer) refuses
	// the request: a sign-out must not be undone by an outage.
	Revoked(ctx context.Context, id string, issued time.Time) (bool, error)
}

// maxRevoked bounds the sign-outs one process keeps.
const maxRevoked = 10000

// memoryRevocations is the process's Revocations: a map of ids to when
// their revocation may be forgotten, bounded by maxRevoked. Past the bound
// it does not forget a sign-out: it signs every session out (any cookie
// sealed before that moment is refused), which costs each operator one
// more sign-in and undoes nothing.
type memoryRevocations struct {
	now func() time.Time

	mu      sync.Mutex
	revoked map[string]time.Time
	floor   time.Time // cookies sealed before it are refused
}

// NewMemoryRevocations returns the Revocations of one process (now nil:
// time.Now).
func NewMemoryRevocations(now func() time.Time) Revocations {
	if now == nil {
		now = time.Now
	}
	return &memoryRevocations{now: now, revoked: map[string]time.Time{}}
}

func (m *memoryRevocations) Revoke(_ context.Context, id string, until time.Time) error {
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.revoked) >= maxRevoked {
		for k, u := range m.revoked {
			if !now.Before(u) {
				delete(m.revoked, k)
			}
		}
	}
	if len(m.revoked) >= maxRevoked {
		m.floor, m.revoked = now, map[string]time.Time{}
		return nil
	}
	m.revoked[id] = until
	return nil
}

func (m *memoryRevocations) Revoked(_ context.Context, id string, issued time.Time) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !issued.After(m.floor) && !m.floor.IsZero() {
		return true, nil
	}
	until, ok := m.revoked[id]
	return ok && m.now().Before(until), nil
}

// session is what a console cookie seals.
type session struct {
	Credential string `json:"c"`
	ID         string `json:"s"` // what a sign-out revokes
	Issued     int64  `json:"i"` // unix seconds
	Expires    int64  `json:"e"` // unix seconds
}

func newSessionID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// errSignedOut is a cookie that is not (or no longer) a session: sealed
// under another key, expired, or signed out.
var errSignedOut = errors.New("console: the session ended")

// openSession is the session a cookie's value seals: errSignedOut when it
// is not a live one, another error when the revocations cannot be read.
func (c *Console) openSession(ctx context.Context, v string, now time.Time) (session, error) {
	s, ok := c.unseal(v, now)
	if !ok {
		return session{}, errSignedOut
	}
	revoked, err := c.revoked.Revoked(ctx, s.ID, time.Unix(s.Issued, 0))
	if err != nil {
		return session{}, err
	}
	if revoked {
		return session{}, errSignedOut
	}
	return s, nil
}

// signOut revokes the session of a cookie's value, if it is one.
func (c *Console) signOut(ctx context.Context, v string, now time.Time) error {
	s, ok := c.unseal(v, now)
	if !ok {
		return nil // nothing a request could use
	}
	return c.revoked.Revoke(ctx, s.ID, time.Unix(s.Expires, 0).Add(time.Second))
}
