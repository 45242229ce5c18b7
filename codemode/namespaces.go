package codemode

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/gateway"
	"github.com/sandboxrt/sandbox/internal/fuzzy"
	"github.com/sandboxrt/sandbox/runtime"
	"github.com/sandboxrt/sandbox/typegen"
)

// Every server the caller may use is a namespace in the VM, whether or not
// the snippet names its tools and whether or not it is up; so is every other
// name the code uses as `name.member` that is no global (a misspelt
// namespace). Their members with no bound tool reach the host as
// runtime.NamespaceMember calls (runtime.Tool: open namespaces), resolved
// here: a tool of the catalog is called; a tool of a server that is down
// fails with UPSTREAM_UNAVAILABLE; anything else with UNKNOWN_TOOL naming up
// to 3 closest tools. A server outside the caller's scope is exactly an
// unknown namespace: the answer never says it exists.

// maxGuessedNamespaces bounds the names of the code opened as namespaces
// although no server has them.
const maxGuessedNamespaces = 16

// serverNamespaces maps the namespace of every configured server the
// caller's principal may use to the server's name.
func (e *Engine) serverNamespaces(st *catalogState, caller auth.Caller) map[string]string {
	out := map[string]string{}
	taken := map[string]bool{}
	for ns, server := range st.namespaces {
		taken[ns] = true
		if caller.Principal.MaySee(server) {
			out[ns] = server
		}
	}
	for _, s := range e.gw.Servers() {
		if !caller.Principal.MaySee(s.Name) || s.State == gateway.StateDisabled {
			continue
		}
		if ns := typegen.NamespaceOf(s.Name); !taken[ns] {
			taken[ns] = true
			out[ns] = s.Name
		}
	}
	return out
}

// openNamespaces is what a run opens: the caller's servers' namespaces, and
// up to maxGuessedNamespaces other names the code uses as `name.member`.
func (e *Engine) openNamespaces(st *catalogState, caller auth.Caller, code string) []runtime.Tool {
	servers := e.serverNamespaces(st, caller)
	names := make([]string, 0, len(servers))
	for ns := range servers {
		names = append(names, ns)
	}
	guessed := 0
	for m, free := range memberAccesses(code) {
		ns := m[0]
		if !free {
			continue // a member of something else, not a global
		}
		// Namespaces start lower-case (typegen's camelCase): a capitalised
		// name (Deno, Bun, Buffer, a global this runtime lacks) is left to
		// be the ReferenceError that feature detection expects.
		if _, ok := servers[ns]; ok || guessed == maxGuessedNamespaces || !typegen.ValidNamespace(ns) || ns[0] < 'a' || ns[0] > 'z' {
			continue
		}
		servers[ns] = ""
		names = append(names, ns)
		guessed++
	}
	sort.Strings(names)
	out := make([]runtime.Tool, len(names))
	for i, ns := range names {
		out[i] = runtime.Tool{Namespace: ns}
	}
	return out
}

// resolveMember turns a member of an open namespace into the id of the
// tool to call for caller, or the error the call fails with.
func (e *Engine) resolveMember(st *catalogState, caller auth.Caller, member runtime.Target, findTools, serverStatus string) (string, *runtime.ToolError) {
	ns, fn, ref := member.Namespace, member.Function, member.String()
	if b, ok := st.names.Resolve(ns, fn); ok && caller.Principal.MaySee(b.Server) {
		return b.ID, nil
	}
	server := e.serverNamespaces(st, caller)[ns]
	if server != "" {
		for _, s := range e.gw.Servers() {
			if s.Name == server && s.State != gateway.StateReady {
				msg := fmt.Sprintf("server %q is %s, so its tools are not available now", server, s.State)
				if s.Reason != "" {
					msg += " (" + s.Reason + ")"
				}
				switch {
				case s.NeedsOperator():
					msg += ": use other tools, or tell the user that the operator must fix this server"
				case s.NextRetry != nil:
					msg += fmt.Sprintf("; the gateway tries it again in %s: call again in a little while, or check %s", time.Until(*s.NextRetry).Round(100*time.Millisecond).String(), serverStatus)
				default:
					msg += "; the gateway reconnects on its own with backoff: call again in a little while, or check " + serverStatus
				}
				data, _ := json.Marshal(map[string]any{"server": server, "state": s.State, "restarts": s.Restarts, "failures": s.Failures, "nextRetry": s.NextRetry})
				return "", &runtime.ToolError{Code: string(gateway.CodeUpstreamUnavailable), Message: msg, Data: data}
			}
		}
	}
	closest := e.closestMembers(st, caller, ns, fn, server != "")
	msg := fmt.Sprintf("there is no tool %s", ref)
	switch {
	case server != "":
		msg = fmt.Sprintf("server %q has no tool %s", server, ref)
	case len(closest) == 0:
		msg += " (and no namespace " + ns + ")"
	}
	if len(closest) > 0 {
		msg += "; did you mean " + strings.Join(closest, ", ") + "?"
	} else {
		msg += "; find tools with " + findTools
	}
	data, _ := json.Marshal(map[string]any{"closest": closest})
	return "", &runtime.ToolError{Code: string(gateway.CodeUnknownTool), Message: msg, Data: data}
}

// closestMembers are up to 3 "namespace.function" names of tools the caller
// may use (not ones the policy always denies) nearest to ns.fn: within ns when it is a namespace of the
// caller's; otherwise (a misspelt namespace) within the namespaces nearest
// to ns, or every namespace when none is near. It looks at one namespace's
// tools at a time, so a miss costs what a namespace holds, not the catalog.
func (e *Engine) closestMembers(st *catalogState, caller auth.Caller, ns, fn string, withinNamespace bool) []string {
	namespaces := []string{ns}
	if !withinNamespace {
		var keys []string
		for n, server := range st.namespaces {
			if caller.Principal.MaySee(server) {
				keys = append(keys, n)
			}
		}
		sort.Strings(keys)
		lower := make([]string, len(keys))
		for i, k := range keys {
			lower[i] = strings.ToLower(k)
		}
		if namespaces = fuzzy.Closest(strings.ToLower(ns), lower, keys, 3); len(namespaces) == 0 {
			namespaces = keys
		}
	}
	var keys, values []string
	for _, n := range namespaces {
		for _, b := range st.members[n] {
			if caller.Principal.MaySee(b.Server) && !st.denied[b.ID] {
				keys = append(keys, strings.ToLower(b.Function))
				values = append(values, b.Namespace+"."+b.Function)
			}
		}
	}
	return fuzzy.Closest(strings.ToLower(fn), keys, values, 3)
}

// unknownToolError is Execute's error for an ExecuteRequest.Tools entry
// (execute_code's `tools`) that names no tool the caller may use.
func (e *Engine) unknownToolError(st *catalogState, caller auth.Caller, name string) *gateway.Error {
	want := name
	if server, tool, ok := strings.Cut(name, ":"); ok {
		want = typegen.NamespaceOf(server) + "." + tool
	}
	ns, fn, _ := strings.Cut(want, ".")
	closest := e.closestMembers(st, caller, ns, fn, false)
	msg := fmt.Sprintf("execute_code's tools names %q, which is no tool you may use; name tools as the declarations do (\"server.toolName\") or by id (\"server:tool\")", name)
	if len(closest) > 0 {
		msg += "; did you mean " + strings.Join(closest, ", ") + "?"
	}
	data, _ := json.Marshal(map[string]any{"closest": closest})
	return &gateway.Error{Code: gateway.CodeUnknownTool, Tool: runOperation, Message: msg, Data: data}
}
