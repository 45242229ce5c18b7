package console

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/gateway"
	"github.com/sandboxrt/sandbox/runs"
)

// Tasks: the runs that outlive their request (the tasks extension:
// execute_code, saved scripts and upstream tools run as tasks), read from
// runs.Registry, so with "gateway.redis" the console lists the tasks every
// replica started. The runs page lists them beside the execute_code runs
// this process heard of; a task's page shows its status, progress, last
// console lines and the input it waits for. Its result is shown only when
// an operator asks (a POST, audited), as store values are; an operator may
// cancel a live task (a POST, audited with who).

const (
	listedTasks      = 200             // the newest tasks the runs page lists
	taskPollEvery    = 2 * time.Second // how often a watched list is read again
	shownRequestSize = 4096            // bytes of one input request shown
	shownResultSize  = 64 << 10        // bytes of a result shown
)

// topicTask + a task's id is the live topic of its page.
const topicTask = "task:"

func isTaskTopic(t string) bool { return strings.HasPrefix(t, topicTask) && len(t) > len(topicTask) }

// taskMatch reports whether a task passes the runs page's filter: the
// principal is its owner, the outcome its state, the server the one whose
// tool it runs (toolServer: wire name -> server).
func taskMatch(f runFilter, t runs.Run, toolServer map[string]string) bool {
	switch {
	case f.Principal != "" && t.Owner != f.Principal,
		f.Outcome != "" && string(t.State) != f.Outcome,
		f.Server != "" && toolServer[t.Tool] != f.Server:
		return false
	}
	return true
}

// listTasks is the newest tasks that pass f, and the owners and states of
// all of them (the filters' choices).
func (c *Console) listTasks(ctx context.Context, f runFilter) (list []runs.Run, owners, states []string, err error) {
	all, err := c.opts.Tasks.List(ctx, listedTasks)
	if err != nil {
		return nil, nil, nil, err
	}
	toolServer := map[string]string{}
	if f.Server != "" {
		for _, t := range c.opts.Gateway.Tools() {
			toolServer[t.WireName] = t.Server
		}
	}
	ownerSet, stateSet := map[string]bool{}, map[string]bool{}
	for _, t := range all {
		ownerSet[t.Owner], stateSet[string(t.State)] = true, true
		if taskMatch(f, t, toolServer) {
			list = append(list, t)
		}
	}
	return list, sortedKeys(ownerSet), sortedKeys(stateSet), nil
}

// inputRequest is one request a task waits on, as its page shows it.
type inputRequest struct {
	Key, JSON string
	Cut       bool
}

type taskData struct {
	Task     runs.Run
	Requests []inputRequest
	// What an operator asked to see (a POST).
	Shown       bool
	ResultText  string
	ResultCut   bool
	Error       string
	CanCancel   bool
	CancelError string
}

// task is a task's page: GET shows it, POST action=result shows its
// result, POST action=cancel cancels it.
func (c *Console) task(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	if c.opts.Tasks == nil {
		w.WriteHeader(http.StatusNotFound)
		c.render(w, r, "task", page{Title: "Task", Nav: "runs", Message: "Tasks are off on this server."}, &p)
		return
	}
	q := r.URL.Query()
	if r.Method == http.MethodPost {
		q = r.PostForm
	}
	owner, id := q.Get("owner"), q.Get("id")
	var action, cancelFailed string
	if r.Method == http.MethodPost {
		action = r.PostForm.Get("action")
		if action != "result" && action != "cancel" {
			http.Error(w, `action must be "result" or "cancel"`, http.StatusBadRequest)
			return
		}
	}
	if action == "cancel" {
		err := c.opts.Tasks.CancelByOperator(r.Context(), owner, id, p.Key())
		var t runs.Run
		if err == nil {
			t, err = c.opts.Tasks.Get(r.Context(), owner, id)
		}
		if err == nil && t.State != runs.Cancelled { // it ended before the cancel: nothing was done
			err = fmt.Errorf("it had ended already (%s)", t.State)
		}
		if err == nil {
			c.opts.Gateway.Audit(gateway.AuditRecord{Kind: gateway.AuditKindTask, Principal: owner, Tool: t.Tool, Name: id,
				Decision: "cancelled by an operator", DecidedBy: p.Key(), Outcome: strings.ToUpper(string(t.State))})
			c.opts.Logger.Info("console: a task was cancelled", "owner", owner, "id", id, "by", p.Key())
			c.hub.notify(topicRuns)
			c.hub.notify(topicTask + id)
			w.Header().Set("Location", "task?"+url.Values{"owner": {owner}, "id": {id}}.Encode())
			w.WriteHeader(http.StatusSeeOther)
			return
		}
		if !errors.Is(err, runs.ErrNotFound) {
			c.opts.Logger.Info("console: a task was not cancelled", "owner", owner, "id", id, "error", err)
			cancelFailed = "The task was not cancelled: " + err.Error()
		}
	}
	t, err := c.opts.Tasks.Get(r.Context(), owner, id)
	switch {
	case errors.Is(err, runs.ErrNotFound):
		w.WriteHeader(http.StatusNotFound)
		c.render(w, r, "task", page{Title: "Task", Nav: "runs", Message: "No such task: it expired (a task is kept for its TTL once it ends), or the link is wrong."}, &p)
		return
	case err != nil:
		c.opts.Logger.Warn("console: reading a task failed", "owner", owner, "id", id, "error", err)
		w.WriteHeader(http.StatusServiceUnavailable)
		c.render(w, r, "task", page{Title: "Task", Nav: "runs", Message: "The task could not be read: " + err.Error()}, &p)
		return
	}
	d := taskData{Task: t, CanCancel: t.State.Live(), CancelError: cancelFailed}
	for _, k := range sortedRequestKeys(t.InputRequests) {
		text, cut := indented(t.InputRequests[k], shownRequestSize)
		d.Requests = append(d.Requests, inputRequest{Key: k, JSON: text, Cut: cut})
	}
	if action == "result" {
		d.Shown = true
		d.ResultText, d.ResultCut = indented(t.Result, shownResultSize)
		if t.Error != nil {
			d.Error, _ = indented(t.Error, shownResultSize)
		}
		c.opts.Gateway.Audit(gateway.AuditRecord{Kind: gateway.AuditKindTask, Principal: p.Key(), Session: "console", Tool: "read_task_result",
			Name: cutUTF8(owner+": "+id, 200), Outcome: "OK", ResultBytes: len(t.Result) + len(t.Error)})
		c.opts.Logger.Info("console: a task's result was read", "owner", owner, "id", id, "by", p.Key())
	}
	d.Task.Result, d.Task.Error = nil, nil // only ResultText and Error, and only when asked
	live := ""
	if t.State.Live() && action == "" { // a page that shows a result asked for is not refreshed away
		live = topicTask + id
		c.tasks.add(id, owner, taskShown(t))
	}
	c.render(w, r, "task", page{Title: "Task " + id, Nav: "runs", Live: live, Data: d}, &p)
}

func sortedRequestKeys(m map[string]json.RawMessage) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// indented is raw JSON indented for reading, cut to n bytes.
func indented(raw json.RawMessage, n int) (string, bool) {
	if len(raw) == 0 {
		return "", false
	}
	var b bytes.Buffer
	if json.Indent(&b, raw, "", "  ") != nil {
		b.Reset()
		b.Write(raw)
	}
	if b.Len() > n {
		return cutUTF8(b.String(), n), true
	}
	return b.String(), false
}

// watchedTasks are the live tasks whose pages were shown, for
// watchTasks to read while a page watches them.
type watchedTasks struct {
	mu sync.Mutex
	by map[string]watchedTask // by id
}

type watchedTask struct {
	owner string
	shown time.Time // the page was rendered: its event stream opens after
	what  [32]byte  // what it showed (taskShown)
}

const (
	maxWatchedTasks = maxStreams // as many as there may be event streams
	// streamGrace is how long a task whose page was shown stays watched
	// before its event stream opens.
	streamGrace = 30 * time.Second
)

func (w *watchedTasks) add(id, owner string, what [32]byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.by == nil {
		w.by = map[string]watchedTask{}
	}
	if _, ok := w.by[id]; ok || len(w.by) < maxWatchedTasks {
		w.by[id] = watchedTask{owner: owner, shown: time.Now(), what: what}
	}
}

func (w *watchedTasks) snapshot() map[string]watchedTask {
	w.mu.Lock()
	defer w.mu.Unlock()
	return maps.Clone(w.by)
}

func (w *watchedTasks) drop(id string) {
	w.mu.Lock()
	delete(w.by, id)
	w.mu.Unlock()
}

// watchTasks tells the runs topic when the list of tasks changes (a task
// started, changed state or ended), and a task's topic when what its page
// shows changes (state, progress, console lines, input requests), looking
// every taskPollEvery while a page watches: a task may run on another
// replica, so there is nothing to be told by. The list is read from the
// runs' metas (Registry.List); only a watched task is read whole.
func (c *Console) watchTasks(ctx context.Context) {
	t := time.NewTicker(taskPollEvery)
	defer t.Stop()
	var list [32]byte
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if c.hub.watching(func(topic string) bool { return topic == topicRuns }) {
			if all, err := c.opts.Tasks.List(ctx, listedTasks); err == nil {
				fp := fingerprint(all)
				if fp != list && list != ([32]byte{}) {
					c.hub.notify(topicRuns)
				}
				list = fp
			}
		} else {
			list = [32]byte{} // nobody looks: the next look starts afresh
		}
		for id, wt := range c.tasks.snapshot() {
			topic := topicTask + id
			if !c.hub.watching(func(t string) bool { return t == topic }) {
				if time.Since(wt.shown) > streamGrace { // the page was closed
					c.tasks.drop(id)
				}
				continue
			}
			r, err := c.opts.Tasks.Get(ctx, wt.owner, id)
			if err != nil && !errors.Is(err, runs.ErrNotFound) {
				continue
			}
			if taskShown(r) != wt.what {
				// The page fetches its part again, which renders it
				// anew (add): until then it is told at each look.
				c.hub.notify(topic)
				if !r.State.Live() { // told that it ended: nothing more to watch
					c.tasks.drop(id)
				}
			}
		}
	}
}

// taskShown is what a task's page shows of r (not its result, nor its
// lease's renewals), hashed.
func taskShown(r runs.Run) [32]byte {
	r.Result, r.Error, r.Lease, r.Replica, r.Answers = nil, nil, time.Time{}, "", nil
	return fingerprint(r)
}

// fingerprint is a value's JSON, hashed: what a page shows of it changed
// when it changes.
func fingerprint(v any) [32]byte {
	b, _ := json.Marshal(v)
	return sha256.Sum256(b)
}
