package console

import (
	"errors"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/sandboxrt/sandbox/codemode"
	"github.com/sandboxrt/sandbox/gateway"
	"github.com/sandboxrt/sandbox/runtime"
)

// The console remembers the last runs it heard (codemode.RunObserver), in
// memory: it is a window on what happens now, not a store. The audit log
// has every run.
// Each run's share is bounded, so the window stays within a few tens of
// MiB whatever the snippets write: 200 runs × (64 KiB of code + 64 KiB of
// console text + 1000 events).
const (
	keptRuns         = 200      // the runs listed; older ones are forgotten
	keptEventsPerRun = 1000     // a run's console lines and calls shown; the rest are counted
	keptTextPerRun   = 64 << 10 // bytes of console text kept per run
	keptLineBytes    = 2 << 10  // of one console line
	keptCodeBytes    = 64 << 10 // of a run's code
	keptValueBytes   = 4096     // of a run's returned value
)

// runEvent is one thing a run did, as the detail page shows it.
type runEvent struct {
	At   time.Duration // since the run started
	Kind string        // "log", "call", "ended" (a call's end)
	// A console line.
	Level, Text string
	// A tool call.
	Tool     string
	OK       bool
	Code     string
	Duration time.Duration
}

// run is one run the console heard of.
type run struct {
	codemode.RunInfo
	Events  []runEvent
	Dropped int // events past keptEventsPerRun or keptTextPerRun
	text    int // bytes of console text kept
	CodeCut bool

	Done     bool
	Duration time.Duration
	Outcome  string         // "running", "OK", an error kind, or BUSY
	Error    *runtime.Error // how it failed
	Refused  string         // why it did not run (BUSY)
	Value    string         // what it returned, cut to keptValueBytes
	Cut      bool           // Value was cut
	Calls    int
}

// runLog is the console's RunObserver: the last runs, and a hub to tell
// pages that watch them.
type runLog struct {
	hub *hub

	mu    sync.Mutex
	runs  map[string]*run
	order []string // oldest first
}

func newRunLog(h *hub) *runLog { return &runLog{hub: h, runs: map[string]*run{}} }

func (l *runLog) RunStarted(info codemode.RunInfo) {
	l.mu.Lock()
	r := &run{RunInfo: info, Outcome: "running"}
	if len(r.Code) > keptCodeBytes {
		r.Code, r.CodeCut = cutUTF8(r.Code, keptCodeBytes), true
	}
	l.runs[info.ID] = r
	l.order = append(l.order, info.ID)
	for len(l.order) > keptRuns {
		delete(l.runs, l.order[0])
		l.order = l.order[1:]
	}
	l.mu.Unlock()
	l.hub.notify(topicRuns)
}

func (l *runLog) RunEvent(id string, e runtime.Event) {
	l.mu.Lock()
	r := l.runs[id]
	if r == nil {
		l.mu.Unlock()
		return
	}
	ev := runEvent{At: time.Since(r.Started)}
	switch {
	case e.Log != nil:
		ev.Kind, ev.Level, ev.Text = "log", string(e.Log.Level), e.Log.Message
		if len(ev.Text) > keptLineBytes {
			ev.Text = cutUTF8(ev.Text, keptLineBytes) + "…"
		}
		if r.text+len(ev.Text) > keptTextPerRun {
			r.Dropped++
			l.mu.Unlock()
			return
		}
		r.text += len(ev.Text)
	case e.Call != nil && e.Ended:
		ev.Kind, ev.Tool, ev.OK, ev.Code, ev.Duration = "ended", e.Call.Tool, e.Call.OK, e.Call.Code, e.Call.Duration
	case e.Call != nil:
		ev.Kind, ev.Tool = "call", e.Call.Tool
		r.Calls++
	default:
		l.mu.Unlock()
		return
	}
	if len(r.Events) < keptEventsPerRun {
		r.Events = append(r.Events, ev)
	} else {
		r.Dropped++
	}
	l.mu.Unlock()
	l.hub.notify(topicRun + id)
}

func (l *runLog) RunEnded(id string, res *codemode.ExecuteResult, err error) {
	l.mu.Lock()
	r := l.runs[id]
	if r == nil {
		l.mu.Unlock()
		return
	}
	r.Done = true
	switch {
	case res == nil:
		r.Outcome = "refused"
		if isBusy(err) {
			r.Outcome = string(codemode.CodeBusy)
		}
		if err != nil {
			r.Refused = err.Error()
		}
	case res.OK:
		r.Outcome = "OK"
	default:
		r.Outcome, r.Error = string(res.Error.Kind), res.Error
	}
	if res != nil {
		r.Duration, r.Calls = res.Duration, len(res.Calls)
		v := string(res.Value)
		if len(v) > keptValueBytes {
			v, r.Cut = cutUTF8(v, keptValueBytes), true
		}
		r.Value = v
	}
	l.mu.Unlock()
	l.hub.notify(topicRuns)
	l.hub.notify(topicRun + id)
}

// runFilter picks runs for the list.
type runFilter struct {
	Principal, Server, Outcome string
}

func (f runFilter) match(r *run) bool {
	if f.Principal != "" && r.Caller.Principal.Key() != f.Principal {
		return false
	}
	if f.Outcome != "" && r.Outcome != f.Outcome {
		return false
	}
	if f.Server != "" {
		for _, e := range r.Events {
			if e.Kind == "call" && serverOf(e.Tool) == f.Server {
				return true
			}
		}
		return false
	}
	return true
}

// list returns copies of the runs that match, newest first.
func (l *runLog) list(f runFilter) []run {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []run
	for i := len(l.order) - 1; i >= 0; i-- {
		r := l.runs[l.order[i]]
		if f.match(r) {
			c := *r
			c.Events = nil // the list does not show them
			out = append(out, c)
		}
	}
	return out
}

// get returns a copy of one run.
func (l *runLog) get(id string) (run, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r, ok := l.runs[id]
	if !ok {
		return run{}, false
	}
	c := *r
	c.Events = append([]runEvent(nil), r.Events...)
	return c, true
}

// facets are the values the list's filters offer.
func (l *runLog) facets() (principals, outcomes []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ps, os := map[string]bool{}, map[string]bool{}
	for _, r := range l.runs {
		ps[r.Caller.Principal.Key()] = true
		os[r.Outcome] = true
	}
	return sortedKeys(ps), sortedKeys(os)
}

// isBusy reports whether a run was refused with BUSY.
func isBusy(err error) bool {
	var ge *gateway.Error
	return errors.As(err, &ge) && ge.Code == codemode.CodeBusy
}

// serverOf is the server of a "server:tool" id.
func serverOf(id string) string {
	s, _, _ := strings.Cut(id, ":")
	return s
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// cutUTF8 is s's first n bytes or fewer, not splitting a character.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
