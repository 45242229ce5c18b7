package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/sandboxrt/sandbox/codemode"
	"github.com/sandboxrt/sandbox/internal/bytesize"
	"github.com/sandboxrt/sandbox/runtime"
)

// TestLimitFlagsAreTheTable: `sandbox run` and `sandbox serve` have a flag
// for each limit an execute_code request may set (codemode.RequestLimits),
// which sets that limit: run's in a duration, a size or a count, serve's
// --max-* in the limit's unit.
func TestLimitFlagsAreTheTable(t *testing.T) {
	run := pflag.NewFlagSet("run", pflag.ContinueOnError)
	runFlags := addRunLimitFlags(run)
	serve := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	maxFlags := addMaxLimitFlags(serve)
	var runArgs, serveArgs []string
	want := runtime.Limits{}
	for i, r := range codemode.RequestLimits {
		rf, mf := run.Lookup(r.RunFlag), serve.Lookup(r.MaxFlag)
		if rf == nil || mf == nil || rf.Usage != r.RunHelp || mf.Usage != r.MaxHelp {
			t.Fatalf("%s: run --%s %v, serve --%s %v", r.Key, r.RunFlag, rf, r.MaxFlag, mf)
		}
		n := int64(i + 20)
		switch r.Kind {
		case codemode.LimitDuration:
			runArgs = append(runArgs, fmt.Sprintf("--%s=%ds", r.RunFlag, n))
			serveArgs = append(serveArgs, fmt.Sprintf("--%s=%ds", r.MaxFlag, n))
			r.Set(&want, n*int64(time.Second))
			continue
		case codemode.LimitSize:
			runArgs = append(runArgs, fmt.Sprintf("--%s=%s", r.RunFlag, bytesize.Format(n*r.Unit)))
		default:
			runArgs = append(runArgs, fmt.Sprintf("--%s=%d", r.RunFlag, n))
		}
		serveArgs = append(serveArgs, fmt.Sprintf("--%s=%d", r.MaxFlag, n))
		r.Set(&want, n*r.Unit)
	}
	// Untouched, run's flags are the runtime's defaults.
	var defaults runtime.Limits
	if err := runFlags.runLimits(&defaults); err != nil {
		t.Fatal(err)
	}
	for _, r := range codemode.RequestLimits {
		if r.Get(defaults) != r.Get(runtime.DefaultLimits) {
			t.Errorf("--%s defaults to %d, the runtime to %d", r.RunFlag, r.Get(defaults), r.Get(runtime.DefaultLimits))
		}
	}
	if err := run.Parse(runArgs); err != nil {
		t.Fatal(err)
	}
	if err := serve.Parse(serveArgs); err != nil {
		t.Fatal(err)
	}
	var got runtime.Limits
	if err := runFlags.runLimits(&got); err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("run %s:\n got %+v\nwant %+v", strings.Join(runArgs, " "), got, want)
	}
	if c := maxFlags.ceiling(); c != want {
		t.Errorf("serve %s:\n got %+v\nwant %+v", strings.Join(serveArgs, " "), c, want)
	}
}
