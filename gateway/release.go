package gateway

// A run of code mode waiting for a person's approval need not hold its
// worker: the front end may release it (the run ends, its journal is kept)
// and resume it by replay when the answer comes (runtime/journal.go,
// gateway/frontend/pausedrun.go). The gateway knows which questions can be
// asked again, code mode knows how to release its run, the front end
// decides; these context values connect the three without any of them
// importing another's internals.

import (
	"context"
	"errors"
)

// ErrReleased is what a Peer answers a question with when it released the
// run instead of waiting (ReleaseFor): no decision was taken, and the
// question is asked again when the run resumes.
var ErrReleased = errors.New("the run was released from its worker while it waits for the answer")

// ReleaseFunc ends the run a call belongs to while the call waits for a
// question, once the run's other calls in flight are answered; then gets
// the run's journal (opaque, private: it holds tool results) before the
// run's result is returned. false: the run cannot be released, and keeps
// waiting as before.
type ReleaseFunc func(then func(journal []byte)) bool

type (
	releaseKey     struct{}
	noReleaseKey   struct{}
	resumeKey      struct{}
	approvalAskKey struct{}
)

// WithoutRelease returns the context of a run that is never released
// (ReleaseFor is nil for every question it asks): one the front end put
// back in a worker because it could not keep it released.
func WithoutRelease(ctx context.Context) context.Context {
	return context.WithValue(ctx, noReleaseKey{}, true)
}

// WithRelease returns the context of a call made by a run that f can
// release (code mode sets it on each call of a run that keeps a journal);
// nil f takes the release away (a nested run's calls: releasing the run
// would make the nested run again from its start).
func WithRelease(ctx context.Context, f ReleaseFunc) context.Context {
	return context.WithValue(ctx, releaseKey{}, f)
}

// WithResume returns the context of a built-in tool's run that keeps a
// journal, so that it can be released while it waits, and that first
// replays journal (nil: a fresh run).
func WithResume(ctx context.Context, journal []byte) context.Context {
	if journal == nil {
		journal = []byte{}
	}
	return context.WithValue(ctx, resumeKey{}, journal)
}

// ResumeFrom is the journal of WithResume; ok false for a run that keeps
// none.
func ResumeFrom(ctx context.Context) (journal []byte, ok bool) {
	journal, ok = ctx.Value(resumeKey{}).([]byte)
	return journal, ok
}

// ReleaseFor is the ReleaseFunc of the run that asks a Peer the question
// of ctx, when that question can be asked again later: a policy's
// approval (the call has not run, and runs once approved). nil for any
// other question: an upstream's elicitation or sampling comes from a call
// that is live upstream, and its run must keep waiting.
func ReleaseFor(ctx context.Context) ReleaseFunc {
	if ctx.Value(approvalAskKey{}) == nil || ctx.Value(noReleaseKey{}) != nil {
		return nil
	}
	f, _ := ctx.Value(releaseKey{}).(ReleaseFunc)
	return f
}

// asApprovalAsk marks the context of a policy approval's question.
func asApprovalAsk(ctx context.Context) context.Context {
	return context.WithValue(ctx, approvalAskKey{}, true)
}
