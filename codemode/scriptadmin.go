package codemode

import (
	"context"
	"time"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/gateway"
)

// What an operator does to saved scripts of any principal (the operator
// console; `sandbox scripts` works on the store directly, from outside a
// running serve). Each is audited as the operator's act, naming the
// script as owner + "/" + name, and tells OnScriptsChanged's watchers so
// the sessions' tool lists follow.

// Scripts lists every principal's saved scripts, sorted by owner and name.
func (e *Engine) Scripts(ctx context.Context) ([]Script, error) { return e.scripts.All(ctx) }

// ShareScript makes owner's script every principal's to call (shared), or
// its owner's alone again; by is the operator who did it.
func (e *Engine) ShareScript(ctx context.Context, by auth.Caller, owner, name string, shared bool) error {
	start := time.Now()
	err := e.scripts.Share(ctx, owner, name, shared)
	op := "share_script"
	if !shared {
		op = "unshare_script"
	}
	outcome := "OK"
	switch {
	case err != nil && !e.hasScript(ctx, owner, name):
		outcome = string(gateway.CodeNotFound)
	case err != nil:
		outcome = string(gateway.CodeInternal)
	default:
		e.scriptsChanged("") // every principal's callable scripts changed
	}
	e.auditScript(by, op, owner+"/"+name, "", start, outcome)
	return err
}

// RemoveScript deletes owner's script; false when owner has none of that
// name. by is the operator who did it.
func (e *Engine) RemoveScript(ctx context.Context, by auth.Caller, owner, name string) (bool, error) {
	return e.deleteScript(ctx, by, owner, name, owner+"/"+name, time.Now())
}

// hasScript reports whether owner has a script of that name (false when
// the store cannot tell).
func (e *Engine) hasScript(ctx context.Context, owner, name string) bool {
	all, err := e.scripts.All(ctx)
	if err != nil {
		return false
	}
	for _, s := range all {
		if s.Owner == owner && s.Name == name {
			return true
		}
	}
	return false
}
