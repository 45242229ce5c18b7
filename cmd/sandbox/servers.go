package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/spf13/cobra"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/gateway"
	"github.com/sandboxrt/sandbox/gateway/frontend"
)

func newServersCmd() *cobra.Command {
	var f gatewayFlags
	var url string
	var asJSON bool
	var wait time.Duration
	var logsOf string
	cmd := &cobra.Command{
		Use:   "servers",
		Short: "List the gateway's MCP servers with their state, tool count, last error and restarts",
		Long: `Connect to every MCP server in the config (as "sandbox serve" would), wait for
each to connect or fail, and print one line per server: its state, transport,
number of tools, resources and prompts, restarts and last error. Exit status 1
when a server is not ready.

With --url, ask a running "sandbox serve --http" instead (through its
gateway__list_servers hub tool), which also shows restarts since it started.

--logs NAME starts only that server and prints what its process wrote to
stderr (its first 4 KiB and last 8 KiB): the whole of what LAST ERROR
shortens, for a server that crashes or will not start.`,
		Example: `  sandbox servers --config mcp.json
  sandbox servers --config mcp.json --logs github
  sandbox servers --url http://127.0.0.1:8808/mcp --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if logsOf != "" {
				if url != "" {
					return &exitError{code: 2, msg: "--logs starts the server itself to read its stderr; run it with --config, not --url (a running serve logs each server's errors in its own log)"}
				}
				return serverLogs(cmd.Context(), f, wait, logsOf, cmd.OutOrStdout(), cmd.ErrOrStderr())
			}
			var rows []gateway.ServerStatus
			var err error
			if url != "" {
				rows, err = serversFromURL(cmd.Context(), url)
			} else {
				rows, err = serversFromConfig(cmd.Context(), f, wait)
			}
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				if err := enc.Encode(rows); err != nil {
					return err
				}
			} else {
				printServers(cmd.OutOrStdout(), rows)
				for _, r := range rows {
					if r.Transport == gateway.TransportStdio && r.State != gateway.StateReady && strings.Contains(r.LastError, "stderr: ") {
						fmt.Fprintf(cmd.ErrOrStderr(), "sandbox: %s wrote to stderr; `sandbox servers --logs %s` prints it whole\n", r.Name, r.Name)
					}
				}
			}
			if len(rows) == 0 && !asJSON {
				fmt.Fprintln(cmd.ErrOrStderr(), `no MCP servers are configured: add them under "mcpServers" in the config ({"name": {"command": "...", "args": [...]}} or {"name": {"url": "https://.../mcp"}})`)
			}
			for _, r := range rows {
				if r.State != gateway.StateReady && r.State != gateway.StateDisabled {
					return &exitError{code: 1}
				}
			}
			return nil
		},
	}
	f.add(cmd, "warn")
	cmd.Flags().StringVar(&url, "url", "", "ask a running \"sandbox serve --http\" at this URL (http://HOST:PORT/mcp) instead of connecting from the config")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON instead of a table")
	cmd.Flags().StringVar(&logsOf, "logs", "", "start only this server and print what it wrote to stderr")
	cmd.Flags().DurationVar(&wait, "wait", 0, "longest wait for servers to connect (default: the config's startupTimeout)")
	return cmd
}

func serversFromConfig(ctx context.Context, f gatewayFlags, wait time.Duration) ([]gateway.ServerStatus, error) {
	file, err := f.load()
	if err != nil {
		return nil, err
	}
	if wait > 0 {
		file.Gateway.Settings.StartupTimeout = wait
	}
	log, err := f.logger(os.Stderr)
	if err != nil {
		return nil, err
	}
	g, err := gateway.New(file.Gateway, gateway.WithLogger(log))
	if err != nil {
		return nil, err
	}
	defer g.Close()
	if err := f.tokens(g); err != nil {
		return nil, err
	}
	if err := g.Start(ctx); err != nil {
		return nil, err
	}
	rows := g.Servers()
	for i := range rows {
		st := g.OAuthState(ctx, rows[i].Name, auth.Operator().Key())
		if st == "not logged in" && rows[i].State == gateway.StateReady {
			st = "" // it answered without a login: it needs none
		}
		rows[i].Auth = st
	}
	return rows, nil
}

// serverLogs starts one server of the config, waits for it to connect or
// fail, and prints what its process wrote to stderr.
func serverLogs(ctx context.Context, f gatewayFlags, wait time.Duration, name string, stdout, stderr io.Writer) error {
	file, err := f.load()
	if err != nil {
		return err
	}
	sc := file.Gateway.Servers[gateway.NormalizeName(name)]
	if sc == nil {
		return &exitError{code: 2, msg: fmt.Sprintf("--logs %s: no such server in the config; it has: %s", name, strings.Join(file.Gateway.ServerNames(), ", "))}
	}
	if sc.Transport != gateway.TransportStdio {
		return &exitError{code: 2, msg: fmt.Sprintf("--logs %s: %s is a url server, which has no stderr here; `sandbox servers --config ...` shows its last error", name, sc.Name)}
	}
	if sc.Disabled {
		return &exitError{code: 2, msg: fmt.Sprintf("--logs %s: the server is disabled in the config (\"disabled\": true); it never runs", name)}
	}
	file.Gateway.Servers = map[string]*gateway.ServerConfig{sc.Name: sc}
	if wait > 0 {
		file.Gateway.Settings.StartupTimeout = wait
	}
	log, err := f.logger(stderr)
	if err != nil {
		return err
	}
	g, err := gateway.New(file.Gateway, gateway.WithLogger(log))
	if err != nil {
		return err
	}
	defer g.Close()
	if err := g.Start(ctx); err != nil {
		return err
	}
	st := g.Servers()[0]
	text, _ := g.ServerStderr(sc.Name)
	fmt.Fprintf(stderr, "sandbox: server %q is %s", sc.Name, st.State)
	if st.Reason != "" {
		fmt.Fprintf(stderr, ": %s", st.Reason)
	}
	if text == "" {
		fmt.Fprintln(stderr, "; it wrote nothing to stderr")
		return nil
	}
	fmt.Fprintln(stderr, "; its stderr follows")
	_, err = io.WriteString(stdout, text)
	return err
}

func serversFromURL(ctx context.Context, url string) ([]gateway.ServerStatus, error) {
	tr, err := transport.NewStreamableHTTP(url)
	if err != nil {
		return nil, &exitError{code: 2, msg: fmt.Sprintf("--url: %v", err)}
	}
	c := client.NewClient(tr)
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", url, err)
	}
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{ClientInfo: mcp.Implementation{Name: "sandbox-servers", Version: gatewayVersion}}}); err != nil {
		return nil, fmt.Errorf("connecting to %s: %w (is `sandbox serve --http` running there?)", url, err)
	}
	res, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: frontend.HubListServers}})
	if err != nil {
		return nil, fmt.Errorf("%s at %s: %w", frontend.HubListServers, url, err)
	}
	var out struct {
		Servers []gateway.ServerStatus `json:"servers"`
	}
	raw, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(raw, &out); err != nil || res.IsError {
		return nil, fmt.Errorf("%s at %s answered something else than a server list", frontend.HubListServers, url)
	}
	return out.Servers, nil
}

func printServers(w io.Writer, rows []gateway.ServerStatus) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	withAuth := slices.ContainsFunc(rows, func(r gateway.ServerStatus) bool { return r.Auth != "" })
	header := "NAME\tSTATE\tTRANSPORT\tTOOLS\tRESOURCES\tPROMPTS\tRESTARTS\tLAST ERROR"
	if withAuth {
		header = "NAME\tSTATE\tTRANSPORT\tAUTH\tTOOLS\tRESOURCES\tPROMPTS\tRESTARTS\tLAST ERROR"
	}
	fmt.Fprintln(tw, header)
	for _, r := range rows {
		lastErr := strings.ReplaceAll(r.LastError, "\n", " ")
		if len(lastErr) > 100 {
			lastErr = lastErr[:97] + "..."
		}
		if lastErr == "" {
			lastErr = "-"
		}
		tr := string(r.Transport)
		if withAuth {
			a := r.Auth
			if a == "" {
				a = "-"
			}
			tr += "\t" + a
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%d\t%s\n", r.Name, r.State, tr, r.Tools, r.Resources, r.Prompts, r.Restarts, lastErr)
	}
	tw.Flush()
}
