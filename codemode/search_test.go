package codemode

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/examples/mcpserver"
	"github.com/sandboxrt/sandbox/gateway/toolspec"
	"github.com/sandboxrt/sandbox/runtime"
	"github.com/sandboxrt/sandbox/typegen"
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

	weak, err := e.Search(context.Background(), SearchRequest{Intent: "remember that Alice works at Acme", K: 3})
	if err != nil {
		t.Fatal(err)
	}
	if !weak.Weak || !strings.Contains(weak.Note, "nearest guesses") || !strings.Contains(weak.Note, "files, memory") {
		t.Fatalf("a task no tool's words match: weak=%v %s %+v", weak.Weak, weak.Note, weak.Tools)
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
	if !res.Weak || !strings.HasPrefix(res.Tools[0].Why, "matches works") {
		t.Fatalf("weak=%v %+v", res.Weak, res.Tools)
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
