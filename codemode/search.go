package codemode

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/typegen"
	"github.com/sandboxrt/sandbox/vectorindex"
)

// SearchResult is what an agent reads after stating an intent.
type SearchResult struct {
	// Tools are the hits, best first.
	Tools []FoundTool `json:"tools"`
	// Declarations is the .d.ts of exactly those tools, with the shared
	// preamble (ToolResult, MCPToolError): what the agent codes against.
	Declarations string `json:"declarations"`
	// Shown and Total: "Shown of Total tools".
	Shown int `json:"shown"`
	Total int `json:"total"`
	// Note says how much of the catalog is shown and how to see more.
	Note string `json:"note"`
}

// FoundTool is one search hit.
type FoundTool struct {
	ID    string  `json:"id"`   // "server:tool"
	Call  string  `json:"call"` // "namespace.function", how the snippet calls it
	Score float64 `json:"score"`
}

// SearchRequest is one search for tools.
type SearchRequest struct {
	// Intent is the task in plain words.
	Intent string
	// K is how many tools to show (<= 0: Options.K).
	K int
	// Caller is who searches: only tools of servers the caller may see are
	// shown (a session's narrowing applies).
	Caller auth.Caller
}

// Search finds the K tools most relevant to the intent, among those the
// caller may see, and generates their declarations.
func (e *Engine) Search(ctx context.Context, req SearchRequest) (*SearchResult, error) {
	intent, k := req.Intent, req.K
	if strings.TrimSpace(intent) == "" {
		return nil, ErrNoIntent
	}
	if k <= 0 {
		k = e.opts.K
	}
	st := e.state.Load()
	hits, visible, err := e.searchVisible(ctx, st, req.Caller, intent, k)
	if errors.Is(err, vectorindex.ErrEmptyIntent) {
		return nil, ErrNoIntent
	}
	if err != nil {
		return nil, err
	}
	res := &SearchResult{Total: visible}
	subset := make([]typegen.Tool, 0, len(hits))
	for _, h := range hits {
		i, ok := st.byID[h.ID]
		if !ok {
			continue // indexed but gone from the catalog a moment ago
		}
		b, ok := st.names.Lookup(h.ID)
		if !ok {
			continue
		}
		subset = append(subset, st.tools[i])
		res.Tools = append(res.Tools, FoundTool{ID: h.ID, Call: b.Namespace + "." + b.Function, Score: h.Score})
	}
	res.Shown = len(res.Tools)
	out, err := typegen.Generate(subset, typegen.Options{Names: st.names, Cache: e.types})
	if err != nil {
		return nil, fmt.Errorf("codemode: generating declarations: %w", err)
	}
	res.Declarations = out.DTS
	res.Note = fmt.Sprintf("%d of %d tools shown. Call them exactly as declared (e.g. `await %s({...})`) in execute_code; "+
		"search again with other words to see different tools.", res.Shown, res.Total, firstCall(res.Tools))
	return res, nil
}

func firstCall(tools []FoundTool) string {
	if len(tools) == 0 {
		return "server.tool"
	}
	return tools[0].Call
}

// searchVisible is the top k hits among the tools the caller may see, and
// how many tools it may see. A caller who sees every server gets the index's
// own top k; one who sees fewer gets the whole ranking filtered (the index
// ranks a few hundred tools in about a millisecond).
func (e *Engine) searchVisible(ctx context.Context, st *catalogState, caller auth.Caller, intent string, k int) ([]vectorindex.Hit, int, error) {
	sees := map[string]bool{}
	visible := 0
	for _, t := range st.tools {
		ok, known := sees[t.Server]
		if !known {
			ok = e.gw.Sees(caller, t.Server)
			sees[t.Server] = ok
		}
		if ok {
			visible++
		}
	}
	if visible == len(st.tools) {
		hits, err := e.search(ctx, st, intent, k)
		return hits, visible, err
	}
	all, err := e.search(ctx, st, intent, len(st.tools))
	if err != nil {
		return nil, visible, err
	}
	hits := make([]vectorindex.Hit, 0, k)
	for _, h := range all {
		if i, ok := st.byID[h.ID]; ok && sees[st.tools[i].Server] && len(hits) < k {
			hits = append(hits, h)
		}
	}
	return hits, visible, nil
}
