package main

import (
	"net/http"
	"net/http/pprof"
)

// mountPprof puts Go's profiler under /debug/pprof/ on serve's HTTP mux,
// beside /metrics and behind the same guard (guard: authenticated and
// unrestricted), so that an operator who can read the metrics can take a
// CPU profile of a running serve:
//
//	go tool pprof http://127.0.0.1:8808/debug/pprof/profile?seconds=20
//
// It is off unless --pprof or "gateway.pprof" turns it on: a profile costs
// the process CPU while it runs, and the goroutine dump names what every
// request is doing.
func mountPprof(mux *http.ServeMux, guard func(http.Handler) http.Handler) {
	mux.Handle("/debug/pprof/", guard(http.HandlerFunc(pprof.Index)))
	mux.Handle("/debug/pprof/cmdline", guard(http.HandlerFunc(pprof.Cmdline)))
	mux.Handle("/debug/pprof/profile", guard(http.HandlerFunc(pprof.Profile)))
	mux.Handle("/debug/pprof/symbol", guard(http.HandlerFunc(pprof.Symbol)))
	mux.Handle("/debug/pprof/trace", guard(http.HandlerFunc(pprof.Trace)))
}
