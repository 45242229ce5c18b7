package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/gateway/internal/testserver"
)

func callCode(t *testing.T, g *Gateway, c auth.Caller, tool string) Code {
	t.Helper()
	_, err := g.Call(context.Background(), CallRequest{Tool: tool, Arguments: json.RawMessage(`{"text":"x"}`), Caller: c})
	if err == nil {
		return "OK"
	}
	var ge *Error
	if !errors.As(err, &ge) {
		t.Fatalf("%s: not a *gateway.Error: %v", tool, err)
	}
	return ge.Code
}

// TestTokensBelongToTheirCaller: the operator's tokens serve the operator
// only; a session's tokens serve that session only and go with it.
func TestTokensBelongToTheirCaller(t *testing.T) {
	t.Parallel()
	g, _ := startGateway(t, `{"mcpServers": {}}`, WithInProcessServer("mem", testserver.New(), &ServerConfig{SessionToken: true}))
	ctx := context.Background()
	s1 := testCaller("s1")
	if got := callCode(t, g, operator, "mem:echo"); got != CodeAuthRequired {
		t.Fatalf("operator without a token: %s", got)
	}
	if err := g.SetOperatorToken(ctx, "mem", "op-token"); err != nil {
		t.Fatal(err)
	}
	if got := callCode(t, g, operator, "mem:echo"); got != "OK" {
		t.Fatalf("operator with a token: %s", got)
	}
	if got := callCode(t, g, s1, "mem:echo"); got != CodeAuthRequired {
		t.Fatalf("an anonymous session used the operator's token: %s", got)
	}
	sess := g.OpenSession(s1, nil)
	if err := sess.SetToken(ctx, "MEM", "s1-token"); err != nil {
		t.Fatal(err)
	}
	if got := callCode(t, g, s1, "mem:echo"); got != "OK" {
		t.Fatalf("session with its token: %s", got)
	}
	// The same session id under another principal is another caller.
	if got := callCode(t, g, auth.Caller{Principal: auth.Principal{ID: "mallory"}, Session: "s1"}, "mem:echo"); got != CodeAuthRequired {
		t.Fatalf("another principal used s1's token: %s", got)
	}
	if got := callCode(t, g, auth.Caller{Principal: auth.Anonymous()}, "mem:echo"); got != CodeAuthRequired {
		t.Fatalf("a sessionless caller used a session's token: %s", got)
	}
	sess.Close()
	if got := callCode(t, g, s1, "mem:echo"); got != CodeAuthRequired {
		t.Fatalf("a closed session's token was kept: %s", got)
	}
	if _, ok, _ := g.tokens.Token(ctx, sessionScope(s1), "mem"); ok {
		t.Fatal("the token store still holds a closed session's token")
	}
	sess.Close() // twice is a no-op
}

// TestNarrowedSessionCannotCallOtherServers: the scope step applies a
// session's narrowing to every call, whoever routes it.
func TestNarrowedSessionCannotCallOtherServers(t *testing.T) {
	t.Parallel()
	g, _ := startGateway(t, `{"mcpServers": {}}`,
		WithInProcessServer("a", testserver.New(), nil), WithInProcessServer("b", testserver.New(), nil))
	s1 := testCaller("s1")
	sess := g.OpenSession(s1, nil)
	defer sess.Close()
	sess.Narrow([]string{"b"})
	if got, narrowed := sess.Servers(); !narrowed || strings.Join(got, ",") != "b" {
		t.Fatalf("servers = %v %v", got, narrowed)
	}
	_, err := g.Call(context.Background(), CallRequest{Tool: "a:echo", Arguments: json.RawMessage(`{"text":"x"}`), Caller: s1})
	var ge *Error
	if !errors.As(err, &ge) || ge.Code != CodeServiceNotFound || !strings.Contains(ge.Message, "gateway__connect_servers") {
		t.Fatalf("call outside the narrowing: %v", err)
	}
	if got := callCode(t, g, s1, "b:echo"); got != "OK" {
		t.Fatalf("call inside the narrowing: %s", got)
	}
	if got := callCode(t, g, testCaller("s2"), "a:echo"); got != "OK" {
		t.Fatalf("another session was narrowed too: %s", got)
	}
	sess.Narrow(nil)
	if got := callCode(t, g, s1, "a:echo"); got != "OK" {
		t.Fatalf("after widening: %s", got)
	}
}

// TestPrincipalScopedToServers: a principal whose credentials name servers
// calls only those, directly and through pass-through requests, with
// FORBIDDEN naming what it may use.
func TestPrincipalScopedToServers(t *testing.T) {
	t.Parallel()
	g, _ := startGateway(t, `{"mcpServers": {}}`,
		WithInProcessServer("a", testserver.New(), nil), WithInProcessServer("b", testserver.New(), nil))
	agent := auth.Caller{Principal: auth.Principal{ID: "agent-b", Scopes: []string{auth.ServerScope("b")}}, Session: "x"}
	_, err := g.Call(context.Background(), CallRequest{Tool: "a:echo", Arguments: json.RawMessage(`{"text":"x"}`), Caller: agent})
	var ge *Error
	if !errors.As(err, &ge) || ge.Code != CodeForbidden || !strings.Contains(ge.Message, "you may use: b") {
		t.Fatalf("call to a server outside the principal's scope: %v", err)
	}
	if got := callCode(t, g, agent, "b:echo"); got != "OK" {
		t.Fatalf("call inside the scope: %s", got)
	}
	if g.Sees(agent, "a") || !g.Sees(agent, "b") {
		t.Fatal("Sees disagrees with the scope")
	}
	// A session cannot widen what its principal may use.
	sess := g.OpenSession(agent, nil)
	defer sess.Close()
	sess.Narrow([]string{"a", "b"})
	if got := callCode(t, g, agent, "a:echo"); got != CodeForbidden {
		t.Fatalf("narrowing widened the scope: %s", got)
	}
	if _, err := g.GetPrompt(context.Background(), agent, "a__greet", nil); !errors.As(err, &ge) || ge.Code != CodeForbidden {
		t.Fatalf("prompt of a server outside the scope: %v", err)
	}
	if err := g.SubscribeResource(context.Background(), agent, "test://static"); !errors.As(err, &ge) || ge.Code != CodeForbidden {
		t.Fatalf("subscribing to a resource of a server outside the scope: %v", err)
	}
	if err := g.SubscribeResource(context.Background(), agent, "test://"+strings.Repeat("x", 4096)); err == nil {
		t.Fatal("a 4 KiB URI was subscribed to")
	}
}
