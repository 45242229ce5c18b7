package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/sandboxrt/sandbox/examples/mcpserver"
)

// rpc sends one JSON-RPC request straight to the server, the bytes a client
// would send, and returns the raw result (or fails on a protocol error).
// tools/list is read this way because typed clients drop parts of schemas
// (design notes); tool calls go through mcp-go's client (conn).
func rpc(t testing.TB, s *server.MCPServer, method string, params any) json.RawMessage {
	t.Helper()
	req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	out, err := json.Marshal(s.HandleMessage(context.Background(), req))
	if err != nil {
		t.Fatal(err)
	}
	var resp struct {
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(out, &resp); err != nil || resp.Error != nil {
		t.Fatalf("%s: protocol error %s (%v)", method, resp.Error, err)
	}
	return resp.Result
}

// conn is one tracker server and an mcp-go client connected to it in-process.
type conn struct {
	srv *server.MCPServer
	c   *client.Client
}

func newConn(t testing.TB) *conn {
	t.Helper()
	srv := mcpserver.New()
	c, err := client.NewInProcessClient(srv)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &conn{srv, c}
}

type toolResult struct {
	*mcp.CallToolResult
	structured []byte // StructuredContent as JSON, nil when absent
}

func (r toolResult) text() string {
	var parts []string
	for _, c := range r.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func (cn *conn) call(t testing.TB, name string, args any) toolResult {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	res, err := cn.c.CallTool(context.Background(), req)
	if err != nil {
		t.Fatalf("%s: protocol error: %v", name, err)
	}
	r := toolResult{CallToolResult: res}
	if res.StructuredContent != nil {
		if r.structured, err = json.Marshal(res.StructuredContent); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

// ok calls a tool that must succeed and decodes its structured content, or
// its JSON text when it has none, into out.
func (cn *conn) ok(t testing.TB, name string, args any, out any) toolResult {
	t.Helper()
	r := cn.call(t, name, args)
	if r.IsError {
		t.Fatalf("%s(%v) failed: %s", name, args, r.text())
	}
	if out != nil {
		data := r.structured
		if data == nil {
			data = []byte(r.text())
		}
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s: decoding %s: %v", name, data, err)
		}
	}
	return r
}

// fails calls a tool that must answer isError with a message containing
// says, and naming no tool or argument the server does not have: a refusal
// suggests only what an agent can do here.
func (cn *conn) fails(t testing.TB, name string, args any, says string) {
	t.Helper()
	r := cn.call(t, name, args)
	if !r.IsError || !strings.Contains(r.text(), says) {
		t.Errorf("%s(%v) = isError %v %q, want an error saying %q", name, args, r.IsError, r.text(), says)
	}
	known := map[string]bool{} // the tools, and every name and value their input schemas hold
	for tool, tl := range listTools(t, cn.srv) {
		known[tool] = true
		for _, word := range snakeCase.FindAllString(string(tl.InputSchema), -1) {
			known[word] = true
		}
	}
	for _, word := range snakeCase.FindAllString(r.text(), -1) {
		if !known[word] {
			t.Errorf("%s(%v) refused with %q, which names %s: no tool or argument of this server", name, args, r.text(), word)
		}
	}
}

// snakeCase finds the words of a message that name a tool or an argument.
var snakeCase = regexp.MustCompile(`\b[a-z]+(?:_[a-z]+)+\b`)

type listedTool struct {
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema"`
	Annotations  struct {
		Title       string `json:"title"`
		ReadOnly    *bool  `json:"readOnlyHint"`
		Destructive *bool  `json:"destructiveHint"`
	} `json:"annotations"`
}

func listTools(t testing.TB, s *server.MCPServer) map[string]listedTool {
	var res struct{ Tools []listedTool }
	if err := json.Unmarshal(rpc(t, s, "tools/list", map[string]any{}), &res); err != nil {
		t.Fatal(err)
	}
	out := map[string]listedTool{}
	for _, tl := range res.Tools {
		out[tl.Name] = tl
	}
	return out
}

func compile(t testing.TB, name string, schema json.RawMessage) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(name+".json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(name + ".json")
	if err != nil {
		t.Fatalf("%s: schema does not compile: %v", name, err)
	}
	return sch
}

func TestToolsList(t *testing.T) {
	tools := listTools(t, mcpserver.New())
	type want struct {
		output, readOnly, destructive bool
	}
	wants := map[string]want{
		"list_projects":      {false, true, false},
		"get_project":        {true, true, false},
		"search_tasks":       {true, true, false},
		"create_task":        {true, false, false},
		"update_task_status": {true, false, false},
		"delete_task":        {false, false, true},
		"read_document":      {false, true, false},
		"team_workload":      {false, true, false},
	}
	if len(tools) != len(wants) {
		t.Errorf("%d tools, want %d", len(tools), len(wants))
	}
	for name, w := range wants {
		tl, found := tools[name]
		if !found {
			t.Errorf("missing tool %s", name)
			continue
		}
		if tl.Description == "" || tl.Annotations.Title == "" {
			t.Errorf("%s: no description or title", name)
		}
		if got := len(tl.OutputSchema) > 0; got != w.output {
			t.Errorf("%s: has outputSchema %v, want %v", name, got, w.output)
		}
		if tl.Annotations.ReadOnly == nil || *tl.Annotations.ReadOnly != w.readOnly ||
			tl.Annotations.Destructive == nil || *tl.Annotations.Destructive != w.destructive {
			t.Errorf("%s: annotations %+v, want readOnly %v destructive %v", name, tl.Annotations, w.readOnly, w.destructive)
		}
		compile(t, name+".input", tl.InputSchema)
		if w.output {
			compile(t, name+".output", tl.OutputSchema)
		}
	}
	// The nested filter object survives tools/list whole.
	var search map[string]any
	json.Unmarshal(tools["search_tasks"].InputSchema, &search)
	filter := search["properties"].(map[string]any)["filter"].(map[string]any)
	if filter["additionalProperties"] != false || filter["properties"].(map[string]any)["status"].(map[string]any)["items"] == nil {
		t.Errorf("search_tasks filter schema lost detail: %v", filter)
	}
}

// TestStructuredContentMatchesOutputSchema validates every structured
// result against the tool's declared output schema, as a strict client would.
func TestStructuredContentMatchesOutputSchema(t *testing.T) {
	s := newConn(t)
	tools := listTools(t, s.srv)
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"get_project", map[string]any{"project_id": "PRJ-2"}},
		{"search_tasks", map[string]any{"filter": map[string]any{"status": []string{"todo", "blocked"}}}},
		{"create_task", map[string]any{"project_id": "PRJ-1", "title": "Write launch blog post", "labels": []string{"content"}, "due": "2026-03-30"}},
		{"update_task_status", map[string]any{"task_id": "T-102", "status": "in_progress"}},
	} {
		r := s.ok(t, c.tool, c.args, nil)
		if r.structured == nil {
			t.Errorf("%s: no structuredContent", c.tool)
			continue
		}
		inst, _ := jsonschema.UnmarshalJSON(bytes.NewReader(r.structured))
		if err := compile(t, c.tool+".output", tools[c.tool].OutputSchema).Validate(inst); err != nil {
			t.Errorf("%s: structuredContent does not match the outputSchema: %v", c.tool, err)
		}
		var fromText, fromStructured any
		json.Unmarshal([]byte(r.text()), &fromText)
		json.Unmarshal(r.structured, &fromStructured)
		if !reflect.DeepEqual(fromText, fromStructured) {
			t.Errorf("%s: text fallback %q is not the structuredContent %s", c.tool, r.text(), r.structured)
		}
	}
}

func TestListAndGetProjects(t *testing.T) {
	s := newConn(t)
	type row struct {
		ID        string `json:"id"`
		OpenTasks int    `json:"open_tasks"`
	}
	var active, all []row
	r := s.ok(t, "list_projects", map[string]any{}, &active)
	if r.structured != nil || !strings.HasPrefix(r.text(), "[") {
		t.Errorf("list_projects should answer JSON text only, got %+v", r)
	}
	if fmt.Sprint(active) != "[{PRJ-1 5} {PRJ-2 5}]" {
		t.Errorf("active projects = %v", active)
	}
	s.ok(t, "list_projects", map[string]any{"status": "all"}, &all)
	if len(all) != 3 {
		t.Errorf("all projects = %v", all)
	}
	s.fails(t, "list_projects", map[string]any{"status": "open"}, "status must be one of active, archived, all")

	var p mcpserver.ProjectDetails
	s.ok(t, "get_project", map[string]any{"project_id": "prj-1"}, &p)
	if p.ID != "PRJ-1" || p.TaskCounts["in_progress"] != 2 || !slices.Equal(p.OverdueTasks, []string{"T-104"}) || len(p.Milestones) != 3 {
		t.Errorf("get_project PRJ-1 = %+v", p)
	}
	s.fails(t, "get_project", map[string]any{"project_id": "PRJ-9"}, "known projects: PRJ-1 (Website relaunch), PRJ-2")
	s.fails(t, "get_project", map[string]any{}, "project_id is required")
}

func TestSearchTasks(t *testing.T) {
	s := newConn(t)
	ids := func(args map[string]any) string {
		var res struct {
			Total int
			Tasks []mcpserver.Task
		}
		s.ok(t, "search_tasks", args, &res)
		var out []string
		for _, task := range res.Tasks {
			out = append(out, task.ID)
		}
		return fmt.Sprintf("%d:%s", res.Total, strings.Join(out, ","))
	}
	for _, c := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"filter": map[string]any{"status": []string{"blocked"}}}, "2:T-103,T-110"},
		{map[string]any{"filter": map[string]any{"labels": []string{"offline"}}, "sort": "priority"}, "2:T-108,T-109"},
		{map[string]any{"project_id": "PRJ-1", "sort": "priority", "limit": 2}, "6:T-104,T-101"},
		{map[string]any{"query": "OFFLINE mode ios"}, "1:T-109"},
		{map[string]any{"filter": map[string]any{"due_before": "2026-03-07", "status": []string{"todo", "in_progress", "blocked"}}}, "2:T-104,T-107"},
		{map[string]any{"filter": map[string]any{"assignee": "nobody"}}, "0:"},
	} {
		if got := ids(c.args); got != c.want {
			t.Errorf("search_tasks(%v) = %s, want %s", c.args, got, c.want)
		}
	}
	s.fails(t, "search_tasks", map[string]any{"limit": 0}, "limit must be between 1 and 100")
	s.fails(t, "search_tasks", map[string]any{"limit": "3"}, `argument "limit" must be a number`)
	s.fails(t, "search_tasks", map[string]any{"filter": map[string]any{"status": []string{"open"}}}, "filter.status[] must be one of")
	s.fails(t, "search_tasks", map[string]any{"filter": map[string]any{"due_before": "next week"}}, "YYYY-MM-DD")
	s.fails(t, "search_tasks", map[string]any{"project": "PRJ-1"}, `unknown argument "project"; this tool takes: project_id, query, filter, sort, limit`)
}

func TestCreateTaskRules(t *testing.T) {
	s := newConn(t)
	var task mcpserver.Task
	s.ok(t, "create_task", map[string]any{"project_id": "PRJ-2", "title": "Beta test offline mode", "assignee": "ana", "due": "2026-03-02"}, &task)
	if task.ID != "T-115" || task.Status != "todo" || task.Priority != "medium" || task.Labels == nil {
		t.Errorf("new task = %+v, want T-115, todo, default priority medium, labels []", task)
	}
	s.ok(t, "create_task", map[string]any{"project_id": "PRJ-2", "title": "Another"}, &task)
	if task.ID != "T-116" {
		t.Errorf("second task id %s, want T-116", task.ID)
	}
	for _, c := range []struct {
		args map[string]any
		says string
	}{
		{map[string]any{"project_id": "PRJ-3", "title": "x"}, "archived and takes no new tasks"},
		{map[string]any{"project_id": "PRJ-2", "title": "x", "assignee": "maria"}, "members are: kenji, li, ana"},
		{map[string]any{"project_id": "PRJ-2", "title": "x", "due": "2026-03-01"}, "in the past (today is 2026-03-02)"},
		{map[string]any{"project_id": "PRJ-2", "title": "beta test OFFLINE mode"}, "already has an open task titled \"Beta test offline mode\" (T-115); work on that task (update_task_status moves it on), or give the new one another title"},
		{map[string]any{"project_id": "PRJ-2", "title": "x", "priority": "critical"}, "priority must be one of low, medium, high, urgent"},
		{map[string]any{"project_id": "PRJ-2", "title": "x", "estimate_hours": 0}, "estimate_hours must be between 0.5 and 200"},
		{map[string]any{"project_id": "PRJ-2"}, "title is required"},
		{map[string]any{"project_id": "PRJ-2", "title": 5}, `argument "title" must be a string`},
	} {
		s.fails(t, "create_task", c.args, c.says)
	}
}

func TestUpdateAndDeleteTasks(t *testing.T) {
	s := newConn(t)
	s.fails(t, "update_task_status", map[string]any{"task_id": "T-101", "status": "blocked"}, "needs a comment")
	var task mcpserver.Task
	s.ok(t, "update_task_status", map[string]any{"task_id": "T-101", "status": "blocked", "comment": "Waiting for the payment provider"}, &task)
	if task.Status != "blocked" || !slices.Equal(task.Comments, []string{"Waiting for the payment provider"}) {
		t.Errorf("after blocking: %+v", task)
	}
	s.fails(t, "update_task_status", map[string]any{"task_id": "T-105", "status": "todo"}, "cannot be reopened")
	s.fails(t, "update_task_status", map[string]any{"task_id": "T-113", "status": "done"}, "read-only")
	s.fails(t, "update_task_status", map[string]any{"task_id": "T-999", "status": "done"}, "no task \"T-999\"")

	r := s.ok(t, "delete_task", map[string]any{"task_id": "T-106"}, nil)
	if r.text() != `Deleted T-106 "Set up redirects from old URLs" from PRJ-1.` {
		t.Errorf("delete_task = %q", r.text())
	}
	s.fails(t, "delete_task", map[string]any{"task_id": "T-106"}, "no task")
	s.fails(t, "delete_task", map[string]any{"task_id": "T-114"}, "read-only")
}

func TestReadDocument(t *testing.T) {
	s := newConn(t)
	if r := s.ok(t, "read_document", map[string]any{"path": "specs/mobile/sync-api.md"}, nil); !strings.HasPrefix(r.text(), "# Sync API (v2)") {
		t.Errorf("read = %q", r.text())
	}
	if r := s.ok(t, "read_document", map[string]any{"path": "specs/"}, nil); r.text() != "specs/mobile/push.md\nspecs/mobile/sync-api.md\nspecs/website/checkout.md\nspecs/website/launch-plan.md" {
		t.Errorf("listing specs/ = %q", r.text())
	}
	for _, c := range []struct{ path, says string }{
		{"../../etc/passwd", "leaves the document store"},
		{"specs/../../secrets.txt", "leaves the document store"},
		{"/etc/passwd", "is absolute"},
		{`specs\mobile\push.md`, "backslash"},
		{"specs/mobile/sync.md", "did you mean specs/mobile/push.md, specs/mobile/sync-api.md?"},
		{"nothing/here.md", `list the documents with path ""`},
	} {
		s.fails(t, "read_document", map[string]any{"path": c.path}, c.says)
	}
	s.fails(t, "read_document", map[string]any{}, "path is required")
}

func TestTeamWorkload(t *testing.T) {
	r := newConn(t).ok(t, "team_workload", map[string]any{"project_id": "PRJ-1"}, nil)
	want := `Open tasks per person, PRJ-1 Website relaunch, as of 2026-03-02

person        open  blocked  overdue  estimate_h
li            1     0        0        24
maria         1     1        0        8
omar          2     0        1        18
(unassigned)  1     0        0        4
`
	if r.text() != want {
		t.Errorf("team_workload =\n%s\nwant\n%s", r.text(), want)
	}
}

// TestInstancesAreIndependent: every New starts from the same seed.
func TestInstancesAreIndependent(t *testing.T) {
	a, b := newConn(t), newConn(t)
	a.ok(t, "delete_task", map[string]any{"task_id": "T-101"}, nil)
	b.ok(t, "get_project", map[string]any{"project_id": "PRJ-1"}, nil)
	var res struct{ Total int }
	b.ok(t, "search_tasks", map[string]any{"project_id": "PRJ-1"}, &res)
	if res.Total != 6 {
		t.Errorf("deleting in one server changed another: PRJ-1 has %d tasks", res.Total)
	}
}

// TestConcurrentCreates: parallel calls (Promise.all in a snippet) get
// distinct ids and all land.
func TestConcurrentCreates(t *testing.T) {
	s := newConn(t)
	var wg sync.WaitGroup
	ids := make([]string, 32)
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var task mcpserver.Task
			s.ok(t, "create_task", map[string]any{"project_id": "PRJ-1", "title": fmt.Sprintf("Parallel task %d", i)}, &task)
			ids[i] = task.ID
		}()
	}
	wg.Wait()
	slices.Sort(ids)
	if len(slices.Compact(slices.Clone(ids))) != 32 || ids[0] != "T-115" || ids[31] != "T-146" {
		t.Errorf("ids = %v, want T-115..T-146 once each", ids)
	}
}

// FuzzToolArguments: whatever JSON arrives as arguments, every tool answers
// with a result (possibly isError), never a panic (which WithRecovery would
// turn into an internal error) or a hang. Only arguments mcp-go itself cannot
// parse (a number beyond float64) may get a JSON-RPC invalid-request error.
func FuzzToolArguments(f *testing.F) {
	for _, seed := range []string{
		`{}`, `null`, `[]`, `"x"`, `{"project_id":"PRJ-1"}`, `{"path":"../../../etc/passwd"}`,
		`{"filter":{"status":["done"],"labels":[1]}}`, `{"limit":1e309}`, `{"title":"` + strings.Repeat("x", 300) + `"}`,
		`{"task_id":"T-101","status":"blocked","comment":"` + "\u0000" + `"}`, `{"path":"specs/\u0000"}`,
	} {
		for i := range 8 {
			f.Add(uint8(i), seed)
		}
	}
	s := mcpserver.New()
	names := []string{"list_projects", "get_project", "search_tasks", "create_task", "update_task_status", "delete_task", "read_document", "team_workload"}
	f.Fuzz(func(t *testing.T, tool uint8, args string) {
		req := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, names[int(tool)%len(names)], args)
		if !json.Valid([]byte(req)) {
			return
		}
		out, _ := json.Marshal(s.HandleMessage(context.Background(), []byte(req)))
		var resp struct {
			Result *mcp.CallToolResult `json:"result"`
			Error  *struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		if err := json.Unmarshal(out, &resp); err != nil {
			t.Fatalf("%s: undecodable response %s", req, out)
		}
		if resp.Result == nil && (resp.Error == nil || resp.Error.Code != mcp.INVALID_REQUEST) {
			t.Fatalf("%s: no tool result: %s", req, out)
		}
	})
}

// BenchmarkInProcessCall is the floor the gateway's added latency is
// measured against: one tools/call handled by the server, no transport.
func BenchmarkInProcessCall(b *testing.B) {
	s := mcpserver.New()
	req := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_project","arguments":{"project_id":"PRJ-1"}}}`)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if s.HandleMessage(ctx, req) == nil {
			b.Fatal("no response")
		}
	}
}
