package main

import (
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// version is the module version and the commit the binary was built from,
// as the Go toolchain recorded them: "v0.3.0" for `go install ...@v0.3.0`,
// "(devel)" plus the commit for a build in a clone ("+dirty" when the work
// tree had changes). It is also the version serve reports in serverInfo.
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown (built without module information)"
	}
	v := info.Main.Version
	if v == "" {
		v = "(devel)"
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	var extra []string
	if rev := settings["vcs.revision"]; rev != "" && !strings.Contains(v, rev[:min(12, len(rev))]) {
		c := "commit " + rev[:min(12, len(rev))]
		if settings["vcs.modified"] == "true" {
			c += "+dirty"
		}
		if t := settings["vcs.time"]; t != "" {
			c += " " + t
		}
		extra = append(extra, c)
	}
	extra = append(extra, info.GoVersion)
	return v + " (" + strings.Join(extra, ", ") + ")"
}

// moduleVersion is the module version alone ("devel" for a build in a
// clone), for serverInfo and clientInfo.
func moduleVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
		return info.Main.Version
	}
	return "devel"
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version and commit sandbox was built from",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintln(cmd.OutOrStdout(), "sandbox "+version())
			return err
		},
	}
}
