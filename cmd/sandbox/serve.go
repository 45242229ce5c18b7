package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/codemode"
	"github.com/sandboxrt/sandbox/config"
	"github.com/sandboxrt/sandbox/gateway"
	"github.com/sandboxrt/sandbox/gateway/frontend"
	"github.com/sandboxrt/sandbox/internal/logx"
	"github.com/sandboxrt/sandbox/internal/mcphttp"
	"github.com/sandboxrt/sandbox/runs"
)

// gatewayFlags are shared by `sandbox serve` and `sandbox servers`.
type gatewayFlags struct {
	config    string
	toolNames string
	tokenEnv  []string
	logLevel  string
	logFormat string
}

func (f *gatewayFlags) add(cmd *cobra.Command, logLevel string) {
	cmd.Flags().StringVarP(&f.config, "config", "c", "", `gateway config: a JSON file with "mcpServers" (default: ./mcp.json, then ./.mcp.json)`)
	cmd.Flags().StringVar(&f.toolNames, "tool-names", "", `tool names on the wire: "prefixed" (server__tool) or "passthrough" (each upstream's own); overrides the config`)
	cmd.Flags().StringArrayVar(&f.tokenEnv, "token-env", nil, "SERVER=VAR: read VAR from the environment once at start as the operator's bearer token for SERVER (repeatable)")
	cmd.Flags().StringVar(&f.logLevel, "log-level", logLevel, "log level on stderr: debug, info, warn, error")
	cmd.Flags().StringVar(&f.logFormat, "log-format", "", `log format on stderr: "text" or "json" (default: text on a terminal, JSON otherwise, for log collectors)`)
}

// configGiven reports whether load has a config to read: --config, or
// ./mcp.json or ./.mcp.json.
func (f *gatewayFlags) configGiven() bool {
	if f.config != "" {
		return true
	}
	for _, p := range []string{"mcp.json", ".mcp.json"} {
		if _, err := os.Stat(p); err == nil {
			return true
		}
	}
	return false
}

// load parses the config and applies the flags.
func (f *gatewayFlags) load() (*config.File, error) {
	path := f.config
	if path == "" {
		for _, p := range []string{"mcp.json", ".mcp.json"} {
			if _, err := os.Stat(p); err == nil {
				path = p
				break
			}
		}
		if path == "" {
			return nil, &exitError{code: 2, msg: `no gateway config: pass --config FILE (a JSON file with "mcpServers"), or create ./mcp.json`}
		}
	}
	file, err := config.Load(path)
	if err != nil {
		return nil, &exitError{code: 2, msg: err.Error()}
	}
	if len(file.Warnings) > 0 {
		// Keys a client (Claude Desktop, Cline, VS Code) wrote for itself:
		// said once, in the log's format, and the config is used.
		log, err := f.logger(os.Stderr)
		if err != nil {
			return nil, err
		}
		for _, w := range file.Warnings {
			log.Warn(w.Error())
		}
	}
	switch f.toolNames {
	case "":
	case string(gateway.WirePrefixed), string(gateway.WirePassthrough):
		file.Gateway.Settings.ToolNames = gateway.WireNaming(f.toolNames)
	default:
		return nil, &exitError{code: 2, msg: fmt.Sprintf("--tool-names must be prefixed or passthrough, got %q", f.toolNames)}
	}
	return file, nil
}

// logger is the JSON logger on w at --log-level. It also sends slog's
// default logger, which mcp-go's transports use, to w at Debug only.
//
// Every command logs the same way: text on a terminal, JSON lines when
// stderr goes to a file, a pipe or a log collector; --log-format decides.
func (f *gatewayFlags) logger(w io.Writer) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(f.logLevel)); err != nil {
		return nil, &exitError{code: 2, msg: fmt.Sprintf("--log-level: %v", err)}
	}
	opts := &slog.HandlerOptions{Level: level}
	// JSON logs give durations in milliseconds, as the audit log, metrics
	// names and errors' data do ("durationMs": 1.5), not in nanoseconds.
	jsonOpts := &slog.HandlerOptions{Level: level, ReplaceAttr: logx.DurationsInMs}
	var h slog.Handler
	switch f.logFormat {
	case "text":
		h = slog.NewTextHandler(w, opts)
	case "json":
		h = slog.NewJSONHandler(w, jsonOpts)
	case "":
		if isTerminal(w) {
			h = slog.NewTextHandler(w, opts)
		} else {
			h = slog.NewJSONHandler(w, jsonOpts)
		}
	default:
		return nil, &exitError{code: 2, msg: fmt.Sprintf("--log-format %q: use text or json", f.logFormat)}
	}
	l := slog.New(h)
	// mcp-go's transports log to the default logger; their per-message
	// chatter (a write after a server exited) is Debug here.
	slog.SetDefault(logx.DebugOnly(l))
	return l, nil
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// tokens reads --token-env once, at start, as the operator's tokens: they
// serve the CLI's own calls, a stdio client's, and the gateway's
// connection-level requests.
func (f *gatewayFlags) tokens(g *gateway.Gateway) error {
	for _, kv := range f.tokenEnv {
		server, env, ok := strings.Cut(kv, "=")
		if !ok || server == "" || env == "" {
			return &exitError{code: 2, msg: fmt.Sprintf("--token-env %q: write SERVER=ENV_VAR", kv)}
		}
		tok, ok := os.LookupEnv(env)
		if !ok || tok == "" {
			return &exitError{code: 2, msg: fmt.Sprintf("--token-env %s: the environment variable %s is not set", kv, env)}
		}
		if err := g.SetOperatorToken(context.Background(), server, tok); err != nil {
			return err
		}
	}
	return nil
}

// serveFlags are the options of `sandbox serve`.
type serveFlags struct {
	gw         gatewayFlags
	httpAddr   string
	allowHosts []string
	codeMode   bool
	indexDir   string
	// allowUnauthenticated lets --http listen beyond loopback without
	// "gateway.auth" (behind a proxy that authenticates, say).
	allowUnauthenticated bool
	// maxLimits are the --max-* flags: the most an execute_code request
	// may ask for, over the config's "codeMode.maxLimits".
	maxLimits limitFlags
	// requestBudgetMB bounds the request bodies held at once (MiB).
	requestBudgetMB int
	// expose is "code" or "all" ("": the config's, else code).
	expose string
	// pprof serves Go's profiler at /debug/pprof/ beside /metrics.
	pprof bool
	// maxExpectedWait bounds how long an execute_code run may expect to
	// wait for a worker (0: the config's, else the runtime's default).
	maxExpectedWait time.Duration
}

func newServeCmd() *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve every configured MCP server as one MCP server (stdio or streamable HTTP)",
		Long: `Connect to every MCP server in the config and serve them as one MCP server:
their tools (as server__tool, or under their own names with
--tool-names passthrough), resources, prompts, completions, logging and
progress, plus hub tools to list the servers and narrow a session to some of
them. Every tool call is validated against the tool's schema, checked for path
traversal, rate-limited and logged before it is forwarded.

Over stdio (the default) one client is served on stdin/stdout. With --http,
clients connect to http://ADDR/mcp (streamable HTTP); Prometheus metrics are
at /metrics. On loopback, requests whose Host or Origin is not a loopback name
are refused (DNS-rebinding protection).

Clients over HTTP authenticate as the config's "gateway.auth" says (API keys,
OAuth 2.1 access tokens); each key or token subject is a tenant of its own.
Without "gateway.auth", --http serves loopback addresses only, unless
--allow-unauthenticated. execute_code requests are held to
"codeMode.maxLimits" (or the --max-* flags): by default no request may ask for
more than the default limits.

Saved scripts and sandbox.store's values are kept in "codeMode.dataDir", by
default in $XDG_STATE_HOME/sandbox (~/.local/state/sandbox); serve says where
at start-up.

Logs go to stderr, one record per routed call: text on a terminal, JSON lines
otherwise (--log-format).`,
		Example: `  sandbox serve --config mcp.json
  sandbox serve --config mcp.json --http 127.0.0.1:8808
  sandbox serve -c mcp.json --tool-names passthrough --token-env github=GITHUB_TOKEN`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return serve(cmd, f)
		},
	}
	f.gw.add(cmd, "info")
	fl := cmd.Flags()
	fl.StringVar(&f.httpAddr, "http", "", "serve streamable HTTP on this address (e.g. 127.0.0.1:8808; port 0 picks one) instead of stdio")
	fl.StringArrayVar(&f.allowHosts, "allow-host", nil, "extra Host name accepted on loopback connections (for a local reverse proxy; repeatable)")
	fl.BoolVar(&f.codeMode, "code-mode", true, "add the code-mode tools search_tools and execute_code (snippets run in worker subprocesses)")
	fl.StringVar(&f.indexDir, "index-dir", "", "keep the tool search index in this directory between runs (default: in memory)")
	fl.BoolVar(&f.allowUnauthenticated, "allow-unauthenticated", false, "let --http listen on a non-loopback address without \"gateway.auth\" (only behind something that authenticates)")
	f.maxLimits = addMaxLimitFlags(fl)
	fl.StringVar(&f.expose, "expose", "", `which tools tools/list holds: "code" (search_tools, execute_code and the hub tools; the default with code mode) or "all" (every upstream tool too); overrides "codeMode.expose"`)
	fl.DurationVar(&f.maxExpectedWait, "max-expected-wait", 0, `the longest an execute_code run may expect to wait for a worker, from the recent durations of the runs ahead of it; a run that would wait longer gets BUSY at once with a retry hint (default 3s; overrides "codeMode.maxExpectedWait")`)
	fl.BoolVar(&f.pprof, "pprof", false, `serve Go's profiler at /debug/pprof/ beside /metrics, to the same principals (with --http; overrides "gateway.pprof"); off by default`)
	fl.IntVar(&f.requestBudgetMB, "request-budget-mb", 64, "the request bodies (each at most 16 MiB) --http holds at once, in MiB; one principal may hold half; past it a request gets 503 with Retry-After. serve's memory stays under about 100 MiB + 8 × this (see docs/serve.md)")
	return cmd
}

// exposure is which tools serve lists: the flag, else the config, else
// "code" when code mode is on; "all" when it is off.
func exposure(f serveFlags, cm config.CodeMode) (string, error) {
	on := f.codeMode && !cm.Disabled
	e := f.expose
	if e == "" {
		e = cm.Expose
	}
	switch {
	case e == "" && on:
		return config.ExposeCode, nil
	case e == "" || e == config.ExposeAll:
		return config.ExposeAll, nil
	case e == config.ExposeCode && !on:
		return "", &exitError{code: 2, msg: "--expose code lists only the code-mode tools, and code mode is off (--code-mode=false or \"codeMode\": {\"disabled\": true}); use --expose all, or turn code mode on"}
	case e == config.ExposeCode:
		return e, nil
	}
	return "", &exitError{code: 2, msg: fmt.Sprintf("--expose %q: use \"code\" (search_tools, execute_code and the hub tools) or \"all\" (every upstream tool too)", e)}
}

// serve connects the gateway, builds its MCP front end, adds the code-mode
// tools unless they are turned off, and serves stdio or HTTP until
// interrupted.
func serve(cmd *cobra.Command, f serveFlags) error {
	file, err := f.gw.load()
	if err != nil {
		return err
	}
	stopTracing, err := startTracing(cmd.Context(), cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	defer stopTracing()
	log, err := f.gw.logger(os.Stderr)
	if err != nil {
		return err
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	gwOpts := []gateway.Option{gateway.WithLogger(log), gateway.WithMetrics(reg), gateway.WithClientInfo("sandbox-gateway", gatewayVersion)}
	shared, err := openShared(file)
	if err != nil {
		return err
	}
	if shared != nil {
		defer shared.close()
		// What replicas share (docs/deploy.md): rate-limit buckets, session
		// tokens, OAuth grants, sandbox.store's values, big results, saved
		// scripts, the result types learned from calls and the approvals
		// answered by input_required.
		gwOpts = append(gwOpts, gateway.WithRateLimiter(shared.rateLimiter), gateway.WithTokenStore(shared.tokens),
			gateway.WithOAuthStore(shared.oauth), gateway.WithQuestionLedger(shared.questions), gateway.WithDeskStore(shared.desk),
			gateway.WithSignInStore(shared.signIns))
		file.CodeMode.Engine.Store = shared.store(file.CodeMode.Engine.StoreLimits)
		file.CodeMode.Engine.Results = shared.results(file.CodeMode.Engine.ResultLimits)
		file.CodeMode.Engine.Scripts = shared.scripts
		file.CodeMode.Engine.Shapes = shared.shapes
		file.CodeMode.Engine.Usage = shared.usage
		file.CodeMode.Engine.ContextKey = shared.contextKey
		log.Info("shared state on "+strings.ToLower(shared.backend), shared.logAttrs...)
		upgradeCtx, stopUpgrade := context.WithCancel(cmd.Context())
		defer stopUpgrade() // before the pool closes (defers run last first)
		go func() {
			done, err := shared.upgrade(upgradeCtx)
			if done != "" {
				log.Info(done)
			}
			if err != nil && upgradeCtx.Err() == nil {
				log.Warn("bringing up to date what an earlier version kept in "+shared.backend+" failed; the next start tries again", "error", err)
			}
		}()
	}
	// What can be refused at once is refused before any server starts: a
	// bad --http, auth block or port must not wait behind (or leave
	// behind) the upstreams' start-up.
	var ln net.Listener
	var verifier auth.Verifier
	if f.httpAddr != "" {
		if err := checkExposure(f, file.Auth); err != nil {
			return err
		}
		if f.requestBudgetMB < 16 {
			return &exitError{code: 2, msg: fmt.Sprintf("--request-budget-mb %d: at least 16 (one request body may be 16 MiB)", f.requestBudgetMB)}
		}
		if file.Auth.Enabled() {
			if verifier, err = auth.NewVerifier(file.Auth, auth.Options{}); err != nil {
				return &exitError{code: 2, msg: "gateway.auth: " + err.Error()}
			}
		}
		if ln, err = listen(f.httpAddr); err != nil {
			return err
		}
		defer ln.Close()
	}
	if dir := file.CodeMode.Engine.DataDir; dir != "" {
		// Answers too large for memory are written where code mode keeps
		// its data: the operator sizes one volume for both.
		gwOpts = append(gwOpts, gateway.WithSpillDir(dir))
	}
	if shared == nil && f.codeMode && !file.CodeMode.Disabled {
		// After the spill directory: answers in transit stay in the
		// temporary folder unless the operator chose a volume. With shared
		// state, what agents save lives there (Redis).
		useDataDir(&file.CodeMode, log)
	}
	g, err := gateway.New(file.Gateway, gwOpts...)
	if err != nil {
		return err
	}
	defer g.Close()
	if err := f.gw.tokens(g); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	codeMode := f.codeMode && !file.CodeMode.Disabled
	var index *asyncIndex
	if codeMode {
		// Reading a large persisted tool index takes about as long as
		// connecting to and listing the servers: do both at once, and build
		// the front end before waiting for the index.
		if f.indexDir != "" {
			file.CodeMode.Engine.IndexDir = f.indexDir
		}
		index = openIndexAsync(file.CodeMode.Engine)
	}
	if err := g.Start(ctx); err != nil {
		return err
	}
	for _, st := range g.Servers() {
		log.Info("server", "name", st.Name, "state", string(st.State), "tools", st.Tools, "error", st.LastError)
	}
	if len(g.Servers()) == 0 {
		log.Warn(`no MCP servers are configured: agents will find no tools; add servers under "mcpServers" in the config`)
	}
	expose, err := exposure(f, file.CodeMode)
	if err != nil {
		return err
	}
	frontOpts := []frontend.Option{frontend.WithLogger(log), frontend.WithImplementation("sandbox-gateway", gatewayVersion)}
	if expose == config.ExposeCode {
		frontOpts = append(frontOpts, frontend.WithBuiltinToolsOnly())
	}
	if shared != nil && shared.requestStateKey != nil {
		// Without shared state the front end draws a key of its own:
		// right for one process.
		frontOpts = append(frontOpts, frontend.WithRequestStateKey(shared.requestStateKey))
	}
	if shared != nil && shared.released != nil {
		// A run released while it waits resumes on any replica.
		frontOpts = append(frontOpts, frontend.WithReleasedRunStore(shared.released))
	}
	tasks := taskOptions(file, shared, codeMode)
	frontOpts = append(frontOpts, frontend.WithTasks(tasks))
	front := frontend.New(g, frontOpts...)
	defer front.Close()
	workersWarm := func() bool { return true }
	var engine *codemode.Engine // nil: code mode is off
	if codeMode {
		cm := file.CodeMode
		if err := f.maxLimits.ceiling().Validate(); err != nil {
			return &exitError{code: 2, msg: "--max-*: " + err.Error()}
		}
		cm.Engine.MaxLimits = f.maxLimits.ceiling().Or(cm.Engine.MaxLimits)
		switch {
		case f.maxExpectedWait < 0:
			return &exitError{code: 2, msg: fmt.Sprintf("--max-expected-wait %s: give a positive duration such as 3s (to let no run wait, set \"codeMode.maxQueue\" to 0)", f.maxExpectedWait)}
		case f.maxExpectedWait > 0:
			cm.Runtime.MaxExpectedWait = f.maxExpectedWait
		}
		ix, err := index.wait()
		if err != nil {
			return err
		}
		cm.Engine.Index = ix
		eng, closeCodeMode, warm, err := addCodeMode(cm, f.indexDir, g, front, log)
		if err != nil {
			return err
		}
		engine = eng
		reg.MustRegister(engine.Collector()) // runs, BUSY, limits hit, durations, the queue
		workersWarm = warm
		defer closeCodeMode() // reaps the workers on SIGTERM/SIGINT
	}

	if f.httpAddr == "" {
		err := front.ServeStdio(ctx, os.Stdin, os.Stdout)
		if err != nil && !errors.Is(err, context.Canceled) {
			return err
		}
		return nil
	}
	mux := http.NewServeMux()
	protect := authenticated(file.Auth, verifier, mux, log, g)
	httpOpts := frontend.HTTPOptions{AllowedHosts: f.allowHosts, MaxInFlightBytes: int64(f.requestBudgetMB) << 20}
	if shared != nil {
		httpOpts.Sessions = shared.sessions       // a session made here is served on every replica
		httpOpts.CallStreams = shared.callStreams // and its calls' streams resume on every replica
	}
	mux.Handle("/mcp", protect(front.HTTPHandler(httpOpts)))
	// Metrics name every server and tool: with authentication on, only a
	// principal that may use every server reads them.
	// They refuse a DNS-rebinding request as /mcp and the console do: on
	// loopback without "gateway.auth", nothing else keeps a web page out.
	mux.Handle("/metrics", refuseRebinding(f.allowHosts, protect(unrestrictedOnly(promhttp.HandlerFor(reg, promhttp.HandlerOpts{})))))
	if f.pprof || file.Pprof {
		mountPprof(mux, func(h http.Handler) http.Handler {
			return refuseRebinding(f.allowHosts, protect(operatorsOnly(file.Auth.Enabled(), h)))
		})
	}
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "ok") })
	mux.Handle("/readyz", readyHandler(g, workersWarm, shared, &readinessLog{log: log}))
	var pageKey []byte
	if shared != nil {
		pageKey = shared.approvalPageKey
	}
	if err := installSignIn(mux, file, protect, g, ln.Addr(), f.allowHosts, pageKey, log); err != nil {
		return err
	}
	consoleAt, closeConsole, err := installConsole(mux, consoleSetup{file: file, serve: f, protect: protect, gateway: g, engine: engine, log: log, shared: shared, tasks: tasks.Registry})
	if err != nil {
		return err
	}
	defer closeConsole()
	// NoDrain: a request refused before its body is read (401 above all,
	// which anyone can get) is answered at once and its connection closed,
	// not held while net/http waits for the rest of the body.
	srv := &http.Server{Handler: mcphttp.NoDrain(mux), ReadHeaderTimeout: 10 * time.Second}
	// The console's event streams never end by themselves: close them as
	// shutdown starts, or it would wait out its timeout for an open tab.
	srv.RegisterOnShutdown(closeConsole)
	logListening(log, ln.Addr(), consoleAt)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(shutdown)
	tasks.Registry.Stop() // its tasks fail now, not a lease later
	return nil
}

// gatewayVersion is reported to MCP peers.
var gatewayVersion = moduleVersion()

// checkExposure refuses to serve HTTP beyond loopback with nobody
// authenticated: whoever reached the port would run code with the
// operator's upstream tokens.
func checkExposure(f serveFlags, a auth.Config) error {
	if a.Enabled() || f.allowUnauthenticated || loopbackAddr(f.httpAddr) {
		return nil
	}
	return &exitError{code: 2, msg: fmt.Sprintf(`--http %s listens beyond loopback, and nobody is authenticated: anyone who reaches the port could run code with your upstream tokens. `+
		`Add "auth" to the "gateway" block of the config, e.g. {"gateway": {"auth": {"apiKeys": [{"name": "agent-a", "key": "${AGENT_A_KEY}"}]}}} `+
		`(or "oauth" for access tokens), listen on 127.0.0.1, or pass --allow-unauthenticated if something in front of sandbox authenticates`, f.httpAddr)}
}

// loopbackAddr reports whether a listen address is on loopback only.
func loopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// listen opens the --http address. A port in use says what to do: it is
// most often another serve still running.
func listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		return nil, &exitError{code: 2, msg: fmt.Sprintf("--http %s: the port is in use (another sandbox serve?): stop what listens there, or pick another port (port 0 picks a free one)", addr)}
	case err != nil:
		return nil, &exitError{code: 2, msg: fmt.Sprintf("--http %s: %v", addr, err)}
	}
	return ln, nil
}

// logListening says where serve listens, in the log's format (a JSON line
// with the rest when the log is JSON), at every log level: scripts and tests
// find a port-0 listener by its "listening on http://ADDR/mcp".
func logListening(log *slog.Logger, addr net.Addr, consoleAt string) {
	url := fmt.Sprintf("http://%s/mcp", addr)
	r := slog.NewRecord(time.Now(), slog.LevelInfo, "listening on "+url, 0)
	r.AddAttrs(slog.String("url", url))
	if c := consoleURL(consoleAt, addr); c != "" {
		r.AddAttrs(slog.String("console", c)) // the operator console's link
	}
	_ = log.Handler().Handle(context.Background(), r) // the handler, not the logger: past --log-level
}

// authenticated returns what puts authentication in front of a handler when
// the config has an "auth" block (v, its verifier; nothing otherwise), and
// serves the OAuth protected resource metadata on mux.
func authenticated(a auth.Config, v auth.Verifier, mux *http.ServeMux, log *slog.Logger, g *gateway.Gateway) func(http.Handler) http.Handler {
	if !a.Enabled() {
		return func(h http.Handler) http.Handler { return h }
	}
	meta := ""
	if o := a.OAuth; o != nil {
		meta = auth.MetadataURL(o.Resource())
		for _, p := range auth.MetadataPaths(o.Resource()) {
			mux.Handle(p, auth.MetadataHandler(*o))
		}
	}
	log.Info("authentication", "apiKeys", len(a.APIKeys), "oauth", a.OAuth != nil)
	audit := func(r *http.Request, reason string) {
		remote, _, _ := net.SplitHostPort(r.RemoteAddr)
		g.Audit(gateway.AuditRecord{Kind: gateway.AuditKindAuth, Outcome: "UNAUTHORIZED", Remote: remote, Reason: reason})
	}
	return auth.Middleware(v, meta, audit)
}

// refuseRebinding serves h only to requests that are no DNS-rebinding
// attempt (mcphttp.Rebinding: on loopback, a loopback Host and Origin or one
// of allowHosts).
func refuseRebinding(allowHosts []string, h http.Handler) http.Handler {
	allowed := map[string]bool{}
	for _, a := range allowHosts {
		allowed[strings.ToLower(a)] = true
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if msg := mcphttp.Rebinding(r, allowed); msg != "" {
			http.Error(w, msg, http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// unrestrictedOnly serves h only to principals that may use every server.
// operatorsOnly lets through, with authentication on, only principals that
// may operate the gateway ("operator": true; the console's rule): a
// profile and a goroutine dump show more than metrics (the command line,
// every goroutine's stack), and a CPU profile costs the process. Without
// authentication (loopback) the caller is the machine's.
func operatorsOnly(authOn bool, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if authOn && !auth.PrincipalFrom(r.Context()).MayOperate() {
			http.Error(w, `Forbidden: the profiler is for operators; give the key "operator": true (docs/console.md)`, http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})
}

func unrestrictedOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, restricted := auth.PrincipalFrom(r.Context()).AllowedServers(); restricted {
			http.Error(w, "Forbidden: your credentials are limited to some servers; metrics cover them all", http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// The reasons /readyz gives. They are classes, the same for every
// deployment: the answer goes to anyone who reaches the port (a load
// balancer needs no credential), so it never carries an address, an error's
// text or a server's name. The detail goes to serve's log (readinessLog).
const (
	notReadySharedState = "the shared state does not answer"
	notReadyServers     = "servers are still connecting"
	notReadyWorkers     = "the code-mode workers are starting"
)

// readiness is what /readyz answers: "" when ready, else one of the
// notReady classes and the operator's detail. Ready is: the shared state
// answers (when there is one), every enabled server has finished its first
// connection attempt (ready, or failed and retrying: its tools are then
// absent, which a restart of serve would not change), and the code-mode
// workers are up.
func readiness(ctx context.Context, servers []gateway.ServerStatus, warm func() bool, shared *sharedState) (class, detail string) {
	if shared != nil {
		ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		if err := shared.ping(ctx); err != nil {
			return notReadySharedState, shared.backend + ": " + err.Error()
		}
	}
	var waiting []string
	for _, s := range servers {
		if s.State == gateway.StateStarting {
			waiting = append(waiting, s.Name)
		}
	}
	switch {
	case len(waiting) > 0:
		return notReadyServers, "still connecting: " + strings.Join(waiting, ", ")
	case !warm():
		return notReadyWorkers, "the workers are starting"
	}
	return "", ""
}

// readyHandler answers /readyz: 200 "ready", or 503 "not ready: " and the
// class, for a load balancer to hold traffic back. /healthz says only that
// the process answers.
func readyHandler(g *gateway.Gateway, warm func() bool, shared *sharedState, log *readinessLog) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		class, detail := readiness(r.Context(), g.Servers(), warm, shared)
		log.note(class, detail)
		if class != "" {
			http.Error(w, "not ready: "+class, http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ready")
	}
}

// readinessLog writes the detail of /readyz's answer to serve's log when it
// changes, not at every probe: a balancer asks every few seconds.
type readinessLog struct {
	log  *slog.Logger
	mu   sync.Mutex
	last string // the detail last logged; "" while ready
}

func (l *readinessLog) note(class, detail string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if detail == l.last {
		return
	}
	switch class {
	case "":
		l.log.Info("ready again", "was", l.last)
	case notReadySharedState:
		l.log.Warn("not ready: "+class, "detail", detail)
	default: // starting up: expected
		l.log.Info("not ready: "+class, "detail", detail)
	}
	l.last = detail
}

// taskOptions are the tasks extension's: runs kept in the shared state when
// there is one (so tasks/get, tasks/update and tasks/cancel work on any
// replica), else in the process; execute_code and saved scripts called as
// tools run as tasks, beside upstream tools that offer them.
func taskOptions(file *config.File, shared *sharedState, codeMode bool) frontend.TaskOptions {
	var store runs.Store = runs.NewMemoryStore(nil).LimitResultBytes(file.Tasks.WithDefaults().ResultBytesTotal)
	if shared != nil && shared.runs != nil {
		store = shared.runs
	}
	return frontend.TaskOptions{
		Registry: runs.NewRegistry(store, runs.Options{Limits: file.Tasks}),
		Tools: func(name string) bool {
			return codeMode && (name == codemode.ExecuteToolName || strings.HasPrefix(name, codemode.ScriptWirePrefix))
		},
	}
}
