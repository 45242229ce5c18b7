package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/sandboxrt/sandbox/auth"
)

// declinePeer is a 2025 session that declares URL-mode elicitation and
// declines every question at once.
type declinePeer struct{}

func (declinePeer) Request(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	return json.RawMessage(`{"action":"decline"}`), nil
}
func (declinePeer) Notify(string, json.RawMessage) {}
func (declinePeer) Supports(c string) bool {
	return c == "elicitation" || c == CapabilityURLElicitation
}

// TestDeclinedSignInsDoNotPileUp: a client that declines every sign-in
// link at once ends each link, which stays (ended) until it would have
// expired. One principal calling in a loop must not pile them up: the
// store's memory, and the scan each new link makes of it, stay bounded.
func TestDeclinedSignInsDoNotPileUp(t *testing.T) {
	w := startSignInWorld(t)
	g := w.g
	caller := auth.Caller{Principal: w.bob, Session: "bob-declines"}
	g.OpenSession(caller, declinePeer{})
	for i := 0; i < 200; i++ {
		_, err := g.Call(context.Background(), CallRequest{Tool: "secure:whoami", Caller: caller})
		var e *Error
		if !errors.As(err, &e) || e.Code != CodeAuthRequired {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	store := g.signIns.store.(*MemorySignInStore)
	store.mu.Lock()
	n := len(store.by)
	store.mu.Unlock()
	// The ended ones past maxSignInsPerPrincipal-1 go at the next link
	// (SignInStore.Put; both stores pass statetest's case of it).
	if n > maxSignInsPerPrincipal {
		t.Fatalf("%d sign-in links kept for one principal's 200 declined calls", n)
	}
}
