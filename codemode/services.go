package codemode

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/errcode"
	"github.com/sandboxrt/sandbox/gateway"
	"github.com/sandboxrt/sandbox/runtime"
)

// The snippet's sandbox global (runtime.Request.Services): the calls of
// sandbox.store.* reach the engine's Host as runtime.ServiceMethod calls
// (traced as "sandbox:store.get"), and are answered here, as the run's
// caller, never by an upstream.

// CodeStoreLimit is the MCPToolError code of a sandbox.store.set refused by
// a limit (StoreLimits).
const CodeStoreLimit = string(errcode.StoreLimit)

// servicesFor lists the sandbox families a run gets: only when its code
// names the global, so that other runs pay nothing for it.
func (e *Engine) servicesFor(code string) []string {
	if !strings.Contains(code, "sandbox") {
		return nil
	}
	return []string{"store", "results"}
}

// runBudget counts the bytes of tool results a run has received whole.
type runBudget struct {
	mu        sync.Mutex
	left      int64
	delivered int64
}

// take reserves n bytes; false when they do not fit.
func (b *runBudget) take(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if n > b.left {
		return false
	}
	b.left -= n
	b.delivered += n
	return true
}

// callService answers one call to the sandbox global; owner is whose held
// results the run reads (resultOwner).
func (e *Engine) callService(ctx context.Context, call runtime.ToolCall, budget *runBudget, owner string) (json.RawMessage, error) {
	method := call.Target.Method
	switch call.Target.Service {
	case "results":
		return e.readResult(ctx, call, method, budget, owner)
	case "store":
	default:
		return nil, &runtime.ToolError{Code: string(gateway.CodeUnknownTool), Message: fmt.Sprintf("%s is not a sandbox service", call.Target)}
	}
	usage := map[string]string{
		"get":    `sandbox.store.get(key, { scope?: "session" | "principal" })`,
		"set":    `sandbox.store.set(key, value, { ttlSeconds?, scope? })`,
		"delete": `sandbox.store.delete(key, { scope? })`,
		"keys":   `sandbox.store.keys(prefix?, { scope? })`,
	}[method]
	bad := func(format string, a ...any) error {
		return &runtime.ToolError{Code: string(gateway.CodeValidationFailed), Message: fmt.Sprintf("sandbox.store.%s: %s; call it as %s", method, fmt.Sprintf(format, a...), usage)}
	}
	var in struct {
		Key        *string         `json:"key"`
		Value      json.RawMessage `json:"value"`
		TTLSeconds *float64        `json:"ttlSeconds"`
		Scope      string          `json:"scope"`
		Prefix     *string         `json:"prefix"`
	}
	dec := json.NewDecoder(strings.NewReader(string(call.Arguments)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return nil, bad("%v", err)
	}
	scope, err := storeScope(call.Caller, in.Scope, stateContextOf(ctx))
	var refused *runtime.ToolError
	if errors.As(err, &refused) {
		refused.Message = "sandbox.store." + method + ": " + refused.Message
		return nil, refused
	}
	if err != nil {
		return nil, bad("%v", err)
	}
	if method != "keys" {
		if in.Key == nil {
			return nil, bad("the key is missing (a string)")
		}
		if why := ValidStoreKey(*in.Key); why != "" {
			return nil, bad("%s", why)
		}
	}
	switch method {
	case "get":
		v, ok, err := e.store.Get(ctx, scope, *in.Key)
		if err != nil {
			return nil, storeFailed(err)
		}
		if !ok {
			return json.RawMessage("null"), nil
		}
		return v, nil
	case "set":
		if len(in.Value) == 0 {
			return nil, bad("the value is missing; store any JSON value (null included)")
		}
		var ttl time.Duration
		if in.TTLSeconds != nil {
			if *in.TTLSeconds <= 0 || *in.TTLSeconds > 10*365*24*3600 {
				return nil, bad("ttlSeconds must be a positive number of seconds (at most ten years)")
			}
			ttl = time.Duration(*in.TTLSeconds * float64(time.Second))
		} else if scope.Session != "" {
			ttl = SessionValueTTL
		}
		if err := e.store.Set(ctx, scope, *in.Key, in.Value, ttl); err != nil {
			var limit *StoreLimitError
			if errors.As(err, &limit) {
				return nil, &runtime.ToolError{Code: CodeStoreLimit, Message: "sandbox.store.set: " + limit.Message}
			}
			return nil, storeFailed(err)
		}
		return json.RawMessage("null"), nil
	case "delete":
		deleted, err := e.store.Delete(ctx, scope, *in.Key)
		if err != nil {
			return nil, storeFailed(err)
		}
		return json.Marshal(deleted)
	case "keys":
		prefix := ""
		if in.Prefix != nil {
			prefix = *in.Prefix
		}
		keys, err := e.store.Keys(ctx, scope, prefix)
		if err != nil {
			return nil, storeFailed(err)
		}
		return json.Marshal(keys)
	}
	return nil, bad("no such method")
}

// storeScope is where a caller's values live: its session's by default
// (a run without a session given a context handle: the context's,
// contexts.go), the principal's with scope "principal" (a caller with
// neither, such as `sandbox run`, has only those). The anonymous principal has no
// principal scope and, without a session, no scope at all (owners.go): an
// AUTH_REQUIRED *runtime.ToolError says so.
func storeScope(c auth.Caller, scope, stateContext string) (StoreScope, error) {
	s := StoreScope{Principal: c.Principal.Key()}
	switch scope {
	case "", "session":
		s.Session = string(c.Session)
		if s.Session == "" && stateContext != "" {
			s.Session = contextSession(stateContext)
		}
	case "principal":
	default:
		return s, fmt.Errorf("scope %q is neither \"session\" nor \"principal\"", scope)
	}
	switch {
	case !c.Principal.IsAnonymous():
	case scope == "principal":
		return s, anonymousRefusal(`scope "principal" keeps values across sessions for one authenticated caller, and %s, so every client would share them: `+
			"leave scope out to keep values in this session, or %s to keep them across sessions", notAuthenticated, configureAuth)
	case s.Session == "":
		return s, anonymousRefusal("this request has no session (a stateless 2026-07-28 request) and no context handle, and %s, so nothing tells its values from every other client's: "+
			"call execute_code with \"context\": \"new\" and pass the \"context\" its result returns to later runs, open a session (protocol 2025-11-25), or %s", notAuthenticated, configureAuth)
	}
	return s, nil
}

func storeFailed(err error) error {
	return &runtime.ToolError{Code: string(gateway.CodeInternal), Message: "sandbox.store is unavailable: " + err.Error() + "; try again later"}
}

// resultsUsage is how each sandbox.results method is called, for the
// errors of a bad call.
var resultsUsage = map[string]string{
	"json":  "sandbox.results.json(handle, path?)",
	"read":  "sandbox.results.read(handle, { path?, offset?, length? })",
	"lines": "sandbox.results.lines(handle, { path?, from?, count? })",
}

// readResult answers sandbox.results.json, read and lines from the results
// held for owner.
func (e *Engine) readResult(ctx context.Context, call runtime.ToolCall, method string, budget *runBudget, owner string) (json.RawMessage, error) {
	bad := func(format string, a ...any) error {
		return &runtime.ToolError{Code: string(gateway.CodeValidationFailed), Message: fmt.Sprintf("sandbox.results.%s: %s; call it as %s", method, fmt.Sprintf(format, a...), resultsUsage[method])}
	}
	var in struct {
		Handle string `json:"handle"`
		Path   string `json:"path"`
		Offset *int64 `json:"offset"`
		Length *int64 `json:"length"`
		From   *int   `json:"from"`
		Count  *int   `json:"count"`
	}
	dec := json.NewDecoder(strings.NewReader(string(call.Arguments)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return nil, bad("%v", err)
	}
	if _, ok := resultsUsage[method]; !ok {
		return nil, bad("no such method")
	}
	held, ok, err := e.results.store.Get(ctx, owner, in.Handle)
	if err != nil {
		return nil, resultsFailed(err)
	}
	if !ok {
		return nil, bad("%v", errNotHeld(in.Handle, e.resultLimits()))
	}
	p, err := e.results.locate(ctx, held, in.Path, false)
	if errors.Is(err, ErrResultNotHeld) {
		return nil, bad("%v", errNotHeld(in.Handle, e.resultLimits()))
	}
	var ask *askError
	if errors.As(err, &ask) {
		return nil, bad("%v", err)
	}
	if err != nil {
		return nil, resultsFailed(err)
	}
	var out json.RawMessage
	switch method {
	case "json":
		if !budget.take(p.size()) {
			// Still too large: a handle to the part.
			h, err := e.results.holdPart(ctx, owner, held, p)
			if err != nil {
				return nil, holdFailed(err)
			}
			return h, nil
		}
		part, err := e.results.readPart(ctx, held, p)
		if err != nil {
			return nil, resultsFailed(err)
		}
		part = bytes.ToValidUTF8(part, []byte("\uFFFD"))
		if !json.Valid(part) && p.entered {
			// Text that looked like JSON and is not: the text itself.
			if p, err = e.results.locate(ctx, held, in.Path, true); err == nil {
				if part, err = e.results.readPart(ctx, held, p); err == nil {
					part = bytes.ToValidUTF8(part, []byte("\uFFFD"))
				}
			}
			if err != nil {
				return nil, resultsFailed(err)
			}
		}
		if !json.Valid(part) {
			return nil, bad("the value at %q is not valid JSON; read it as text with sandbox.results.read(handle, {path})", in.Path)
		}
		return part, nil
	case "read":
		offset, length := int64(0), int64(resultReadMax)
		if in.Offset != nil {
			offset = *in.Offset
		}
		if in.Length != nil {
			length = *in.Length
		}
		if offset < 0 || length <= 0 {
			return nil, bad("offset must be 0 or more and length more than 0 (at most %d bytes are read at once)", resultReadMax)
		}
		text, err := e.results.readText(ctx, held, p, offset, length)
		if err != nil {
			return nil, resultsFailed(err)
		}
		out, err = json.Marshal(text)
		if err != nil {
			return nil, err
		}
	case "lines":
		from, count := 0, 1000
		if in.From != nil {
			from = *in.From
		}
		if in.Count != nil {
			count = *in.Count
		}
		if from < 0 || count <= 0 {
			return nil, bad("from (the first line, 0 the first of all) must be 0 or more and count more than 0 (at most %d lines at once)", resultLinesMax)
		}
		lines, err := e.results.readLines(ctx, held, p, from, count)
		if errors.As(err, &ask) && ask.tooLong {
			return nil, &runtime.ToolError{Code: string(gateway.CodeResultTooLarge), Message: "sandbox.results.lines: " + ask.msg}
		}
		if errors.As(err, &ask) {
			return nil, bad("%v", err)
		}
		if err != nil {
			return nil, resultsFailed(err)
		}
		out, err = json.Marshal(lines)
		if err != nil {
			return nil, err
		}
	}
	if !budget.take(int64(len(out))) {
		return nil, &runtime.ToolError{Code: string(gateway.CodeResultTooLarge), Message: fmt.Sprintf("sandbox.results.%s: this run has received all the tool results it may (%d bytes); read less at a time, or continue in another run", method, budget.delivered)}
	}
	return out, nil
}

// resultsFailed is a store that could not be read.
func resultsFailed(err error) error {
	return &runtime.ToolError{Code: string(gateway.CodeInternal), Message: "sandbox.results could not read the result: " + err.Error() + "; try again later"}
}

// holdFailed is a result the store would not keep: a limit (what to do is
// in its message), or the store failing.
func holdFailed(err error) error {
	var limit *ResultLimitError
	if errors.As(err, &limit) {
		return &runtime.ToolError{Code: string(gateway.CodeResultTooLarge), Message: limit.Message}
	}
	return &runtime.ToolError{Code: string(gateway.CodeInternal), Message: "the sandbox could not keep a result too large to hand over whole: " + err.Error() + "; try again later"}
}
