package codemode

import (
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
	left      int
	delivered int
}

// take reserves n bytes; false when they do not fit.
func (b *runBudget) take(n int) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if n > b.left {
		return false
	}
	b.left -= n
	b.delivered += n
	return true
}

// callService answers one call to the sandbox global.
func (e *Engine) callService(ctx context.Context, call runtime.ToolCall, budget *runBudget) (json.RawMessage, error) {
	method := call.Target.Method
	switch call.Target.Service {
	case "results":
		return e.readResult(call, method, budget)
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
	scope, err := storeScope(call.Caller, in.Scope)
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

// storeScope is where a caller's values live: its session's by default,
// the principal's with scope "principal" (a caller without a session, such
// as `sandbox run`, has only those).
func storeScope(c auth.Caller, scope string) (StoreScope, error) {
	s := StoreScope{Principal: c.Principal.Key()}
	switch scope {
	case "", "session":
		s.Session = string(c.Session)
	case "principal":
	default:
		return s, fmt.Errorf("scope %q is neither \"session\" nor \"principal\"", scope)
	}
	return s, nil
}

func storeFailed(err error) error {
	return &runtime.ToolError{Code: string(gateway.CodeInternal), Message: "sandbox.store is unavailable: " + err.Error() + "; try again later"}
}

// readResult answers sandbox.results.read and sandbox.results.json.
func (e *Engine) readResult(call runtime.ToolCall, method string, budget *runBudget) (json.RawMessage, error) {
	usage := map[string]string{
		"read": "sandbox.results.read(handle, { offset?, length? })",
		"json": "sandbox.results.json(handle, path?)",
	}[method]
	bad := func(format string, a ...any) error {
		return &runtime.ToolError{Code: string(gateway.CodeValidationFailed), Message: fmt.Sprintf("sandbox.results.%s: %s; call it as %s", method, fmt.Sprintf(format, a...), usage)}
	}
	var in struct {
		Handle string `json:"handle"`
		Offset *int   `json:"offset"`
		Length *int   `json:"length"`
		Path   string `json:"path"`
	}
	dec := json.NewDecoder(strings.NewReader(string(call.Arguments)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return nil, bad("%v", err)
	}
	r, ok := e.results.get(call.Caller, in.Handle)
	if !ok {
		return nil, bad("no result %q: a handle is the \"handle\" of the object a tool call gave instead of a result too large to hand over; results are kept for %v after their last read", in.Handle, resultTTL)
	}
	switch method {
	case "read":
		offset, length := 0, resultReadMax
		if in.Offset != nil {
			offset = *in.Offset
		}
		if in.Length != nil {
			length = *in.Length
		}
		if offset < 0 || offset > len(r.data) || length <= 0 {
			return nil, bad("offset must be between 0 and %d (the result's bytes) and length positive", len(r.data))
		}
		length = min(length, resultReadMax, len(r.data)-offset)
		text := r.data[offset : offset+length]
		out, err := json.Marshal(strings.ToValidUTF8(string(text), "\uFFFD"))
		if err != nil {
			return nil, err
		}
		if !budget.take(len(out)) {
			return nil, &runtime.ToolError{Code: string(gateway.CodeResultTooLarge), Message: fmt.Sprintf("sandbox.results.read: this run has received all the tool results it may (%d bytes); read less at a time, or continue in another run", budget.delivered)}
		}
		return out, nil
	default: // json
		part, err := jsonAt(r.data, in.Path)
		if err != nil {
			return nil, bad("%v", err)
		}
		if budget.take(len(part)) {
			return part, nil
		}
		return e.results.hold(call.Caller, r.tool, append([]byte(nil), part...))
	}
}
