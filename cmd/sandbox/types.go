package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sandboxrt/sandbox/codemode"
	"github.com/sandboxrt/sandbox/internal/atomicfile"
	"github.com/sandboxrt/sandbox/typegen"
)

// typesFlags are the options of `sandbox types`.
type typesFlags struct {
	from    string
	out     string
	servers []string
	tools   []string
	strict  bool
	globals bool
	gw      gatewayFlags
}

func newTypesCmd() *cobra.Command {
	var f typesFlags
	cmd := &cobra.Command{
		Use:   "types --from tools.json [-o out.d.ts]",
		Short: "Write TypeScript declarations for MCP tools",
		Long: `Write the TypeScript declarations (.d.ts) that agents see for MCP tools: one
namespace per server, one function per tool, with the tools' descriptions,
argument types and annotations. The file is global (no import/export) and
compiles with tsc --strict.

--from reads either a JSON array of MCP tool definitions, each with a "server"
field (or give --server), or a tools/list response ({"tools": [...]} or a whole
JSON-RPC response) together with --server NAME. Use - for stdin.

--config instead connects to the MCP servers of a gateway config (as "sandbox
serve" would) and declares their live tools, named exactly as code mode binds
them.

--server and --tool select what to declare (a tool is kept if its server or its
"server:tool" id is selected); by default every tool is.

Problems in a tool's schema (invalid JSON, a $ref that points nowhere, a cycle)
are printed as warnings naming the tool and the JSON pointer; the tool is still
declared with the broken part widened, and every other tool is unaffected.

--globals writes the declarations of the globals a snippet has besides the
language (URL, TextEncoder, crypto, AbortController, ...), to compile snippets
with tsc: use them with lib es2024, es2025.collection, es2025.iterator,
es2025.intl and esnext.array, and no DOM; fetch, process and require are then
"Cannot find name", as in the sandbox.

Exit status: 0 written (possibly with warnings); 1 problems found with --strict;
2 usage error or unreadable input.`,
		Example: `  sandbox types --from testdata/toolcorpus/tools.json -o tools.d.ts
  sandbox types --from list.json --server github --tool github:list_commits
  mcp-inspector --cli node server.js --method tools/list | sandbox types --from - --server mine
  sandbox types --config examples/mcp.json -o demo.d.ts
  sandbox types --globals -o sandbox-globals.d.ts`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.globals {
				if f.from != "" || f.gw.config != "" {
					return &exitError{code: 2, msg: "types: --globals writes the sandbox's globals on their own; run it without --from or --config"}
				}
				return writeGlobals(f, cmd.OutOrStdout(), cmd.ErrOrStderr())
			}
			if (f.from == "") == (f.gw.config == "") {
				return &exitError{code: 2, msg: "types: say where the tools come from: --from tools.json (or - for stdin), or --config mcp.json for the live tools of MCP servers"}
			}
			if f.gw.config != "" {
				tools, err := liveTools(cmd.Context(), f.gw, cmd.ErrOrStderr())
				if err != nil {
					return err
				}
				return writeTypes(tools, f, cmd.OutOrStdout(), cmd.ErrOrStderr())
			}
			tools, err := readToolsFile(f.from, f.servers, cmd.InOrStdin())
			if err != nil {
				return &exitError{code: 2, msg: "types: " + err.Error()}
			}
			return writeTypes(tools, f, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringVar(&f.from, "from", "", "file of tool definitions or a tools/list response (- for stdin)")
	cmd.Flags().StringVarP(&f.out, "output", "o", "", "write the .d.ts to this file instead of stdout")
	cmd.Flags().StringArrayVar(&f.servers, "server", nil, "declare this server's tools (repeatable); names the server of a tools/list response")
	cmd.Flags().StringArrayVar(&f.tools, "tool", nil, `declare this tool, by id "server:tool" (repeatable)`)
	cmd.Flags().BoolVar(&f.strict, "strict", false, "exit 1 when any tool has a problem")
	cmd.Flags().BoolVar(&f.globals, "globals", false, "write the declarations of the sandbox's globals (URL, crypto, ...) for tsc instead")
	f.gw.add(cmd, "warn")
	return cmd
}

// liveTools connects to the servers of a config and returns their tools as
// code mode declares them (`sandbox types --config`, `sandbox check`).
func liveTools(ctx context.Context, gw gatewayFlags, stderr io.Writer) ([]typegen.Tool, error) {
	g, file, err := startGateway(ctx, gw, stderr)
	if err != nil {
		return nil, err
	}
	defer g.Close()
	tools := codemode.DeclaredTools(g)
	// Result types code mode learned from calls (kept in its index
	// directory, or pooled by replicas in Redis) are declared as
	// search_tools declares them.
	shared, err := openShared(file)
	if err != nil {
		return nil, err
	}
	var pool codemode.ShapeStore
	if shared != nil {
		defer shared.close()
		pool = shared.shapes
	}
	return codemode.WithLearnedOutputs(file.CodeMode.Engine.IndexDir, pool, tools)
}

// readToolsFile reads tool definitions from a file (or stdin for "-"). A
// single --server names the server of entries that do not name their own.
func readToolsFile(from string, servers []string, stdin io.Reader) ([]typegen.Tool, error) {
	var data []byte
	var err error
	if from == "-" {
		data, err = io.ReadAll(io.LimitReader(stdin, maxToolsFile+1))
	} else {
		data, err = readLimited(from)
	}
	if err != nil {
		return nil, err
	}
	if len(data) > maxToolsFile {
		return nil, fmt.Errorf("%s is larger than %d MiB; that is not a tool list", from, maxToolsFile>>20)
	}
	server := ""
	if len(servers) == 1 {
		server = servers[0]
	}
	tools, err := typegen.ReadTools(data, server)
	if err != nil {
		if len(servers) > 1 && strings.Contains(err.Error(), "names no server") {
			err = fmt.Errorf("%v; with several --server flags, entries must name their server", err)
		}
		return nil, fmt.Errorf("%s: %w", displayName(from), err)
	}
	return tools, nil
}

// maxToolsFile bounds the input: the 341-tool corpus is 0.6 MiB.
const maxToolsFile = 256 << 20

func readLimited(path string) ([]byte, error) {
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%s: no such file; pass a JSON array of MCP tool definitions or a tools/list response", path)
	case err != nil:
		return nil, err
	case st.IsDir():
		return nil, fmt.Errorf("%s is a directory; pass a JSON file of tool definitions", path)
	case st.Size() > maxToolsFile:
		return nil, fmt.Errorf("%s is larger than %d MiB; that is not a tool list", path, maxToolsFile>>20)
	}
	return os.ReadFile(path)
}

func displayName(from string) string {
	if from == "-" {
		return "stdin"
	}
	return from
}

// writeTypes is the core of `sandbox types`: declarations for tools, from a
// file today and from the gateway's live catalog once it exists, written to
// f.out (atomically) or stdout, with problems as warnings on stderr.
func writeTypes(tools []typegen.Tool, f typesFlags, stdout, stderr io.Writer) error {
	// With entries that carry their own server, --server selects; for a
	// tools/list response it only named the server, which selects them all.
	out, err := typegen.Generate(tools, typegen.Options{Servers: f.servers, Tools: f.tools})
	if err != nil {
		return &exitError{code: 2, msg: "types: " + err.Error()}
	}
	for _, p := range out.Problems {
		fmt.Fprintln(stderr, "sandbox: warning:", p)
	}
	if f.out == "" {
		if _, err := io.WriteString(stdout, out.DTS); err != nil {
			return &exitError{code: 2, msg: "types: writing stdout: " + err.Error()}
		}
	} else {
		if err := writeFileAtomic(f.out, []byte(out.DTS)); err != nil {
			return &exitError{code: 2, msg: "types: " + err.Error()}
		}
		fmt.Fprintf(stderr, "sandbox: wrote %d tools to %s (%d characters, about %d tokens)\n", len(out.Tools), f.out, len(out.DTS), len(out.DTS)/4)
	}
	if f.strict && len(out.Problems) > 0 {
		return &exitError{code: 1, msg: fmt.Sprintf("types: %d problems (--strict)", len(out.Problems))}
	}
	return nil
}

// writeGlobals writes typegen.Globals, with the lib setting it goes with.
func writeGlobals(f typesFlags, stdout, stderr io.Writer) error {
	if f.out == "" {
		if _, err := io.WriteString(stdout, typegen.Globals); err != nil {
			return &exitError{code: 2, msg: "types: writing stdout: " + err.Error()}
		}
		return nil
	}
	if err := writeFileAtomic(f.out, []byte(typegen.Globals)); err != nil {
		return &exitError{code: 2, msg: "types: " + err.Error()}
	}
	fmt.Fprintf(stderr, "sandbox: wrote the sandbox's globals to %s; compile with lib %s and no DOM\n", f.out, strings.Join(typegen.GlobalsLib, ","))
	return nil
}

// writeFileAtomic replaces path only once the new content is complete, so a
// failure never leaves a half-written .d.ts behind.
func writeFileAtomic(path string, data []byte) error {
	return atomicfile.Write(path, data, 0o644)
}
