package frontend

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/sandboxrt/sandbox/auth"
)

// fullReleasedStore refuses every run: every principal's runs fill it.
type fullReleasedStore struct{}

func (fullReleasedStore) Put(context.Context, string, string, []byte, time.Duration) error {
	return ErrReleasedStoreFull
}
func (fullReleasedStore) Take(context.Context, string, string) ([]byte, error) { return nil, nil }

// TestAReleasedRunTheStoreCannotKeepWaitsInAWorker: a run released while
// it waits for an approval, which the store cannot keep (full of every
// principal's runs), is not lost: it is replayed from its journal into a
// run that keeps its worker, whose question is asked again and answered
// as a held run's; the client sees input_required, then the result.
func TestAReleasedRunTheStoreCannotKeepWaitsInAWorker(t *testing.T) {
	s := &Server{states: randomStateSealer(), released: fullReleasedStore{}, log: slog.New(slog.DiscardHandler)}
	ctx := auth.WithPrincipal(context.Background(), auth.Principal{ID: "alice", Tenant: "acme"})
	var replays atomic.Int32
	var journal []byte
	replay := func(ctx context.Context, j []byte) (any, error) {
		replays.Add(1)
		journal = j
		p, _ := ctx.Value(pausedRunKey{}).(*pausedRun)
		if p == nil {
			return nil, errors.New("the replay has no paused run to ask through")
		}
		answer, err := p.Request(ctx, "elicitation/create", json.RawMessage(`{"message":"remove a.txt?","requestedSchema":{"type":"object"}}`))
		if err != nil {
			return nil, err
		}
		return mcp.NewToolResultText("answered " + string(answer)), nil
	}
	rel := releasedRun{Principal: "acme/alice", Journal: json.RawMessage(`{"calls":1}`),
		Questions: []releasedQuestion{{Key: "sandbox_q1", Method: "elicitation/create", Params: json.RawMessage(`{}`)}}}
	res, err := keepReleased(s, ctx, "r1", "binding", rel, toolAnswers, replay)
	if err != nil || res.ResultType != mcp.ResultTypeInputRequired || len(res.InputRequests) != 1 {
		t.Fatalf("a run the store refused: %+v, %v; want input_required with its question", res, err)
	}
	if replays.Load() != 1 || string(journal) != `{"calls":1}` {
		t.Fatalf("replayed %d times, with journal %s", replays.Load(), journal)
	}
	id, ok := s.pausedRunOf(ctx, "binding", res.RequestState)
	if !ok || s.paused.get(id) == nil {
		t.Fatalf("the state %q names no run held here", res.RequestState)
	}
	var key string
	for k := range res.InputRequests {
		key = k
	}
	held := s.paused.get(id)
	held.answer(json.RawMessage(`{"` + key + `":{"action":"accept"}}`))
	done, err := waitRun(s, ctx, held, "binding", toolAnswers)
	if err != nil || done.IsError || len(done.Content) != 1 {
		t.Fatalf("the answered run: %+v, %v", done, err)
	}
	if text := done.Content[0].(mcp.TextContent).Text; text != `answered {"action":"accept"}` {
		t.Errorf("the run's result: %q", text)
	}

	// Without a replay (a retry that answered none), the refusal says the store is full.
	refused, _ := keepReleased(s, ctx, "r2", "binding", rel, toolAnswers, nil)
	if !refused.IsError || len(refused.Content) != 1 || !strings.Contains(refused.Content[0].(mcp.TextContent).Text, "keeps as many paused runs as it can hold") {
		t.Errorf("a refusal without a replay: %+v", refused)
	}
}
