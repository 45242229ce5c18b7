package frontend

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/sandboxrt/sandbox/auth"
)

// TestRequestStateRefusesWhatItDidNotIssue: a requestState opens only for
// the principal and the request it was issued for, within its time, as it
// was issued; everything else is refused with the same message.
func TestRequestStateRefusesWhatItDidNotIssue(t *testing.T) {
	sealer := randomStateSealer()
	clock := time.Now()
	sealer.now = func() time.Time { return clock }
	alice, bob := auth.Principal{ID: "alice"}, auth.Principal{ID: "bob"}
	binding := requestBinding("tools/call", "conf__delete", json.RawMessage(`{"id": 7, "force": true}`))
	state := sealer.seal(alice, binding, "upstream-state-1")

	// The same arguments re-encoded (keys in another order, spaces) are the same request.
	same := requestBinding("tools/call", "conf__delete", json.RawMessage(`{"force":true,"id":7}`))
	if got, err := sealer.open(alice, same, state); err != nil || got != "upstream-state-1" {
		t.Fatalf("its own state: %q, %v", got, err)
	}
	if strings.Contains(state, "upstream-state-1") {
		t.Errorf("the upstream's state shows through the sealed one: %s", state)
	}

	forged := requestStatePrefix + base64.RawURLEncoding.EncodeToString(make([]byte, 64))
	raw := make([]byte, 48)
	_, _ = rand.Read(raw)
	tampered := []byte(state)
	tampered[len(tampered)-5] ^= 0x01
	other := randomStateSealer() // another process's key
	for name, c := range map[string]struct {
		p       auth.Principal
		binding string
		state   string
	}{
		"tampered":               {alice, binding, string(tampered)},
		"suffix":                 {alice, binding, state + "-TAMPERED"},
		"forged":                 {alice, binding, forged},
		"random":                 {alice, binding, requestStatePrefix + base64.RawURLEncoding.EncodeToString(raw)},
		"not ours":               {alice, binding, "upstream-state-1"},
		"empty body":             {alice, binding, requestStatePrefix},
		"another principal's":    {bob, binding, state},
		"another request's":      {alice, requestBinding("tools/call", "conf__delete", json.RawMessage(`{"id": 8, "force": true}`)), state},
		"another tool's":         {alice, requestBinding("tools/call", "conf__list", json.RawMessage(`{"id": 7, "force": true}`)), state},
		"another method's":       {alice, requestBinding("prompts/get", "conf__delete", json.RawMessage(`{"id": 7, "force": true}`)), state},
		"another process's seal": {alice, binding, other.seal(alice, binding, "upstream-state-1")},
	} {
		if got, err := sealer.open(c.p, c.binding, c.state); err != errBadState {
			t.Errorf("%s: opened to %q, %v; want errBadState", name, got, err)
		}
	}

	clock = clock.Add(RequestStateTTL + time.Second)
	if got, err := sealer.open(alice, binding, state); err != errBadState {
		t.Errorf("expired: opened to %q, %v", got, err)
	}
}

// TestWithRequestStateKey: replicas given the same key open each other's
// states; a key of the wrong size is not taken.
func TestWithRequestStateKey(t *testing.T) {
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	a, b := &Server{states: randomStateSealer()}, &Server{states: randomStateSealer()}
	WithRequestStateKey(key)(a)
	WithRequestStateKey(key)(b)
	binding := requestBinding("resources/read", "test://x", nil)
	state := a.states.seal(auth.Anonymous(), binding, "")
	if _, err := b.states.open(auth.Anonymous(), binding, state); err != nil {
		t.Fatalf("a replica with the same key refused the state: %v", err)
	}
	before := b.states
	WithRequestStateKey([]byte("short"))(b)
	if b.states != before {
		t.Error("a 5-byte key replaced the sealer")
	}
}

// TestPausedRunsCapPerPrincipal: one principal may hold MaxPausedRuns
// paused runs; the next is refused, another principal's is not, and a run
// kept again (a second round) does not count twice.
func TestPausedRunsCapPerPrincipal(t *testing.T) {
	var runs pausedRuns
	for i := 0; i < MaxPausedRuns; i++ {
		if !runs.put(&pausedRun{id: fmt.Sprint("a", i), principal: "alice"}) {
			t.Fatalf("run %d of alice refused", i)
		}
	}
	if runs.put(&pausedRun{id: "a-extra", principal: "alice"}) {
		t.Error("alice paused one run more than MaxPausedRuns")
	}
	if !runs.put(runs.get("a0")) {
		t.Error("a run paused again for its next round was refused")
	}
	if !runs.put(&pausedRun{id: "b0", principal: "bob"}) {
		t.Error("bob's run was refused for alice's")
	}
	runs.remove("a1")
	if !runs.put(&pausedRun{id: "a-extra", principal: "alice"}) {
		t.Error("a freed place was not given")
	}
}

// TestPausedRunRetriesHoldNothing: a client that sends the same retry of a
// paused run again and again (its questions still unanswered) is answered
// input_required each time, and holds nothing more for it: the run is
// forgotten by one watcher, not one per retry.
func TestPausedRunRetriesHoldNothing(t *testing.T) {
	s := &Server{states: randomStateSealer()}
	ctx := auth.WithPrincipal(context.Background(), auth.Principal{ID: "mallory", Tenant: "evil"})
	_, cancel := context.WithCancel(context.Background())
	p := &pausedRun{id: "r1", principal: "evil/mallory", cancel: cancel, asked: make(chan struct{}, 1), done: make(chan struct{}),
		pending: map[string]*question{"sandbox_q1": {method: "elicitation/create", params: json.RawMessage(`{"message":"ok?","requestedSchema":{"type":"object"}}`), answer: make(chan json.RawMessage, 1)}}}
	defer close(p.done)
	before := goruntime.NumGoroutine()
	const retries = 200
	for range retries {
		res, err := waitRun(s, ctx, p, "binding", toolAnswers)
		if err != nil || res.ResultType != mcp.ResultTypeInputRequired {
			t.Fatalf("a retry of a paused run: %+v, %v", res, err)
		}
	}
	if grew := goruntime.NumGoroutine() - before; grew > retries/10 { // room for goroutines of other tests
		t.Errorf("%d retries of one paused run left %d goroutines behind, each until the run ends and 2 minutes more", retries, grew)
	}
}

// TestUpstreamStateIsNoPausedRun: the state an upstream issued (sealed as
// it is for prompts and resources) never names one of the front end's
// paused runs, whatever it says: a run is named only by a state the front
// end sealed for it.
func TestUpstreamStateIsNoPausedRun(t *testing.T) {
	s := &Server{states: randomStateSealer()}
	alice := auth.Principal{ID: "alice", Tenant: "acme"}
	ctx := auth.WithPrincipal(context.Background(), alice)
	s.paused.put(&pausedRun{id: "0123abcd", principal: "evil/bob"})
	if id, ok := s.pausedRunOf(ctx, "binding", s.states.seal(alice, "binding", "run:0123abcd")); ok {
		t.Errorf("an upstream's state %q was taken for paused run %q", "run:0123abcd", id)
	}
	if id, ok := s.pausedRunOf(ctx, "binding", s.states.sealRun(alice, "binding", "0123abcd")); !ok || id != "0123abcd" {
		t.Errorf("a paused run's own state: %q, %v", id, ok)
	}
}
