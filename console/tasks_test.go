package console

import (
	"context"
	"encoding/json"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sandboxrt/sandbox/runs"
)

// consoleWithTasks is a console over the world's gateway that lists the
// tasks of reg.
func (w *world) consoleWithTasks(t *testing.T, reg *runs.Registry) (*Console, string) {
	t.Helper()
	c, err := New(Options{Gateway: w.g, Engine: w.engine, Authenticate: testAuth, Tasks: reg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	mux := http.NewServeMux()
	mux.Handle("/ui/", http.StripPrefix("/ui", c))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return c, srv.URL + "/ui/"
}

func bearer(t *testing.T, method, target string, form url.Values) (*http.Response, string) {
	t.Helper()
	var req *http.Request
	if form != nil {
		req, _ = http.NewRequest(method, target, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	} else {
		req, _ = http.NewRequest(method, target, nil)
	}
	req.Header.Set("Authorization", "Bearer ops-key")
	return do(t, noRedirects, req)
}

// TestTasksAreListedShownAndCancelled: tasks of two replicas (two
// registries on one store) are on the runs page with their status and
// filters; a task's page shows its console lines and the input it waits
// for, escaped, its result only on a POST with the CSRF token (audited);
// an operator cancels a live task, audited with who.
func TestTasksAreListedShownAndCancelled(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	store := runs.NewMemoryStore(nil)
	here, there := runs.NewRegistry(store, runs.Options{}), runs.NewRegistry(store, runs.Options{})
	c, base := w.consoleWithTasks(t, here)

	done, err := there.Start(ctx, "agent/agent", "execute_code", 0)
	if err != nil {
		t.Fatal(err)
	}
	result, _ := json.Marshal(map[string]any{"content": []any{map[string]string{"type": "text", "text": "secret " + hostile}}})
	if _, err := done.Finish(result, nil); err != nil {
		t.Fatal(err)
	}
	asking, err := there.Start(ctx, "agent/agent", "evil_lookup", 0)
	if err != nil {
		t.Fatal(err)
	}
	asking.Console("line " + hostile)
	asking.Progress(runs.Progress{Progress: 1, Total: 3, Message: "looking"})
	asked := make(chan error, 1)
	go func() {
		_, err := asking.Ask(asking.Context(), map[string]json.RawMessage{"q1": json.RawMessage(`{"method":"elicitation/create","params":{"message":"Which table? ` + strings.ReplaceAll(hostile, `"`, `\"`) + `"}}`)})
		asked <- err
	}()
	waitFor(t, func() bool {
		r, _ := here.Get(ctx, "agent/agent", asking.ID())
		return r.State == runs.InputRequired && len(r.Console) == 1
	})

	_, page := bearer(t, "GET", base+"runs", nil)
	for _, want := range []string{"<h2>Tasks</h2>", `task?owner=agent%2fagent&amp;id=` + done.ID(), ">completed<", ">input_required<", "<code>evil_lookup</code>"} {
		if !strings.Contains(page, want) {
			t.Errorf("the runs page lacks %q:\n%s", want, page)
		}
	}
	if _, page := bearer(t, "GET", base+"runs?outcome=completed", nil); strings.Contains(page, asking.ID()) || !strings.Contains(page, done.ID()) {
		t.Errorf("the state filter:\n%s", page)
	}
	if _, page := bearer(t, "GET", base+"runs?principal=ops/ops", nil); strings.Contains(page, done.ID()) {
		t.Errorf("the principal filter:\n%s", page)
	}
	if _, page := bearer(t, "GET", base+"runs?server=widgets", nil); strings.Contains(page, asking.ID()) {
		t.Errorf("the server filter kept evil's task:\n%s", page)
	}

	taskURL := base + "task?" + url.Values{"owner": {"agent/agent"}, "id": {asking.ID()}}.Encode()
	resp, page := bearer(t, "GET", taskURL, nil)
	if resp.StatusCode != http.StatusOK || !strings.Contains(page, "line "+html.EscapeString(hostile)) || strings.Contains(page, "<script>window") ||
		!strings.Contains(page, "Which table?") || !strings.Contains(page, "1 of 3: looking") || !strings.Contains(page, `data-topic="task:`+asking.ID()+`"`) {
		t.Fatalf("the waiting task's page: %d\n%s", resp.StatusCode, page)
	}

	// The result: not on the page, not without the token, then on a POST.
	doneForm := url.Values{"owner": {"agent/agent"}, "id": {done.ID()}, "action": {"result"}}
	if _, page := bearer(t, "GET", base+"task?"+doneForm.Encode(), nil); strings.Contains(page, "secret") || !strings.Contains(page, "Show the result") {
		t.Errorf("a result shown without asking:\n%s", page)
	}
	if resp, body := bearer(t, "POST", base+"task", doneForm); resp.StatusCode != http.StatusForbidden || strings.Contains(body, "secret") {
		t.Errorf("the result without the CSRF token: %d", resp.StatusCode)
	}
	doneForm.Set("csrf", c.csrfToken(keys["ops-key"]))
	resp, page = bearer(t, "POST", base+"task", doneForm)
	if resp.StatusCode != http.StatusOK || !strings.Contains(page, `&#34;text&#34;: &#34;secret \u003cscript\u003ewindow.pwned=1`) || strings.Contains(page, "<script>window") {
		t.Fatalf("the result on asking: %d\n%s", resp.StatusCode, page)
	}

	// The cancel: refused without the token, then done and audited.
	cancel := url.Values{"owner": {"agent/agent"}, "id": {asking.ID()}, "action": {"cancel"}}
	if resp, _ := bearer(t, "POST", base+"task", cancel); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a cancel without the CSRF token: %d", resp.StatusCode)
	}
	cancel.Set("csrf", c.csrfToken(keys["ops-key"]))
	if resp, _ := bearer(t, "POST", base+"task", cancel); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("the cancel: %d", resp.StatusCode)
	}
	if r, _ := here.Get(ctx, "agent/agent", asking.ID()); r.State != runs.Cancelled || r.Message != "cancelled by the operator ops/ops" {
		t.Errorf("after the cancel: %s %q", r.State, r.Message)
	}
	// A task that ended is not cancelled, nor is a cancel audited.
	cancel.Set("id", done.ID())
	if resp, page := bearer(t, "POST", base+"task", cancel); resp.StatusCode != http.StatusOK || !strings.Contains(page, "The task was not cancelled: it had ended already (completed)") {
		t.Errorf("cancelling a completed task: %d\n%s", resp.StatusCode, page)
	}
	select {
	case err := <-asked:
		if err == nil {
			t.Error("the task's question was answered by a cancel")
		}
	case <-time.After(5 * time.Second):
		t.Error("the task on the other replica did not see the cancel")
	}

	w.g.Close() // flushes the audit log
	data, _ := os.ReadFile(w.auditPath)
	if n := strings.Count(string(data), `"decision":"cancelled by an operator"`); n != 1 {
		t.Errorf("%d cancels audited, want 1:\n%s", n, data)
	}
	for _, want := range []string{
		`"kind":"task","principal":"ops/ops","session":"console","tool":"read_task_result","outcome":"OK"`,
		`"kind":"task","principal":"agent/agent","tool":"evil_lookup","decision":"cancelled by an operator","decidedBy":"ops/ops","outcome":"CANCELLED","name":"` + asking.ID() + `"`,
	} {
		if !strings.Contains(string(data), want) {
			t.Errorf("the audit log lacks %s:\n%s", want, data)
		}
	}
}

// TestTaskPagesAreToldOfChanges: a task's page, shown live, is told when
// the task writes a console line on another replica, within a poll; the
// runs page when a task ends.
func TestTaskPagesAreToldOfChanges(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	store := runs.NewMemoryStore(nil)
	there := runs.NewRegistry(store, runs.Options{})
	c, base := w.consoleWithTasks(t, runs.NewRegistry(store, runs.Options{}))
	h, err := there.Start(ctx, "agent/agent", "execute_code", 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, page := bearer(t, "GET", base+"task?"+url.Values{"owner": {"agent/agent"}, "id": {h.ID()}}.Encode(), nil); !strings.Contains(page, `data-topic="task:`) {
		t.Fatalf("the task's page is not live:\n%s", page)
	}
	task, _ := c.hub.subscribe(topicTask + h.ID())
	list, _ := c.hub.subscribe(topicRuns)
	time.Sleep(taskPollEvery + 500*time.Millisecond) // the watcher's first look
	drain := func(s *subscriber) {
		select {
		case <-s.changed:
		default:
		}
	}
	told := func(what string, s *subscriber) {
		t.Helper()
		select {
		case <-s.changed:
		case <-time.After(2*taskPollEvery + 2*time.Second):
			t.Errorf("%s was not told", what)
		}
	}
	drain(task)
	drain(list)
	h.Console("a new line")
	told("the task's page, of a new console line", task)
	h.Finish(nil, nil)
	told("the runs page, of the task's end", list)
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
