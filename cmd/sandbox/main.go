// Command sandbox runs agent TypeScript that calls MCP tools under hard limits,
// fronts many MCP servers as one gateway, and generates TypeScript types for tools.
//
// Each subcommand lives in a file of its own (run.go, search.go, serve.go,
// servers.go, types.go); newRootCmd puts them together.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	_ "github.com/sandboxrt/sandbox/cmd/sandbox/internal/earlyworker" // `sandbox run` starts its worker while initialising
	"github.com/sandboxrt/sandbox/runtime"
)

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "sandbox",
		Short: "Run agent TypeScript that calls MCP tools, under hard limits",
		Long: `sandbox runs TypeScript snippets written by AI agents ("code mode"): the snippet
calls MCP tools as typed async functions, runs in an isolated worker under hard
limits (time, memory, output, tool calls), and only its JSON result comes back.

Start with:
  sandbox run examples/hello.ts                 run a snippet, print its JSON result
  sandbox run script.ts --config mcp.json       ...calling the tools of MCP servers
  sandbox check script.ts --config mcp.json     type-check it first (with tsc)
  sandbox search "a task" --config mcp.json     which tools fit a task (--dts: their types)
  sandbox serve --config mcp.json [--http ADDR] one MCP endpoint for all servers, with
                                                search_tools and execute_code for agents
  sandbox servers --config mcp.json             the servers' state
  sandbox login SERVER --config mcp.json        log in to a server that asks for OAuth
  sandbox types --from tools.json               TypeScript declarations for MCP tools

mcp.json is the usual {"mcpServers": {...}} file of MCP clients.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version(),
	}
	root.AddCommand(newCheckCmd())
	root.SetVersionTemplate("sandbox {{.Version}}\n")
	root.AddCommand(newRunCmd(), newLoginCmd(), newLogoutCmd(), newScriptsCmd(), newSearchCmd(), newServeCmd(), newServersCmd(), newTypesCmd(), newVersionCmd(), newHealthcheckCmd())
	return root
}

// exitError carries the process exit code for a failure that was already
// explained to the user (for example a snippet that threw).
type exitError struct {
	code int
	msg  string // printed to stderr when non-empty
}

func (e *exitError) Error() string { return e.msg }

func main() {
	// A runtime worker subprocess is this same binary, started with a marker
	// in its environment: it must become a worker (and never return) before
	// cobra parses anything.
	runtime.ServeWorkerIfChild()
	err := newRootCmd().Execute()
	if err == nil {
		return
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.msg != "" {
			fmt.Fprintln(os.Stderr, "sandbox:", ee.msg)
		}
		os.Exit(ee.code)
	}
	fmt.Fprintln(os.Stderr, "sandbox:", err)
	os.Exit(2)
}
