package codemode

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/errcode"
	"github.com/sandboxrt/sandbox/gateway"
	"github.com/sandboxrt/sandbox/runtime"
)

// Whose state a call reads and writes. A principal's saved scripts, its
// principal-scope sandbox.store values and its held results are keyed by
// auth.Principal.Key(), and every session of the principal shares them.
//
// auth.Anonymous() is different: it is every client of a `sandbox serve`
// without gateway.auth at once (on loopback, or behind a proxy with
// --allow-unauthenticated), so keying state by it would hand one client's
// values, scripts and results to every other. It holds nothing
// principal-wide:
//
//   - what only makes sense across sessions (saved scripts, the store's
//     "principal" scope) is refused with AUTH_REQUIRED, whose message says
//     that the operator configures gateway.auth to have it;
//   - what lives with a session (the store's default scope) is that
//     session's, as for everyone, and a request without a session
//     (2026-07-28) has no store at all;
//   - a held result is its session's, or, for a request without a session
//     (2026-07-28), the run's that made it: nothing links a stateless
//     request to the next one.
//
// The operator (stdio, `sandbox run`) and every authenticated principal are
// unaffected.

// The parts of every refusal of principal-wide state to the anonymous
// principal: why, and who can change it.
const (
	notAuthenticated = "this server does not authenticate its callers (no gateway.auth in its configuration)"
	configureAuth    = "ask the operator to configure gateway.auth (an API key for each user)"
)

// anonymousRefusal is the AUTH_REQUIRED error of principal-wide state a
// caller nobody authenticated asked for.
func anonymousRefusal(format string, a ...any) *runtime.ToolError {
	return &runtime.ToolError{Code: string(errcode.AuthRequired), Message: fmt.Sprintf(format, a...)}
}

// errScriptsNeedPrincipal refuses saved scripts to a caller nobody
// authenticated (save_script, its check, delete_script).
func errScriptsNeedPrincipal() error {
	return &gateway.Error{Code: gateway.CodeAuthRequired, Data: json.RawMessage(`{}`), Message: fmt.Sprintf(
		"saved scripts are kept for one authenticated caller across sessions, and %s, so every client would share them: send the code with execute_code instead, or %s to save scripts",
		notAuthenticated, configureAuth)}
}

// resultOwner is whose a result held for caller's run is: its principal's,
// or, for the anonymous principal, its session's, or without a session its
// context handle's (contexts.go), or without either the
// run's (rootRun: the top-level run, whose saved scripts' handles it reads).
// The keys of the anonymous cases have no '/', which the key of every
// principal but the operator and the anonymous one has (after its tenant),
// and a '#' neither of those has: they are no principal's.
func resultOwner(c auth.Caller, rootRun, stateContext string) string {
	switch {
	case !c.Principal.IsAnonymous():
		return c.Principal.Key()
	case c.HasSession():
		return c.Principal.Key() + "#session:" + string(c.Session)
	case stateContext != "":
		return c.Principal.Key() + "#" + contextSession(stateContext)
	default:
		return c.Principal.Key() + "#run:" + rootRun
	}
}

// rootRunKey carries, into a saved script's nested run, the top-level run
// it is part of (resultOwner).
type rootRunKey struct{}

// rootRunOf is the top-level run of a run started with ctx: the one
// callScript put in ctx, or run itself.
func rootRunOf(ctx context.Context, run string) string {
	if root, ok := ctx.Value(rootRunKey{}).(string); ok {
		return root
	}
	return run
}

// callerScripts are the saved scripts caller may call, sorted by name:
// ScriptStore.Visible for its principal, or, for the anonymous principal,
// the shared ones only (a script saved under it before it held nothing is
// the operator's to look at with `sandbox scripts`, no caller's to run).
func (e *Engine) callerScripts(ctx context.Context, c auth.Caller) ([]Script, error) {
	if !c.Principal.IsAnonymous() {
		return e.scripts.Visible(ctx, c.Principal.Key())
	}
	all, err := e.scripts.Visible(ctx, "") // nobody's own: the shared ones
	shared := all[:0]
	for _, s := range all {
		if s.Shared {
			shared = append(shared, s)
		}
	}
	return shared, err
}
