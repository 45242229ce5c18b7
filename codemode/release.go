package codemode

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/sandboxrt/sandbox/gateway"
	"github.com/sandboxrt/sandbox/runtime"
)

// A run the front end may release while it waits for a person's approval
// keeps a journal (runtime.Journal); the front end hands it back, opaque,
// to the run that resumes it (gateway.WithResume), and releases the run
// through the call's context (gateway.WithRelease, runtime.Suspend).

// releasedJournal is what code mode hands the front end when it releases
// a run: the runtime's journal, and the run's root (resultOwner: results an
// anonymous caller's run held before its release stay its own after).
type releasedJournal struct {
	Root    string           `json:"root"`
	Journal *runtime.Journal `json:"journal"`
}

// runJournal is the journal a top-level run keeps and replays, and the
// root of the run it resumes (""): nil for a run that keeps none (the
// front end did not ask for one, or the run is nested: releasing it would
// make its caller's call again).
func runJournal(ctx context.Context, nested bool) (*runtime.Journal, string, error) {
	raw, ok := gateway.ResumeFrom(ctx)
	if !ok || nested {
		return nil, "", nil
	}
	if len(raw) == 0 {
		return &runtime.Journal{}, "", nil
	}
	var r releasedJournal
	if err := json.Unmarshal(raw, &r); err != nil || r.Journal == nil {
		return nil, "", fmt.Errorf("codemode: the journal of the run to resume cannot be read (%v); run the snippet again", err)
	}
	return r.Journal, r.Root, nil
}

// releasable is the context of one tool call of a run: one the front end
// can release when the run keeps a journal, one it cannot when the run is
// nested (the outer run's release would reach through it otherwise).
func releasable(ctx context.Context, journalled, nested bool, root string) context.Context {
	switch {
	case journalled:
		return gateway.WithRelease(ctx, func(then func([]byte)) bool {
			return runtime.Suspend(ctx, func(j *runtime.Journal) {
				raw, err := json.Marshal(releasedJournal{Root: root, Journal: j})
				if err == nil {
					then(raw)
				}
			})
		})
	case nested:
		return gateway.WithRelease(ctx, nil)
	}
	return ctx
}
