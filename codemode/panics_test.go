package codemode

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/examples/mcpserver"
	"github.com/sandboxrt/sandbox/gateway"
	"github.com/sandboxrt/sandbox/gateway/toolspec"
	"github.com/sandboxrt/sandbox/internal/testlog"
	"github.com/sandboxrt/sandbox/runtime"
)

// TestProgressRelayPanicIsContained: a run's events are relayed to its
// client (notifications/progress and notifications/message) on a goroutine
// of the stream's own, which nothing else recovers. A relay that panics
// there stops the streaming, not the process: the run still answers its
// result, the panic is in the log with its stack, and the engine keeps
// serving.
func TestProgressRelayPanicIsContained(t *testing.T) {
	t.Parallel()
	logs := &testlog.Buffer{}
	e := newEngineFull(t, map[string]*server.MCPServer{}, gateway.DefaultSettings(), runtime.Options{Isolation: runtime.InProcess, Workers: 1},
		Options{Limits: runtime.Limits{Timeout: 20 * time.Second}, Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	caller := auth.Caller{Principal: auth.Anonymous()}
	raw, _ := json.Marshal(map[string]any{"code": `console.log("one"); console.log("two"); return 42`})
	res, err := e.handleExecute(ctx, toolspec.Request{Caller: caller, Arguments: raw, ProgressRequested: true,
		Progress: func(float64, float64, string) { panic("progress relay") }, Log: func(string, any) {}})
	if err != nil || !strings.Contains(string(res.StructuredContent), `"value":42`) {
		t.Fatalf("a run whose progress relay panicked: %v %+v", err, res)
	}
	if !strings.Contains(logs.String(), "progress relay") || !strings.Contains(logs.String(), "goroutine") {
		t.Errorf("the log does not have the panic and its stack:\n%s", logs.String())
	}
	raw, _ = json.Marshal(map[string]any{"code": `return 43`})
	res, err = e.handleExecute(ctx, toolspec.Request{Caller: caller, Arguments: raw})
	if err != nil || !strings.Contains(string(res.StructuredContent), `"value":43`) {
		t.Fatalf("after the panic: %v %+v", err, res)
	}
}

// panickingObserver is a RunObserver whose RunEvent panics.
type panickingObserver struct{}

func (panickingObserver) RunStarted(RunInfo)                     {}
func (panickingObserver) RunEvent(string, runtime.Event)         { panic("run observer") }
func (panickingObserver) RunEnded(string, *ExecuteResult, error) {}

// TestRunEventPanicIsContained: a run's events (console entries, a tool
// call's start and end) are heard on the runtime's goroutines (the one
// reading the worker's frames, the one making the call), which nothing
// else recovers. A listener that panics there (a run observer, the
// client's stream) loses that event, not the process: the panic is in the
// log with its stack, the run answers its result, and the engine keeps
// serving.
func TestRunEventPanicIsContained(t *testing.T) {
	t.Parallel()
	logs := &testlog.Buffer{}
	e := newEngineFull(t, map[string]*server.MCPServer{"demo": mcpserver.New()}, gateway.DefaultSettings(), runtime.Options{Isolation: runtime.IsolateWorkers, Workers: 1},
		Options{Limits: runtime.Limits{Timeout: 20 * time.Second}, Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	stop := e.ObserveRuns(panickingObserver{})
	defer stop()
	res := execute(t, e, ExecuteRequest{Code: `console.log("heard"); await demo.listProjects({}); return 42`})
	if !res.OK || string(res.Value) != "42" {
		t.Fatalf("a run whose observer panicked: %+v", res)
	}
	if !strings.Contains(logs.String(), "run observer") || !strings.Contains(logs.String(), "goroutine") {
		t.Errorf("the log does not have the panic and its stack:\n%s", logs.String())
	}
	if res := execute(t, e, ExecuteRequest{Code: `return 43`}); !res.OK || string(res.Value) != "43" {
		t.Fatalf("after the panic: %+v", res)
	}
}

// panickingStore is a sandbox.store whose Get panics.
type panickingStore struct{ Store }

func (panickingStore) Get(context.Context, StoreScope, string) (json.RawMessage, bool, error) {
	panic("store get")
}

// TestHostPanicIsLogged: a snippet's call whose handling panics in the
// engine (here sandbox.store's backend) fails that call with HOST_ERROR,
// as the runtime's own recovery makes it, and the log has the panic with
// its stack: the runtime has no log, so the bug could be heard of only by
// the agent.
func TestHostPanicIsLogged(t *testing.T) {
	t.Parallel()
	logs := &testlog.Buffer{}
	e := newEngineFull(t, map[string]*server.MCPServer{}, gateway.DefaultSettings(), runtime.Options{Isolation: runtime.InProcess, Workers: 1},
		Options{Limits: runtime.Limits{Timeout: 20 * time.Second}, Store: panickingStore{}, Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	res := execute(t, e, ExecuteRequest{Code: `try { await sandbox.store.get("k"); return "answered" } catch (err: any) { return err.code + ": " + err.message }`})
	if !res.OK || !strings.Contains(string(res.Value), "HOST_ERROR") || !strings.Contains(string(res.Value), "store get") {
		t.Fatalf("a call whose handling panicked: %+v", res)
	}
	if !strings.Contains(logs.String(), "store get") || !strings.Contains(logs.String(), "goroutine") {
		t.Errorf("the log does not have the panic and its stack:\n%s", logs.String())
	}
}

// usagePanicsOnce is a UsageStore whose first Record panics.
type usagePanicsOnce struct {
	mu       sync.Mutex
	panicked bool
	recorded [][]string
}

func (u *usagePanicsOnce) Record(_ context.Context, _ string, _, tools []string) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if !u.panicked {
		u.panicked = true
		panic("usage store")
	}
	u.recorded = append(u.recorded, tools)
	return nil
}

func (*usagePanicsOnce) Evidence(context.Context, []string) (map[string]map[string]int, error) {
	return nil, nil
}

// TestLearningPanicIsContained: what a search led to is written to the
// usage store from a goroutine of learning's own, which nothing else
// recovers. A write that panics loses that record, not the process: the
// panic is in the log with its stack, and the next records are written.
func TestLearningPanicIsContained(t *testing.T) {
	t.Parallel()
	logs := &testlog.Buffer{}
	usage := &usagePanicsOnce{}
	l := newLearning(usage, slog.New(slog.NewJSONHandler(logs, nil)))
	defer l.close()
	c := caller("alice", "s1")
	l.searched(c, []string{"project"})
	l.called(c, nil, "demo:list_projects")
	l.called(c, nil, "demo:get_project")
	l.settle()
	usage.mu.Lock()
	recorded := fmt.Sprint(usage.recorded)
	usage.mu.Unlock()
	if recorded != "[[demo:get_project]]" {
		t.Errorf("recorded %s after the panic, want the second record", recorded)
	}
	if !strings.Contains(logs.String(), "usage store") || !strings.Contains(logs.String(), "goroutine") {
		t.Errorf("the log does not have the panic and its stack:\n%s", logs.String())
	}
}
