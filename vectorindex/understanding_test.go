package vectorindex

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// Tests of how an intent is read: tool names in any spelling, several
// clauses, questions, what tools accept and return, deprecated tools, weak
// matches. Most run over the servers an agent meets (testdata/agentservers:
// the example tracker, server-filesystem, server-memory, server-everything,
// a SQLite server as "db").

var (
	agentIxOnce sync.Once
	agentIx     *Index
)

func agentIndex(t *testing.T) *Index {
	t.Helper()
	agentIxOnce.Do(func() {
		ix, err := New(Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ix.Sync(context.Background(), loadAgentServers(t)); err != nil {
			t.Fatal(err)
		}
		agentIx = ix
	})
	if agentIx == nil {
		t.Fatal("the agent servers' index could not be built")
	}
	return agentIx
}

// TestNamedToolComesFirst: a tool named in the intent, in any spelling, is
// the first hit, also among other words and other phrasings.
func TestNamedToolComesFirst(t *testing.T) {
	ix := agentIndex(t)
	for _, c := range []struct{ intent, want string }{
		{"list_projects", "tracker:list_projects"},
		{"listProjects", "tracker:list_projects"},
		{"ListProjects", "tracker:list_projects"},
		{"list-projects", "tracker:list_projects"},
		{"tracker.list_projects", "tracker:list_projects"},
		{"tracker:list_projects", "tracker:list_projects"},
		{"tracker__list_projects", "tracker:list_projects"},
		{"tracker.listProjects()", "tracker:list_projects"},
		{"everything.getStructuredContent({location: 'Chicago'})", "everything:get-structured-content"},
		{"get_structured_content", "everything:get-structured-content"},
		{"everything.echo", "everything:echo"}, // one word, named with its server
		{"files.readTextFile", "files:read_text_file"},
		{"call memory__create_entities with Alice and Acme", "memory:create_entities"},
		// among many other words, the named tool still comes first
		{"I need the project details with members and milestones and the open tasks per person, get_project", "tracker:get_project"},
	} {
		if got := searchIDs(t, ix, c.intent, 5); len(got) == 0 || got[0] != c.want {
			t.Errorf("%q: got %v, want %s first", c.intent, got, c.want)
		}
	}
	// the hit says it was named (code mode keeps such hits first when it
	// reorders); the others do not
	hits, err := ix.Search(context.Background(), "tracker.listProjects and the tasks that are blocked", 5)
	if err != nil {
		t.Fatal(err)
	}
	for i, h := range hits {
		if h.Named != (i == 0) {
			t.Errorf("hit %d %s: Named %v", i, h.ID, h.Named)
		}
	}
	if fused := Fuse([][]Hit{hits[1:], hits[:1]}, 5); !fused[0].Named && !fused[1].Named {
		t.Errorf("Fuse lost Named: %+v", fused)
	}
}

// TestNearNamesAreCandidates: a name one edit away, singular for plural, or
// with a word more or less finds the tool.
func TestNearNamesAreCandidates(t *testing.T) {
	ix := agentIndex(t)
	for _, c := range []struct{ intent, want string }{
		{"listProject", "tracker:list_projects"},
		{"create_entity", "memory:create_entities"},
		{"memory.addObservation", "memory:add_observations"},
		{"update_status", "tracker:update_task_status"},
		{"trigger_sampling", "everything:trigger-sampling-request"},
		{"write_text_file", "files:write_file"},
		{"serch_nodes", "memory:search_nodes"},
	} {
		if got := searchIDs(t, ix, c.intent, 5); len(got) == 0 || got[0] != c.want {
			t.Errorf("%q: got %v, want %s first", c.intent, got, c.want)
		}
	}
	// a server's tools whose names hold the word: both query tools
	got := searchIDs(t, ix, "db.query", 2)
	if !sameSet(got, []string{"db:read_query", "db:write_query"}) {
		t.Errorf("db.query: got %v, want the two query tools first", got)
	}
}

// TestNameOfAnotherServerIsNotPinned: "createIssue() on GitHub" names
// create_issue, but the intent says GitHub: gitlab's create_issue is not
// pinned first.
func TestNameOfAnotherServerIsNotPinned(t *testing.T) {
	ix := mustIndex(t, Options{}, []Tool{
		{ID: "gitlab:create_issue", Description: "Create a new issue in a GitLab project"},
		{ID: "github:issue_write", Description: "Create a new or update an existing issue in a GitHub repository."},
		{ID: "github:get_me", Description: "Get details of the authenticated GitHub user."},
	})
	if got := searchIDs(t, ix, "// TODO(alice): createIssue() on GitHub when the build breaks", 3); got[0] != "github:issue_write" {
		t.Errorf("got %v, want github:issue_write first", got)
	}
	if got := searchIDs(t, ix, "createIssue() on GitLab", 3); got[0] != "gitlab:create_issue" {
		t.Errorf("got %v, want gitlab:create_issue first", got)
	}
}

// TestEachClauseKeepsItsBestTool: an intent of several clauses, however
// they are joined, shows each clause's best tool in the top k; four
// phrasings over four servers fill a top 4.
func TestEachClauseKeepsItsBestTool(t *testing.T) {
	ix := agentIndex(t)
	want := []string{"tracker:list_projects", "files:read_text_file", "memory:create_entities", "db:list_tables"}
	for _, intent := range []string{
		"list all projects | read a text file | create entities in the knowledge graph | list the tables of the database",
		"list all projects; read a text file; create entities in the knowledge graph; list the tables of the database",
		"list all projects\nread a text file\ncreate entities in the knowledge graph\nlist the tables of the database",
		"- list all projects\n- read a text file\n- create entities in the knowledge graph\n- list the tables of the database",
		"1. list all projects\n2. read a text file\n3. create entities in the knowledge graph\n4. list the tables of the database",
		"1) list all projects 2) read a text file 3) create entities in the knowledge graph 4) list the tables of the database",
		"list_projects | read_text_file | create_entities | list_tables",
	} {
		if got := searchIDs(t, ix, intent, 4); !sameSet(got, want) {
			t.Errorf("%q:\n got %v\nwant %v", intent, got, want)
		}
	}
}

// TestSplitClauses: the marks that split an intent, and those that do not.
func TestSplitClauses(t *testing.T) {
	a := defaultAnalyzer()
	for _, c := range []struct {
		intent string
		want   []string
	}{
		{"list projects | get project details", []string{"list projects", "get project details"}},
		{"- write a file\n- create a directory", []string{"write a file", "create a directory"}},
		{"1. list the directory\n2. read each file", []string{"list the directory", "read each file"}},
		{"1) list the tables 2) describe a table", []string{"list the tables", "describe a table"}},
		// a file name, a version, a value with a bar are not list markers
		{"read notes-2.md and v1.2 docs", []string{"read notes-2.md and v1.2 docs"}},
		{"grep for a|b in the logs", []string{"grep for a|b in the logs"}},
	} {
		if got := a.splitSteps(c.intent); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q: got %q, want %q", c.intent, got, c.want)
		}
	}
}

// TestThousandsOfClauses: a hostile intent of thousands of clauses is
// searched as at most maxSteps clauses, quickly.
func TestThousandsOfClauses(t *testing.T) {
	ix := agentIndex(t)
	intent := strings.Repeat("x | ", (MaxIntentLen-len("list projects"))/4) + "list projects"
	if n := len(defaultAnalyzer().splitSteps(intent)); n > maxSteps {
		t.Fatalf("%d clauses, want at most %d", n, maxSteps)
	}
	start := time.Now()
	if _, err := ix.Search(context.Background(), intent, 5); err != nil {
		t.Fatal(err)
	}
	identifiers := strings.Repeat("list_projects get_project ", MaxIntentLen/26)
	if _, err := ix.Search(context.Background(), identifiers, 5); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("two hostile searches took %v", d)
	}
}

// TestMeasuredMisses are issue 26's measured misses over the example tracker
// alone (examples/mcpserver, as "demo" with its server instructions, as
// sandbox serve indexes it): "list all projects" ranked list_projects third
// and "which tasks are blocked" (the README's example) search_tasks fifth.
func TestMeasuredMisses(t *testing.T) {
	var tracker []Tool
	for _, tl := range loadAgentServers(t) {
		if tl.Server == "tracker" {
			tl.Server, tl.ID = "demo", "demo:"+tl.Name
			tracker = append(tracker, tl)
		}
	}
	if len(tracker) != 8 {
		t.Fatalf("%d tracker tools, want 8", len(tracker))
	}
	ix := mustIndex(t, Options{}, tracker)
	for _, c := range []struct{ intent, want string }{
		{"list all projects", "demo:list_projects"},
		{"which tasks are blocked", "demo:search_tasks"},
		{"show blocked tasks", "demo:search_tasks"},
		{"which projects are archived", "demo:list_projects"},
	} {
		if got := searchIDs(t, ix, c.intent, 5); got[0] != c.want {
			t.Errorf("%q: got %v, want %s first", c.intent, got, c.want)
		}
	}
}

// TestQuestionsPreferToolsThatRead: asked a question, a tool that only
// reads ranks above one that changes things when both match; told to
// change something, not.
func TestQuestionsPreferToolsThatRead(t *testing.T) {
	ix := mustIndex(t, Options{}, []Tool{
		{ID: "t:update_task_status", Description: "Move a task to another status (todo, in_progress, blocked, done).",
			Annotations: json.RawMessage(`{"readOnlyHint": false, "destructiveHint": false}`)},
		{ID: "t:search_tasks", Description: "Search tasks by title words and status.",
			InputSchema: json.RawMessage(`{"properties": {"status": {"enum": ["todo", "in_progress", "blocked", "done"]}}}`),
			Annotations: json.RawMessage(`{"readOnlyHint": true}`)},
		{ID: "t:delete_task", Description: "Delete a task for good.",
			Annotations: json.RawMessage(`{"destructiveHint": true}`)},
	})
	if got := searchIDs(t, ix, "which tasks are blocked", 3); got[0] != "t:search_tasks" || got[2] != "t:delete_task" {
		t.Errorf("question: got %v, want search_tasks first and delete_task last", got)
	}
	if got := searchIDs(t, ix, "set task T-1 to blocked", 3); got[0] != "t:update_task_status" {
		t.Errorf("request: got %v, want update_task_status first", got)
	}
}

// TestWhatToolsAcceptAndReturnIsIndexed: server-everything's weather tool
// says "weather" only in its output schema and "Chicago" only as an enum
// value of its input; it is found for "weather in Chicago".
func TestWhatToolsAcceptAndReturnIsIndexed(t *testing.T) {
	ix := agentIndex(t)
	for _, intent := range []string{"weather in Chicago", "what's the humidity in New York"} {
		if got := searchIDs(t, ix, intent, 5); got[0] != "everything:get-structured-content" {
			t.Errorf("%q: got %v, want everything:get-structured-content first", intent, got)
		}
	}
	// A word only a schema has is matched, but it is not one "the tools
	// use": its WordNet relatives are not damped (see secondaryTerm).
	st := ix.state.Load()
	if st.lex.hasTerm("humidity") || !st.lex.hasTerm(secondaryTerm("humidity")) {
		t.Error("an output field's word is indexed as the tools' own")
	}
}

// TestReadSchema: nested properties, enums (and which of them are
// choices), array items and anyOf are read; broken schemas read as nothing.
func TestReadSchema(t *testing.T) {
	raw := json.RawMessage(`{"type": "object", "properties": {
		"filter": {"type": "object", "description": "Narrow the search", "properties": {
			"status": {"type": "array", "items": {"type": "string", "enum": ["todo", "blocked"]}},
			"owner": {"anyOf": [{"type": "string", "description": "A username"}, {"type": "null"}]}}},
		"fields": {"type": "array", "items": {"enum": ["a","b","c","d","e","f","g","h","i","j","k","l","m"]}},
		"limit": {"type": "integer", "title": "Most results"}}}`)
	got := readSchema(raw)
	var names []string
	for _, p := range got.params {
		names = append(names, fmt.Sprintf("%s/%d:%s", p.name, p.depth, p.desc))
	}
	want := []string{"fields/0:", "filter/0:Narrow the search", "limit/0:Most results", "owner/1:", "status/1:"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("params %q, want %q", names, want)
	}
	if !reflect.DeepEqual(got.choices, []string{"todo", "blocked"}) {
		t.Errorf("choices %q: an enum of 13 field names is not a choice", got.choices)
	}
	if len(got.values) != 15 {
		t.Errorf("values %q, want all 15", got.values)
	}
	for _, bad := range []string{``, `[`, `"x"`, `{"properties": 3}`, `{"properties": {"a": 1}}`} {
		_ = readSchema(json.RawMessage(bad)) // must not panic
	}
	deep := strings.Repeat(`{"properties": {"a": `, 200) + `{}` + strings.Repeat(`}}`, 200)
	if ps := readSchema(json.RawMessage(deep)).params; len(ps) != maxSchemaDepth {
		t.Errorf("a schema 200 levels deep gave %d params, want %d", len(ps), maxSchemaDepth)
	}
}

// TestDeprecatedToolYields: read_file ("DEPRECATED: Use read_text_file
// instead") ranks below read_text_file when both match; named, it comes
// first, with its replacement right after it.
func TestDeprecatedToolYields(t *testing.T) {
	ix := agentIndex(t)
	got := searchIDs(t, ix, "read the complete contents of a file as text", 5)
	if pos(got, "files:read_text_file") > pos(got, "files:read_file") {
		t.Errorf("got %v, want read_text_file above the deprecated read_file", got)
	}
	if got := searchIDs(t, ix, "files.readFile", 2); !reflect.DeepEqual(got, []string{"files:read_file", "files:read_text_file"}) {
		t.Errorf("files.readFile: got %v, want read_file, then its replacement", got)
	}
}

// TestWeakMatches: hits that match only a server's boilerplate ("Only works
// within allowed directories") or only relatives of the intent's words are
// weak; a match on the intent's own words is not.
func TestWeakMatches(t *testing.T) {
	ix := agentIndex(t)
	hits, err := ix.Search(context.Background(), "remember that Alice works at Acme", 5)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hits {
		if !h.Weak {
			t.Errorf("%s is not weak for \"remember that Alice works at Acme\": %v", h.ID, hits)
		}
	}
	hits, err = ix.Search(context.Background(), "list the tables in the database", 3)
	if err != nil {
		t.Fatal(err)
	}
	if hits[0].ID != "db:list_tables" || hits[0].Weak {
		t.Errorf("list the tables: %v, want db:list_tables, not weak", hits)
	}
	fused := Fuse([][]Hit{{{ID: "a", Weak: true}, {ID: "b", Weak: true}}, {{ID: "b"}}}, 2)
	if !fused[pos(ids(fused), "a")].Weak || fused[pos(ids(fused), "b")].Weak {
		t.Errorf("fused %v: a hit strong in one ranking is strong", fused)
	}
}

// TestFuseKeepsEachRankingsBest: four rankings' best hits all make a top 4
// even when the rankings agree on other hits (rank fusion alone put the
// agreed hits first).
func TestFuseKeepsEachRankingsBest(t *testing.T) {
	var rankings [][]Hit
	for _, best := range []string{"a", "b", "c", "d"} {
		r := []Hit{{ID: best}}
		for _, common := range []string{"x", "y", "z", "w"} {
			r = append(r, Hit{ID: common})
		}
		rankings = append(rankings, r)
	}
	got := Fuse(rankings, 4)
	if !sameSet(ids(got), []string{"a", "b", "c", "d"}) {
		t.Errorf("got %v, want each ranking's best", ids(got))
	}
	all := Fuse(rankings, 10)
	for i := 1; i < len(all); i++ {
		if all[i].Score > all[i-1].Score {
			t.Fatalf("scores do not fall with the order: %v", all)
		}
	}
	if got := Fuse(rankings, 6); !reflect.DeepEqual(ids(got)[4:], []string{"x", "y"}) {
		t.Errorf("got %v, want the agreed hits next, by fused score then id", ids(got))
	}
}

// TestTraits: effects from annotations and, without them, from the name;
// deprecation and questions.
func TestTraits(t *testing.T) {
	for _, c := range []struct {
		name, annotations string
		want              effect
	}{
		{"anything", `{"readOnlyHint": true}`, effectRead},
		{"anything", `{"readOnlyHint": false, "destructiveHint": false}`, effectWrite},
		{"anything", `{"destructiveHint": true}`, effectDestructive},
		{"delete_thing", `{"readOnlyHint": false}`, effectDestructive},
		{"api-post-search", `{"readOnlyHint": false}`, effectUnknown}, // the name says it reads
		{"create_table", ``, effectWrite},
		{"list_tables", ``, effectRead},
		{"drop_table", `{"title": "Drop"}`, effectDestructive},
		{"sequentialthinking", ``, effectUnknown},
	} {
		if got := toolEffect(Tool{Name: c.name, Annotations: json.RawMessage(c.annotations)}); got != c.want {
			t.Errorf("%s %s: effect %d, want %d", c.name, c.annotations, got, c.want)
		}
	}
	for d, want := range map[string]bool{
		"Read a file. DEPRECATED: Use read_text_file instead.": true,
		"Deprecated: use v2":                                    true,
		"(deprecated) Lists things":                             true,
		"This tool is deprecated in favour of x":                true,
		"Replaces the deprecated v1 endpoint with a faster one": false,
	} {
		if IsDeprecated(d) != want {
			t.Errorf("IsDeprecated(%q) = %v", d, !want)
		}
	}
	for q, want := range map[string]bool{
		"which tasks are blocked": true, "how many rows": true, "list all projects": true,
		"is there a task about login": true, "what's in /data": true, "tasks due today?": true,
		"create a task": false, "delete the file": false, "check out branch develop": false,
	} {
		if isQuestion(q) != want {
			t.Errorf("isQuestion(%q) = %v", q, !want)
		}
	}
}

// TestNameWords: the finest split of an identifier.
func TestNameWords(t *testing.T) {
	for s, want := range map[string]string{
		"listProjects": "list projects", "list_projects": "list projects", "list-projects": "list projects",
		"ListProjects": "list projects", "getHTMLPage": "get html page", "get-structured-content": "get structured content",
		"read_text_file": "read text file", "echo": "echo",
	} {
		if got := strings.Join(nameWords(s), " "); got != want {
			t.Errorf("nameWords(%q) = %q, want %q", s, got, want)
		}
	}
}
