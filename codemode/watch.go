package codemode

import (
	"errors"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/gateway"
	"github.com/sandboxrt/sandbox/runtime"
)

// Watching runs: what the engine tells about its runs to whoever watches
// them (the operator console, the /metrics series), without knowing who
// they are. Only top-level runs are told: a saved script called from a
// snippet is part of its caller's run.

// RunInfo is what is known of a run when it starts.
type RunInfo struct {
	ID      string
	Caller  auth.Caller
	Code    string
	Intent  string
	Started time.Time
	// Limits are the limits the run has, after the ceiling, and what was
	// clamped to it.
	Limits AppliedLimits
}

// RunObserver hears runs as they happen. Its methods are called from the
// runs' goroutines, several at once, and must return quickly.
type RunObserver interface {
	RunStarted(RunInfo)
	// RunEvent is a console entry or a tool call's start or end (as
	// runtime.Request.OnEvent gets it); it may come after RunEnded for a
	// call still ending when the run was over.
	RunEvent(id string, e runtime.Event)
	// RunEnded is the run's result, or err when it did not run (BUSY,
	// the runtime closed).
	RunEnded(id string, res *ExecuteResult, err error)
}

// ObserveRuns adds an observer of every top-level run from now on; cancel
// removes it.
func (e *Engine) ObserveRuns(o RunObserver) (cancel func()) {
	w := &e.watch
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.observers == nil {
		w.observers = map[int]RunObserver{}
	}
	id := w.next
	w.next++
	w.observers[id] = o
	return func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		delete(w.observers, id)
	}
}

// runWatch is the engine's observers and its own counts of runs.
type runWatch struct {
	mu        sync.Mutex
	observers map[int]RunObserver
	next      int

	running  int
	outcomes map[string]int64 // finished runs by outcome: OK or the error's kind
	limits   map[string]int64 // runs that hit a limit, by the limit
	busy     int64            // runs refused with BUSY
	ran      int64            // runs that ran, and their wall time
	ranTime  time.Duration
	duration prometheus.Histogram
}

// init makes the counts; New calls it.
func (w *runWatch) init() {
	w.outcomes, w.limits = map[string]int64{}, map[string]int64{}
	w.duration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: "sandbox", Subsystem: "codemode", Name: "run_duration_seconds",
		Help:    "Wall time of execute_code runs that ran (not those refused with BUSY).",
		Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300},
	})
}

func (w *runWatch) each(fn func(RunObserver)) {
	w.mu.Lock()
	if len(w.observers) == 0 { // the usual case without a console: no allocation per event
		w.mu.Unlock()
		return
	}
	obs := make([]RunObserver, 0, len(w.observers))
	for _, o := range w.observers {
		obs = append(obs, o)
	}
	w.mu.Unlock()
	for _, o := range obs {
		fn(o)
	}
}

// run tells the observers a run started, and returns the run's OnEvent:
// onEvent (the caller's, or nil) and the observers too.
func (w *runWatch) run(info RunInfo, onEvent func(runtime.Event)) func(runtime.Event) {
	w.mu.Lock()
	w.running++
	w.mu.Unlock()
	w.each(func(o RunObserver) { o.RunStarted(info) })
	return func(ev runtime.Event) {
		if onEvent != nil {
			onEvent(ev)
		}
		w.each(func(o RunObserver) { o.RunEvent(info.ID, ev) })
	}
}

func (w *runWatch) ended(id string, res *ExecuteResult, err error) {
	w.mu.Lock()
	w.running--
	switch {
	case err != nil && res == nil:
		if isBusy(err) {
			w.busy++
		}
	case res.OK:
		w.outcomes["OK"]++
	default:
		w.outcomes[string(res.Error.Kind)]++
		if res.Error.Kind == runtime.KindLimit {
			w.limits[res.Error.Limit]++
		}
	}
	if res != nil {
		w.ran++
		w.ranTime += res.Duration
	}
	w.mu.Unlock()
	if res != nil {
		w.duration.Observe(res.Duration.Seconds())
	}
	w.each(func(o RunObserver) { o.RunEnded(id, res, err) })
}

// RunStats are the engine's counts of its runs since it started.
type RunStats struct {
	Running   int              // runs in progress now (waiting for a worker included)
	Queued    int              // of those, waiting for a worker
	Outcomes  map[string]int64 // finished runs by outcome: "OK" or the error's kind (runtime, limit, ...)
	LimitsHit map[string]int64 // runs ended by a limit, by the limit (time, memory, toolCalls, ...)
	Busy      int64            // runs refused with BUSY: every worker taken and the queue full
	// Durations counts the runs that ran and the sum of their wall time.
	Durations      int64
	DurationsTotal time.Duration
}

// RunStats returns the counts of runs so far.
func (e *Engine) RunStats() RunStats {
	w := &e.watch
	w.mu.Lock()
	s := RunStats{Running: w.running, Outcomes: map[string]int64{}, LimitsHit: map[string]int64{}, Busy: w.busy, Durations: w.ran, DurationsTotal: w.ranTime}
	for k, v := range w.outcomes {
		s.Outcomes[k] = v
	}
	for k, v := range w.limits {
		s.LimitsHit[k] = v
	}
	w.mu.Unlock()
	if e.rt != nil {
		s.Queued = e.rt.Queued()
	}
	return s
}

// isBusy reports whether Execute's error is BUSY.
func isBusy(err error) bool {
	var ge *gateway.Error
	return errors.As(err, &ge) && ge.Code == CodeBusy
}

// Collector is the engine's runs as Prometheus series, for serve's
// /metrics: sandbox_codemode_runs_total{outcome}, _busy_total,
// _limits_hit_total{limit}, _run_duration_seconds, _runs_in_progress and
// _queue_length. The same counts are RunStats.
func (e *Engine) Collector() prometheus.Collector { return runCollector{e} }

type runCollector struct{ e *Engine }

var (
	runsDesc = prometheus.NewDesc("sandbox_codemode_runs_total",
		"execute_code runs that ran, by outcome: OK or the error's kind (runtime, limit, compile, deadlock, result, cancelled, suspended, replay, internal).", []string{"outcome"}, nil)
	busyDesc = prometheus.NewDesc("sandbox_codemode_busy_total",
		"execute_code runs refused with BUSY: every worker was taken and as many runs waited as may wait.", nil, nil)
	limitsDesc = prometheus.NewDesc("sandbox_codemode_limits_hit_total",
		"execute_code runs ended by a limit, by the limit (time, memory, toolCalls, output, result, ...).", []string{"limit"}, nil)
	runningDesc = prometheus.NewDesc("sandbox_codemode_runs_in_progress",
		"execute_code runs in progress now, those waiting for a worker included.", nil, nil)
	queueDesc = prometheus.NewDesc("sandbox_codemode_queue_length",
		"execute_code runs waiting for a worker now.", nil, nil)
)

func (c runCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{runsDesc, busyDesc, limitsDesc, runningDesc, queueDesc} {
		ch <- d
	}
	c.e.watch.duration.Describe(ch)
}

func (c runCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.e.RunStats()
	for outcome, n := range s.Outcomes {
		ch <- prometheus.MustNewConstMetric(runsDesc, prometheus.CounterValue, float64(n), outcome)
	}
	for limit, n := range s.LimitsHit {
		ch <- prometheus.MustNewConstMetric(limitsDesc, prometheus.CounterValue, float64(n), limit)
	}
	ch <- prometheus.MustNewConstMetric(busyDesc, prometheus.CounterValue, float64(s.Busy))
	ch <- prometheus.MustNewConstMetric(runningDesc, prometheus.GaugeValue, float64(s.Running))
	ch <- prometheus.MustNewConstMetric(queueDesc, prometheus.GaugeValue, float64(s.Queued))
	c.e.watch.duration.Collect(ch)
}
