package codemode

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"sort"
	"strings"
	"sync"
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
	// Servers is the roster of the servers the caller may use; for each
	// one the hits draw on, what else it has (ServerEntry.Others).
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
// it has, what it says about itself, and, when the hits draw on it, what
// else it has.
type ServerEntry struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	State     string `json:"state"`
	// Tools counts the server's tools the caller may call (a tool the
	// gateway's policy always denies is not counted, nor shown anywhere).
	Tools int `json:"tools"`
	// Instructions is what the server says about itself, in the first
	// answer of the caller's session that lists the server (and again
	// when it changes); a caller without a session gets it every time
	// (instructionsOnce).
	Instructions string `json:"instructions,omitempty"`
	// NotShown, for a server the hits draw on, counts its tools the answer
	// does not show; Others are their functions, when there are at most
	// maxOthersListed (and the answer has room: maxOthersInAnswer), so that
	// an agent sees what exists without guessing names.
	NotShown int      `json:"notShown,omitempty"`
	Others   []string `json:"others,omitempty"`
}

// The bounds of the other tools an answer names: a server with more than
// maxOthersListed tools not shown is a count and how to narrow, and one
// answer names at most maxOthersInAnswer.
const (
	maxOthersListed   = 40
	maxOthersInAnswer = 120
)

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
	hits, visible, boosts, err := e.searchFused(ctx, st, req.Caller, phrasings, k)
	if errors.Is(err, vectorindex.ErrEmptyIntent) {
		return nil, ErrNoIntent
	}
	if err != nil {
		return nil, err
	}
	// the session's next calls are evidence for these words (learning.go)
	e.learn.searched(req.Caller, learnWords(strings.Join(phrasings, " | ")))
	return e.answer(st, req.Caller, taskWords(phrasings), hits, boosts, visible, k), nil
}

// answer is the search's answer for caller: the hits as found tools (the
// caller's matching saved scripts first, a deprecated tool after the
// others), their declarations in that order, the roster with each drawn-on
// server's other tools, and the note, which says so when the best hit is
// only a guess.
func (e *Engine) answer(st *catalogState, caller auth.Caller, words []string, hits []vectorindex.Hit, boosts map[string]learnedBoost, visible, k int) *SearchResult {
	res := &SearchResult{Total: visible}
	viewer := shapeProducer(caller.Principal) // whose learned keys it is declared
	type found struct {
		tool typegen.Tool
		ft   FoundTool
		weak bool
	}
	var tools, deprecated []found
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
			t.InferredOutput, t.InferredFrom = e.shapes.lookup(toolShape(h.ID), st.def(i), viewer)
		}
		if st.approval[h.ID] {
			t.Notes = []string{approvalNote}
		}
		f := found{t, FoundTool{ID: h.ID, Call: b.Namespace + "." + b.Function, Score: h.Score, Deprecated: isDeprecated(t.Description), Why: why(words, t, h.Weak)}, h.Weak}
		if n := boosts[h.ID].principals; n > 0 {
			f.ft.Why += fmt.Sprintf("; called after searches with these words (%s)", plural(n, "caller"))
		}
		if f.ft.Deprecated {
			deprecated = append(deprecated, f) // below every tool that is not
			continue
		}
		tools = append(tools, f)
	}
	tools = append(tools, deprecated...)
	subset := make([]typegen.Tool, len(tools))
	for i, f := range tools {
		subset[i] = f.tool
		res.Tools = append(res.Tools, f.ft)
	}
	// Declared best first, as listed: typegen keeps the catalog's names in
	// any order.
	out, err := typegen.Generate(subset, typegen.Options{Names: st.names, Cache: e.types, Ranked: true})
	if err == nil {
		res.Declarations = out.DTS
	} else { // only for unusable options, which these are not
		e.log.Warn("code mode: declaring the tools found failed", "err", err)
		res.Declarations = typegen.Preamble
	}
	scripts, dts := e.searchScripts(caller, words, k)
	if len(scripts) > 0 {
		// The caller's saved scripts whose name or description has the
		// task's words come first: they were written for tasks like it.
		res.Tools = append(scripts, res.Tools...)
		res.Total += len(scripts)
		res.Declarations = typegen.Preamble + dts + strings.TrimPrefix(res.Declarations, typegen.Preamble)
	}
	res.Shown = len(res.Tools)
	res.Servers = e.roster(st, caller, res.Tools)
	res.Note = fmt.Sprintf("%d of %d tools shown, best first. Call them exactly as declared (e.g. `await %s({...})`) in execute_code; "+
		"search again with other words to see different tools.", res.Shown, res.Total, firstCall(res.Tools))
	if len(scripts) > 0 || len(tools) == 0 {
		return res // a saved script matched the task's words
	}
	guess := tools[0].weak || strings.HasPrefix(strings.TrimPrefix(tools[0].ft.Why, "deprecated; "), noMatch)
	if !guess || boosts[tools[0].ft.ID].principals >= 2 { // what several callers went on to call is no guess
		return res
	}
	matched := matchedWords(words, tools[0].tool)
	res.Weak = true
	var names []string
	for _, s := range res.Servers {
		names = append(names, s.Namespace)
	}
	what := "No tool's name or description has the words of this task: the tools below are the index's nearest guesses and may not fit. "
	if len(matched) > 0 {
		// The words are there, but only where the server says them of
		// most of its tools ("Only works within allowed directories"), or
		// its instructions: not what the task is about.
		what = fmt.Sprintf("The tools below share only incidental words with this task (%s), not what it is about: they are the index's nearest guesses and may not fit. ",
			strings.Join(matched, ", "))
	}
	res.Note = what + fmt.Sprintf("Search again with the words the product itself uses (its API's nouns and verbs), in two or three phrasings (intents), or name one of the servers: %s. ",
		strings.Join(names, ", ")) + res.Note
	return res
}

// Text is the answer as a model reads it (search_tools' text, `sandbox
// search --config --dts`): the note; the servers (what each says of
// itself, the first time); the tools best first, each with why; the other
// tools of the servers they are of; then their declarations in the same
// order, without the shared preamble (it is in execute_code's description,
// read once).
func (r *SearchResult) Text() string {
	var b strings.Builder
	b.WriteString(r.Note)
	b.WriteString("\n\nServers:")
	for _, s := range r.Servers {
		fmt.Fprintf(&b, "\n- %s (%s, %d tools)", s.Namespace, s.State, s.Tools)
		if s.Instructions != "" {
			b.WriteString(": " + strings.Join(strings.Fields(s.Instructions), " "))
		}
	}
	b.WriteString("\n\nBest first:")
	for i, t := range r.Tools {
		fmt.Fprintf(&b, "\n%d. %s: %s", i+1, t.Call, t.Why)
	}
	others := false
	for _, s := range r.Servers {
		if s.NotShown == 0 {
			continue
		}
		if !others {
			b.WriteString("\n\nNot shown, of the same servers (search naming one to get its declaration):")
			others = true
		}
		if len(s.Others) > 0 {
			fmt.Fprintf(&b, "\n- %s: %s", s.Namespace, strings.Join(s.Others, ", "))
			continue
		}
		fmt.Fprintf(&b, "\n- %s: %d more tools, too many to list; search again with the words of the step you need and the server's name (%s)", s.Namespace, s.NotShown, s.Namespace)
	}
	b.WriteString("\n\n")
	b.WriteString(strings.TrimPrefix(r.Declarations, typegen.Preamble))
	return b.String()
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// approvalNote is the JSDoc tag of a tool whose every call the gateway's
// policy sends to a person (gateway.Gateway.NeedsApproval).
const approvalNote = "@approval each call waits for a person to approve it (the gateway's policy); declined, unanswered, or from a client that cannot ask (no MCP elicitation), it rejects with DENIED"

// searchFused ranks the visible tools for the phrasings: joined by " | "
// into one intent, which the index splits and ranks clause by clause with
// the whole as a prior (measured better than fusing separate searches by
// rank: docs/vectorindex.md); phrasings too long to join are searched one
// by one and their rankings fused. It also returns what learning from use
// added to the hits.
func (e *Engine) searchFused(ctx context.Context, st *catalogState, caller auth.Caller, phrasings []string, k int) ([]vectorindex.Hit, int, map[string]learnedBoost, error) {
	if joined := strings.Join(phrasings, " | "); len(joined) <= vectorindex.MaxIntentLen {
		return e.searchVisible(ctx, st, caller, joined, k)
	}
	depth := min(max(4*k, 20), len(st.tools))
	var rankings [][]vectorindex.Hit
	visible := 0
	all := map[string]learnedBoost{}
	for _, p := range phrasings {
		hits, v, boosts, err := e.searchVisible(ctx, st, caller, p, depth)
		if err != nil {
			return nil, 0, nil, err
		}
		visible = v
		rankings = append(rankings, hits)
		for id, b := range boosts {
			if b.boost > all[id].boost {
				all[id] = b
			}
		}
	}
	return vectorindex.Fuse(rankings, k), visible, all, nil
}

// roster lists the servers the caller may use: each with the tools of it
// the caller may call, its instructions the first time this session sees
// them, and, for the servers the found tools are of, their other tools.
func (e *Engine) roster(st *catalogState, caller auth.Caller, found []FoundTool) []ServerEntry {
	shown := map[string]bool{}
	for _, f := range found {
		shown[f.ID] = true
	}
	drawnOn := map[string]bool{}
	for _, f := range found {
		if i, ok := st.byID[f.ID]; ok {
			drawnOn[st.tools[i].Server] = true
		}
	}
	namespaceOf := make(map[string]string, len(st.namespaces)) // as the catalog's names have it (two servers may want one)
	for ns, server := range st.namespaces {
		namespaceOf[server] = ns
	}
	out := []ServerEntry{}
	listed := 0
	for _, s := range e.gw.Servers() {
		if s.State == gateway.StateDisabled || !e.gw.Sees(caller, s.Name) {
			continue
		}
		ns, ok := namespaceOf[s.Name]
		if !ok {
			ns = typegen.NamespaceOf(s.Name) // no tools in the catalog
		}
		entry := ServerEntry{Name: s.Name, Namespace: ns, State: string(s.State), Tools: s.Tools}
		// A server with no tools in the catalog has no members: the name
		// its namespace would have may be another server's.
		if members := st.members[ns]; len(members) > 0 && st.namespaces[ns] == s.Name {
			var others []string
			entry.Tools = 0
			for _, b := range members {
				if st.denied[b.ID] {
					continue
				}
				entry.Tools++
				if !shown[b.ID] {
					others = append(others, b.Function)
				}
			}
			if drawnOn[s.Name] {
				entry.NotShown = len(others)
				if len(others) <= maxOthersListed && listed+len(others) <= maxOthersInAnswer {
					sort.Strings(others)
					entry.Others = others
					listed += len(others)
				}
			}
		}
		if e.instructions.firstTime(caller, s.Name, s.Instructions) {
			entry.Instructions = s.Instructions
		}
		out = append(out, entry)
	}
	return out
}

// isDeprecated reports whether a tool's description says it is deprecated
// (the index's rule, which also ranks a deprecated tool below its
// replacement).
func isDeprecated(description string) bool { return vectorindex.IsDeprecated(description) }

// noMatch starts the Why of a tool that none of the task's words names;
// incidental, that of a weak hit whose words are only incidental ones
// (vectorindex.Hit.Weak: words its server repeats in most of its tools).
const (
	noMatch    = "no word of the task in its name or description"
	incidental = "only incidental words of the task: "
)

// why is a hit's one-line reason: the task's words its name or description
// has (matchedWords), or else its schemas (what it accepts and returns,
// which the index reads too: "weather in Chicago" finds a tool whose input
// lists Chicago and whose output has "Weather conditions"); said to be
// incidental for a hit the index found weak.
func why(words []string, t typegen.Tool, weak bool) string {
	matched := matchedWords(words, t)
	out := noMatch + " (a semantic guess)"
	switch {
	case len(matched) > 0 && weak:
		out = incidental + strings.Join(matched, ", ") + " (a guess)"
	case len(matched) > 0:
		out = "matches " + strings.Join(matched, ", ")
	case !weak:
		if inSchemas := matchedIn(words, string(t.InputSchema)+" "+string(t.OutputSchema), schemaKeywords); len(inSchemas) > 0 {
			out = "matches " + strings.Join(inSchemas, ", ") + " in what it accepts or returns"
		}
	}
	if isDeprecated(t.Description) {
		out = "deprecated; " + out
	}
	return out
}

// matchedWords are the task's words that a tool's name or description has
// (compared by their first 5 letters, so "projects" finds "project").
func matchedWords(words []string, t typegen.Tool) []string {
	return matchedIn(words, t.Name+" "+t.Description, nil)
}

// matchedIn are the task's words text has, but those in skip.
func matchedIn(words []string, text string, skip map[string]bool) []string {
	have := map[string]bool{}
	for _, w := range wordsOf(text) {
		have[stem(w)] = true
	}
	var matched []string
	for _, w := range words {
		if have[stem(w)] && !skip[w] {
			matched = append(matched, w)
		}
	}
	return matched
}

// schemaKeywords are JSON Schema's own words: a task that says "object" or
// "string" does not match every schema.
var schemaKeywords = map[string]bool{"type": true, "object": true, "string": true, "number": true, "integer": true, "boolean": true,
	"array": true, "items": true, "properties": true, "required": true, "description": true, "default": true, "format": true,
	"enum": true, "const": true, "title": true, "null": true, "additional": true, "schema": true, "minimum": true, "maximum": true}

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

// searchVisible is the top k hits among the tools the caller may see, how
// many tools it may see, and what learning from use added to them. A
// caller who sees every tool gets the index's own top k; one who sees
// fewer (a scoped principal, a narrowed session, a tool the policy denies)
// gets the index's top k of what it may call (vectorindex.SearchAmong: the
// index ranks only those, so a caller of one server among many still gets
// k of its tools when the catalog's best are all elsewhere). When learning
// knows tools for the intent's words, the hits are the index's best MaxK
// reordered with it (rerank).
func (e *Engine) searchVisible(ctx context.Context, st *catalogState, caller auth.Caller, intent string, k int) ([]vectorindex.Hit, int, map[string]learnedBoost, error) {
	sees := map[string]bool{}
	var seen, hidden []string // servers of the catalog in first-seen order
	visible := 0
	for _, t := range st.tools {
		ok, known := sees[t.Server]
		if !known {
			ok = e.gw.Sees(caller, t.Server)
			sees[t.Server] = ok
			if ok {
				seen = append(seen, t.Server)
			} else {
				hidden = append(hidden, t.Server)
			}
		}
		if ok && !st.denied[t.ID()] {
			visible++
		}
	}
	mayCall := func(id string) bool {
		i, ok := st.byID[id]
		return ok && sees[st.tools[i].Server] && !st.denied[id]
	}
	boosts := e.learn.boosts(ctx, learnWords(intent))
	depth := k
	if len(boosts) > 0 {
		depth = vectorindex.MaxK
	}
	scope := searchScope{}
	if visible < len(st.tools) {
		scope = newSearchScope(seen, hidden, mayCall)
	}
	hits, err := e.search(ctx, st, intent, depth, scope)
	if err != nil {
		return nil, visible, nil, err
	}
	if len(boosts) > 0 {
		hits = rerank(hits, boosts, mayCall, k)
	}
	return hits[:min(k, len(hits))], visible, boosts, nil
}

// searchScope is what a search may return: every tool of the catalog (the
// zero value), or the tools allow accepts, which are those of a set of
// servers (less the tools the policy denies, which are the catalog's).
type searchScope struct {
	// key names the set of servers, for the hit cache: "+" and the
	// servers seen, or "-" and those not (whichever is shorter), each
	// followed by a NUL (server names have none). With the catalog
	// version, it determines allow; "" is the whole catalog.
	key   string
	allow func(id string) bool
}

func newSearchScope(seen, hidden []string, allow func(id string) bool) searchScope {
	sign, names := "+", seen
	if len(hidden) < len(seen) {
		sign, names = "-", hidden
	}
	var b strings.Builder
	b.WriteString(sign)
	for _, n := range names {
		b.WriteString(n)
		b.WriteByte(0)
	}
	return searchScope{key: b.String(), allow: allow}
}

// searchScripts finds the caller's saved scripts that share a word with the
// task (at most k, most words first) and declares them, without the
// preamble (the catalog's declarations carry it).
func (e *Engine) searchScripts(caller auth.Caller, words []string, k int) ([]FoundTool, string) {
	scripts := e.visibleScripts(context.Background(), caller)
	if len(scripts) == 0 || len(words) == 0 {
		return nil, ""
	}
	tools, names := scriptTools(scripts)
	e.withLearnedResults(tools, scripts, caller)
	type match struct {
		tool  typegen.Tool
		found FoundTool
		n     int
	}
	var matches []match
	for _, t := range tools {
		w := why(words, t, false)
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

// instructionsOnce remembers which servers' instructions each session's
// search answers have shown, so that an answer repeats them only when they
// changed: an agent reads them once, and every answer after that is
// shorter by them (up to 300 characters a server).
//
// A caller without a session (a 2026-07-28 request is stateless) gets them
// in every answer. Nothing ties its requests together: keying by its
// principal instead would hide them from every other agent of that
// principal (one API key serves many), and a server's instructions are
// what keeps an agent from calling it wrong (which paths it may read, what
// an id looks like), worth more than the characters they cost.
//
// Bounded: two generations of at most maxInstructionSessions sessions
// each; a session that ages out gets the instructions again. Sessions end
// without telling code mode, so they are forgotten this way, not deleted.
type instructionsOnce struct {
	mu        sync.Mutex
	cur, prev map[instructionsKey]map[string]uint64 // session -> server -> hash of the text shown
}

type instructionsKey struct {
	principal string
	session   auth.SessionID
}

const maxInstructionSessions = 4096

// firstTime reports whether caller's answer should show server's
// instructions now, and notes that it did.
func (o *instructionsOnce) firstTime(caller auth.Caller, server, instructions string) bool {
	if instructions == "" {
		return false
	}
	if !caller.HasSession() {
		return true
	}
	h := fnv.New64a()
	h.Write([]byte(instructions))
	sum := h.Sum64()
	key := instructionsKey{principal: caller.Principal.Key(), session: caller.Session}
	o.mu.Lock()
	defer o.mu.Unlock()
	shown, ok := o.cur[key]
	if !ok {
		if o.cur == nil || len(o.cur) >= maxInstructionSessions {
			o.prev, o.cur = o.cur, make(map[instructionsKey]map[string]uint64)
		}
		shown = o.prev[key] // still in use: kept past the next turn
		if shown == nil {
			shown = map[string]uint64{}
		}
		o.cur[key] = shown
	}
	if shown[server] == sum {
		return false
	}
	shown[server] = sum
	return true
}
