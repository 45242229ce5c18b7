package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

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
// calls only those, directly and through pass-through requests, and any
// other server does not exist for it: every answer about one reads as the
// answer about a server, prompt or URI nobody configured, and names none.
func TestPrincipalScopedToServers(t *testing.T) {
	t.Parallel()
	g, _ := startGateway(t, `{"mcpServers": {}}`,
		WithInProcessServer("a", testserver.New(), nil), WithInProcessServer("b", testserver.New(), nil),
		WithInProcessServer("finance_payroll", resourceServer("finance_payroll", "payroll://2026/salaries"), nil),
		WithInProcessServer("notes", resourceServer("notes", "notes://today"), nil))
	agent := auth.Caller{Principal: auth.Principal{ID: "agent-b", Tenant: "t", Scopes: []string{auth.ServerScope("b"), auth.ServerScope("notes")}}, Session: "x"}
	ctx := context.Background()
	// same fails unless hidden and unknown get the same answer, bar the
	// name asked for.
	same := func(what string, hidden, unknown error, hiddenName, unknownName string) {
		t.Helper()
		var h, u *Error
		if !errors.As(hidden, &h) || !errors.As(unknown, &u) {
			t.Fatalf("%s: %v / %v", what, hidden, unknown)
		}
		hd, _ := json.Marshal(h.Data)
		ud, _ := json.Marshal(u.Data)
		if h.Code != u.Code || strings.ReplaceAll(h.Message, hiddenName, unknownName) != u.Message ||
			strings.ReplaceAll(string(hd), hiddenName, unknownName) != string(ud) {
			t.Errorf("%s: a hidden server's answer differs from an unknown one's:\n%s %s %s\n%s %s %s", what, h.Code, h.Message, hd, u.Code, u.Message, ud)
		}
		if strings.Contains(u.Message+string(ud), "finance") || strings.Contains(u.Message+string(ud), `"a"`) {
			t.Errorf("%s: names a hidden server: %s %s", what, u.Message, ud)
		}
	}
	call := func(tool string) error {
		_, err := g.Call(ctx, CallRequest{Tool: tool, Arguments: json.RawMessage(`{"text":"x"}`), Caller: agent})
		return err
	}
	same("a call", call("a:echo"), call("zz:echo"), `"a"`, `"zz"`)
	same("a call by wire name", call("a__echo"), call("zz__echo"), "a__echo", "zz__echo")
	if got := callCode(t, g, agent, "b:echo"); got != "OK" {
		t.Fatalf("call inside the scope: %s", got)
	}
	var ge *Error
	if err := call("b:ech"); !errors.As(err, &ge) || !strings.Contains(ge.Message, "did you mean b:echo") || strings.Contains(ge.Message, "a:") {
		t.Errorf("suggestions of another server's tools: %v", err)
	}
	if g.Sees(agent, "a") || !g.Sees(agent, "b") {
		t.Fatal("Sees disagrees with the scope")
	}
	// A session cannot widen what its principal may use.
	sess := g.OpenSession(agent, nil)
	defer sess.Close()
	sess.Narrow([]string{"a", "b"})
	same("a call after narrowing", call("a:echo"), call("zz:echo"), `"a"`, `"zz"`)
	sess.Narrow(nil)

	_, hidden := g.GetPrompt(ctx, agent, "a__greet", nil)
	_, unknown := g.GetPrompt(ctx, agent, "zz__greet", nil)
	same("prompts/get", hidden, unknown, "a__greet", "zz__greet")
	complete := func(ref string) error {
		_, err := g.Complete(ctx, agent, json.RawMessage(`{"ref":`+ref+`,"argument":{"name":"name","value":"A"}}`))
		return err
	}
	same("completion of a prompt", complete(`{"type":"ref/prompt","name":"a__greet"}`), complete(`{"type":"ref/prompt","name":"zz__greet"}`), "a__greet", "zz__greet")
	if _, ok := g.ResourceServer(agent, "payroll://2026/salaries"); ok {
		t.Error("ResourceServer resolved a hidden server's resource")
	}
	_, hidden = g.ReadResource(ctx, agent, "payroll://2026/salaries")
	_, unknown = g.ReadResource(ctx, agent, "payroll://2026/nothing")
	same("resources/read", hidden, unknown, "salaries", "nothing")
	same("completion of a resource", complete(`{"type":"ref/resource","uri":"payroll://2026/salaries"}`), complete(`{"type":"ref/resource","uri":"payroll://2026/nothing"}`), "salaries", "nothing")
	same("subscribing", g.SubscribeResource(ctx, agent, "payroll://2026/salaries"), g.SubscribeResource(ctx, agent, "payroll://2026/nothing"), "salaries", "nothing")

	// A URI several servers list resolves among the caller's own: the
	// operator reads finance_payroll's copy (the first by name), the agent
	// its notes'.
	for _, tc := range []struct {
		c    auth.Caller
		want string
	}{{agent, "notes"}, {auth.Caller{Principal: auth.Operator()}, "finance_payroll"}} {
		c, want := tc.c, tc.want
		raw, err := g.ReadResource(ctx, c, "shared://doc")
		if err != nil || !strings.Contains(string(raw), "read from "+want) {
			t.Errorf("%s reads shared://doc: %s %v", c, raw, err)
		}
		if server, ok := g.ResourceServer(c, "shared://doc"); !ok || server != want {
			t.Errorf("%s: ResourceServer = %q %v", c, server, ok)
		}
	}
	if err := g.SubscribeResource(ctx, agent, "shared://doc"); err != nil {
		t.Errorf("subscribing to its own server's copy: %v", err)
	}
	if err := g.SubscribeResource(ctx, agent, "test://"+strings.Repeat("x", 4096)); err == nil {
		t.Fatal("a 4 KiB URI was subscribed to")
	}
}

// resourceServer is an MCP server named name that lists uri and
// "shared://doc", and says its name in what they read.
func resourceServer(name, uri string) *server.MCPServer {
	s := server.NewMCPServer(name, "1", server.WithResourceCapabilities(true, true))
	for _, u := range []string{uri, "shared://doc"} {
		s.AddResource(mcp.NewResource(u, name+" "+u, mcp.WithMIMEType("text/plain")),
			func(ctx context.Context, r mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
				return []mcp.ResourceContents{mcp.TextResourceContents{URI: r.Params.URI, MIMEType: "text/plain", Text: "read from " + name}}, nil
			})
	}
	return s
}
