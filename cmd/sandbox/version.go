package main

import (
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// buildVersion is the version a build stamps in with
// -ldflags "-X main.buildVersion=v0.3.0": `make build`, `make install` and
// the Dockerfile do (from git describe, or the VERSION build argument), since
// a build in a clone records no module version and a container build sees no
// .git. Empty in a plain `go build`.
var buildVersion string

// version is the module version and the commit the binary was built from:
// the stamped buildVersion when there is one, else what the Go toolchain
// recorded: "v0.3.0" for `go install ...@v0.3.0`, "(devel)" plus the commit
// for a build in a clone ("+dirty" when the work tree had changes).
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		if buildVersion != "" {
			return buildVersion
		}
		return "unknown (built without module information)"
	}
	v := info.Main.Version
	if v == "" {
		v = "(devel)"
	}
	if buildVersion != "" {
		v = buildVersion
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

// moduleVersion is the module version alone ("devel" for an unstamped
// build in a clone), for serverInfo and clientInfo.
func moduleVersion() string {
	if buildVersion != "" {
		return buildVersion
	}
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
