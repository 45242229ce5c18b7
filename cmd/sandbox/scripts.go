package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/sandboxrt/sandbox/codemode"
)

// newScriptsCmd is the operator's view of saved scripts: every principal's,
// in the config's codeMode.dataDir (or --data-dir). Serve reads the file at
// start; change it while serve is stopped.
func newScriptsCmd() *cobra.Command {
	var f gatewayFlags
	var dataDir, owner string
	open := func() (codemode.ScriptStore, error) {
		dir := dataDir
		if dir == "" && f.configGiven() {
			file, err := f.load()
			if err != nil {
				return nil, err
			}
			shared, err := openShared(file)
			if err != nil {
				return nil, err
			}
			if shared != nil { // the replicas' scripts, in Redis
				return shared.scripts, nil
			}
			dir = file.CodeMode.Engine.DataDir
		}
		if dir == "" { // serve's default too (useDataDir)
			var err error
			if dir, err = defaultDataDir(); err != nil {
				return nil, &exitError{code: 2, msg: "scripts: no data directory (" + err.Error() + `): set "dataDir" in the config's "codeMode" block, or pass --data-dir`}
			}
		}
		return codemode.OpenScripts(dir)
	}
	find := func(ctx context.Context, b codemode.ScriptStore, name string) (codemode.Script, error) {
		all, err := b.All(ctx)
		if err != nil {
			return codemode.Script{}, err
		}
		var found []codemode.Script
		for _, s := range all {
			if s.Name == name && (owner == "" || s.Owner == owner) {
				found = append(found, s)
			}
		}
		switch len(found) {
		case 0:
			return codemode.Script{}, &exitError{code: 1, msg: fmt.Sprintf("scripts: no script %q (sandbox scripts list shows them)", name)}
		case 1:
			return found[0], nil
		}
		return codemode.Script{}, &exitError{code: 2, msg: fmt.Sprintf("scripts: %d principals have a script %q; say whose with --owner", len(found), name)}
	}
	cmd := &cobra.Command{
		Use:   "scripts list|show NAME|rm NAME|share NAME|unshare NAME",
		Short: "List, show, delete and share the scripts agents saved (save_script)",
		Long: `Agents save snippets as scripts with the save_script tool of "sandbox serve"; a
script is its owner's (the principal that saved it) unless shared. This command
is the operator's view of all of them, in the data directory of the config's
"codeMode" block (or --data-dir; without either, serve's per-user default,
$XDG_STATE_HOME/sandbox or ~/.local/state/sandbox), or in the Redis of
"gateway.redis" that replicas share. serve reads a data directory's scripts when it starts: change
them while it is stopped (Redis is read at each use).`,
		Example: `  sandbox scripts list
  sandbox scripts list --config mcp.json
  sandbox scripts show weekly_report --owner agent-a
  sandbox scripts share weekly_report --owner agent-a`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			b, err := open()
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			ctx := cmd.Context()
			if args[0] == "list" {
				all, err := b.All(ctx)
				if err != nil {
					return err
				}
				return listScripts(out, all)
			}
			if len(args) != 2 {
				return &exitError{code: 2, msg: "scripts " + args[0] + " takes the script's name"}
			}
			s, err := find(ctx, b, args[1])
			if err != nil {
				return err
			}
			switch args[0] {
			case "show":
				fmt.Fprintf(out, "// %s (owner %s%s), saved %s\n// %s\n", s.Name, s.Owner, map[bool]string{true: ", shared"}[s.Shared], s.Saved.Format("2006-01-02 15:04"), s.Description)
				if len(s.InputSchema) > 0 {
					fmt.Fprintf(out, "// input: %s\n", s.InputSchema)
				}
				_, err := io.WriteString(out, s.Code+"\n")
				return err
			case "rm":
				_, err := b.Delete(ctx, s.Owner, s.Name)
				return err
			case "share", "unshare":
				return b.Share(ctx, s.Owner, s.Name, args[0] == "share")
			}
			return &exitError{code: 2, msg: fmt.Sprintf("scripts: no subcommand %q (list, show, rm, share, unshare)", args[0])}
		},
	}
	cmd.Flags().StringVar(&dataDir, "data-dir", "", "the data directory (default: the config's codeMode.dataDir, else serve's per-user default)")
	cmd.Flags().StringVar(&owner, "owner", "", "the principal whose script it is, when several have one of that name")
	f.add(cmd, "warn")
	return cmd
}

func listScripts(w io.Writer, scripts []codemode.Script) error {
	if len(scripts) == 0 {
		_, err := fmt.Fprintln(w, "no saved scripts")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tOWNER\tSHARED\tSAVED\tDESCRIPTION")
	for _, s := range scripts {
		fmt.Fprintf(tw, "%s\t%s\t%v\t%s\t%s\n", s.Name, s.Owner, s.Shared, s.Saved.Format("2006-01-02 15:04"), truncate(s.Description, 60))
	}
	return tw.Flush()
}
