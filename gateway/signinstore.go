package gateway

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"
)

// SignInStore keeps the sign-ins in progress (oauth_signin.go): a link
// from its making to the end of its flow. The default is this process's
// (NewMemorySignInStore); a store replicas share (state/redisstate) lets
// the link's page and the authorization server's redirect reach any
// replica, and the call waiting on one replica learn, by polling, how a
// flow finished on another. What it holds is secret (the PKCE verifier,
// the registered client's secret): a shared store seals it.
// Conformance: state/statetest.TestSignInStore.
type SignInStore interface {
	// Put keeps s until s.Expires, unless s.Owner has max sign-ins open
	// (not ended, not expired): then ErrTooManySignIns, and nothing kept.
	// Ended sign-ins are not counted but kept only until they would have
	// expired, for a late retry to learn how they ended: Put drops
	// s.Owner's oldest ended ones past max-1 (whether or not it keeps s),
	// so a client that ends every link at once does not pile them up.
	Put(ctx context.Context, s SignInRecord, max int) error
	// Get is the sign-in of link id; nil once it expired or never was.
	Get(ctx context.Context, id string) (*SignInRecord, error)
	// ByState is the sign-in whose authorization request carried state
	// (SignInLogin.State); nil when none.
	ByState(ctx context.Context, state string) (*SignInRecord, error)
	// Update changes the sign-in of link id atomically: fn gets the
	// current record and changes it, or returns an error, which Update
	// returns with nothing changed. A record gone (expired) gives
	// ErrNoSuchSignIn. This is what makes a link used once and a flow end
	// once, whichever replicas race.
	Update(ctx context.Context, id string, fn func(*SignInRecord) error) error
}

// SignInRecord is one sign-in link: for one principal, one server, one
// call.
type SignInRecord struct {
	ID            string    `json:"id"`  // in the link
	ElicitationID string    `json:"eid"` // what the client is told
	Owner         string    `json:"owner"`
	Server        string    `json:"server"`
	Expires       time.Time `json:"expires"`
	// Opened: the principal proved itself on the page; the link is used.
	Opened bool `json:"opened,omitempty"`
	// BrowserHash is the SHA-256 (hex) of the cookie the browser that did
	// was given; the redirect must bring the cookie back.
	BrowserHash string `json:"browser,omitempty"`
	// Login is the authorization request, once the flow started.
	Login *SignInLogin `json:"login,omitempty"`
	// Ended: the flow ended, Err saying how ("" signed in). Kept until
	// the link would have expired, for a retry that comes after it.
	Ended bool   `json:"ended,omitempty"`
	Err   string `json:"err,omitempty"`
}

// SignInLogin is what the redirect needs to finish a sign-in on any
// replica: the authorization request's state and PKCE verifier, the
// client it was made for, and the issuer the response must come from.
type SignInLogin struct {
	State          string     `json:"state"`
	Verifier       string     `json:"verifier"`
	Client         OAuthGrant `json:"client"` // no token yet
	Issuer         string     `json:"issuer"`
	IssuerRequired bool       `json:"issuerRequired,omitempty"`
	TokenEndpoint  string     `json:"tokenEndpoint,omitempty"`
	// Redeemed: a redirect brought a code for it (once only).
	Redeemed bool `json:"redeemed,omitempty"`
}

// ErrTooManySignIns is SignInStore.Put's error for an owner with the most
// sign-ins open it may have.
var ErrTooManySignIns = errors.New("the principal has the most sign-in links open it may have")

// ErrNoSuchSignIn is SignInStore.Update's error for a link that expired
// or never was.
var ErrNoSuchSignIn = errors.New("no such sign-in: it expired or never was")

// MemorySignInStore is the sign-ins of one process.
type MemorySignInStore struct {
	mu  sync.Mutex
	now func() time.Time
	by  map[string]*SignInRecord
}

// NewMemorySignInStore makes an empty store; now is the clock (nil:
// time.Now).
func NewMemorySignInStore(now func() time.Time) *MemorySignInStore {
	if now == nil {
		now = time.Now
	}
	return &MemorySignInStore{now: now, by: map[string]*SignInRecord{}}
}

func (s *MemorySignInStore) pruneLocked() {
	now := s.now()
	for id, r := range s.by {
		if !now.Before(r.Expires) {
			delete(s.by, id)
		}
	}
}

// clone copies r deep enough that a caller's changes do not reach the
// store.
func (r *SignInRecord) clone() *SignInRecord {
	c := *r
	if r.Login != nil {
		l := *r.Login
		c.Login = &l
	}
	return &c
}

func (s *MemorySignInStore) Put(_ context.Context, r SignInRecord, max int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pruneLocked()
	n := 0
	var ended []*SignInRecord
	for _, o := range s.by {
		switch {
		case o.Owner != r.Owner:
		case o.Ended:
			ended = append(ended, o)
		default:
			n++
		}
	}
	if over := len(ended) - (max - 1); over > 0 {
		slices.SortFunc(ended, func(a, b *SignInRecord) int { return a.Expires.Compare(b.Expires) })
		for _, o := range ended[:over] {
			delete(s.by, o.ID)
		}
	}
	if n >= max {
		return ErrTooManySignIns
	}
	if _, dup := s.by[r.ID]; dup {
		return errors.New("a sign-in with this id exists already")
	}
	s.by[r.ID] = r.clone()
	return nil
}

func (s *MemorySignInStore) Get(_ context.Context, id string) (*SignInRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.by[id]
	if r == nil || !s.now().Before(r.Expires) {
		return nil, nil
	}
	return r.clone(), nil
}

func (s *MemorySignInStore) ByState(_ context.Context, state string) (*SignInRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	for _, r := range s.by {
		if r.Login != nil && r.Login.State == state && state != "" && now.Before(r.Expires) {
			return r.clone(), nil
		}
	}
	return nil, nil
}

func (s *MemorySignInStore) Update(_ context.Context, id string, fn func(*SignInRecord) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.by[id]
	if r == nil || !s.now().Before(r.Expires) {
		return ErrNoSuchSignIn
	}
	next := r.clone()
	if err := fn(next); err != nil {
		return err
	}
	next.ID, next.Owner, next.Expires = r.ID, r.Owner, r.Expires // not fn's to change
	s.by[id] = next
	return nil
}
