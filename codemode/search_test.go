package codemode

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/examples/mcpserver"
	"github.com/sandboxrt/sandbox/gateway"
	"github.com/sandboxrt/sandbox/gateway/toolspec"
	"github.com/sandboxrt/sandbox/runtime"
	"github.com/sandboxrt/sandbox/typegen"
	"github.com/sandboxrt/sandbox/vectorindex"
)

func toolServer(name, instructions string, tools map[string]string) *server.MCPServer {
	s := server.NewMCPServer(name, "1", server.WithInstructions(instructions))
	for tool, desc := range tools {
		s.AddTool(mcp.NewTool(tool, mcp.WithDescription(desc), mcp.WithString("path")),
			func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return mcp.NewToolResultText("ok"), nil
			})
	}
	return s
}

func searchEngine(t *testing.T) *Engine {
	return newEngine(t, map[string]*server.MCPServer{
		"files": toolServer("files", "Reads and writes the files of one folder.", map[string]string{
			"read_file":      "DEPRECATED: Use read_text_file instead. Read the complete contents of a file.",
			"read_text_file": "Read the complete contents of a file as text.",
			"list_directory": "List the files and folders in a directory.",
			"get_file_info":  "Get metadata about a file: size, times, permissions.",
		}),
		"memory": toolServer("memory", "", map[string]string{
			"create_entities":  "Create multiple new entities in the knowledge graph.",
			"add_observations": "Add new observations to existing entities in the knowledge graph.",
		}),
	}, runtime.InProcess)
}

// TestSearchAnswer: the answer ranks best first with a reason each, puts a
// deprecated tool below the others, lists the servers with their state and
// instructions, and says so when nothing matched the task's words.
func TestSearchAnswer(t *testing.T) {
	t.Parallel()
	e := searchEngine(t)
	res, err := e.Search(context.Background(), SearchRequest{Intent: "read a text file", K: 3})
	if err != nil {
		t.Fatal(err)
	}
	if res.Weak || len(res.Tools) != 3 || res.Tools[0].Call != "files.readTextFile" || !strings.HasPrefix(res.Tools[0].Why, "matches read, text, file") {
		t.Fatalf("tools: %+v", res.Tools)
	}
	last := res.Tools[len(res.Tools)-1]
	if last.Call != "files.readFile" || !last.Deprecated || !strings.HasPrefix(last.Why, "deprecated; ") {
		t.Fatalf("the deprecated tool is not last: %+v", res.Tools)
	}
	if len(res.Servers) != 2 || res.Servers[0].Name != "files" || res.Servers[0].State != "ready" || res.Servers[0].Tools != 4 || res.Servers[0].Instructions != "Reads and writes the files of one folder." {
		t.Fatalf("servers: %+v", res.Servers)
	}
	// the server the hits are of names its other tool; the other server,
	// which none is of, only counts its tools
	if files := res.Servers[0]; files.NotShown != 1 || strings.Join(files.Others, " ") != "listDirectory" {
		t.Errorf("files' other tools: %+v", files)
	}
	if memory := res.Servers[1]; memory.NotShown != 0 || memory.Others != nil || memory.Tools != 2 {
		t.Errorf("memory, which no hit is of: %+v", memory)
	}

	weak, err := e.Search(context.Background(), SearchRequest{Intent: "remember that Alice works at Acme", K: 3})
	if err != nil {
		t.Fatal(err)
	}
	if !weak.Weak || !strings.HasPrefix(weak.Note, "No tool's name or description has the words of this task") || !strings.Contains(weak.Note, "files, memory") {
		t.Fatalf("a task no tool's words match: weak=%v %s %+v", weak.Weak, weak.Note, weak.Tools)
	}
}

// TestSearchAnswerText: the answer a model reads, through search_tools:
// the tools best first and their declarations in the same order, the other
// tools of the servers they are of, and each server's instructions once
// per session (every time without a session).
func TestSearchAnswerText(t *testing.T) {
	t.Parallel()
	e := searchEngine(t)
	search := func(caller auth.Caller, args map[string]any) string {
		t.Helper()
		raw, _ := json.Marshal(args)
		res, err := e.handleSearch(context.Background(), toolspec.Request{Arguments: raw, Caller: caller})
		if err != nil {
			t.Fatal(err)
		}
		var block struct{ Text string }
		_ = json.Unmarshal(res.Content[0], &block)
		return block.Text
	}
	s1 := auth.Caller{Principal: auth.Principal{ID: "alice"}, Session: "s1"}
	text := search(s1, map[string]any{"intent": "read a text file | create entities in the knowledge graph", "k": 3})
	listed := regexp.MustCompile(`(?m)^\d+\. (\w+\.\w+):`).FindAllStringSubmatch(text, -1)
	declared := regexp.MustCompile(`(?m)^\tfunction (\w+)\(`).FindAllStringSubmatch(text, -1)
	if len(listed) != 3 || len(declared) != 3 {
		t.Fatalf("listed %v, declared %v:\n%s", listed, declared, text)
	}
	for i := range listed {
		if _, fn, _ := strings.Cut(listed[i][1], "."); fn != declared[i][1] {
			t.Errorf("declaration %d is %s, the list's %d is %s: not in rank order\n%s", i+1, declared[i][1], i+1, listed[i][1], text)
		}
	}
	for _, want := range []string{
		"- files (ready, 4 tools): Reads and writes the files of one folder.",
		"\n\nNot shown, of the same servers (search naming one to get its declaration):\n",
		"\n- files: getFileInfo, listDirectory, readFile\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the answer lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "\n- memory: ") {
		t.Errorf("memory's tools are all shown, yet the answer lists others:\n%s", text)
	}

	// the same session again: no instructions; another session, or a
	// request without one, gets them
	if again := search(s1, map[string]any{"intent": "list a directory"}); strings.Contains(again, "Reads and writes") || !strings.Contains(again, "- files (ready, 4 tools)\n") {
		t.Errorf("the session's second answer repeats the instructions, or lost the server:\n%s", again)
	}
	s2 := auth.Caller{Principal: auth.Principal{ID: "alice"}, Session: "s2"}
	stateless := auth.Caller{Principal: auth.Principal{ID: "alice"}}
	for _, c := range []auth.Caller{s2, stateless, stateless} {
		if got := search(c, map[string]any{"intent": "list a directory"}); !strings.Contains(got, "- files (ready, 4 tools): Reads and writes") {
			t.Errorf("%v does not get the instructions:\n%s", c, got)
		}
	}
}

// TestSearchAnswerBoundsOtherTools: a server with hundreds of tools is a
// count and how to narrow, not their names; the names an answer lists
// are bounded in all.
func TestSearchAnswerBoundsOtherTools(t *testing.T) {
	t.Parallel()
	big := map[string]string{"export_invoices": "Export the invoices of a month as CSV."}
	for i := range 300 {
		big[fmt.Sprintf("widget_op_%03d", i)] = fmt.Sprintf("Operation %d on widgets.", i)
	}
	servers := map[string]*server.MCPServer{"big": toolServer("big", "", big)}
	for i := range 4 { // four servers of 39 tools, each the most one lists
		tools := map[string]string{"export_reports": "Export the reports of a month."}
		for j := range 38 {
			tools[fmt.Sprintf("gadget_%02d", j)] = fmt.Sprintf("Gadget %d.", j)
		}
		name := fmt.Sprintf("mid%d", i)
		servers[name] = toolServer(name, "", tools)
	}
	e := newEngine(t, servers, runtime.InProcess)
	res, err := e.Search(context.Background(), SearchRequest{Intent: "export the invoices of a month | export the reports of a month", K: 5})
	if err != nil {
		t.Fatal(err)
	}
	listed := 0
	for _, s := range res.Servers {
		if s.Name == "big" && (s.NotShown != 300 || s.Others != nil) {
			t.Errorf("big: %+v", s)
		}
		listed += len(s.Others)
	}
	counted := 0
	for _, s := range res.Servers {
		if strings.HasPrefix(s.Name, "mid") && s.NotShown > 0 && s.Others == nil {
			counted++
		}
	}
	if listed == 0 || listed > maxOthersInAnswer || counted == 0 {
		t.Errorf("%d other tools named in one answer, %d servers only counted: %+v", listed, counted, res.Servers)
	}
	if text := res.Text(); !strings.Contains(text, "\n- big: 300 more tools, too many to list; search again with the words of the step you need and the server's name (big)") {
		t.Errorf("the answer does not say how to narrow big:\n%.2000s", text)
	}
}

// TestSearchFusesPhrasings: phrasings in the product's words find what the
// first phrasing alone ranks low, and their rankings are fused.
func TestSearchFusesPhrasings(t *testing.T) {
	t.Parallel()
	e := searchEngine(t)
	one, err := e.Search(context.Background(), SearchRequest{Intent: "remember that Alice works at Acme", K: 1})
	if err != nil {
		t.Fatal(err)
	}
	fused, err := e.Search(context.Background(), SearchRequest{Intent: "remember that Alice works at Acme",
		Intents: []string{"create entities in the knowledge graph", "add observations to an entity"}, K: 3})
	if err != nil {
		t.Fatal(err)
	}
	calls := []string{}
	for _, f := range fused.Tools {
		calls = append(calls, f.Call)
	}
	if fused.Weak || !strings.Contains(strings.Join(calls, " "), "memory.createEntities") || !strings.Contains(strings.Join(calls, " "), "memory.addObservations") {
		t.Fatalf("fused: %v (one phrasing: %+v)", calls, one.Tools)
	}
	if _, err := e.Search(context.Background(), SearchRequest{Intent: "a", Intents: []string{"b", "c", "d", "e", "f"}}); err == nil {
		t.Fatal("six phrasings accepted")
	}
}

// TestSearchOverTheExampleTracker: issue 26's measured misses, through the
// engine as sandbox serve runs it (the tracker's instructions, annotations
// and schemas indexed): "which tasks are blocked", the README's example,
// and "list all projects" find their tool first; several phrasings in
// intents keep each one's best tool.
func TestSearchOverTheExampleTracker(t *testing.T) {
	t.Parallel()
	e := newEngine(t, map[string]*server.MCPServer{"demo": mcpserver.New()}, runtime.InProcess)
	for intent, want := range map[string]string{
		"which tasks are blocked": "demo.searchTasks",
		"list all projects":       "demo.listProjects",
		"demo.getProject":         "demo.getProject",
	} {
		res, err := e.Search(context.Background(), SearchRequest{Intent: intent, K: 5})
		if err != nil {
			t.Fatal(err)
		}
		if res.Tools[0].Call != want {
			t.Errorf("%q: %+v, want %s first", intent, res.Tools, want)
		}
	}
	res, err := e.Search(context.Background(), SearchRequest{Intent: "list_projects", Intents: []string{"team workload", "delete a task"}, K: 3})
	if err != nil {
		t.Fatal(err)
	}
	var calls []string
	for _, f := range res.Tools {
		calls = append(calls, f.Call)
	}
	if got := strings.Join(calls, " "); !strings.Contains(got, "demo.listProjects") || !strings.Contains(got, "demo.teamWorkload") || !strings.Contains(got, "demo.deleteTask") {
		t.Errorf("three phrasings, k 3: %v, want each one's best tool", calls)
	}
}

// TestSearchWeakOnBoilerplate: a best hit that matches the task only in a
// sentence its server repeats in every tool ("Only works within allowed
// directories") is a guess, and the answer says so, though the word is in
// its description.
func TestSearchWeakOnBoilerplate(t *testing.T) {
	t.Parallel()
	const only = " Only works within allowed directories."
	e := newEngine(t, map[string]*server.MCPServer{
		"files": toolServer("files", "", map[string]string{
			"read_text_file": "Read a file as text." + only,
			"write_file":     "Create or overwrite a file." + only,
			"list_directory": "List a directory." + only,
			"move_file":      "Move or rename a file." + only,
		}),
	}, runtime.InProcess)
	res, err := e.Search(context.Background(), SearchRequest{Intent: "remember that Alice works at Acme", K: 3})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Weak || res.Tools[0].Why != "only incidental words of the task: works (a guess)" ||
		!strings.HasPrefix(res.Note, "The tools below share only incidental words with this task (works), not what it is about") {
		t.Fatalf("weak=%v %s %+v", res.Weak, res.Note, res.Tools)
	}
	res, err = e.Search(context.Background(), SearchRequest{Intent: "move a file", K: 3})
	if err != nil {
		t.Fatal(err)
	}
	if res.Weak {
		t.Fatalf("a real match is weak: %+v", res.Tools)
	}
}

// TestSearchToolAnswerText: search_tools over MCP takes intents, reads best
// first with reasons and the roster, and leaves out the shared preamble,
// which execute_code's description carries once.
func TestSearchToolAnswerText(t *testing.T) {
	t.Parallel()
	e := searchEngine(t)
	args, _ := json.Marshal(map[string]any{"intent": "read a text file", "intents": []string{"get file contents"}, "k": 2})
	res, err := e.handleSearch(context.Background(), toolspec.Request{Arguments: args, Caller: auth.Caller{Principal: auth.Anonymous()}})
	if err != nil {
		t.Fatal(err)
	}
	var block struct{ Text string }
	_ = json.Unmarshal(res.Content[0], &block)
	for _, want := range []string{"Servers:\n- files (ready, 4 tools): Reads and writes", "- memory (ready, 2 tools)", "Best first:\n1. files.", "files.readTextFile: matches read, text, file", "declare namespace files"} {
		if !strings.Contains(block.Text, want) {
			t.Errorf("answer lacks %q:\n%s", want, block.Text)
		}
	}
	first := strings.SplitN(strings.TrimSpace(typegen.Preamble), "\n", 2)[0]
	if strings.Contains(block.Text, first) {
		t.Errorf("the answer repeats the preamble (%q):\n%s", first, block.Text)
	}
	if desc := executeDescriptionFor(e); !strings.Contains(desc, typegen.Preamble) {
		t.Errorf("execute_code's description lacks the preamble:\n%s", desc)
	}
}

// TestServerInstructionsAreIndexed: what a server says of itself finds its
// tools, though none of their names or descriptions has the words.
func TestServerInstructionsAreIndexed(t *testing.T) {
	t.Parallel()
	e := newEngine(t, map[string]*server.MCPServer{
		"brew":  toolServer("brew", "Tracks zymurgy batches: fermentation logs for home brewers.", map[string]string{"add_entry": "Add an entry.", "list_entries": "List the entries."}),
		"notes": toolServer("notes", "", map[string]string{"add_note": "Add a note.", "list_notes": "List the notes."}),
	}, runtime.InProcess)
	res, err := e.Search(context.Background(), SearchRequest{Intent: "zymurgy fermentation", K: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, ft := range res.Tools {
		if !strings.HasPrefix(ft.ID, "brew:") {
			t.Fatalf("the server's instructions did not find its tools: %+v", res.Tools)
		}
	}
}

// TestAgentErrorsNameNoPackages: errors an agent reads from the code-mode
// tools carry no Go package prefixes.
func TestAgentErrorsNameNoPackages(t *testing.T) {
	t.Parallel()
	e := searchEngine(t)
	caller := auth.Caller{Principal: auth.Anonymous()}
	for tool, args := range map[string]string{
		"search_tools": `{"intent": "!!! ???"}`,
		"execute_code": `{"code": "return 1", "tools": ["files:read_txt_file"]}`,
	} {
		var err error
		req := toolspec.Request{Arguments: json.RawMessage(args), Caller: caller}
		if tool == "search_tools" {
			_, err = e.handleSearch(context.Background(), req)
		} else {
			_, err = e.handleExecute(context.Background(), req)
		}
		if err == nil {
			t.Fatalf("%s %s: no error", tool, args)
		}
		for _, p := range []string{"codemode:", "vectorindex:", "runtime:", "gateway:"} {
			if strings.Contains(err.Error(), p) {
				t.Errorf("%s: %q names a Go package", tool, err.Error())
			}
		}
	}
}

// TestExecuteDescriptionListsTheGlobals: every global execute_code's
// description promises exists in a run.
func TestExecuteDescriptionListsTheGlobals(t *testing.T) {
	t.Parallel()
	e := demoEngine(t)
	desc := executeDescriptionFor(e)
	_, list, ok := strings.Cut(desc, "Globals besides the language: ")
	if !ok {
		t.Fatal("the description lists no globals")
	}
	list, _, _ = strings.Cut(list, ". Not")
	var names []string
	list = regexp.MustCompile(`\s*\([^)]*\)`).ReplaceAllString(strings.ReplaceAll(list, "\n", " "), "")
	for _, item := range strings.Split(list, ", ") {
		for _, n := range strings.Split(item, "/") {
			if n = strings.TrimSpace(n); n != "" && n != "iterator helpers" {
				names = append(names, n)
			}
		}
	}
	code, _ := json.Marshal(names)
	res := execute(t, e, ExecuteRequest{Code: "return " + string(code) + ".filter(n => n.split('.').reduce((o: any, k) => o?.[k], globalThis) === undefined)"})
	if !res.OK || string(res.Value) != "[]" {
		t.Fatalf("promised but missing: %s %+v (checked %v)", res.Value, res.Error, names)
	}
	if len(names) < 15 {
		t.Fatalf("parsed only %v", names)
	}
}

// TestPolicyInTheAnswer: a tool the policy sends to a person says so in its
// declaration; a tool it always denies is left out everywhere: the hits,
// the server's count and other tools, a run's bound tools, and the
// suggestions for a misspelt name.
func TestPolicyInTheAnswer(t *testing.T) {
	t.Parallel()
	settings := gateway.DefaultSettings()
	settings.Policy = &gateway.Policy{Rules: []gateway.PolicyRule{
		{Tools: "demo:delete_*", Action: gateway.PolicyDeny},
		{Tools: "demo:create_task", Action: gateway.PolicyApprove},
	}}
	e := newEngineFull(t, map[string]*server.MCPServer{"demo": mcpserver.New()}, settings, runtime.Options{Isolation: runtime.InProcess}, Options{})
	ctx := context.Background()
	res, err := e.Search(ctx, SearchRequest{Intent: "create a task in a project", K: 2})
	if err != nil {
		t.Fatal(err)
	}
	if res.Tools[0].Call != "demo.createTask" || !strings.Contains(res.Declarations, "@approval each call waits for a person to approve it") {
		t.Errorf("the approval is not declared: %+v\n%s", res.Tools, res.Declarations)
	}
	if strings.Count(res.Declarations, "@approval") != 1 {
		t.Errorf("a tool without the rule is declared as needing approval:\n%s", res.Declarations)
	}
	demo := res.Servers[0]
	if demo.Tools != 7 || demo.NotShown != 5 || slices.Contains(demo.Others, "deleteTask") {
		t.Errorf("the denied tool is counted or listed: %+v", demo)
	}
	run, err := e.Execute(ctx, ExecuteRequest{Tools: []string{"demo:delete_task"}, Intent: "delete a task",
		Code: `try { await demo.deleteTsk({ task_id: "T-1" }) } catch (e: any) { return e.code + " " + e.message }`})
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(run.Bound, "demo.deleteTask") {
		t.Errorf("the denied tool is bound: %v", run.Bound)
	}
	if !run.OK || !strings.HasPrefix(string(run.Value), `"UNKNOWN_TOOL`) || strings.Contains(string(run.Value), "deleteTask") {
		t.Errorf("a misspelt name suggests the denied tool: %s %+v", run.Value, run.Error)
	}
	// The whole catalog as `sandbox types --config` declares it follows
	// the same rule.
	declared := map[string]typegen.Tool{}
	for _, tool := range DeclaredTools(e.gw) {
		declared[tool.Name] = tool
	}
	if _, ok := declared["delete_task"]; ok || len(declared) != 7 {
		t.Errorf("DeclaredTools keeps the denied tool or loses others: %d tools", len(declared))
	}
	if !slices.Equal(declared["create_task"].Notes, []string{approvalNote}) || len(declared["list_projects"].Notes) != 0 {
		t.Errorf("DeclaredTools notes: create_task %v, list_projects %v", declared["create_task"].Notes, declared["list_projects"].Notes)
	}
}

// TestSearchWhyReadsSchemas: a tool found by what it accepts and returns
// says so, and is no guess: "weather in Chicago" finds server-everything's
// tool whose input lists Chicago and whose output has weather conditions,
// though its description says neither.
func TestSearchWhyReadsSchemas(t *testing.T) {
	t.Parallel()
	e := newEngine(t, agentServers(t), runtime.InProcess)
	res, err := e.Search(context.Background(), SearchRequest{Intent: "weather in Chicago"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Weak || res.Tools[0].Call != "everything.getStructuredContent" || res.Tools[0].Why != "matches weather, chicago in what it accepts or returns" {
		t.Errorf("weak=%v %s\n%+v", res.Weak, res.Note, res.Tools)
	}
}

// TestSearchAnswerFigures measures what the answer's shape buys on the
// held-out intents over the servers an agent meets (docs/codemode.md): how
// often an intent's tool is shown (top 5), and how often it is at least
// named in the answer (shown, or among the other tools of the servers the
// hits are of), so that the agent calls it without guessing its name; and
// what the answer costs, the first time in a session (with the servers'
// instructions) and after.
func TestSearchAnswerFigures(t *testing.T) {
	t.Parallel()
	e := newEngine(t, agentServers(t), runtime.InProcess)
	intents := agentIntents(t, "queries-heldout.json")
	shown, named := 0, 0
	var firstChars, laterChars, othersChars int
	for i, q := range intents {
		caller := auth.Caller{Principal: auth.Principal{ID: "figures"}, Session: auth.SessionID(fmt.Sprint("s", i))}
		res, err := e.Search(context.Background(), SearchRequest{Intent: q.Query, K: 5, Caller: caller})
		if err != nil {
			t.Fatal(err)
		}
		again, err := e.Search(context.Background(), SearchRequest{Intent: q.Query, K: 5, Caller: caller})
		if err != nil {
			t.Fatal(err)
		}
		firstChars += len(res.Text())
		laterChars += len(again.Text())
		text := res.Text()
		if i := strings.Index(text, "\n\nNot shown, of the same servers"); i >= 0 {
			j := strings.Index(text[i+2:], "\n\n")
			othersChars += j + 2
		}
		gold := map[string]bool{}
		for _, id := range q.Relevant {
			gold[id] = true
		}
		isShown, isNamed := false, false
		for _, f := range res.Tools {
			isShown = isShown || gold[f.ID]
		}
		for _, s := range res.Servers {
			for _, fn := range s.Others {
				b, _ := e.state.Load().names.Resolve(s.Namespace, fn)
				isNamed = isNamed || gold[b.ID]
			}
		}
		if isShown {
			shown++
		}
		if isShown || isNamed {
			named++
		}
	}
	n := float64(len(intents))
	t.Logf("held-out (%d intents, single-shot, k=5): an intent's tool shown %.3f, named in the answer (shown or among its server's other tools) %.3f", len(intents), float64(shown)/n, float64(named)/n)
	t.Logf("answer chars: first in a session %.0f, later %.0f (the servers' instructions once), of which the other tools' names %.0f", float64(firstChars)/n, float64(laterChars)/n, float64(othersChars)/n)
	if named <= shown || float64(named)/n < 0.90 { // measured 0.913 (shown 0.843)
		t.Errorf("named %d, shown %d of %d", named, shown, len(intents))
	}
}

// TestSearchRosterNamesNamespacesAsTheCatalogDoes: two servers whose names
// make one namespace are listed under the names their tools are called by
// (googleMaps, googleMaps_2), each with its own other tools.
func TestSearchRosterNamesNamespacesAsTheCatalogDoes(t *testing.T) {
	t.Parallel()
	e := newEngine(t, map[string]*server.MCPServer{
		"google-maps": toolServer("google-maps", "", map[string]string{"geocode": "Geocode an address.", "directions": "Directions between places."}),
		"google_maps": toolServer("google_maps", "", map[string]string{"geocode": "Geocode an address.", "elevation": "Elevation of a place."}),
	}, runtime.InProcess)
	res, err := e.Search(context.Background(), SearchRequest{Intent: "geocode an address", K: 2})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range res.Servers {
		got[s.Name] = s.Namespace + ": " + strings.Join(s.Others, ", ")
	}
	if got["google-maps"] != "googleMaps: directions" || got["google_maps"] != "googleMaps_2: elevation" {
		t.Errorf("roster: %v (tools %+v)", got, res.Tools)
	}
}

// TestScopedSearchInALargeCatalog: in a catalog of 81 servers, the 50 best
// tools for a pull-request intent are all GitHub's copies. A principal
// scoped to one other server still gets k of its own tools, from search
// and from execute_code's intent alike; the hits remembered for it are
// never served to a caller with other rights.
func TestScopedSearchInALargeCatalog(t *testing.T) {
	t.Parallel()
	e := newEngine(t, corpusServers(t, loadCorpus(t), 3), runtime.InProcess)
	const intent = "list the open pull requests of acme/webapp on GitHub"
	ctx := context.Background()
	scoped := func(server string) auth.Caller {
		return auth.Caller{Principal: auth.Principal{ID: "agent-" + server, Scopes: []string{auth.ServerScope(server)}}}
	}
	ofServer := func(res *SearchResult, server string) []string {
		t.Helper()
		var calls []string
		for _, f := range res.Tools {
			if !strings.HasPrefix(f.ID, server+":") {
				t.Fatalf("a search scoped to %s showed %s: %+v", server, f.ID, res.Tools)
			}
			calls = append(calls, f.Call)
		}
		return calls
	}

	for _, server := range []string{"gitlab-2", "git-3"} {
		res, err := e.Search(ctx, SearchRequest{Intent: intent, K: 5, Caller: scoped(server)})
		if err != nil {
			t.Fatal(err)
		}
		calls := ofServer(res, server)
		if len(calls) != 5 || res.Shown != 5 {
			t.Fatalf("%s: got %d of its tools, want 5: %+v", server, len(calls), res.Tools)
		}
		// execute_code's intent binds the same tools.
		run := execute(t, e, ExecuteRequest{Caller: scoped(server), Intent: intent, Code: `return 1`})
		slices.Sort(calls)
		if !slices.Equal(run.Bound, calls) {
			t.Fatalf("%s: the intent bound %v, search showed %v", server, run.Bound, calls)
		}
	}
	// After both scoped searches (and their remembered hits), the operator
	// gets the catalog's best, none of which is of either server, for the
	// same k as theirs and for MaxK.
	for _, k := range []int{5, vectorindex.MaxK} {
		res, err := e.Search(ctx, SearchRequest{Intent: intent, K: k})
		if err != nil {
			t.Fatal(err)
		}
		if res.Shown != k {
			t.Fatalf("the operator was shown %d tools, want %d", res.Shown, k)
		}
		for _, f := range res.Tools {
			if strings.HasPrefix(f.ID, "gitlab-2:") || strings.HasPrefix(f.ID, "git-3:") {
				t.Fatalf("%s is among the catalog's top %d: %+v", f.ID, k, res.Tools)
			}
		}
	}
}

// TestSearchRosterCountsOnlyTheServersOwnTools: a server with no tools in
// the catalog (down, or none listed) is counted by its own tools, never by
// those of a server the caller may not see whose tools took the namespace
// its name would make.
func TestSearchRosterCountsOnlyTheServersOwnTools(t *testing.T) {
	t.Parallel()
	e := newEngine(t, map[string]*server.MCPServer{
		"google-maps": toolServer("google-maps", "", map[string]string{}),
		"google_maps": toolServer("google_maps", "", map[string]string{"geocode": "Geocode an address.", "elevation": "Elevation of a place.", "directions": "Directions."}),
	}, runtime.InProcess)
	scoped := auth.Caller{Principal: auth.Principal{ID: "scoped", Scopes: []string{auth.ServerScope("google-maps")}}}
	res, err := e.Search(context.Background(), SearchRequest{Intent: "geocode an address", K: 2, Caller: scoped})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range res.Servers {
		if s.Name != "google-maps" || s.Tools != 0 || len(s.Others) != 0 {
			t.Errorf("the roster shows %+v to a caller scoped to google-maps", s)
		}
	}
}
