package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sandboxrt/sandbox/auth"
)

// bothModesPeer declares form and URL-mode elicitation: it records what it
// is asked and answers a URL with accept.
type bothModesPeer struct {
	mu    sync.Mutex
	asked []map[string]any
	links chan string
}

func (p *bothModesPeer) Request(_ context.Context, _ string, params json.RawMessage) (json.RawMessage, error) {
	var m map[string]any
	_ = json.Unmarshal(params, &m)
	p.mu.Lock()
	p.asked = append(p.asked, m)
	p.mu.Unlock()
	if m["mode"] == "url" {
		p.links <- m["url"].(string)
		return json.RawMessage(`{"action":"accept"}`), nil
	}
	return json.RawMessage(`{"action":"accept","content":{"decision":"approve"}}`), nil
}

func (p *bothModesPeer) Notify(string, json.RawMessage) {}

func (p *bothModesPeer) Supports(c string) bool {
	return c == "elicitation" || c == CapabilityFormElicitation || c == CapabilityURLElicitation
}

// TestApprovalModeURL: with policy.approvalMode "url", a client that
// declares both modes is sent to the approval page (where the caller's
// principal decides it: DecideApproval); with the default, it gets the
// form; without an approval page, the form too. A call nobody decides on
// the page is DENIED at the approval timeout.
func TestApprovalModeURL(t *testing.T) {
	t.Parallel()
	settings := DefaultSettings()
	settings.Policy = &Policy{ApprovalTimeout: 2 * time.Second, ApprovalMode: ApprovalByURL, Rules: []PolicyRule{
		{Tools: "a:delete_thing", Action: PolicyApprove},
	}}
	g := policyGateway(t, settings, false)
	caller := auth.Caller{Principal: auth.Principal{ID: "alice", Tenant: "acme"}, Session: "s1"}
	peer := &bothModesPeer{links: make(chan string, 2)}
	g.OpenSession(caller, peer)
	call := func() error {
		_, err := g.Call(context.Background(), CallRequest{Tool: "a:delete_thing", Caller: caller})
		return err
	}

	// No approval page: the form, though the policy prefers URLs.
	if err := call(); err != nil || peer.asked[0]["requestedSchema"] == nil {
		t.Fatalf("without a page: %v, asked %v", err, peer.asked)
	}

	g.SetApprovalPage("https://gw.example.com/sandbox/approve")
	done := make(chan error, 1)
	go func() { done <- call() }()
	link := <-peer.links
	id := strings.TrimPrefix(link, "https://gw.example.com/sandbox/approve/")
	pending, ok := g.PendingApprovalByID(id)
	if !ok || !pending.Page || pending.Principal != "acme/alice" || !strings.Contains(pending.Question, "An agent wants to call a:delete_thing.") {
		t.Fatalf("pending %+v (%v) for link %s", pending, ok, link)
	}
	if err := g.DecideApproval(id, true, "acme/alice"); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("approved on the page: %v", err)
	}

	// Nobody decides: DENIED at the timeout, and the desk is left empty.
	go func() { done <- call() }()
	<-peer.links
	err := <-done
	var e *Error
	if !errors.As(err, &e) || e.Code != CodeDenied || !strings.Contains(e.Message, "nobody answered within 2s") {
		t.Fatalf("undecided: %v", err)
	}
	if n := len(g.PendingApprovals()); n != 0 {
		t.Fatalf("%d approvals left on the desk", n)
	}
}
