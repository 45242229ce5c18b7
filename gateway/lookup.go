package gateway

import (
	"strings"

	"github.com/sandboxrt/sandbox/internal/fuzzy"
)

// lookup resolves "server:tool", a tool's upstream name after "server:", or
// a wire name.
func (g *Gateway) lookup(name string) (*Tool, *route, *Error) {
	snap := g.catalog.load()
	if t, ok := snap.byID[name]; ok {
		return t, g.upstreams[t.Server], nil
	}
	server, toolName, ok := SplitToolID(name)
	if !ok {
		if t, ok := snap.byWire[name]; ok {
			return t, g.upstreams[t.Server], nil
		}
		return nil, nil, newError(CodeUnknownTool, name, nil, map[string]any{"closest": g.closestTools(snap, "", name)},
			"%q is not a tool id; ids look like \"server:tool\"%s", name, suggest(g.closestTools(snap, "", name)))
	}
	u, ok := g.upstreams[NormalizeName(server)]
	if !ok {
		return nil, nil, newError(CodeServiceNotFound, name, nil, map[string]any{"servers": g.names},
			"there is no server %q; the servers are: %s", server, strings.Join(g.names, ", "))
	}
	if n, err := ValidateName(toolName); err == nil {
		if t, ok := snap.byID[ToolID(u.name, n)]; ok {
			return t, u, nil
		}
	}
	closest := g.closestTools(snap, u.name, toolName)
	if l := snap.servers[u.name]; l == nil || len(l.tools) == 0 {
		st := u.status()
		if st.State != StateReady {
			return nil, nil, g.unavailable(u, ToolID(u.name, toolName), nil)
		}
	}
	return nil, nil, newError(CodeUnknownTool, ToolID(u.name, toolName), nil, map[string]any{"closest": closest},
		"server %q has no tool %q%s", u.name, toolName, suggest(closest))
}

func suggest(names []string) string {
	if len(names) == 0 {
		return ""
	}
	return "; did you mean " + strings.Join(names, ", ") + "?"
}

// closestTools returns up to 3 tool ids nearest to name (edit distance on
// the tool part; substring matches first), from one server or all; never
// a tool the policy always denies, which a suggestion would only send the
// caller to in vain.
func (g *Gateway) closestTools(snap *catalogSnapshot, server, name string) []string {
	var keys, ids []string
	for _, t := range snap.tools {
		if (server == "" || t.Server == server) && !g.Denied(&t) {
			keys = append(keys, t.Name)
			ids = append(ids, t.ID)
		}
	}
	return fuzzy.Closest(NormalizeName(name), keys, ids, 3)
}
