package main

import (
	"log/slog"
	"net"
	"net/http"

	"github.com/sandboxrt/sandbox/codemode"
	"github.com/sandboxrt/sandbox/config"
	"github.com/sandboxrt/sandbox/console"
	"github.com/sandboxrt/sandbox/gateway"
	"github.com/sandboxrt/sandbox/runs"
)

// consoleSetup is what serve hands the operator console.
type consoleSetup struct {
	file    *config.File
	serve   serveFlags
	protect func(http.Handler) http.Handler // serve's authentication, as in front of /mcp
	gateway *gateway.Gateway
	engine  *codemode.Engine // nil: code mode is off
	log     *slog.Logger
	shared  *sharedState // nil: none; else the console's keys are the replicas'
	tasks   *runs.Registry
}

// installConsole serves the operator console at /ui/ on mux (docs/console.md),
// unless the config turns it off. With "gateway.auth" it is behind the same
// authentication as /mcp, for operators only. Without it, it is open on a
// loopback listener, where whoever reaches the port may already run code
// with the operator's tokens; beyond loopback without authentication
// (--allow-unauthenticated) it is off, since nothing would tell an operator
// from anyone else. It returns the path it is served at ("" when off).
func installConsole(mux *http.ServeMux, s consoleSetup) (at string, closeFn func(), err error) {
	noop := func() {}
	if s.file.Console.Disabled {
		return "", noop, nil
	}
	opts := console.Options{Gateway: s.gateway, Engine: s.engine, Tasks: s.tasks, AllowedHosts: s.serve.allowHosts, Logger: s.log}
	if a := s.file.Gateway.Settings.Audit; a != nil {
		opts.AuditPath = a.Path
	}
	if s.shared != nil {
		opts.Key, opts.Revocations = s.shared.consoleKey, s.shared.consoleRevocations
	}
	for _, k := range s.file.Auth.APIKeys {
		opts.Principals = append(opts.Principals, k.Principal())
	}
	switch {
	case s.file.Auth.Enabled():
		opts.Authenticate = s.protect
	case loopbackAddr(s.serve.httpAddr):
		opts.Open = true
	default:
		s.log.Warn(`the operator console is off: serve listens beyond loopback without "gateway.auth", so it could not tell an operator from anyone else; add API keys with "operator": true to turn it on`)
		return "", noop, nil
	}
	c, err := console.New(opts)
	if err != nil {
		return "", nil, err
	}
	mux.Handle("/ui/", http.StripPrefix("/ui", c))
	mux.HandleFunc("/ui", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", "ui/") // relative: right behind a proxy's prefix too
		w.WriteHeader(http.StatusMovedPermanently)
	})
	return "/ui/", c.Close, nil
}

// consoleURL is the console's address on a listener, for the listening
// line ("" when the console is off).
func consoleURL(at string, addr net.Addr) string {
	if at == "" {
		return ""
	}
	return "http://" + addr.String() + at
}
