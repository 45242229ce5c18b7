package codemode

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/gateway"
	"github.com/sandboxrt/sandbox/typegen"
	"github.com/sandboxrt/sandbox/vectorindex"
)

// SearchResult is what an agent reads after stating an intent.
type SearchResult struct {
	// Tools are the hits, best first (a deprecated tool after the others).
	Tools []FoundTool `json:"tools"`
	// Declarations is the .d.ts of exactly those tools, with the shared
	// preamble (ToolResult, MCPToolError): what the agent codes against.
	Declarations string `json:"declarations"`
	// Shown and Total: "Shown of Total tools".
	Shown int `json:"shown"`
	Total int `json:"total"`
	// Note says how much of the catalog is shown and how to see more; when
	// Weak, also that nothing matched the task's words.
	Note string `json:"note"`
	// Weak: no word of the task is in the best hit's name or description,
	// or only words its server repeats in most of its tools ("works" in
	// "Only works within allowed directories": vectorindex.Hit.Weak), so the
	// hits are the index's nearest guesses, not matches.
	Weak bool `json:"weak,omitempty"`
	// Servers is the roster of the servers the caller may use.
	Servers []ServerEntry `json:"servers"`
}

// FoundTool is one search hit.
type FoundTool struct {
	ID    string  `json:"id"`   // "server:tool"
	Call  string  `json:"call"` // "namespace.function", how the snippet calls it
	Score float64 `json:"score"`
	// Why is one line: the task's words the tool's name or description
	// has, or that it is a semantic guess; and whether it is deprecated.
	Why        string `json:"why"`
	Deprecated bool   `json:"deprecated,omitempty"`
}

// ServerEntry is one server of the roster: whether it is up, how many tools
// it has, and what it says about itself.
type ServerEntry struct {
	Name         string `json:"name"`
	Namespace    string `json:"namespace"`
	State        string `json:"state"`
	Tools        int    `json:"tools"`
	Instructions string `json:"instructions,omitempty"`
}

// SearchRequest is one search for tools.
type SearchRequest struct {
	// Intent is the task in plain words.
	Intent string
	// Intents are more phrasings of the same task (the product's own words
	// help: "inbox" for notifications); with Intent, at most MaxIntents,
	// searched together, each phrasing's best tool kept (searchFused).
	Intents []string
	// K is how many tools to show (<= 0: Options.K).
	K int
	// Caller is who searches: only tools of servers the caller may see are
	// shown (a session's narrowing applies).
	Caller auth.Caller
}

// MaxIntents bounds the phrasings of one search.
const MaxIntents = 5

// Search finds the K tools most relevant to the intent, among those the
// caller may see, and generates their declarations.
func (e *Engine) Search(ctx context.Context, req SearchRequest) (*SearchResult, error) {
	var phrasings []string
	for _, p := range append([]string{req.Intent}, req.Intents...) {
		if strings.TrimSpace(p) != "" {
			phrasings = append(phrasings, p)
		}
	}
	if len(phrasings) == 0 {
		return nil, ErrNoIntent
	}
	if len(phrasings) > MaxIntents {
		return nil, fmt.Errorf("at most %d phrasings of one task, got %d; keep the two or three that differ most", MaxIntents, len(phrasings))
	}
	k := req.K
	if k <= 0 {
		k = e.opts.K
	}
	st := e.state.Load()
	hits, visible, err := e.searchFused(ctx, st, req.Caller, phrasings, k)
	if errors.Is(err, vectorindex.ErrEmptyIntent) {
		return nil, ErrNoIntent
	}
	if err != nil {
		return nil, err
	}
	res := &SearchResult{Total: visible, Servers: e.roster(req.Caller)}
	words := taskWords(phrasings)
	weak := map[string]bool{} // hits that matched only incidental words
	for _, h := range hits {
		weak[h.ID] = h.Weak
	}
	subset := make([]typegen.Tool, 0, len(hits))
	var deprecated []FoundTool
	for _, h := range hits {
		i, ok := st.byID[h.ID]
		if !ok {
			continue // indexed but gone from the catalog a moment ago
		}
		b, ok := st.names.Lookup(h.ID)
		if !ok {
			continue
		}
		t := st.tools[i]
		if len(t.OutputSchema) == 0 {
			t.InferredOutput, t.InferredFrom = e.shapes.lookup(toolShape(h.ID), st.def(i))
		}
		subset = append(subset, t)
		ft := FoundTool{ID: h.ID, Call: b.Namespace + "." + b.Function, Score: h.Score, Deprecated: isDeprecated(t.Description)}
		ft.Why = why(words, t)
		if ft.Deprecated {
			deprecated = append(deprecated, ft) // below every tool that is not
			continue
		}
		res.Tools = append(res.Tools, ft)
	}
	res.Tools = append(res.Tools, deprecated...)
	res.Shown = len(res.Tools)
	out, err := typegen.Generate(subset, typegen.Options{Names: st.names, Cache: e.types})
	if err != nil {
		return nil, fmt.Errorf("codemode: generating declarations: %w", err)
	}
	res.Declarations = out.DTS
	if found, dts := e.searchScripts(req.Caller, words, k); len(found) > 0 {
		// The caller's saved scripts whose name or description has the
		// task's words come first: they were written for tasks like it.
		res.Tools = append(found, res.Tools...)
		res.Shown = len(res.Tools)
		res.Total += len(found)
		res.Declarations += dts
	}
	res.Note = fmt.Sprintf("%d of %d tools shown, best first. Call them exactly as declared (e.g. `await %s({...})`) in execute_code; "+
		"search again with other words to see different tools.", res.Shown, res.Total, firstCall(res.Tools))
	if len(res.Tools) > 0 && (strings.HasPrefix(res.Tools[0].Why, noMatch) || weak[res.Tools[0].ID]) {
		res.Weak = true
		var names []string
		for _, s := range res.Servers {
			names = append(names, s.Namespace)
		}
		res.Note = fmt.Sprintf("No tool's name or description has the words of this task: the tools below are the index's nearest guesses and may not fit. "+
			"Search again with the words the product itself uses (its API's nouns and verbs), in two or three phrasings (intents), or name one of the servers: %s. ",
			strings.Join(names, ", ")) + res.Note
	}
	return res, nil
}

// searchFused ranks the visible tools for the phrasings: joined by " | "
// into one intent, which the index splits and ranks clause by clause with
// the whole as a prior (measured better than fusing separate searches by
// rank: docs/vectorindex.md); phrasings too long to join are searched one
// by one and their rankings fused.
func (e *Engine) searchFused(ctx context.Context, st *catalogState, caller auth.Caller, phrasings []string, k int) ([]vectorindex.Hit, int, error) {
	if joined := strings.Join(phrasings, " | "); len(joined) <= vectorindex.MaxIntentLen {
		return e.searchVisible(ctx, st, caller, joined, k)
	}
	depth := min(max(4*k, 20), len(st.tools))
	var rankings [][]vectorindex.Hit
	visible := 0
	for _, p := range phrasings {
		hits, v, err := e.searchVisible(ctx, st, caller, p, depth)
		if err != nil {
			return nil, 0, err
		}
		visible = v
		rankings = append(rankings, hits)
	}
	return vectorindex.Fuse(rankings, k), visible, nil
}

// roster lists the servers the caller may use.
func (e *Engine) roster(caller auth.Caller) []ServerEntry {
	out := []ServerEntry{}
	for _, s := range e.gw.Servers() {
		if s.State == gateway.StateDisabled || !e.gw.Sees(caller, s.Name) {
			continue
		}
		out = append(out, ServerEntry{Name: s.Name, Namespace: typegen.NamespaceOf(s.Name), State: string(s.State), Tools: s.Tools, Instructions: s.Instructions})
	}
	return out
}

// isDeprecated reports whether a tool's description says it is deprecated
// (the index's rule, which also ranks a deprecated tool below its
// replacement).
func isDeprecated(description string) bool { return vectorindex.IsDeprecated(description) }

// noMatch starts the Why of a tool that none of the task's words names.
const noMatch = "no word of the task in its name or description"

// why is a hit's one-line reason: the task's words its name or description
// has (compared by their first 5 letters, so "projects" finds "project").
func why(words []string, t typegen.Tool) string {
	have := map[string]bool{}
	for _, w := range wordsOf(t.Name + " " + t.Description) {
		have[stem(w)] = true
	}
	var matched []string
	for _, w := range words {
		if have[stem(w)] {
			matched = append(matched, w)
		}
	}
	out := noMatch + " (a semantic guess)"
	if len(matched) > 0 {
		out = "matches " + strings.Join(matched, ", ")
	}
	if isDeprecated(t.Description) {
		out = "deprecated; " + out
	}
	return out
}

// taskWords are the distinct words of the phrasings that say something
// (not "the", "a", "that", ...), in order.
func taskWords(phrasings []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range phrasings {
		for _, w := range wordsOf(p) {
			if len(w) < 3 || stopWords[w] || seen[stem(w)] {
				continue
			}
			seen[stem(w)] = true
			out = append(out, w)
		}
	}
	return out
}

// wordsOf splits text into lower-case words, also at camelCase and
// snake_case boundaries (list_projects, listProjects: list, projects).
func wordsOf(text string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	var prev rune
	for _, r := range text {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if unicode.IsUpper(r) && unicode.IsLower(prev) {
				flush()
			}
			cur = append(cur, r)
		default:
			flush()
		}
		prev = r
	}
	flush()
	return out
}

func stem(w string) string {
	if r := []rune(w); len(r) > 5 {
		return string(r[:5])
	}
	return w
}

var stopWords = map[string]bool{
	"the": true, "and": true, "that": true, "this": true, "for": true, "with": true, "from": true, "into": true,
	"all": true, "any": true, "are": true, "was": true, "were": true, "has": true, "have": true, "his": true,
	"her": true, "its": true, "our": true, "your": true, "you": true, "who": true, "what": true, "which": true,
	"when": true, "where": true, "how": true, "get": true, "show": true, "find": true, "some": true, "them": true,
	"then": true, "there": true, "about": true, "need": true, "want": true,
	"please": true, "can": true, "will": true, "would": true, "should": true, "not": true, "but": true,
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
		if ok && !st.denied[t.ID()] {
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
		if i, ok := st.byID[h.ID]; ok && sees[st.tools[i].Server] && !st.denied[h.ID] && len(hits) < k {
			hits = append(hits, h)
		}
	}
	return hits, visible, nil
}

// searchScripts finds the caller's saved scripts that share a word with the
// task (at most k, most words first) and declares them, without the
// preamble (the catalog's declarations carry it).
func (e *Engine) searchScripts(caller auth.Caller, words []string, k int) ([]FoundTool, string) {
	scripts := e.visibleScripts(context.Background(), caller.Principal.Key())
	if len(scripts) == 0 || len(words) == 0 {
		return nil, ""
	}
	tools, names := scriptTools(scripts)
	e.withLearnedResults(tools, scripts)
	type match struct {
		tool  typegen.Tool
		found FoundTool
		n     int
	}
	var matches []match
	for _, t := range tools {
		w := why(words, t)
		if strings.HasPrefix(w, noMatch) {
			continue
		}
		b, _ := names.Lookup(t.ID())
		matches = append(matches, match{t, FoundTool{ID: t.ID(), Call: b.Namespace + "." + b.Function, Why: "saved script; " + w}, strings.Count(w, ",") + 1})
	}
	sort.SliceStable(matches, func(i, j int) bool { return matches[i].n > matches[j].n })
	if len(matches) > k {
		matches = matches[:k]
	}
	if len(matches) == 0 {
		return nil, ""
	}
	found := make([]FoundTool, len(matches))
	subset := make([]typegen.Tool, len(matches))
	for i, m := range matches {
		found[i], subset[i] = m.found, m.tool
	}
	out, err := typegen.Generate(subset, typegen.Options{Names: names})
	if err != nil {
		return nil, ""
	}
	return found, strings.TrimPrefix(out.DTS, typegen.Preamble)
}
