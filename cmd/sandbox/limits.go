package main

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/sandboxrt/sandbox/codemode"
	"github.com/sandboxrt/sandbox/internal/bytesize"
	"github.com/sandboxrt/sandbox/runtime"
)

// limitFlags are the flags of the limits an execute_code request may set,
// one per row of codemode.RequestLimits (the one place each is named):
// `sandbox run`'s set the run's limits, `sandbox serve`'s --max-* flags the
// ceiling of every request.
type limitFlags []*limitFlag

type limitFlag struct {
	limit codemode.RequestLimit
	dur   time.Duration // a duration
	size  string        // run: a size with a unit, "256MiB"
	n     int           // run: a count; serve: a size or a count in the limit's unit (MiB, KiB)
}

// addRunLimitFlags adds `sandbox run`'s flags, defaulting to the runtime's
// limits: a duration, a size with a unit, or a count.
func addRunLimitFlags(fl *pflag.FlagSet) limitFlags {
	d := runtime.DefaultLimits
	var out limitFlags
	for _, r := range codemode.RequestLimits {
		f := &limitFlag{limit: r}
		switch r.Kind {
		case codemode.LimitDuration:
			fl.DurationVar(&f.dur, r.RunFlag, time.Duration(r.Get(d)), r.RunHelp)
		case codemode.LimitSize:
			fl.StringVar(&f.size, r.RunFlag, bytesize.Format(r.Get(d)), r.RunHelp)
		default:
			fl.IntVar(&f.n, r.RunFlag, int(r.Get(d)), r.RunHelp)
		}
		out = append(out, f)
	}
	return out
}

// runLimits sets the limits of `sandbox run`'s flags in l: the sizes
// first, then the durations, then the counts, each refused with what to
// write instead.
func (fs limitFlags) runLimits(l *runtime.Limits) error {
	for _, kind := range []codemode.LimitKind{codemode.LimitSize, codemode.LimitDuration, codemode.LimitCount} {
		for _, f := range fs {
			r := f.limit
			if r.Kind != kind {
				continue
			}
			switch kind {
			case codemode.LimitSize:
				n, err := parseBytes("--"+r.RunFlag, f.size)
				if err != nil {
					return err
				}
				r.Set(l, n)
			case codemode.LimitDuration:
				if f.dur <= 0 {
					return fmt.Errorf("--%s must be positive, e.g. 30s", r.RunFlag)
				}
				r.Set(l, int64(f.dur))
			default:
				r.Set(l, int64(f.n))
			}
		}
	}
	return nil
}

// addMaxLimitFlags adds `sandbox serve`'s --max-* flags: a duration, or a
// whole number in the limit's unit; 0 leaves the config's ceiling.
func addMaxLimitFlags(fl *pflag.FlagSet) limitFlags {
	var out limitFlags
	for _, r := range codemode.RequestLimits {
		f := &limitFlag{limit: r}
		if r.Kind == codemode.LimitDuration {
			fl.DurationVar(&f.dur, r.MaxFlag, 0, r.MaxHelp)
		} else {
			fl.IntVar(&f.n, r.MaxFlag, 0, r.MaxHelp)
		}
		out = append(out, f)
	}
	return out
}

// ceiling is the --max-* flags as limits (zero where not given).
func (fs limitFlags) ceiling() runtime.Limits {
	var l runtime.Limits
	for _, f := range fs {
		if f.limit.Kind == codemode.LimitDuration {
			f.limit.Set(&l, int64(f.dur))
		} else {
			f.limit.Set(&l, int64(f.n)*f.limit.Unit)
		}
	}
	return l
}
