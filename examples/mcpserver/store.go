package mcpserver

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Today is the tracker's fixed "current date". The server never reads the
// clock, so every answer (overdue tasks, due-date checks) is the same on
// every run and in every test.
const Today = "2026-03-02"

// Task statuses and priorities, in workflow and severity order.
var (
	statuses   = []string{"todo", "in_progress", "blocked", "done"}
	priorities = []string{"low", "medium", "high", "urgent"}
)

// Project is one project of the tracker.
type Project struct {
	ID          string      `json:"id"`
	Name        string      `json:"name"`
	Status      string      `json:"status"` // active or archived
	Owner       string      `json:"owner"`
	Description string      `json:"description"`
	Members     []string    `json:"members"`
	Milestones  []Milestone `json:"milestones"`
}

// Milestone is a dated goal of a project.
type Milestone struct {
	Name string `json:"name"`
	Due  string `json:"due"`
	Done bool   `json:"done"`
}

// Task is one task of a project.
type Task struct {
	ID            string   `json:"id"`
	ProjectID     string   `json:"project_id"`
	Title         string   `json:"title"`
	Status        string   `json:"status"`
	Priority      string   `json:"priority"`
	Assignee      string   `json:"assignee,omitempty"`
	Labels        []string `json:"labels"`
	Due           string   `json:"due,omitempty"`
	EstimateHours float64  `json:"estimate_hours,omitempty"`
	Comments      []string `json:"comments,omitempty"`
	created       int      // creation order, for sort=created
}

// store is the tracker's in-memory state. Every New gets its own copy of the
// seed data, so tests and benchmarks never see each other's changes.
type store struct {
	mu       sync.Mutex
	projects []*Project
	tasks    []*Task
	nextTask int
	docs     map[string]string
}

// businessError is a rejection of valid-looking input by the tracker's
// rules (an archived project, an unknown assignee). Tools return it as an
// isError result whose text says what to do instead.
type businessError struct{ msg string }

func (e *businessError) Error() string { return e.msg }

func reject(format string, args ...any) error {
	return &businessError{fmt.Sprintf(format, args...)}
}

func (s *store) project(id string) (*Project, error) {
	for _, p := range s.projects {
		if strings.EqualFold(p.ID, id) {
			return p, nil
		}
	}
	known := make([]string, 0, len(s.projects))
	for _, p := range s.projects {
		known = append(known, fmt.Sprintf("%s (%s)", p.ID, p.Name))
	}
	return nil, reject("no project %q; known projects: %s", id, strings.Join(known, ", "))
}

func (s *store) task(id string) (*Task, error) {
	for _, t := range s.tasks {
		if strings.EqualFold(t.ID, id) {
			return t, nil
		}
	}
	return nil, reject("no task %q; find task ids with search_tasks", id)
}

// taskCounts counts a project's tasks per status.
func (s *store) taskCounts(projectID string) map[string]int {
	counts := map[string]int{}
	for _, st := range statuses {
		counts[st] = 0
	}
	for _, t := range s.tasks {
		if t.ProjectID == projectID {
			counts[t.Status]++
		}
	}
	return counts
}

type taskQuery struct {
	ProjectID string
	Text      string
	Statuses  []string
	Assignee  string
	Labels    []string
	DueBefore string
	Sort      string
	Limit     int
}

// search returns the matching tasks (copies), sorted, and how many matched
// before the limit.
func (s *store) search(q taskQuery) ([]Task, int) {
	var out []Task
	words := strings.Fields(strings.ToLower(q.Text))
	for _, t := range s.tasks {
		if q.ProjectID != "" && !strings.EqualFold(t.ProjectID, q.ProjectID) ||
			len(q.Statuses) > 0 && !slices.Contains(q.Statuses, t.Status) ||
			q.Assignee != "" && !strings.EqualFold(t.Assignee, q.Assignee) ||
			q.DueBefore != "" && (t.Due == "" || t.Due >= q.DueBefore) {
			continue
		}
		if !containsAll(t.Labels, q.Labels) || !containsWords(strings.ToLower(t.Title), words) {
			continue
		}
		out = append(out, t.clone())
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		switch q.Sort {
		case "priority":
			pa, pb := slices.Index(priorities, a.Priority), slices.Index(priorities, b.Priority)
			if pa != pb {
				return pa > pb
			}
		case "created":
			return a.created < b.created
		}
		// "due": tasks without a due date last, then by id for stability.
		if a.Due != b.Due {
			return a.Due != "" && (b.Due == "" || a.Due < b.Due)
		}
		return a.created < b.created
	})
	total := len(out)
	if q.Limit > 0 && len(out) > q.Limit {
		out = out[:q.Limit]
	}
	return out, total
}

func containsAll(have, want []string) bool {
	for _, w := range want {
		if !slices.ContainsFunc(have, func(h string) bool { return strings.EqualFold(h, w) }) {
			return false
		}
	}
	return true
}

func containsWords(title string, words []string) bool {
	for _, w := range words {
		if !strings.Contains(title, w) {
			return false
		}
	}
	return true
}

type newTask struct {
	ProjectID     string
	Title         string
	Priority      string
	Assignee      string
	Labels        []string
	Due           string
	EstimateHours float64
}

// create applies the tracker's rules to a new task and stores it.
func (s *store) create(n newTask) (Task, error) {
	p, err := s.project(n.ProjectID)
	if err != nil {
		return Task{}, err
	}
	if p.Status == "archived" {
		return Task{}, reject("project %s (%s) is archived and takes no new tasks; pick an active project (list_projects)", p.ID, p.Name)
	}
	title := strings.TrimSpace(n.Title)
	if title == "" {
		return Task{}, reject("title is empty; give the task a short title such as \"Write release notes\"")
	}
	if n.Assignee != "" && !slices.Contains(p.Members, n.Assignee) {
		return Task{}, reject("%q is not a member of %s; members are: %s", n.Assignee, p.ID, strings.Join(p.Members, ", "))
	}
	if n.Due != "" && n.Due < Today {
		return Task{}, reject("due date %s is in the past (today is %s); choose %s or later", n.Due, Today, Today)
	}
	for _, t := range s.tasks {
		if t.ProjectID == p.ID && t.Status != "done" && strings.EqualFold(t.Title, title) {
			return Task{}, reject("%s already has an open task titled %q (%s); work on that task (update_task_status moves it on), or give the new one another title", p.ID, t.Title, t.ID)
		}
	}
	t := &Task{
		ID:            "T-" + strconv.Itoa(s.nextTask),
		ProjectID:     p.ID,
		Title:         title,
		Status:        "todo",
		Priority:      n.Priority,
		Assignee:      n.Assignee,
		Labels:        append([]string{}, n.Labels...),
		Due:           n.Due,
		EstimateHours: n.EstimateHours,
		created:       s.nextTask,
	}
	s.nextTask++
	s.tasks = append(s.tasks, t)
	return t.clone(), nil
}

// setStatus moves a task through the workflow.
func (s *store) setStatus(id, status, comment string) (Task, bool, error) {
	t, err := s.task(id)
	if err != nil {
		return Task{}, false, err
	}
	if p, _ := s.project(t.ProjectID); p != nil && p.Status == "archived" {
		return Task{}, false, reject("%s belongs to archived project %s; its tasks are read-only", t.ID, p.ID)
	}
	if t.Status == status {
		return t.clone(), false, nil
	}
	if t.Status == "done" {
		return Task{}, false, reject("%s is done and cannot be reopened; create a follow-up task with create_task instead", t.ID)
	}
	if status == "blocked" && strings.TrimSpace(comment) == "" {
		return Task{}, false, reject("moving %s to blocked needs a comment saying what blocks it", t.ID)
	}
	t.Status = status
	if c := strings.TrimSpace(comment); c != "" {
		t.Comments = append(t.Comments, c)
	}
	return t.clone(), true, nil
}

func (s *store) delete(id string) (Task, error) {
	t, err := s.task(id)
	if err != nil {
		return Task{}, err
	}
	if p, _ := s.project(t.ProjectID); p != nil && p.Status == "archived" {
		return Task{}, reject("%s belongs to archived project %s; its tasks are read-only", t.ID, p.ID)
	}
	s.tasks = slices.DeleteFunc(s.tasks, func(x *Task) bool { return x == t })
	return t.clone(), nil
}

func (t *Task) clone() Task {
	c := *t
	c.Labels = append([]string{}, t.Labels...)
	c.Comments = slices.Clone(t.Comments)
	return c
}
