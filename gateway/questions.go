package gateway

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync"
	"time"
)

// QuestionLedger holds the approval questions asked by input_required
// that were answered. A requestState is the client's to send again, so
// without the ledger one approval would run its call again on every copy
// of a later round's state (or of the answer's own), and on every replica
// a copy reaches. A question is taken while a round runs on it, given back
// when that round ends in the upstream's own input_required (the next
// round runs on it), and kept once the call ended otherwise, until its TTL
// (which outlives every state that can carry it).
//
// It is state replicas share: the in-memory default (MemoryQuestionLedger)
// holds one process's questions, a shared store (Redis: SET NX with the
// TTL, DEL to give back) holds the deployment's. Every implementation
// passes state/statetest.TestQuestionLedger.
type QuestionLedger interface {
	// Take marks the question id in use for ttl: true when it was free,
	// false when it is in use (or the ledger is full). Taking is one
	// atomic step across every user of the store: of two Takes of one id
	// at once, one wins. An error means the store could not answer.
	Take(ctx context.Context, id string, ttl time.Duration) (bool, error)
	// Release gives id back, free to be taken again.
	Release(ctx context.Context, id string) error
}

// WithQuestionLedger replaces the in-memory ledger of answered approval
// questions, e.g. with a store that replicas share.
func WithQuestionLedger(l QuestionLedger) Option {
	return func(g *Gateway) error {
		if l != nil {
			g.questions = l
		}
		return nil
	}
}

// questionTTL outlives every state that can carry a question (the front
// end's RequestStateTTL, 15 minutes).
const questionTTL = 20 * time.Minute

// maxQuestions bounds the in-memory ledger.
const maxQuestions = 1 << 16

// MemoryQuestionLedger is the default QuestionLedger: the questions of
// this process, at most 65536 at once (a Take beyond refuses, so a flood
// of approvals denies calls rather than growing without bound).
type MemoryQuestionLedger struct {
	mu    sync.Mutex
	taken map[string]time.Time // id -> when it expires
}

// NewMemoryQuestionLedger returns an empty in-memory ledger.
func NewMemoryQuestionLedger() *MemoryQuestionLedger {
	return &MemoryQuestionLedger{taken: map[string]time.Time{}}
}

func (l *MemoryQuestionLedger) Take(_ context.Context, id string, ttl time.Duration) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	if until, ok := l.taken[id]; ok && now.Before(until) {
		return false, nil
	}
	if len(l.taken) >= maxQuestions {
		for k, until := range l.taken {
			if !now.Before(until) {
				delete(l.taken, k)
			}
		}
		if len(l.taken) >= maxQuestions {
			return false, nil
		}
	}
	l.taken[id] = now.Add(ttl)
	return true, nil
}

func (l *MemoryQuestionLedger) Release(_ context.Context, id string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.taken, id)
	return nil
}

// takeQuestion takes the question of a call's approval: "" (a state from
// before questions had ids) is never free. Why not, when it is not: for
// the DENIED message.
func (g *Gateway) takeQuestion(ctx context.Context, id string) (bool, error) {
	if id == "" {
		return false, nil
	}
	return g.questions.Take(ctx, id, questionTTL)
}

// releaseQuestion gives a question back for the next round of its call.
// A store that cannot answer leaves it taken until its TTL: the next round
// is then denied, and the caller asked anew by calling again.
func (g *Gateway) releaseQuestion(ctx context.Context, id string) {
	if id == "" {
		return
	}
	if err := g.questions.Release(context.WithoutCancel(ctx), id); err != nil {
		g.log.Warn("could not give an approval question back for the next round of its call; that round will be denied", "err", err)
	}
}

func newQuestionID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
