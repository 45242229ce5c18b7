package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sandboxrt/sandbox/typegen"
)

// `sandbox check` type-checks a snippet before it runs. A snippet is the
// body of an async function (the runtime wraps it so: top-level await and
// a top-level return are valid), which tsc cannot know: given the file as
// it is, tsc rejects every example. check writes the snippet into that
// function, one line below its top, beside the declarations of the tools
// (`sandbox types`) and of the globals (`sandbox types --globals`), runs
// the TypeScript compiler the user has, and reports each error at its
// line and column in the user's own file.

// checkFlags are the options of `sandbox check`.
type checkFlags struct {
	gw  gatewayFlags
	tsc string
}

func newCheckCmd() *cobra.Command {
	var f checkFlags
	cmd := &cobra.Command{
		Use:   "check FILE [--config mcp.json]",
		Short: "Type-check a snippet against the tools' declarations, with the TypeScript compiler",
		Long: `Type-check a snippet as the sandbox runs it: as the body of an async function
(top-level await and return are valid), with the sandbox's globals (no DOM, no
fetch, no process) and, with --config, the declarations of the live tools of the
config's servers, as "sandbox types --config" writes them. Errors are reported at
their line and column in FILE.

The compiler is the user's: tsc from PATH, or --tsc PATH (one that knows lib es2025;
tested with TypeScript 7.0).
Install it with "npm install -g typescript", or in a project with
"npm install --save-dev typescript" and pass --tsc node_modules/.bin/tsc.

Exit status: 0 no errors; 1 type errors; 2 usage error, no compiler, or the
compiler failed.`,
		Example: `  sandbox check examples/hello.ts
  sandbox check examples/demo-standup.ts --config examples/mcp.json
  sandbox check report.ts -c mcp.json --tsc node_modules/.bin/tsc`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return checkSnippet(cmd, args[0], f)
		},
	}
	cmd.Flags().StringVar(&f.tsc, "tsc", "", "the TypeScript compiler to run (default: tsc from PATH)")
	f.gw.add(cmd, "warn")
	return cmd
}

// checkLib and the rest of checkCompilerOptions are what a snippet has:
// the language (typegen.GlobalsLib), no DOM, no @types, each file a module
// of its own (two snippets' top-level names never clash). docs/cli.md's
// editor tsconfig is the same (TestCheckTsconfigInTheDocs).
var checkCompilerOptions = map[string]any{
	"strict":           true,
	"noEmit":           true,
	"target":           "es2024",
	"lib":              typegen.GlobalsLib,
	"types":            []string{},
	"module":           "esnext",
	"moduleResolution": "bundler",
	"moduleDetection":  "force",
}

// snippetHeader is the one line above the snippet in the file tsc checks:
// input is the global a saved script reads its arguments from.
const snippetHeader = "declare const input: any; export {}; async function __sandboxSnippet() {\n"

func checkSnippet(cmd *cobra.Command, path string, f checkFlags) error {
	stderr := cmd.ErrOrStderr()
	code, err := os.ReadFile(path)
	if err != nil {
		return &exitError{code: exitUsage, msg: fmt.Sprintf("check: %v", err)}
	}
	tsc, err := findTSC(f.tsc)
	if err != nil {
		return err
	}
	body := strings.TrimSuffix(string(code), "\n")
	tools := typegen.Preamble // MCPToolError and the types every declaration uses
	if f.gw.config != "" {
		live, err := liveTools(cmd.Context(), f.gw, stderr)
		if err != nil {
			return err
		}
		out, err := typegen.Generate(live, typegen.Options{})
		if err != nil {
			return &exitError{code: exitUsage, msg: "check: " + err.Error()}
		}
		tools = out.DTS
	}
	dir, err := os.MkdirTemp("", "sandbox-check-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	config, _ := json.MarshalIndent(map[string]any{
		"compilerOptions": checkCompilerOptions,
		"files":           []string{"sandbox-globals.d.ts", "tools.d.ts", "snippet.ts"},
	}, "", "  ")
	for name, text := range map[string]string{
		"tsconfig.json":        string(config),
		"sandbox-globals.d.ts": typegen.Globals,
		"tools.d.ts":           tools,
		"snippet.ts":           snippetHeader + body + "\n}\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			return err
		}
	}
	c := exec.CommandContext(cmd.Context(), tsc, "-p", filepath.Join(dir, "tsconfig.json"), "--pretty", "false")
	c.Dir = dir
	out, runErr := c.CombinedOutput()
	var exit *exec.ExitError
	if runErr != nil && !errors.As(runErr, &exit) {
		return &exitError{code: exitUsage, msg: fmt.Sprintf("check: running %s: %v", tsc, runErr)}
	}
	n, other := reportDiagnostics(cmd.OutOrStdout(), out, path, strings.Count(body, "\n")+1)
	switch {
	case runErr == nil:
		return nil
	case n > 0:
		return &exitError{code: exitFailed, msg: fmt.Sprintf("check: %d type errors in %s", n, path)}
	case other:
		return &exitError{code: exitFailed, msg: fmt.Sprintf("check: errors in the declarations (above), none in %s", path)}
	}
	return &exitError{code: exitUsage, msg: fmt.Sprintf("check: %s failed without diagnostics: %s\n%s", tsc, runErr, out)}
}

// findTSC is --tsc, else tsc from PATH, else an error that says how to
// install one.
func findTSC(flag string) (string, error) {
	name := flag
	if name == "" {
		name = "tsc"
	}
	p, err := exec.LookPath(name)
	if err == nil {
		return p, nil
	}
	if flag != "" {
		return "", &exitError{code: exitUsage, msg: fmt.Sprintf("check: --tsc %s: %v", flag, err)}
	}
	return "", &exitError{code: exitUsage, msg: "check: no TypeScript compiler: tsc is not on PATH. Install it with `npm install -g typescript` " +
		"(or `npm install --save-dev typescript` in a project, then pass --tsc node_modules/.bin/tsc), or pass --tsc PATH"}
}

// tscDiagnostic is the first line of one of tsc's diagnostics (--pretty
// false): "file(line,col): error TS1234: message".
var tscDiagnostic = regexp.MustCompile(`^(\S+?)\((\d+),(\d+)\): (error|warning) (TS\d+: .*)$`)

// reportDiagnostics writes tsc's diagnostics to w, those in the snippet at
// their line and column in the user's file (path, lines long; the header
// is line 1 of snippet.ts, the closing brace the line after the last), the
// others (in the declarations) as tsc gave them. It returns how many were
// in the snippet, and whether there were others.
func reportDiagnostics(w io.Writer, out []byte, path string, lines int) (inSnippet int, other bool) {
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		m := tscDiagnostic.FindStringSubmatch(l)
		if m == nil {
			if strings.TrimSpace(l) != "" {
				fmt.Fprintln(w, l) // a message's continuation lines, indented
			}
			continue
		}
		if filepath.Base(m[1]) != "snippet.ts" {
			other = true
			fmt.Fprintln(w, l)
			continue
		}
		inSnippet++
		line, _ := strconv.Atoi(m[2])
		col := m[3]
		switch line -= 1; {
		case line < 1:
			line, col = 1, "1"
		case line > lines: // the closing brace: the end of the file
			line, col = lines, "1"
		}
		fmt.Fprintf(w, "%s:%d:%s: %s %s\n", path, line, col, m[4], m[5])
	}
	return inSnippet, other
}
