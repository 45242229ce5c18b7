package gateway

import (
	"strings"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/internal/fuzzy"
)

// lookup resolves "server:tool", a tool's upstream name after "server:", or
// a wire name, for a caller: a server its principal may not use does not
// exist for it (auth.Principal.MaySee), so a tool of one is answered as a
// tool of no server, and neither errors nor suggestions name one.
func (g *Gateway) lookup(caller auth.Caller, name string) (*Tool, *route, *Error) {
	snap := g.catalog.load()
	may := caller.Principal.MaySee
	if t, ok := snap.byID[name]; ok && may(t.Server) {
		return t, g.upstreams[t.Server], nil
	}
	server, toolName, ok := SplitToolID(name)
	if !ok {
		if t, ok := snap.byWire[name]; ok && may(t.Server) {
			return t, g.upstreams[t.Server], nil
		}
		closest := g.closestTools(snap, caller, "", name)
		return nil, nil, newError(CodeUnknownTool, name, nil, map[string]any{"closest": closest},
			"%q is not a tool id; ids look like \"server:tool\"%s", name, suggest(closest))
	}
	u, ok := g.upstreams[NormalizeName(server)]
	if !ok || !may(u.name) {
		return nil, nil, g.noServer(caller, name, server)
	}
	if n, err := ValidateName(toolName); err == nil {
		if t, ok := snap.byID[ToolID(u.name, n)]; ok {
			return t, u, nil
		}
	}
	closest := g.closestTools(snap, caller, u.name, toolName)
	if l := snap.servers[u.name]; l == nil || len(l.tools) == 0 {
		st := u.status()
		if st.State != StateReady {
			return nil, nil, g.unavailable(u, ToolID(u.name, toolName), nil)
		}
	}
	return nil, nil, newError(CodeUnknownTool, ToolID(u.name, toolName), nil, map[string]any{"closest": closest},
		"server %q has no tool %q%s", u.name, toolName, suggest(closest))
}

// noServer is SERVICE_NOT_FOUND for a server that does not exist for the
// caller: none of that name, or one its principal may not use. The two
// read alike, and list only the servers it may use.
func (g *Gateway) noServer(caller auth.Caller, toolID, server string) *Error {
	servers := []string{}
	for _, n := range g.names {
		if caller.Principal.MaySee(n) {
			servers = append(servers, n)
		}
	}
	return newError(CodeServiceNotFound, toolID, nil, map[string]any{"servers": servers},
		"there is no server %q; the servers are: %s", truncate(server, 100), strings.Join(servers, ", "))
}

func suggest(names []string) string {
	if len(names) == 0 {
		return ""
	}
	return "; did you mean " + strings.Join(names, ", ") + "?"
}

// closestTools returns up to 3 tool ids nearest to name (edit distance on
// the tool part; substring matches first), from one server or all those
// the caller's principal may use; never a tool the policy always denies,
// which a suggestion would only send the caller to in vain.
func (g *Gateway) closestTools(snap *catalogSnapshot, caller auth.Caller, server, name string) []string {
	var keys, ids []string
	for _, t := range snap.tools {
		if (server == "" || t.Server == server) && caller.Principal.MaySee(t.Server) && !g.Denied(&t) {
			keys = append(keys, t.Name)
			ids = append(ids, t.ID)
		}
	}
	return fuzzy.Closest(NormalizeName(name), keys, ids, 3)
}
