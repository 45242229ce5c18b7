package codemode

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/examples/mcpserver"
	"github.com/sandboxrt/sandbox/gateway"
	"github.com/sandboxrt/sandbox/runtime"
	"github.com/sandboxrt/sandbox/vectorindex"
)

// scoreOf is the score of tool id in a search for intent by caller (-1
// when it is not in the top k).
func scoreOf(t *testing.T, e *Engine, caller auth.Caller, intent, id string, k int) (float64, int) {
	t.Helper()
	res, err := e.Search(context.Background(), SearchRequest{Intent: intent, K: k, Caller: caller})
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range res.Tools {
		if f.ID == id {
			return f.Score, i
		}
	}
	return -1, -1
}

// TestLearningFromASessionsCalls: through Search and Execute, the tools a
// session calls after a search rank for the next principal that searches
// those words, saying why; a session's calls long after its search, a
// saved script's calls and a call that failed are no evidence; a request
// without a session is credited only for its run's own intent.
func TestLearningFromASessionsCalls(t *testing.T) {
	t.Parallel()
	e := newEngine(t, map[string]*server.MCPServer{"demo": mcpserver.New()}, runtime.InProcess)
	ctx := context.Background()
	learnt := func(intent, call string) bool {
		t.Helper()
		res, err := e.Search(ctx, SearchRequest{Intent: intent, K: 8, Caller: caller("someone-else", "")})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range res.Tools {
			if f.Call == call {
				return strings.Contains(f.Why, "called after searches with these words")
			}
		}
		return false
	}
	run := func(c auth.Caller, intent, code string) {
		t.Helper()
		if res := execute(t, e, ExecuteRequest{Caller: c, Intent: intent, Code: code}); !res.OK {
			t.Fatalf("%s: %+v", code, res.Error)
		}
		e.learn.settle()
	}

	alice := caller("alice", "s1")
	if _, err := e.Search(ctx, SearchRequest{Intent: "who is swamped this sprint", Caller: alice}); err != nil {
		t.Fatal(err)
	}
	run(alice, "", `try { await demo.teamWorkload({ project_id: 7 }) } catch {}; return 1`) // refused: no evidence
	if learnt("who is swamped this sprint", "demo.teamWorkload") {
		t.Fatal("a call the gateway refused was learnt")
	}
	run(alice, "", `return typeof (await demo.teamWorkload({}))`)
	if !learnt("who is swamped this sprint", "demo.teamWorkload") {
		t.Fatal("the call after the search was not learnt")
	}

	// long after the search: no evidence
	bob := caller("bob", "s1")
	if _, err := e.Search(ctx, SearchRequest{Intent: "the quarterly roadmap", Caller: bob}); err != nil {
		t.Fatal(err)
	}
	e.learn.now = func() time.Time { return time.Now().Add(learnWindow + time.Minute) }
	run(bob, "", `return typeof (await demo.readDocument({ project_id: "PRJ-1", name: "roadmap" }).catch(() => 0))`)
	e.learn.now = time.Now
	if learnt("the quarterly roadmap", "demo.readDocument") {
		t.Error("a call long after the search was learnt")
	}

	// without a session: the search is not tied to the run, its intent is
	carol := caller("carol", "")
	if _, err := e.Search(ctx, SearchRequest{Intent: "projects that are archived", Caller: carol}); err != nil {
		t.Fatal(err)
	}
	run(carol, "", `return (await demo.listProjects({ status: "archived" })) !== null`)
	if learnt("projects that are archived", "demo.listProjects") {
		t.Error("a sessionless search was tied to a later run")
	}
	run(carol, "projects that are archived", `return (await demo.listProjects({ status: "archived" })) !== null`)
	if !learnt("projects that are archived", "demo.listProjects") {
		t.Error("a run's own intent was not credited with its calls")
	}

	// a saved script's calls are its code's, not a choice after a search
	dave := caller("dave", "s1")
	if err := e.SaveScript(ctx, dave, Script{Name: "docs", Description: "Read the roadmap.", Code: `return await demo.getProject({ project_id: "PRJ-1" })`}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Search(ctx, SearchRequest{Intent: "milestone burndown", Caller: dave}); err != nil {
		t.Fatal(err)
	}
	run(dave, "", `return (await scripts.docs({})) !== null`)
	if learnt("milestone burndown", "demo.getProject") {
		t.Error("a saved script's call was learnt")
	}
}

// TestLearningIsBounded: a principal that calls a tool 10,000 times after
// a search of common and garbage words counts once per (word, tool): the
// tool gains, in another principal's search, exactly what one call gives
// and at most learnWeight/(1+learnPrior); a tool the caller may not see,
// or the policy denies, is never shown because of learning; a tool the
// intent names stays first.
func TestLearningIsBounded(t *testing.T) {
	t.Parallel()
	settings := gateway.DefaultSettings()
	settings.Policy = &gateway.Policy{Rules: []gateway.PolicyRule{{Tools: "other:delete_*", Action: gateway.PolicyDeny}}}
	e := newEngineFull(t, map[string]*server.MCPServer{"demo": mcpserver.New(), "other": mcpserver.New()}, settings,
		runtime.Options{Isolation: runtime.InProcess}, Options{})
	const intent = "list the projects and their owners"
	victim := caller("victim", "")
	before, _ := scoreOf(t, e, victim, intent, "demo:delete_task", vectorindex.MaxK)
	unlearnt, err := e.Search(context.Background(), SearchRequest{Intent: intent, K: vectorindex.MaxK, Caller: victim})
	if err != nil {
		t.Fatal(err)
	}

	once := func(principal string, times int, tool string) {
		t.Helper()
		c := caller(principal, "s1")
		if _, err := e.Search(context.Background(), SearchRequest{Intent: intent + " blorp qzx", Caller: c}); err != nil {
			t.Fatal(err)
		}
		for range times {
			e.learn.called(c, nil, tool)
		}
		e.learn.settle()
	}
	once("mallory", 10000, "demo:delete_task")
	flooded, _ := scoreOf(t, e, victim, intent, "demo:delete_task", vectorindex.MaxK)
	bound := learnWeight / (1 + learnPrior)
	if flooded-before > bound+1e-9 || flooded <= before {
		t.Errorf("10,000 calls by one principal moved the tool from %.3f to %.3f; the bound is %.3f", before, flooded, bound)
	}
	once("mallory", 1, "demo:delete_task") // again, in a new session
	if again, _ := scoreOf(t, e, victim, intent, "demo:delete_task", vectorindex.MaxK); again != flooded {
		t.Errorf("a principal counted twice: %.3f then %.3f", flooded, again)
	}
	// so it passed only the tools it trailed by less than the bound
	ahead := 0 // tools that were more than the bound ahead of it
	for _, f := range unlearnt.Tools {
		if f.Score > before+bound && f.ID != "demo:delete_task" {
			ahead++
		}
	}
	if _, rank := scoreOf(t, e, victim, intent, "demo:delete_task", vectorindex.MaxK); rank < ahead {
		t.Errorf("one principal moved the tool to %d, ahead of tools that led it by more than the bound (%d)", rank+1, ahead)
	}

	// many principals agreeing do move it, and the intent's named tool
	// stays first
	for _, p := range []string{"p1", "p2", "p3", "p4", "p5", "p6"} {
		once(p, 1, "demo:delete_task")
	}
	if _, rank := scoreOf(t, e, victim, intent, "demo:delete_task", 5); rank < 0 {
		t.Error("seven principals agreeing did not bring the tool into the top 5")
	}
	if _, rank := scoreOf(t, e, victim, intent+" with demo.getProject", "demo:get_project", 5); rank != 0 {
		t.Errorf("the named tool is at %d, not first", rank+1)
	}

	// a tool the caller may not see, or the policy denies, is never shown
	for _, p := range []string{"q1", "q2", "q3", "q4", "q5", "q6", "q7"} {
		once(p, 1, "other:list_projects")
		once(p, 1, "other:delete_task")
	}
	scoped := auth.Caller{Principal: auth.Principal{ID: "scoped", Scopes: []string{auth.ServerScope("demo")}}}
	res, err := e.Search(context.Background(), SearchRequest{Intent: intent, K: vectorindex.MaxK, Caller: scoped})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range res.Tools {
		if strings.HasPrefix(f.ID, "other:") {
			t.Errorf("learning showed %s to a principal scoped to demo", f.ID)
		}
	}
	if _, rank := scoreOf(t, e, victim, intent, "other:delete_task", vectorindex.MaxK); rank >= 0 {
		t.Error("learning showed a tool the policy denies")
	}
	if _, rank := scoreOf(t, e, victim, intent, "other:list_projects", 5); rank < 0 {
		t.Error("the visible tool the principals agreed on is not in the top 5")
	}
}
