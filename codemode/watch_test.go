package codemode

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sandboxrt/sandbox/examples/mcpserver"
	"github.com/sandboxrt/sandbox/runtime"
)

// recorder is a RunObserver that keeps what it heard.
type recorder struct {
	mu      sync.Mutex
	started []RunInfo
	events  map[string][]runtime.Event
	ended   map[string]*ExecuteResult
}

func (r *recorder) RunStarted(i RunInfo) {
	r.mu.Lock()
	r.started = append(r.started, i)
	r.mu.Unlock()
}
func (r *recorder) RunEvent(id string, e runtime.Event) {
	r.mu.Lock()
	r.events[id] = append(r.events[id], e)
	r.mu.Unlock()
}
func (r *recorder) RunEnded(id string, res *ExecuteResult, _ error) {
	r.mu.Lock()
	r.ended[id] = res
	r.mu.Unlock()
}

// TestObserveRunsAndCountThem: an observer hears a run start (its code and
// limits), its console lines and calls, and its end; RunStats and the
// Prometheus collector count runs by outcome and the limits they hit.
func TestObserveRunsAndCountThem(t *testing.T) {
	t.Parallel()
	e := newEngine(t, map[string]*server.MCPServer{"demo": mcpserver.New()}, runtime.InProcess)
	rec := &recorder{events: map[string][]runtime.Event{}, ended: map[string]*ExecuteResult{}}
	stop := e.ObserveRuns(rec)
	execute(t, e, ExecuteRequest{Code: `console.log("hello from the run"); return (await demo.listProjects({})) && 1`})
	execute(t, e, ExecuteRequest{Code: `while (true) {}`, Limits: runtime.Limits{Timeout: 200 * time.Millisecond}})
	stop()
	execute(t, e, ExecuteRequest{Code: `return 2`}) // not heard: the observer left

	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.started) != 2 || len(rec.ended) != 2 {
		t.Fatalf("heard %d starts and %d ends, want 2 each", len(rec.started), len(rec.ended))
	}
	first := rec.started[0]
	if !strings.Contains(first.Code, "hello from the run") || first.Limits.TimeoutMs == 0 || first.ID == "" {
		t.Errorf("the first run's start: %+v", first)
	}
	var log, call bool
	for _, ev := range rec.events[first.ID] {
		log = log || (ev.Log != nil && strings.Contains(ev.Log.Message, "hello from the run"))
		call = call || (ev.Call != nil && ev.Call.Tool == "demo:list_projects")
	}
	if !log || !call {
		t.Errorf("the first run's events: log %v, call %v: %+v", log, call, rec.events[first.ID])
	}
	if res := rec.ended[first.ID]; res == nil || !res.OK {
		t.Errorf("the first run's end: %+v", res)
	}

	s := e.RunStats()
	if s.Outcomes["OK"] != 2 || s.Outcomes["limit"] != 1 || s.LimitsHit["time"] != 1 || s.Durations != 3 || s.Running != 0 {
		t.Errorf("stats: %+v", s)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(e.Collector())
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	series := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			name := f.GetName()
			for _, l := range m.GetLabel() {
				name += "," + l.GetValue()
			}
			switch {
			case m.Counter != nil:
				series[name] = m.Counter.GetValue()
			case m.Gauge != nil:
				series[name] = m.Gauge.GetValue()
			case m.Histogram != nil:
				series[name] = float64(m.Histogram.GetSampleCount())
			}
		}
	}
	want := map[string]float64{"sandbox_codemode_runs_total,OK": 2, "sandbox_codemode_runs_total,limit": 1, "sandbox_codemode_limits_hit_total,time": 1,
		"sandbox_codemode_busy_total": 0, "sandbox_codemode_runs_in_progress": 0, "sandbox_codemode_queue_length": 0, "sandbox_codemode_run_duration_seconds": 3}
	if len(series) != len(want) {
		t.Errorf("series: %v, want %v", series, want)
	}
	for k, v := range want {
		if got, ok := series[k]; !ok || got != v {
			t.Errorf("%s = %v (present %v), want %v", k, got, ok, v)
		}
	}
}

// TestRunStatsCountBusy: a run refused because every worker is taken and
// none may wait is counted as BUSY, and its observer hears it end with the
// error and no result.
func TestRunStatsCountBusy(t *testing.T) {
	t.Parallel()
	e := newEngineWith(t, map[string]*server.MCPServer{"demo": mcpserver.New()}, runtime.Options{Isolation: runtime.InProcess, Workers: 1, MaxQueue: -1})
	rec := &recorder{events: map[string][]runtime.Event{}, ended: map[string]*ExecuteResult{}}
	e.ObserveRuns(rec)
	long := make(chan error, 1)
	go func() {
		_, err := e.Execute(context.Background(), ExecuteRequest{Code: `console.log("holding the worker"); await new Promise(r => setTimeout(r, 1500)); return 1`})
		long <- err
	}()
	holding := func() bool { // the long run logged: it has the worker
		rec.mu.Lock()
		defer rec.mu.Unlock()
		for _, evs := range rec.events {
			for _, ev := range evs {
				if ev.Log != nil && ev.Log.Message == "holding the worker" {
					return true
				}
			}
		}
		return false
	}
	for deadline := time.Now().Add(5 * time.Second); !holding(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the long run did not start")
		}
	}
	var busy error
	for deadline := time.Now().Add(1200 * time.Millisecond); busy == nil && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		_, err := e.Execute(context.Background(), ExecuteRequest{Code: `return 2`})
		if isBusy(err) {
			busy = err
		}
	}
	if busy == nil {
		t.Fatal("no run was refused BUSY while the only worker was taken")
	}
	if err := <-long; err != nil {
		t.Fatal(err)
	}
	s := e.RunStats()
	if s.Busy < 1 || s.Running != 0 {
		t.Errorf("stats: %+v", s)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	nilResults := 0
	for _, res := range rec.ended {
		if res == nil {
			nilResults++
		}
	}
	if int64(nilResults) != s.Busy {
		t.Errorf("the observer heard %d runs end without a result, RunStats counts %d BUSY", nilResults, s.Busy)
	}
}
