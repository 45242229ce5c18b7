package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/codemode"
	"github.com/sandboxrt/sandbox/config"
	"github.com/sandboxrt/sandbox/gateway"
	"github.com/sandboxrt/sandbox/gateway/frontend"
	"github.com/sandboxrt/sandbox/runtime"
	"github.com/sandboxrt/sandbox/vectorindex"
)

// addCodeMode adds the code-mode tools, search_tools and execute_code, to
// serve's front end beside the pass-through tools, as the config's
// "codeMode" block says; --index-dir overrides its indexDir. The engine
// logs to log, serve's own logger: slog's default logger is lowered to
// Debug for mcp-go's chatter, and would hide the engine's warnings.
func addCodeMode(cm config.CodeMode, indexDir string, g *gateway.Gateway, front *frontend.Server, log *slog.Logger) (engine *codemode.Engine, closeFn func(), warm func() bool, err error) {
	rt, err := runtime.New(cm.Runtime)
	if err != nil {
		return nil, nil, nil, err
	}
	opts := cm.Engine
	if indexDir != "" {
		opts.IndexDir = indexDir
	}
	opts.Logger = log
	opts.Audit = g
	engine, err = codemode.New(g, rt, opts)
	if err != nil {
		rt.Close()
		return nil, nil, nil, err
	}
	closeFn = func() {
		engine.Close()
		rt.Close()
	}
	if err := installCodeMode(front, engine); err != nil {
		closeFn()
		return nil, nil, nil, err
	}
	// Workers also die with serve if it is killed (Pdeathsig); closeFn ends
	// them in an orderly stop.
	return engine, closeFn, rt.Warm, nil
}

// installCodeMode serves the engine's MCP tools on the front end: the
// code-mode tools for every session, and each caller's saved scripts as
// tools of its own sessions, given again whenever scripts change.
func installCodeMode(front *frontend.Server, engine *codemode.Engine) error {
	for _, spec := range engine.MCPTools() {
		if err := front.AddTool(spec); err != nil {
			return err
		}
	}
	front.SetCallerTools(engine.CallerMCPTools)
	engine.OnScriptsChanged(front.RefreshCallerTools)
	return nil
}

// cliCaller is the caller of a one-shot command: the operator, in a
// session of its own (one process, one run).
var cliCaller = auth.Caller{Principal: auth.Operator(), Session: "cli"}

// startGateway connects to the servers of a config for a one-shot command
// (run, search, types): it waits for each to connect or fail, and warns on
// stderr about the ones that are not ready, so the user learns why a tool
// is missing instead of getting a bare "not bound". It returns the parsed
// config too, for its "codeMode" block.
func startGateway(ctx context.Context, f gatewayFlags, stderr io.Writer) (*gateway.Gateway, *config.File, error) {
	file, err := f.load()
	if err != nil {
		return nil, nil, err
	}
	log, err := f.logger(stderr)
	if err != nil {
		return nil, nil, err
	}
	g, err := gateway.New(file.Gateway, gateway.WithLogger(log))
	if err != nil {
		return nil, nil, &exitError{code: exitUsage, msg: err.Error()}
	}
	if err := f.tokens(g); err != nil {
		g.Close()
		return nil, nil, err
	}
	if err := g.Start(ctx); err != nil {
		g.Close()
		return nil, nil, err
	}
	for _, st := range g.Servers() {
		if st.State != gateway.StateReady && st.State != gateway.StateDisabled {
			msg := fmt.Sprintf("sandbox: server %q is %s", st.Name, st.State)
			if st.LastError != "" {
				msg += ": " + st.LastError
			}
			fmt.Fprintln(stderr, msg)
		}
	}
	return g, file, nil
}

// asyncIndex is a tool index being opened in the background.
type asyncIndex struct {
	done chan struct{}
	ix   *vectorindex.Index
	err  error
}

// openIndexAsync starts opening opts' tool index (codemode.OpenIndex).
func openIndexAsync(opts codemode.Options) *asyncIndex {
	a := &asyncIndex{done: make(chan struct{})}
	go func() {
		defer close(a.done)
		a.ix, a.err = codemode.OpenIndex(opts)
	}()
	return a
}

// wait returns the index, once open.
func (a *asyncIndex) wait() (*vectorindex.Index, error) {
	<-a.done
	return a.ix, a.err
}
