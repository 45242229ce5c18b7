package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/sandboxrt/sandbox/auth"
)

// approvalGateway has one tool, db:drop_database (titled, declared
// destructive, any arguments), that every call of waits for approval, and
// a session whose client answers with answer.
func approvalGateway(t *testing.T, answer string) (*Gateway, *elicitingPeer, auth.Caller) {
	t.Helper()
	s := server.NewMCPServer("db", "1")
	s.AddTool(mcp.NewTool("drop_database", mcp.WithTitleAnnotation("Drop a database"),
		mcp.WithDescription("Drops the database named by target.\nIt cannot be undone."),
		mcp.WithDestructiveHintAnnotation(true), mcp.WithIdempotentHintAnnotation(true)),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("dropped"), nil
		})
	settings := DefaultSettings()
	settings.Policy = &Policy{ApprovalTimeout: 5 * time.Second, Rules: []PolicyRule{{Tools: "db:*", Action: PolicyApprove}}}
	g, err := New(&Config{Servers: map[string]*ServerConfig{}, Settings: settings}, WithInProcessServer("db", s, nil))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := g.Start(ctx); err != nil {
		t.Fatal(err)
	}
	peer := &elicitingPeer{caps: true, answer: answer}
	caller := auth.Caller{Principal: auth.Principal{ID: "alice"}, Session: "s1"}
	g.OpenSession(caller, peer)
	return g, peer, caller
}

// askedAbout calls db:drop_database with args and returns the question the
// person was asked ("" when none was) and the call's error code.
func askedAbout(t *testing.T, g *Gateway, peer *elicitingPeer, caller auth.Caller, args string) (question, code, msg string) {
	t.Helper()
	peer.mu.Lock()
	asked := len(peer.messages)
	peer.mu.Unlock()
	_, err := g.Call(context.Background(), CallRequest{Tool: "db:drop_database", Caller: caller, Arguments: json.RawMessage(args)})
	code = "OK"
	var ge *Error
	if errors.As(err, &ge) {
		code, msg = string(ge.Code), ge.Message
	} else if err != nil {
		t.Fatal(err)
	}
	peer.mu.Lock()
	defer peer.mu.Unlock()
	if len(peer.messages) == asked {
		return "", code, msg
	}
	var params struct{ Message string }
	if err := json.Unmarshal([]byte(peer.messages[len(peer.messages)-1]), &params); err != nil {
		t.Fatal(err)
	}
	return params.Message, code, msg
}

// TestApprovalShowsEveryKey is the first attack: padding sent first
// pushed `target` past the 600 bytes the person saw, and the call was
// approved. Every key is listed now, in sorted order, each long value cut
// by itself, saying how much.
func TestApprovalShowsEveryKey(t *testing.T) {
	t.Parallel()
	g, peer, caller := approvalGateway(t, "deny")
	padding := strings.Repeat("A", 5000)
	for _, args := range []string{
		`{"padding": "` + padding + `", "target": "DROP-PRODUCTION-DATABASE"}`,
		`{"zz_padding": "` + padding + `", "target": "DROP-PRODUCTION-DATABASE"}`,
		`{"a": {"padding": "` + padding + `"}, "b": ["` + padding + `", "` + padding + `"], "target": "DROP-PRODUCTION-DATABASE"}`,
	} {
		q, code, _ := askedAbout(t, g, peer, caller, args)
		if code != "DENIED" {
			t.Errorf("the person denied it, and the call is %s", code)
		}
		if !strings.Contains(q, "\n  target: \"DROP-PRODUCTION-DATABASE\"\n") {
			t.Errorf("the question hides the target:\n%s", q)
		}
		if !strings.Contains(q, `"… (4800 more characters cut)`) || strings.Contains(q, strings.Repeat("A", 201)) {
			t.Errorf("the padding is not cut by itself, saying how much:\n%s", q)
		}
		if len(q) > maxQuestionBytes {
			t.Errorf("the question is %d bytes", len(q))
		}
	}
	// The tool's title and annotations are part of the question.
	q, _, _ := askedAbout(t, g, peer, caller, `{"target": "x"}`)
	for _, want := range []string{"An agent wants to call db:drop_database.\n", `Tool: "Drop a database"`,
		"Annotations: readOnlyHint false, destructiveHint true, idempotentHint true, openWorldHint true\n",
		"Arguments (every key, in sorted order):\n  target: \"x\"\nAllow it?"} {
		if !strings.Contains(q, want) {
			t.Errorf("the question lacks %q:\n%s", want, q)
		}
	}
	// Hints the server does not declare are said to be MCP's defaults
	// (mcp-go declares all four; other servers do not).
	for annotations, want := range map[string]string{
		"":                           "readOnlyHint false*, destructiveHint true*, idempotentHint false*, openWorldHint true* (* not declared: MCP's default)",
		`{"readOnlyHint": true}`:     "readOnlyHint true, destructiveHint false, idempotentHint false*, openWorldHint true* (* not declared: MCP's default)",
		`{"openWorldHint": "yes"}`:   "readOnlyHint false*, destructiveHint true*, idempotentHint false*, openWorldHint true* (* not declared: MCP's default)",
		`{"destructiveHint": false}`: "readOnlyHint false*, destructiveHint false, idempotentHint false*, openWorldHint true* (* not declared: MCP's default)",
	} {
		if got := annotationLine(&Tool{Annotations: json.RawMessage(annotations)}); got != want {
			t.Errorf("annotations %s: %s", annotations, got)
		}
	}
	// The same arguments in another order are the same question, at every depth.
	q1, _, _ := askedAbout(t, g, peer, caller, `{"b": {"y": 1, "x": [2, {"q": 1, "p": 2}]}, "a": null}`)
	q2, _, _ := askedAbout(t, g, peer, caller, `{"a": null, "b": {"x": [2, {"p": 2, "q": 1}], "y": 1}}`)
	if q1 != q2 || !strings.Contains(q1, "  a: null\n  b: (2 keys)\n    x: (2 items)\n      - 2\n      - (2 keys)\n        p: 2\n        q: 1\n    y: 1\n") {
		t.Errorf("not one canonical order:\n%s\n---\n%s", q1, q2)
	}
}

// TestApprovalEscapesWhatWouldMisleadThePerson is the second attack,
// a U+202E in an argument reordering the text the person reads, and its
// relatives: the other bidirectional controls, C0/C1 controls (a newline
// forging a line of the question, ESC driving a terminal), in values, keys
// and the server's own title.
func TestApprovalEscapesWhatWouldMisleadThePerson(t *testing.T) {
	t.Parallel()
	g, peer, caller := approvalGateway(t, "deny")
	forged := "\n  target: \"staging\""
	args, _ := json.Marshal(map[string]any{
		"target":                      "\u202Eesab-atad-noitcudorp",
		"note":                        "ok" + forged,
		"k\u2066ey\u2069\u200e\u200f": "\u202a\u202b\u202c\u202d",
		"term":                        "\x1b[2J\x1b[Hcleared\u0085\u009b",
		"nbsp":                        "a\u00a0b\u200bc",
	})
	q, _, _ := askedAbout(t, g, peer, caller, string(args))
	for _, r := range q {
		if (r < 0x20 && r != '\n') || (r >= 0x7f && r <= 0x9f) || (r >= 0x200b && r <= 0x200f) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) || r == 0xa0 {
			t.Errorf("the question carries %U unescaped:\n%s", r, q)
		}
	}
	for _, want := range []string{
		`  target: "\u202Eesab-atad-noitcudorp"`,
		`  note: "ok\n  target: \"staging\""`,
		`  "k\u2066ey\u2069\u200E\u200F": "\u202A\u202B\u202C\u202D"`,
		`  term: "\u001B[2J\u001B[Hcleared\u0085\u009B"`,
		`  nbsp: "a\u00A0b\u200Bc"`,
	} {
		if !strings.Contains(q, "\n"+want+"\n") {
			t.Errorf("the question lacks the line %s:\n%s", want, q)
		}
	}
	if strings.Contains(q, "\n  target: \"staging\"") {
		t.Errorf("a value forged a line:\n%s", q)
	}
}

// TestApprovalDeniesWhatItCannotShow: arguments whose keys do not all fit in
// the question are denied without asking, saying why and what to do; values
// are cut shorter first, so that a call with many long values is still
// asked about.
func TestApprovalDeniesWhatItCannotShow(t *testing.T) {
	t.Parallel()
	g, peer, caller := approvalGateway(t, "approve")
	keys := map[string]string{}
	for i := range 600 {
		keys[fmt.Sprintf("key%03d", i)] = "v"
	}
	args, _ := json.Marshal(keys)
	q, code, msg := askedAbout(t, g, peer, caller, string(args))
	if q != "" || code != "DENIED" || !strings.Contains(msg, "its arguments cannot all be shown to the person (600 keys do not fit in the 4000 bytes") ||
		!strings.Contains(msg, "send fewer keys per call") {
		t.Errorf("600 keys: asked %q, %s %s", q, code, msg)
	}
	// An array of objects is never cut (its items' keys would be hidden).
	items := make([]map[string]int, 300)
	for i := range items {
		items[i] = map[string]int{"id": i}
	}
	args, _ = json.Marshal(map[string]any{"items": items})
	if q, code, _ := askedAbout(t, g, peer, caller, string(args)); q != "" || code != "DENIED" {
		t.Errorf("300 objects in an array: asked %q, %s", q, code)
	}
	// Twenty keys of 1000 characters each: cut to fewer characters, asked.
	long := map[string]string{}
	for i := range 20 {
		long[fmt.Sprintf("k%02d", i)] = strings.Repeat("x", 1000)
	}
	args, _ = json.Marshal(long)
	q, code, _ = askedAbout(t, g, peer, caller, string(args))
	if code != "OK" || strings.Count(q, "more characters cut") != 20 || !strings.Contains(q, "\n  k19: ") {
		t.Errorf("20 long values: %s\n%s", code, q)
	}
	// A long array of numbers is cut, saying how much.
	q, code, _ = askedAbout(t, g, peer, caller, `{"ids": [`+strings.TrimSuffix(strings.Repeat("7,", 500), ",")+`]}`)
	if code != "OK" || !strings.Contains(q, "… (480 of 500 items cut)") {
		t.Errorf("500 numbers: %s\n%s", code, q)
	}
}
