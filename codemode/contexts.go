package codemode

// Context handles: state without sessions. A 2026-07-28 request has no
// session, so what lives in a session (sandbox.store's session scope, and
// for the anonymous principal the results a run holds) needs an explicit,
// server-minted handle instead ("servers that need cross-call state use
// explicit, server-minted handles"). execute_code mints one when asked
// (argument "context": "new"), returns it (result field "context") and
// takes it back as its "context" argument; the runs that pass it share that state as the runs of one
// session do. A handle is the server's MAC of a random id and the
// principal it was minted for, so it is not guessed, not made up by a
// client, and not another principal's: each is refused.

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"

	"github.com/sandboxrt/sandbox/auth"
)

// contextPrefix starts every handle, so one is told from other strings.
const contextPrefix = "ctx_"

// contextKeyBytes is the size of the MAC key and what a handle keeps of
// the MAC.
const (
	contextKeyBytes = 32
	contextMACBytes = 16
	contextIDBytes  = 16
)

// contextMACKey is Options.ContextKey, or a key of this process's own.
func contextMACKey(configured string) []byte {
	if configured != "" {
		return []byte(configured)
	}
	k := make([]byte, contextKeyBytes)
	if _, err := rand.Read(k); err != nil {
		panic(err) // crypto/rand does not fail on supported systems
	}
	return k
}

func (e *Engine) contextMAC(principal string, id []byte) []byte {
	m := hmac.New(sha256.New, e.contextKey)
	m.Write([]byte("sandbox context handle v1\x00"))
	m.Write([]byte(principal))
	m.Write([]byte{0})
	m.Write(id)
	return m.Sum(nil)[:contextMACBytes]
}

// MintContext makes a context handle for principal (auth.Principal.Key).
func (e *Engine) MintContext(principal string) string {
	id := make([]byte, contextIDBytes)
	if _, err := rand.Read(id); err != nil {
		panic(err) // crypto/rand does not fail on supported systems
	}
	raw := append(id, e.contextMAC(principal, id)...)
	return contextPrefix + base64.RawURLEncoding.EncodeToString(raw)
}

// OpenContext checks that handle was minted here for principal, and
// returns the id its state lives under; false for anything else (a handle
// made up, damaged, or minted for another principal).
func (e *Engine) OpenContext(principal, handle string) (string, bool) {
	rest, ok := strings.CutPrefix(handle, contextPrefix)
	if !ok {
		return "", false
	}
	raw, err := base64.RawURLEncoding.DecodeString(rest)
	if err != nil || len(raw) != contextIDBytes+contextMACBytes {
		return "", false
	}
	id, mac := raw[:contextIDBytes], raw[contextIDBytes:]
	if !hmac.Equal(mac, e.contextMAC(principal, id)) {
		return "", false
	}
	return base64.RawURLEncoding.EncodeToString(id), true
}

type stateContextKey struct{}

// withStateContext makes the runs under ctx (a saved script's included)
// keep their session state under the context id.
func withStateContext(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, stateContextKey{}, id)
}

// stateContextOf is the context id of the run under ctx, "" for none.
func stateContextOf(ctx context.Context) string {
	id, _ := ctx.Value(stateContextKey{}).(string)
	return id
}

// contextSession is the session name a context's state lives under: no
// session id of a transport starts with it.
func contextSession(id string) string { return "context:" + id }

// openContextArg reads execute_code's "context" argument: "" (none), "new"
// (mint one), or a handle minted for the caller's principal. It returns
// the handle to put in the result and ctx carrying the context's id.
func (e *Engine) openContextArg(ctx context.Context, caller auth.Caller, arg string) (string, context.Context, error) {
	if arg == "" {
		return "", ctx, nil
	}
	if caller.HasSession() {
		return "", ctx, badInput(ExecuteToolName, "context is for requests without a session (protocol 2026-07-28); this request has a session, which keeps its runs' state already: leave context out")
	}
	principal := caller.Principal.Key()
	handle := arg
	if arg == "new" {
		handle = e.MintContext(principal)
	}
	id, ok := e.OpenContext(principal, handle)
	if !ok {
		return "", ctx, badInput(ExecuteToolName, "context %q is not a context this server made for you: pass \"new\" for a fresh one, or the \"context\" an earlier result of yours returned", truncateRunes(arg, 80))
	}
	return handle, withStateContext(ctx, id), nil
}

// withContextField puts "context" first in a report (a JSON object).
func withContextField(report []byte, handle string) []byte {
	q, _ := json.Marshal(handle)
	out := make([]byte, 0, len(report)+len(q)+12)
	out = append(out, `{"context":`...)
	out = append(out, q...)
	out = append(out, ',')
	return append(out, report[1:]...)
}
