// Package earlyworker starts the worker of `sandbox run` while the CLI is
// still initialising (see internal/prestart): imported by cmd/sandbox only,
// for its init, which Go runs early because this package imports nothing
// but internal/prestart and the standard library.
package earlyworker

import (
	"os"
	"strings"

	"github.com/sandboxrt/sandbox/internal/prestart"
)

func init() {
	if wanted(os.Args) {
		prestart.StartEarly()
	}
}

// wanted: `sandbox run` in a worker (not --in-process in any spelling),
// not asking for help.
func wanted(args []string) bool {
	if len(args) < 2 || args[1] != "run" {
		return false
	}
	for _, a := range args[2:] {
		if a == "--" {
			break
		}
		if strings.HasPrefix(a, "--in-process") || strings.HasPrefix(a, "--help") || a == "-h" {
			return false
		}
	}
	return true
}
