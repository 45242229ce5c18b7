package console

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/codemode"
	"github.com/sandboxrt/sandbox/gateway"
	"github.com/sandboxrt/sandbox/runs"
)

// page is what every template gets.
type page struct {
	Title     string
	Nav       string // the menu entry to mark
	Principal string
	CSRF      string
	Message   string
	Live      string // the topic whose changes refresh the page's live part ("": none)
	Data      any
}

// pageNames are the templates, each a file of templates/ that defines
// "content" (and "live", the part a change refreshes).
var pageNames = []string{"overview", "servers", "runs", "run", "task", "approvals", "search", "audit", "scripts", "store", "login", "forbidden"}

var funcs = template.FuncMap{
	"ms": func(d time.Duration) string {
		switch {
		case d < time.Millisecond:
			return fmt.Sprintf("%dµs", d.Microseconds())
		case d < 10*time.Second:
			return fmt.Sprintf("%dms", d.Milliseconds())
		}
		return d.Round(100 * time.Millisecond).String()
	},
	"when": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format("2006-01-02 15:04:05Z")
	},
	"ago": func(t time.Time) string { return time.Since(t).Round(time.Second).String() },
	// span is the time from a to b, for a task that ended.
	"span": func(a, b time.Time) string { return b.Sub(a).Round(time.Millisecond).String() },
}

func parseTemplates() (map[string]*template.Template, error) {
	layout, err := fs.ReadFile(templateFS, "templates/layout.html")
	if err != nil {
		return nil, err
	}
	out := map[string]*template.Template{}
	for _, name := range pageNames {
		body, err := fs.ReadFile(templateFS, "templates/"+name+".html")
		if err != nil {
			return nil, err
		}
		t, err := template.New("layout").Funcs(funcs).Parse(string(layout))
		if err == nil {
			_, err = t.Parse(string(body))
		}
		if err != nil {
			return nil, fmt.Errorf("console: template %s: %w", name, err)
		}
		out[name] = t
	}
	return out, nil
}

// render writes a page, or only its live part when the page's script asks
// for it (?fragment=1).
func (c *Console) render(w http.ResponseWriter, r *http.Request, name string, p page, principal *auth.Principal) {
	if principal != nil {
		p.Principal, p.CSRF = principal.Key(), c.csrfToken(*principal)
	}
	t := c.pages[name]
	which := "layout"
	if r.URL.Query().Get("fragment") == "1" && t.Lookup("live") != nil {
		which = "live"
	}
	var b bytes.Buffer
	if err := t.ExecuteTemplate(&b, which, p); err != nil {
		c.opts.Logger.Error("console: rendering a page failed", "page", name, "error", err)
		http.Error(w, "the page could not be rendered", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(b.Bytes())
}

// route serves an operator's request.
func (c *Console) route(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	switch strings.TrimPrefix(r.URL.Path, "/") {
	case "":
		c.overview(w, r, p)
	case "servers":
		if r.Method == http.MethodPost {
			c.serversPost(w, r, p)
			return
		}
		c.servers(w, r, p)
	case "runs":
		c.runList(w, r, p)
	case "run":
		c.runDetail(w, r, p)
	case "task":
		c.task(w, r, p)
	case "approvals":
		c.approvals(w, r, p)
	case "search":
		c.search(w, r, p)
	case "audit":
		c.audit(w, r, p)
	case "scripts":
		c.scripts(w, r, p)
	case "store":
		c.store(w, r, p)
	case "events":
		c.serveEvents(w, r)
	default:
		http.NotFound(w, r)
	}
}

// overview sums up the servers, the runs and the approvals waiting.
type overviewData struct {
	Servers     int
	ByState     []stateCount
	Tools       int
	CodeMode    bool
	Stats       codemode.RunStats
	MeanRun     time.Duration
	Outcomes    []outcomeCount
	Limits      []outcomeCount
	Pending     int
	Unhealthy   []gateway.ServerStatus
	RecentRuns  []run
	AskOperator bool
}

type stateCount struct {
	State string
	N     int
}

type outcomeCount struct {
	Name string
	N    int64
}

func (c *Console) overview(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	d := overviewData{CodeMode: c.opts.Engine != nil, Pending: len(c.opts.Gateway.PendingApprovals())}
	states := map[string]int{}
	for _, s := range c.opts.Gateway.Servers() {
		d.Servers++
		d.Tools += s.Tools
		states[string(s.State)]++
		if s.State != gateway.StateReady && s.State != gateway.StateDisabled {
			d.Unhealthy = append(d.Unhealthy, s)
		}
	}
	for _, s := range sortedKeys(boolKeys(states)) {
		d.ByState = append(d.ByState, stateCount{s, states[s]})
	}
	if c.opts.Engine != nil {
		d.Stats = c.opts.Engine.RunStats()
		if d.Stats.Durations > 0 {
			d.MeanRun = d.Stats.DurationsTotal / time.Duration(d.Stats.Durations)
		}
		d.Outcomes = counts(d.Stats.Outcomes)
		d.Limits = counts(d.Stats.LimitsHit)
		d.RecentRuns = c.runs.list(runFilter{})
		if len(d.RecentRuns) > 5 {
			d.RecentRuns = d.RecentRuns[:5]
		}
	}
	c.render(w, r, "overview", page{Title: "Overview", Nav: "overview", Live: topicOverview, Data: d}, &p)
}

func boolKeys(m map[string]int) map[string]bool {
	out := map[string]bool{}
	for k := range m {
		out[k] = true
	}
	return out
}

func counts(m map[string]int64) []outcomeCount {
	var out []outcomeCount
	for k, v := range m {
		out = append(out, outcomeCount{k, v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// union is the sorted union of two sorted lists.
func union(a, b []string) []string {
	m := map[string]bool{}
	for _, s := range append(append([]string(nil), a...), b...) {
		m[s] = true
	}
	return sortedKeys(m)
}

// serverRow is one server on the servers page.
type serverRow struct {
	gateway.ServerStatus
	OAuth    string // the operator's login state ("" when it takes none)
	Login    bool   // a login is needed: show how
	Signing  *login // a login the console started
	ToolList []gateway.Tool
}

func (c *Console) servers(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	g := c.opts.Gateway
	byServer := map[string][]gateway.Tool{}
	for _, t := range g.Tools() {
		byServer[t.Server] = append(byServer[t.Server], t)
	}
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	var rows []serverRow
	for _, s := range g.Servers() {
		row := serverRow{ServerStatus: s, ToolList: byServer[s.Name]}
		row.OAuth = g.OAuthState(ctx, s.Name, auth.Operator().Key())
		if row.OAuth == "not logged in" && s.State == gateway.StateReady {
			row.OAuth = "" // it answered without a login: it needs none
		}
		row.Login = row.OAuth == "not logged in" || strings.HasSuffix(row.OAuth, "log in again")
		if l, ok := c.logins.get(s.Name); ok {
			row.Signing = &l
		}
		rows = append(rows, row)
	}
	c.render(w, r, "servers", page{Title: "Servers", Nav: "servers", Live: topicServers, Data: rows}, &p)
}

type runsData struct {
	Runs       []run
	TasksOn    bool       // the server runs tasks
	Tasks      []runs.Run // the newest that pass the filter
	TasksError string
	Filter     runFilter
	Principals []string
	Outcomes   []string
	Servers    []string
	CodeMode   bool
}

func (c *Console) runList(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	q := r.URL.Query()
	f := runFilter{Principal: q.Get("principal"), Server: q.Get("server"), Outcome: q.Get("outcome")}
	d := runsData{Filter: f, Runs: c.runs.list(f), Servers: c.opts.Gateway.ServerNames(), CodeMode: c.opts.Engine != nil}
	d.Principals, d.Outcomes = c.runs.facets()
	if c.opts.Tasks != nil {
		d.TasksOn = true
		tasks, owners, states, err := c.listTasks(r.Context(), f)
		if err != nil {
			c.opts.Logger.Warn("console: listing the tasks failed", "error", err)
			d.TasksError = "the tasks could not be listed: " + err.Error()
		}
		d.Tasks = tasks
		d.Principals, d.Outcomes = union(d.Principals, owners), union(d.Outcomes, states)
	}
	c.render(w, r, "runs", page{Title: "Runs", Nav: "runs", Live: topicRuns, Data: d}, &p)
}

// codeLine is a line of a run's code, marked where its error is.
type codeLine struct {
	N      int
	Text   string
	Error  bool
	Caret  string // spaces up to the error's column, for the marker line
	Reason string
}

type runData struct {
	run
	Lines []codeLine
}

func (c *Console) runDetail(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	id := r.URL.Query().Get("id")
	rn, ok := c.runs.get(id)
	if !ok {
		w.WriteHeader(http.StatusNotFound)
		c.render(w, r, "run", page{Title: "Run", Nav: "runs", Message: "No such run: it finished long enough ago to be forgotten (the console keeps the last runs in memory; the audit log has them all)."}, &p)
		return
	}
	d := runData{run: rn}
	for i, line := range strings.Split(rn.Code, "\n") {
		cl := codeLine{N: i + 1, Text: line}
		if e := rn.Error; e != nil && e.Line == i+1 {
			cl.Error = true
			if e.Column > 0 {
				cl.Caret = strings.Repeat(" ", min(e.Column-1, len(line))) + "^"
			}
			cl.Reason, _, _ = strings.Cut(e.Message, "\n") // the whole message is in the Error section
		}
		d.Lines = append(d.Lines, cl)
	}
	c.render(w, r, "run", page{Title: "Run " + id, Nav: "runs", Live: topicRun + id, Data: d}, &p)
}

type approvalsData struct {
	Pending []gateway.PendingApproval
	Now     time.Time
}

func (c *Console) approvals(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	msg := ""
	if r.Method == http.MethodPost {
		id, decision := r.PostForm.Get("id"), r.PostForm.Get("decision")
		if decision != "approve" && decision != "deny" {
			http.Error(w, `decision must be "approve" or "deny"`, http.StatusBadRequest)
			return
		}
		err := c.opts.Gateway.DecideApproval(id, decision == "approve", p.Key())
		switch {
		case errors.Is(err, gateway.ErrNoSuchApproval):
			msg = "That call is no longer waiting: " + err.Error() + "."
		case err != nil:
			msg = err.Error()
		default:
			c.opts.Logger.Info("console: approval decided", "id", id, "decision", decision, "by", p.Key())
			w.Header().Set("Location", "approvals")
			w.WriteHeader(http.StatusSeeOther)
			return
		}
	}
	c.render(w, r, "approvals", page{Title: "Approvals", Nav: "approvals", Live: topicApprovals, Message: msg,
		Data: approvalsData{Pending: c.opts.Gateway.PendingApprovals(), Now: time.Now()}}, &p)
}
