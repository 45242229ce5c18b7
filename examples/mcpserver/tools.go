package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

type tracker struct{ *store }

// toolFunc is a tool body: it returns the result, or an error that becomes
// an isError result (bad input, a rule of the tracker).
type toolFunc func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error)

func (t *tracker) tools() []server.ServerTool {
	readOnly := mcp.ToolAnnotation{ReadOnlyHint: mcp.ToBoolPtr(true), DestructiveHint: mcp.ToBoolPtr(false), IdempotentHint: mcp.ToBoolPtr(true), OpenWorldHint: mcp.ToBoolPtr(false)}
	tool := func(name, title, description, input, output string, ann mcp.ToolAnnotation, fn toolFunc) server.ServerTool {
		tl := mcp.NewToolWithRawSchema(name, description, json.RawMessage(input))
		if output != "" {
			tl.RawOutputSchema = json.RawMessage(output)
		}
		ann.Title = title
		tl.Annotations = ann
		return server.ServerTool{Tool: tl, Handler: func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := fn(ctx, req)
			var bad *badInput
			var rule *businessError
			switch {
			case errors.As(err, &bad), errors.As(err, &rule):
				return mcp.NewToolResultError(name + ": " + err.Error()), nil
			case err != nil:
				return nil, err
			}
			return res, nil
		}}
	}
	write := func(idempotent, destructive bool) mcp.ToolAnnotation {
		return mcp.ToolAnnotation{ReadOnlyHint: mcp.ToBoolPtr(false), DestructiveHint: mcp.ToBoolPtr(destructive), IdempotentHint: mcp.ToBoolPtr(idempotent), OpenWorldHint: mcp.ToBoolPtr(false)}
	}
	return []server.ServerTool{
		tool("list_projects", "List projects",
			"List the tracker's projects with their owner and number of open tasks. Returns a JSON array.",
			listProjectsInput, "", readOnly, t.listProjects),
		tool("get_project", "Get project",
			"Get one project: description, members, task counts per status, overdue task ids and milestones.",
			getProjectInput, getProjectOutput, readOnly, t.getProject),
		tool("search_tasks", "Search tasks",
			"Search tasks across projects by title words, status, assignee, labels and due date, sorted by due date, priority or creation.",
			searchTasksInput, searchTasksOutput, readOnly, t.searchTasks),
		tool("create_task", "Create task",
			"Create a task in an active project. Fails (isError) for archived projects, non-members as assignee, past due dates and duplicate open titles.",
			createTaskInput, taskSchema, write(false, false), t.createTask),
		tool("update_task_status", "Update task status",
			"Move a task to another status (todo, in_progress, blocked, done), optionally with a comment. Done tasks cannot be reopened.",
			updateTaskStatusInput, taskSchema, write(true, false), t.updateTaskStatus),
		tool("delete_task", "Delete task",
			"Delete a task for good. Tasks of archived projects cannot be deleted.",
			deleteTaskInput, "", write(false, true), t.deleteTask),
		tool("read_document", "Read document",
			"Read a project document (specs, runbooks) as plain text by its path in the document store, or list a folder.",
			readDocumentInput, "", readOnly, t.readDocument),
		tool("team_workload", "Team workload",
			"Plain-text table of each person's open tasks: how many, blocked, overdue, and estimated hours.",
			teamWorkloadInput, "", readOnly, t.teamWorkload),
	}
}

func (t *tracker) listProjects(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var args struct {
		Status string `json:"status"`
		Owner  string `json:"owner"`
	}
	if err := decodeArgs(req, &args, "status", "owner"); err != nil {
		return nil, err
	}
	if args.Status == "" {
		args.Status = "active"
	}
	if err := oneOf("status", args.Status, "active", "archived", "all"); err != nil {
		return nil, err
	}
	type row struct {
		ID        string `json:"id"`
		Name      string `json:"name"`
		Status    string `json:"status"`
		Owner     string `json:"owner"`
		OpenTasks int    `json:"open_tasks"`
	}
	t.mu.Lock()
	rows := []row{}
	for _, p := range t.projects {
		if args.Status != "all" && p.Status != args.Status || args.Owner != "" && !strings.EqualFold(p.Owner, args.Owner) {
			continue
		}
		c := t.taskCounts(p.ID)
		rows = append(rows, row{p.ID, p.Name, p.Status, p.Owner, c["todo"] + c["in_progress"] + c["blocked"]})
	}
	t.mu.Unlock()
	return jsonText(rows)
}

// ProjectDetails is the structured result of get_project.
type ProjectDetails struct {
	Project
	TaskCounts   map[string]int `json:"task_counts"`
	OverdueTasks []string       `json:"overdue_tasks"`
}

func (t *tracker) getProject(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var args struct {
		ProjectID string `json:"project_id"`
	}
	if err := decodeArgs(req, &args, "project_id"); err != nil {
		return nil, err
	}
	if err := required("project_id", args.ProjectID, "PRJ-1"); err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	p, err := t.project(args.ProjectID)
	if err != nil {
		return nil, err
	}
	d := ProjectDetails{Project: *p, TaskCounts: t.taskCounts(p.ID), OverdueTasks: []string{}}
	d.Members = slices.Clone(p.Members)
	d.Milestones = slices.Clone(p.Milestones)
	for _, task := range t.tasks {
		if task.ProjectID == p.ID && task.Status != "done" && task.Due != "" && task.Due < Today {
			d.OverdueTasks = append(d.OverdueTasks, task.ID)
		}
	}
	return structured(d)
}

func (t *tracker) searchTasks(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var args struct {
		ProjectID string `json:"project_id"`
		Query     string `json:"query"`
		Filter    *struct {
			Status    []string `json:"status"`
			Assignee  string   `json:"assignee"`
			Labels    []string `json:"labels"`
			DueBefore string   `json:"due_before"`
		} `json:"filter"`
		Sort  string `json:"sort"`
		Limit *int   `json:"limit"`
	}
	if err := decodeArgs(req, &args, "project_id", "query", "filter", "sort", "limit"); err != nil {
		return nil, err
	}
	q := taskQuery{ProjectID: args.ProjectID, Text: args.Query, Sort: args.Sort, Limit: 20}
	if q.Sort == "" {
		q.Sort = "due"
	}
	if err := oneOf("sort", q.Sort, "due", "priority", "created"); err != nil {
		return nil, err
	}
	if args.Limit != nil {
		if *args.Limit < 1 || *args.Limit > 100 {
			return nil, badf("limit must be between 1 and 100, got %d", *args.Limit)
		}
		q.Limit = *args.Limit
	}
	if f := args.Filter; f != nil {
		for _, st := range f.Status {
			if err := oneOf("filter.status[]", st, statuses...); err != nil {
				return nil, err
			}
		}
		if err := date("filter.due_before", f.DueBefore); err != nil {
			return nil, err
		}
		q.Statuses, q.Assignee, q.Labels, q.DueBefore = f.Status, f.Assignee, f.Labels, f.DueBefore
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if q.ProjectID != "" {
		if _, err := t.project(q.ProjectID); err != nil {
			return nil, err
		}
	}
	tasks, total := t.search(q)
	if tasks == nil {
		tasks = []Task{}
	}
	return structured(struct {
		Total int    `json:"total"`
		Tasks []Task `json:"tasks"`
	}{total, tasks})
}

func (t *tracker) createTask(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var args struct {
		ProjectID     string   `json:"project_id"`
		Title         string   `json:"title"`
		Priority      string   `json:"priority"`
		Assignee      string   `json:"assignee"`
		Labels        []string `json:"labels"`
		Due           string   `json:"due"`
		EstimateHours *float64 `json:"estimate_hours"`
	}
	if err := decodeArgs(req, &args, "project_id", "title", "priority", "assignee", "labels", "due", "estimate_hours"); err != nil {
		return nil, err
	}
	if err := required("project_id", args.ProjectID, "PRJ-1"); err != nil {
		return nil, err
	}
	if err := required("title", args.Title, "Write release notes"); err != nil {
		return nil, err
	}
	if len(args.Title) > 120 {
		return nil, badf("title is %d characters long; keep it under 120", len(args.Title))
	}
	if args.Priority == "" {
		args.Priority = "medium"
	}
	if err := oneOf("priority", args.Priority, priorities...); err != nil {
		return nil, err
	}
	if len(args.Labels) > 10 {
		return nil, badf("at most 10 labels, got %d", len(args.Labels))
	}
	if err := date("due", args.Due); err != nil {
		return nil, err
	}
	n := newTask{ProjectID: args.ProjectID, Title: args.Title, Priority: args.Priority, Assignee: args.Assignee, Labels: args.Labels, Due: args.Due}
	if args.EstimateHours != nil {
		if *args.EstimateHours < 0.5 || *args.EstimateHours > 200 {
			return nil, badf("estimate_hours must be between 0.5 and 200, got %g", *args.EstimateHours)
		}
		n.EstimateHours = *args.EstimateHours
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	task, err := t.create(n)
	if err != nil {
		return nil, err
	}
	return structured(task)
}

func (t *tracker) updateTaskStatus(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var args struct {
		TaskID  string `json:"task_id"`
		Status  string `json:"status"`
		Comment string `json:"comment"`
	}
	if err := decodeArgs(req, &args, "task_id", "status", "comment"); err != nil {
		return nil, err
	}
	if err := required("task_id", args.TaskID, "T-101"); err != nil {
		return nil, err
	}
	if err := oneOf("status", args.Status, statuses...); err != nil {
		return nil, err
	}
	if len(args.Comment) > 500 {
		return nil, badf("comment is %d characters long; keep it under 500", len(args.Comment))
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	task, _, err := t.setStatus(args.TaskID, args.Status, args.Comment)
	if err != nil {
		return nil, err
	}
	return structured(task)
}

func (t *tracker) deleteTask(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var args struct {
		TaskID string `json:"task_id"`
	}
	if err := decodeArgs(req, &args, "task_id"); err != nil {
		return nil, err
	}
	if err := required("task_id", args.TaskID, "T-106"); err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	task, err := t.delete(args.TaskID)
	if err != nil {
		return nil, err
	}
	return mcp.NewToolResultText(fmt.Sprintf("Deleted %s %q from %s.", task.ID, task.Title, task.ProjectID)), nil
}

func (t *tracker) readDocument(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var args struct {
		Path *string `json:"path"`
	}
	if err := decodeArgs(req, &args, "path"); err != nil {
		return nil, err
	}
	if args.Path == nil {
		return nil, badf(`path is required, e.g. {"path": "specs/mobile/sync-api.md"}; "" lists every document`)
	}
	p := *args.Path
	// The gateway refuses traversal before a call gets here; the server
	// checks again, because it may be called without the gateway.
	if strings.ContainsRune(p, '\\') || strings.ContainsRune(p, 0) {
		return nil, badf("path %q contains a backslash or NUL; use / between folders, e.g. specs/mobile/sync-api.md", p)
	}
	if strings.HasPrefix(p, "/") {
		return nil, badf("path %q is absolute; paths are relative to the document store, e.g. specs/mobile/sync-api.md", p)
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == ".." {
			return nil, badf("path %q leaves the document store; list the documents with path \"\"", p)
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if p == "" || strings.HasSuffix(p, "/") {
		var list []string
		for name := range t.docs {
			if strings.HasPrefix(name, p) {
				list = append(list, name)
			}
		}
		if len(list) == 0 {
			return nil, badf("no documents under %q; list them all with path \"\"", p)
		}
		sort.Strings(list)
		return mcp.NewToolResultText(strings.Join(list, "\n")), nil
	}
	clean := path.Clean(p)
	if text, ok := t.docs[clean]; ok {
		return mcp.NewToolResultText(text), nil
	}
	var near []string
	for name := range t.docs {
		if path.Dir(name) == path.Dir(clean) || path.Base(name) == path.Base(clean) {
			near = append(near, name)
		}
	}
	sort.Strings(near)
	if len(near) == 0 {
		return nil, badf("no document %q; list the documents with path \"\"", p)
	}
	return nil, badf("no document %q; did you mean %s?", p, strings.Join(near, ", "))
}

func (t *tracker) teamWorkload(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var args struct {
		ProjectID string `json:"project_id"`
	}
	if err := decodeArgs(req, &args, "project_id"); err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	scope, only := "all active projects", ""
	if args.ProjectID != "" {
		p, err := t.project(args.ProjectID)
		if err != nil {
			return nil, err
		}
		scope, only = p.ID+" "+p.Name, p.ID
	}
	type load struct {
		open, blocked, overdue int
		hours                  float64
	}
	loads := map[string]*load{}
	for _, task := range t.tasks {
		p, _ := t.project(task.ProjectID)
		if task.Status == "done" || p == nil || only == "" && p.Status != "active" || only != "" && p.ID != only {
			continue
		}
		who := task.Assignee
		if who == "" {
			who = "(unassigned)"
		}
		l := loads[who]
		if l == nil {
			l = &load{}
			loads[who] = l
		}
		l.open++
		l.hours += task.EstimateHours
		if task.Status == "blocked" {
			l.blocked++
		}
		if task.Due != "" && task.Due < Today {
			l.overdue++
		}
	}
	people := make([]string, 0, len(loads))
	for who := range loads {
		people = append(people, who)
	}
	sort.Slice(people, func(i, j int) bool {
		// "(unassigned)" last, people by name.
		if (people[i][0] == '(') != (people[j][0] == '(') {
			return people[j][0] == '('
		}
		return people[i] < people[j]
	})
	var b bytes.Buffer
	fmt.Fprintf(&b, "Open tasks per person, %s, as of %s\n\n", scope, Today)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "person\topen\tblocked\toverdue\testimate_h")
	for _, who := range people {
		l := loads[who]
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%g\n", who, l.open, l.blocked, l.overdue, l.hours)
	}
	tw.Flush()
	if len(people) == 0 {
		b.WriteString("(no open tasks)\n")
	}
	return mcp.NewToolResultText(b.String()), nil
}

// badInput is an argument the tool cannot use; like businessError it
// becomes an isError result.
type badInput struct{ msg string }

func (e *badInput) Error() string { return e.msg }

func badf(format string, args ...any) error { return &badInput{fmt.Sprintf(format, args...)} }

// decodeArgs decodes the call's arguments into dst, refusing unknown
// arguments and wrong types with a message that names the argument.
func decodeArgs(req mcp.CallToolRequest, dst any, known ...string) error {
	raw := req.Params.RawArguments
	if len(raw) == 0 && req.Params.Arguments != nil {
		var err error
		if raw, err = json.Marshal(req.Params.Arguments); err != nil {
			return badf("arguments are not JSON: %v", err)
		}
	}
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		raw = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	err := dec.Decode(dst)
	var typeErr *json.UnmarshalTypeError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &typeErr):
		if typeErr.Field == "" {
			return badf("arguments must be a JSON object, got %s", typeErr.Value)
		}
		return badf("argument %q must be %s, got %s", typeErr.Field, jsonType(typeErr.Type.Kind().String()), typeErr.Value)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		field := strings.TrimPrefix(err.Error(), "json: unknown field ")
		return badf("unknown argument %s; this tool takes: %s", field, strings.Join(known, ", "))
	default:
		return badf("arguments are not valid JSON: %v", err)
	}
}

func jsonType(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "int", "int64", "float64":
		return "a number"
	case "bool":
		return "true or false"
	case "slice":
		return "an array"
	case "struct", "map", "ptr":
		return "an object"
	}
	return goKind
}

func required(name, value, example string) error {
	if strings.TrimSpace(value) == "" {
		return badf("%s is required, e.g. %q", name, example)
	}
	return nil
}

func oneOf(name, value string, allowed ...string) error {
	if !slices.Contains(allowed, value) {
		return badf("%s must be one of %s, got %q", name, strings.Join(allowed, ", "), value)
	}
	return nil
}

func date(name, value string) error {
	if value == "" {
		return nil
	}
	if _, err := time.Parse(time.DateOnly, value); err != nil {
		return badf("%s must be a date like %s (YYYY-MM-DD), got %q", name, Today, value)
	}
	return nil
}

func jsonText(v any) (*mcp.CallToolResult, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return mcp.NewToolResultText(string(b)), nil
}

// structured returns v as structuredContent with the same JSON as text, for
// clients that do not read structured content.
func structured(v any) (*mcp.CallToolResult, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return mcp.NewToolResultStructured(json.RawMessage(b), string(b)), nil
}
