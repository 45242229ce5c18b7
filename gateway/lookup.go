package gateway

import (
	"sort"
	"strings"
)

// lookup resolves "server:tool", a tool's upstream name after "server:", or
// a wire name.
func (g *Gateway) lookup(name string) (*Tool, *upstream, *Error) {
	snap := g.catalog.load()
	if t, ok := snap.byID[name]; ok {
		return t, g.upstreams[t.Server], nil
	}
	server, toolName, ok := SplitToolID(name)
	if !ok {
		if t, ok := snap.byWire[name]; ok {
			return t, g.upstreams[t.Server], nil
		}
		return nil, nil, newError(CodeUnknownTool, name, nil, map[string]any{"closest": closestTools(snap, "", name)},
			"%q is not a tool id; ids look like \"server:tool\"%s", name, suggest(closestTools(snap, "", name)))
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
	closest := closestTools(snap, u.name, toolName)
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
// the tool part; substring matches first), from one server or all.
func closestTools(snap *catalogSnapshot, server, name string) []string {
	want := NormalizeName(name)
	type cand struct {
		id   string
		dist int
	}
	var cands []cand
	for _, t := range snap.tools {
		if server != "" && t.Server != server {
			continue
		}
		d := editDistance(want, t.Name)
		if strings.Contains(t.Name, want) || strings.Contains(want, t.Name) {
			d = min(d, 1)
		}
		if d <= max(3, len(want)/2) {
			cands = append(cands, cand{t.ID, d})
		}
	}
	sort.Slice(cands, func(i, j int) bool {
		if cands[i].dist != cands[j].dist {
			return cands[i].dist < cands[j].dist
		}
		return cands[i].id < cands[j].id
	})
	out := []string{}
	for i := 0; i < len(cands) && i < 3; i++ {
		out = append(out, cands[i].id)
	}
	return out
}

func editDistance(a, b string) int {
	if len(a) > 128 || len(b) > 128 {
		return 1 << 20
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
