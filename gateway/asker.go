package gateway

import (
	"context"
	"encoding/json"
)

// InputAsker asks for what an upstream requests of its client while it
// serves a call (elicitation/create, sampling/createMessage), when the call
// has someone to ask other than a client session: a task's run, which asks
// through the task's input_required and waits for tasks/update. It returns
// the result the upstream gets (an elicitation's or sampling's result).
type InputAsker func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)

type inputAskerKey struct{}

// WithInputAsker makes a call served under ctx ask a, not the caller's
// client session, for what its upstream requests.
func WithInputAsker(ctx context.Context, a InputAsker) context.Context {
	return context.WithValue(ctx, inputAskerKey{}, a)
}

func inputAskerFrom(ctx context.Context) InputAsker {
	a, _ := ctx.Value(inputAskerKey{}).(InputAsker)
	return a
}
