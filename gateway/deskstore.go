package gateway

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// DeskStore keeps the approval desk (desk.go): the calls waiting for a
// person's decision, and the decisions. The default is this process's
// (NewMemoryDeskStore); a store replicas share (state/redisstate) puts
// every replica's pending approvals on every replica's console and lets a
// decision made on any replica reach the replica where the call waits,
// which polls Decision. Conformance: state/statetest.TestDeskStore.
//
// Every decision is taken once, atomically: Decide and Withdraw race for
// an approval, and whichever comes first stands (a decided approval cannot
// be withdrawn, a withdrawn one cannot be decided).
type DeskStore interface {
	// Put puts a on the desk until a.Deadline, unless a.Principal has max
	// approvals waiting already (undecided, before their deadline): then
	// it returns an ErrDeskFull error and puts nothing.
	Put(ctx context.Context, a PendingApproval, max int) error
	// Pending lists the approvals waiting (undecided, before their
	// deadline), in any order.
	Pending(ctx context.Context) ([]PendingApproval, error)
	// Get is one approval waiting; false once it was decided, withdrawn or
	// past its deadline.
	Get(ctx context.Context, id string) (PendingApproval, bool, error)
	// Decide records d as the decision on the approval id, if it waits:
	// nil then. One decided already gives a *DecidedError naming the
	// decision that stands; one not waiting, ErrNoSuchApproval. The store
	// sets d.Of.
	Decide(ctx context.Context, id string, d DeskDecision) error
	// Decision is the decision on id, nil while there is none. A decision
	// is kept until the approval's deadline.
	Decision(ctx context.Context, id string) (*DeskDecision, error)
	// Withdraw takes id off the desk (its call stopped waiting) unless it
	// was decided: then it returns the decision, which stands.
	Withdraw(ctx context.Context, id string) (*DeskDecision, error)
	// Version changes whenever an approval is put, decided or withdrawn:
	// a replica's console polls it to hear of the others' changes.
	Version(ctx context.Context) (uint64, error)
}

// DeskDecision is a person's decision on a pending approval.
type DeskDecision struct {
	Approve bool      `json:"approve"`
	By      string    `json:"by"` // the principal's key
	At      time.Time `json:"at"`
	// Of is the principal whose call it was; the store sets it.
	Of string `json:"of"`
}

func (d DeskDecision) String() string {
	verb := "denied"
	if d.Approve {
		verb = "approved"
	}
	return fmt.Sprintf("%s by %s at %s UTC", verb, d.By, d.At.UTC().Format("15:04:05"))
}

// ErrDeskFull is DeskStore.Put's error for a principal with
// MaxPendingApprovalsPerPrincipal calls waiting already.
var ErrDeskFull = errors.New("the principal has the most calls waiting at the approval desk it may have")

// DecidedError is DecideApproval's error for an approval somebody decided
// first: that decision stands. It is an ErrNoSuchApproval too (the call no
// longer waits), which says more.
type DecidedError struct{ Decision DeskDecision }

func (e *DecidedError) Error() string {
	return "it was decided already: " + e.Decision.String()
}

func (e *DecidedError) Is(target error) bool { return target == ErrNoSuchApproval }

// MemoryDeskStore is the desk of one process.
type MemoryDeskStore struct {
	mu      sync.Mutex
	now     func() time.Time
	entries map[string]*memoryDeskEntry
	version uint64
}

type memoryDeskEntry struct {
	a        PendingApproval
	decision *DeskDecision
}

// NewMemoryDeskStore makes an empty desk; now is the clock (nil: time.Now).
func NewMemoryDeskStore(now func() time.Time) *MemoryDeskStore {
	if now == nil {
		now = time.Now
	}
	return &MemoryDeskStore{now: now, entries: map[string]*memoryDeskEntry{}}
}

// pruneLocked forgets what passed its deadline, decided or not.
func (s *MemoryDeskStore) pruneLocked() {
	now := s.now()
	for id, e := range s.entries {
		if !now.Before(e.a.Deadline) {
			delete(s.entries, id)
		}
	}
}

func (s *MemoryDeskStore) Put(_ context.Context, a PendingApproval, max int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pruneLocked()
	n := 0
	for _, e := range s.entries {
		if e.decision == nil && e.a.Principal == a.Principal {
			n++
		}
	}
	if n >= max {
		return ErrDeskFull
	}
	if _, dup := s.entries[a.ID]; dup {
		return fmt.Errorf("approval %s is on the desk already", a.ID)
	}
	s.entries[a.ID] = &memoryDeskEntry{a: a}
	s.version++
	return nil
}

func (s *MemoryDeskStore) Pending(context.Context) ([]PendingApproval, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pruneLocked()
	out := make([]PendingApproval, 0, len(s.entries))
	for _, e := range s.entries {
		if e.decision == nil {
			out = append(out, e.a)
		}
	}
	return out, nil
}

// waiting is id's entry if it waits for a decision or holds one.
func (s *MemoryDeskStore) waitingLocked(id string) *memoryDeskEntry {
	e := s.entries[id]
	if e == nil || !s.now().Before(e.a.Deadline) {
		return nil
	}
	return e
}

func (s *MemoryDeskStore) Get(_ context.Context, id string) (PendingApproval, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.waitingLocked(id)
	if e == nil || e.decision != nil {
		return PendingApproval{}, false, nil
	}
	return e.a, true, nil
}

func (s *MemoryDeskStore) Decide(_ context.Context, id string, d DeskDecision) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.waitingLocked(id)
	switch {
	case e == nil:
		return ErrNoSuchApproval
	case e.decision != nil:
		return &DecidedError{Decision: *e.decision}
	}
	d.Of = e.a.Principal
	e.decision = &d
	s.version++
	return nil
}

func (s *MemoryDeskStore) Decision(_ context.Context, id string) (*DeskDecision, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.waitingLocked(id); e != nil && e.decision != nil {
		d := *e.decision
		return &d, nil
	}
	return nil, nil
}

func (s *MemoryDeskStore) Withdraw(_ context.Context, id string) (*DeskDecision, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.entries[id]
	if e == nil {
		return nil, nil
	}
	if e.decision != nil {
		d := *e.decision
		return &d, nil
	}
	delete(s.entries, id)
	s.version++
	return nil, nil
}

func (s *MemoryDeskStore) Version(context.Context) (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.version, nil
}
