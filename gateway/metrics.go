package gateway

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the gateway's Prometheus series. The tool label only takes
// catalog ids ("(unknown)" for calls that named no known tool), so agents
// cannot blow up the label cardinality with made-up names.
type metrics struct {
	calls    *prometheus.CounterVec
	duration *prometheus.HistogramVec
	state    *prometheus.GaugeVec
	restarts *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "sandbox", Subsystem: "gateway", Name: "calls_total",
			Help: "Tool calls routed by the gateway, by tool id and outcome (OK or an error code).",
		}, []string{"tool", "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "sandbox", Subsystem: "gateway", Name: "call_duration_seconds",
			Help:    "Duration of routed tool calls, gateway overhead included.",
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"tool"}),
		state: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "sandbox", Subsystem: "gateway", Name: "server_state",
			Help: "1 for the current state of each upstream server.",
		}, []string{"server", "state"}),
		restarts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "sandbox", Subsystem: "gateway", Name: "server_restarts_total",
			Help: "Reconnections of an upstream after its connection was lost.",
		}, []string{"server"}),
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{m.calls, m.duration, m.state, m.restarts} {
			if err := reg.Register(c); err != nil {
				return nil, err
			}
		}
	}
	return m, nil
}

func noMetrics() *metrics { return &metrics{} }

var allStates = []ServerState{StateStarting, StateReady, StateRestarting, StateFailed, StateStopped, StateDisabled}

func (m *metrics) call(tool, outcome string, d time.Duration) {
	if m.calls == nil {
		return
	}
	if outcome == string(CodeUnknownTool) || outcome == string(CodeServiceNotFound) {
		tool = "(unknown)"
	}
	m.calls.WithLabelValues(tool, outcome).Inc()
	m.duration.WithLabelValues(tool).Observe(d.Seconds())
}

func (m *metrics) serverState(server string, s ServerState) {
	if m.state == nil {
		return
	}
	for _, st := range allStates {
		v := 0.0
		if st == s {
			v = 1
		}
		m.state.WithLabelValues(server, string(st)).Set(v)
	}
}

func (m *metrics) restart(server string) {
	if m.restarts != nil {
		m.restarts.WithLabelValues(server).Inc()
	}
}
