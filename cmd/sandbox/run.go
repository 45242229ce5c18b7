package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/sandboxrt/sandbox/codemode"
	"github.com/sandboxrt/sandbox/internal/bytesize"
	"github.com/sandboxrt/sandbox/runtime"
	"github.com/sandboxrt/sandbox/typegen"
)

// Exit codes of `sandbox run`, documented in its help.
const (
	exitOK       = 0
	exitFailed   = 1 // the snippet threw, or its result is not JSON, or it deadlocked
	exitUsage    = 2 // bad flags or unreadable input
	exitCompile  = 3
	exitLimit    = 4
	exitInternal = 5 // the runtime failed, or the run was cancelled
)

// runFlags are the options of `sandbox run`.
type runFlags struct {
	limits     limitFlags // timeout, memory, tool calls, output and result
	codeLimit  string
	stackDepth int
	jsonOut    bool
	inProcess  bool
	// Code mode: with a gateway config, the snippet can call its tools.
	gw     gatewayFlags
	intent string
	tools  []string
}

func newRunCmd() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run <script.ts | ->",
		Short: "Run a TypeScript snippet and print its JSON result",
		Long: `Run a TypeScript (or JavaScript) snippet under hard limits and print the value it
returns as JSON on stdout. Console output goes to stderr. Use - to read the
snippet from stdin.

The snippet may use top-level await and a top-level return:

  const r = await Promise.all([1, 2].map(async (n) => n * 2));
  console.log("doubled", r);
  return { r };

It runs in an isolated worker process: no file system, network, environment,
require or eval; only the language's built-ins, console, timers, atob/btoa, and
the tools bound to the run.

With --config (an mcp.json with "mcpServers"), the snippet can call the tools
of those servers as server.toolName(args); every call goes through the
gateway (schema validation, path checks, limits). Tools the code names are
bound; --intent binds the tools a search for it finds, --tools names more.
See the declarations with: sandbox search "your task" --config mcp.json --dts

Exit status: 0 success; 1 the snippet threw (or deadlocked, or returned
something that is not JSON); 2 usage error; 3 compile error; 4 a limit was hit;
5 internal error or cancelled.`,
		Example: `  sandbox run examples/hello.ts
  echo 'return 6 * 7' | sandbox run -
  sandbox run script.ts --timeout 5s --memory 128MiB --json
  sandbox run examples/demo-standup.ts --config examples/mcp.json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSnippet(cmd, args[0], f)
		},
	}
	d := runtime.DefaultLimits
	fl := cmd.Flags()
	f.limits = addRunLimitFlags(fl)
	fl.StringVar(&f.codeLimit, "code-limit", "256KiB", "largest snippet source")
	fl.IntVar(&f.stackDepth, "stack-depth", d.StackDepth, "deepest nesting of JavaScript calls")
	fl.BoolVar(&f.jsonOut, "json", false, "print the whole result envelope (ok, value, error, logs, calls) as JSON on stdout")
	fl.BoolVar(&f.inProcess, "in-process", false, "run in this process instead of a worker: faster start, but NO memory limit; trusted code only")
	f.gw.add(cmd, "warn")
	fl.StringVar(&f.intent, "intent", "", "with --config: also bind the tools a search for this task finds")
	fl.StringSliceVar(&f.tools, "tools", nil, `with --config: also bind these tools ("server:tool" or "server.toolName", comma-separated)`)
	return cmd
}

func (f runFlags) runLimits() (runtime.Limits, error) {
	l := runtime.Limits{StackDepth: f.stackDepth}
	if err := f.limits.runLimits(&l); err != nil {
		return l, err
	}
	code, err := parseBytes("--code-limit", f.codeLimit)
	if err != nil {
		return l, err
	}
	l.CodeBytes = int(code)
	if l.StackDepth <= 0 || l.ToolCalls <= 0 {
		return l, fmt.Errorf("--stack-depth and --tool-calls must be positive")
	}
	return l, l.Validate()
}

func runSnippet(cmd *cobra.Command, path string, f runFlags) error {
	limits, err := f.runLimits()
	if err != nil {
		return &exitError{code: exitUsage, msg: err.Error()}
	}
	code, filename, err := readSnippet(cmd.InOrStdin(), path)
	if err != nil {
		return &exitError{code: exitUsage, msg: err.Error()}
	}
	opts := runtime.Options{Workers: 1}
	if f.inProcess {
		opts.Isolation = runtime.InProcess
	}
	if f.gw.config == "" && (f.intent != "" || len(f.tools) > 0) {
		return &exitError{code: exitUsage, msg: "--intent and --tools bind tools of MCP servers: add --config mcp.json"}
	}
	rt, err := runtime.New(opts)
	if err != nil {
		return &exitError{code: exitInternal, msg: err.Error()}
	}
	defer rt.Close()

	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Console output goes to stderr as it happens (not with --json, whose
	// envelope on stdout holds it).
	live := &liveLogs{w: cmd.ErrOrStderr()}
	onEvent := live.event
	if f.jsonOut {
		onEvent = nil
	}
	if f.gw.config == "" {
		res, err := rt.Run(ctx, runtime.Request{Code: code, Filename: filename, Limits: limits, OnEvent: onEvent})
		if err != nil {
			return &exitError{code: exitInternal, msg: err.Error()}
		}
		explainUnboundNamespace(res)
		return printResult(cmd.OutOrStdout(), cmd.ErrOrStderr(), &codemode.ExecuteResult{Result: res}, f.jsonOut, live.count())
	}

	stopTracing, err := startTracing(ctx, cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	defer stopTracing()
	g, file, err := startGateway(ctx, f.gw, cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	defer g.Close()
	// A policy rule that asks for approval asks on the terminal.
	defer g.OpenSession(cliCaller, newTerminalPeer(cmd.ErrOrStderr())).Close()
	// The config's "codeMode" block sets the index, the embedder and default
	// limits; limit flags given on the command line win.
	cmOpts := file.CodeMode.Engine
	cmOpts.Limits = explicitLimits(cmd, limits).Or(cmOpts.Limits)
	cmOpts.Audit = g
	engine, err := codemode.New(g, rt, cmOpts)
	if err != nil {
		return &exitError{code: exitInternal, msg: err.Error()}
	}
	defer engine.Close()
	res, err := engine.Execute(ctx, codemode.ExecuteRequest{Code: code, Filename: filename, Intent: f.intent, Tools: f.tools, Caller: cliCaller,
		FindTools:    fmt.Sprintf("`sandbox search \"your task\" --config %s`", f.gw.config),
		ServerStatus: fmt.Sprintf("`sandbox servers --config %s`", f.gw.config), OnEvent: onEvent})
	if err != nil {
		return &exitError{code: exitUsage, msg: err.Error()}
	}
	return printResult(cmd.OutOrStdout(), cmd.ErrOrStderr(), res, f.jsonOut, live.count())
}

// explainUnboundNamespace adds to "github is not defined", from a run
// without --config, why: no config was loaded, so no server is a
// namespace. Namespaces are lower-case (typegen's camelCase); a capitalised
// name (Deno, Buffer) is a global the sandbox lacks, and stays as it is.
func explainUnboundNamespace(res *runtime.Result) {
	e := res.Error
	if res.OK || e == nil || e.Name != "ReferenceError" {
		return
	}
	name, ok := strings.CutSuffix(e.Message, " is not defined")
	if !ok || !typegen.ValidNamespace(name) || name[0] < 'a' || name[0] > 'z' {
		return
	}
	e.Message += fmt.Sprintf(" (no config was loaded, so no MCP server is a namespace here: pass --config mcp.json to call the tools of the servers it declares, such as %s.someTool(...))", name)
}

// explicitLimits keeps only the limits whose flags were given, so that the
// config's codeMode limits fill the rest.
func explicitLimits(cmd *cobra.Command, l runtime.Limits) runtime.Limits {
	fl := cmd.Flags()
	var out runtime.Limits
	for _, r := range codemode.RequestLimits {
		if fl.Changed(r.RunFlag) {
			r.Set(&out, r.Get(l))
		}
	}
	if fl.Changed("code-limit") {
		out.CodeBytes = l.CodeBytes
	}
	if fl.Changed("stack-depth") {
		out.StackDepth = l.StackDepth
	}
	return out
}

// readSnippet reads the snippet from a file, or stdin for "-".
func readSnippet(stdin io.Reader, path string) (code, filename string, err error) {
	if path == "-" {
		b, err := io.ReadAll(io.LimitReader(stdin, 64<<20))
		if err != nil {
			return "", "", fmt.Errorf("reading the snippet from stdin: %w", err)
		}
		return string(b), "stdin.ts", nil
	}
	st, err := os.Stat(path)
	if err != nil {
		return "", "", fmt.Errorf("cannot read %s: %w (pass a .ts file, or - to read stdin)", path, errors.Unwrap(err))
	}
	if st.IsDir() {
		return "", "", fmt.Errorf("%s is a directory; pass a .ts file, or - to read stdin", path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", "", fmt.Errorf("cannot read %s: %w", path, err)
	}
	return string(b), path, nil
}

// printResult writes the value (or, with --json, the whole envelope, the
// same as execute_code's: codemode.ResultJSON) to stdout and console output
// and errors to stderr, and gives the exit status.
//
// printed is how many of the run's log entries were already written as they
// happened; the rest (the note that output was cut, say) follow.
func printResult(stdout, stderr io.Writer, run *codemode.ExecuteResult, envelope bool, printed int) error {
	res := run.Result
	if envelope {
		b, err := codemode.ResultJSON(run)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(stdout, "%s\n", indentJSON(b)); err != nil {
			return err
		}
	} else {
		for _, l := range res.Logs[min(printed, len(res.Logs)):] {
			fmt.Fprintln(stderr, l.Message)
		}
		if res.OK {
			value := []byte("null")
			if len(res.Value) > 0 {
				value = indentJSON(res.Value)
			}
			fmt.Fprintf(stdout, "%s\n", value)
		}
	}
	if res.OK {
		return nil
	}
	e := res.Error
	msg := e.Error()
	if e.Stack != "" {
		msg += "\n" + e.Stack
	}
	if len(e.Data) > 0 && !envelope {
		msg += "\n    data: " + truncate(string(e.Data), 2000)
	}
	code := exitFailed
	switch e.Kind {
	case runtime.KindCompile:
		code = exitCompile
	case runtime.KindLimit:
		code = exitLimit
	case runtime.KindInternal, runtime.KindCancelled:
		code = exitInternal
	}
	if envelope {
		msg = "" // the envelope on stdout says it all
	}
	return &exitError{code: code, msg: msg}
}

// liveLogs writes a run's console entries to stderr as they happen.
type liveLogs struct {
	mu      sync.Mutex
	w       io.Writer
	written int
}

func (l *liveLogs) event(e runtime.Event) {
	if e.Log == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintln(l.w, e.Log.Message)
	l.written++
}

func (l *liveLogs) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.written
}

// indentJSON pretty-prints without reordering: the snippet's key order is
// part of what it returned.
func indentJSON(raw json.RawMessage) []byte {
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return raw
	}
	return b.Bytes()
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// parseBytes reads sizes such as 256MiB, 512MB, 64k, 1G or a plain byte count.
func parseBytes(flag, s string) (int64, error) {
	n, err := bytesize.Parse(s)
	if err != nil {
		return 0, fmt.Errorf("%s %q is %w", flag, s, err)
	}
	return n, nil
}
