package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/sandboxrt/sandbox/codemode"
	"github.com/sandboxrt/sandbox/config"
	"github.com/sandboxrt/sandbox/console"
	"github.com/sandboxrt/sandbox/gateway"
	"github.com/sandboxrt/sandbox/gateway/frontend"
	"github.com/sandboxrt/sandbox/runs"
	"github.com/sandboxrt/sandbox/state/redisstate"
)

// The state `sandbox serve` replicas share (docs/deploy.md). Each kind is a
// store interface declared beside the package that uses it, with that
// package's in-memory default; a backend implements them all and passes
// state/statetest. No library package knows every kind of state: this file,
// in the command that wires everything anyway, is the one place that does,
// and the one place a backend is chosen. A second backend is a package
// under state/, an opener below and its line in stateBackends; config only
// parses its block.

// sharedState is one backend's stores, as the packages take them.
type sharedState struct {
	backend  string // "Redis", for the log and /readyz
	logAttrs []any  // what the log says about it

	rateLimiter gateway.RateLimiter
	questions   gateway.QuestionLedger // approvals answered by input_required, each run once
	tokens      gateway.TokenStore
	oauth       gateway.OAuthStore
	desk        gateway.DeskStore                                // the approval desk
	signIns     gateway.SignInStore                              // principals' sign-ins by URL in progress
	store       func(codemode.StoreLimits) codemode.Store        // the values of sandbox.store
	results     func(codemode.ResultLimits) codemode.ResultStore // the results sandbox.results reads
	scripts     codemode.ScriptStore
	shapes      codemode.ShapeStore
	usage       codemode.UsageStore // what code mode learns from use
	sessions    frontend.SessionDirectory
	callStreams frontend.CallStreamStore
	released    frontend.ReleasedRunStore // runs released from their workers while they wait
	runs        runs.Store                // tasks (runs that outlive their request)
	contextKey  string                    // of execute_code's context handles, the same on every replica
	// requestStateKey seals the front end's requestStates (input_required),
	// the same on every replica, so a retry may land on any of them.
	requestStateKey []byte
	// consoleKey keys the operator console's cookies and CSRF tokens, and
	// consoleRevocations keeps its sign-outs: the same on every replica, so
	// a person signed in on one is signed in (and out) on all.
	consoleKey         []byte
	consoleRevocations console.Revocations
	// approvalPageKey signs the approval page's cookies and forms, the
	// same on every replica, so the page works on any of them.
	approvalPageKey []byte

	ping func(context.Context) error // for /readyz
	// upgrade brings up to date what an earlier version kept in the
	// backend (serve runs it once at start, beside the traffic): a
	// summary for the log, "" when there was nothing to do.
	upgrade func(context.Context) (string, error)
	close   func() error
}

// stateBackend opens the shared state of one backend: nil, nil when the
// configuration does not name it.
type stateBackend func(file *config.File) (*sharedState, error)

// stateBackends are the backends `sandbox serve` can share state in.
var stateBackends = []stateBackend{openRedisState}

// openShared opens the backend the configuration names, nil without one:
// then every store is the process's own.
func openShared(file *config.File) (*sharedState, error) {
	var open *sharedState
	for _, backend := range stateBackends {
		s, err := backend(file)
		if err != nil {
			if open != nil {
				_ = open.close()
			}
			return nil, err
		}
		if s == nil {
			continue
		}
		if open != nil {
			_, _ = open.close(), s.close()
			return nil, &exitError{code: 2, msg: fmt.Sprintf("the config names two backends for shared state (%s and %s): keep one", open.backend, s.backend)}
		}
		open = s
	}
	return open, nil
}

// openRedisState opens the Redis of "gateway.redis", or of
// SANDBOX_REDIS_URL with SANDBOX_REDIS_KEY (which override the file).
func openRedisState(file *config.File) (*sharedState, error) {
	if u := os.Getenv("SANDBOX_REDIS_URL"); u != "" {
		if file.Redis == nil {
			file.Redis = &config.Redis{}
		}
		file.Redis.URL = u
		if file.Redis.EncryptionKey == "" {
			file.Redis.EncryptionKey = os.Getenv("SANDBOX_REDIS_KEY")
		}
	}
	r := file.Redis
	if r == nil {
		return nil, nil
	}
	c, err := redisstate.Open(redisstate.Config{URL: r.URL, TLS: r.TLS, KeyPrefix: r.KeyPrefix, EncryptionKey: r.EncryptionKey})
	if err != nil {
		return nil, &exitError{code: 2, msg: "gateway.redis: " + err.Error()}
	}
	return &sharedState{
		backend:            "Redis",
		logAttrs:           []any{"keyPrefix", r.KeyPrefix},
		rateLimiter:        c.RateLimiter(nil),
		questions:          c.QuestionLedger(),
		tokens:             c.TokenStore(),
		oauth:              c.OAuthStore(),
		desk:               c.DeskStore(nil),
		signIns:            c.SignInStore(nil),
		store:              func(limits codemode.StoreLimits) codemode.Store { return c.Store(limits, nil) },
		results:            func(limits codemode.ResultLimits) codemode.ResultStore { return c.ResultStore(limits, nil) },
		scripts:            c.ScriptStore(),
		shapes:             c.ShapeStore(),
		usage:              c.Usage(nil),
		sessions:           c.SessionDirectory(),
		callStreams:        c.CallStreams(),
		released:           c.ReleasedRuns(0, nil),
		runs:               c.RunStore(nil),
		contextKey:         string(c.DeriveKey("codemode context handles")),
		requestStateKey:    c.DeriveKey("frontend requestState"),
		consoleKey:         c.DeriveKey("operator console"),
		approvalPageKey:    c.DeriveKey("console approval page"),
		consoleRevocations: c.ConsoleRevocations(),
		ping:               c.Ping,
		upgrade: func(ctx context.Context) (string, error) {
			sealed, dropped, err := c.SealLegacy(ctx)
			// The operator console lists tasks from a set of their owners
			// an earlier version did not keep.
			owners, ownersErr := c.RunStore(nil).IndexOwners(ctx)
			err = errors.Join(err, ownersErr)
			var done []string
			if sealed > 0 || dropped > 0 {
				done = append(done, fmt.Sprintf("sealed %d store values and saved scripts an earlier version kept in clear, dropped %d keys of what search learned under words in clear", sealed, dropped))
			}
			if owners > 0 {
				done = append(done, fmt.Sprintf("listed %d principals with tasks for the operator console", owners))
			}
			return strings.Join(done, "; "), err
		},
		close: c.Close,
	}, nil
}
