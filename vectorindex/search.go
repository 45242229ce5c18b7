package vectorindex

import (
	"cmp"
	"context"
	"fmt"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"
)

// Hit is one search result: a tool id ("server:tool") and its score in
// [0, 1], higher is better. Scores rank tools within one search; they are not
// comparable across searches.
type Hit struct {
	ID    string  `json:"id"`
	Score float64 `json:"score"`
	// Weak: the tool matched none of the intent's words that say what the
	// task is, only relatives of them, its vector's nearness, or words its
	// server writes in most of its tools ("works" in "Only works within
	// allowed directories"): a guess, not a match. A tool the intent names
	// is never weak.
	Weak bool `json:"weak,omitempty"`
	// Named: the intent names this tool, in any spelling (or it replaces a
	// deprecated tool the intent names exactly); such hits come first, and
	// a caller that reorders hits (code mode's learning from use) keeps
	// them first.
	Named bool `json:"named,omitempty"`
}

// Search bounds.
const (
	DefaultK = 5
	MaxK     = 50
	// MaxIntentLen bounds the intent in bytes. Longer text is rejected
	// rather than silently cut, since what was cut could be the task.
	MaxIntentLen = 4096
)

// Hybrid scoring: each candidate's score mixes its BM25 score and its
// cosine similarity, each relative to the best of the search. (Stretching
// the cosines to [0, 1] between the mean and the best, or fusing ranks
// instead of scores, both did worse on the development intents: they give
// the vector side a full vote even when every tool is about equally far.)
const (
	candidates = 40 // per ranking, before fusion

	// merging the rankings of the steps of a multi-step intent
	wWhole = 0.5
	wStep  = 1.0
)

// Search returns the k tools that best match the intent, best first. k <= 0
// means DefaultK; k is clamped to [1, MaxK] and to the number of tools. An
// empty index gives no hits and no error.
//
// The intent is read as an agent writes it. Tools it names, in any spelling
// (list_projects, listProjects, list-projects, tracker.list_projects,
// tracker:list_projects, tracker__list_projects), come first, then tools
// whose names are near a name it writes (listProject, update_status).
// Several clauses (steps joined by "then" or ";", phrasings joined by " | ",
// lines, a bulleted or numbered list; at most 8, the rest searched with the
// eighth) are each ranked too, and each clause's best tool comes before the
// others. A question ("which tasks are blocked", "list ...") ranks tools
// that only read above tools that change things. A deprecated tool yields
// to the replacement its description names.
func (ix *Index) Search(ctx context.Context, intent string, k int) ([]Hit, error) {
	return ix.search(ctx, intent, k, nil)
}

// SearchAmong is Search over only the tools allow accepts (by id): a caller
// that may use some servers gets the k best of their tools, however many
// tools it may not use rank above them. The filter applies before anything
// is ranked: the BM25 candidates, the vector neighbours and the tools the
// intent names are all drawn from the allowed tools, and scores are
// relative to the best of them, as if the index held only them (word
// rarity, the vocabulary typos are corrected against and the servers an
// intent can name stay the whole index's, apart from servers with no
// allowed tool, which the intent cannot name). Filtering Search's hits
// instead would leave nothing when the MaxK best tools are all hidden.
//
// allow is called once for each indexed tool, on the search's goroutine,
// before the search ranks anything; it should be quick (a map lookup). A
// nil allow, or one that accepts every tool, is Search; one that accepts
// none gives no hits and no error.
func (ix *Index) SearchAmong(ctx context.Context, intent string, k int, allow func(id string) bool) ([]Hit, error) {
	return ix.search(ctx, intent, k, allow)
}

func (ix *Index) search(ctx context.Context, intent string, k int, allow func(id string) bool) ([]Hit, error) {
	if len(intent) > MaxIntentLen {
		return nil, fmt.Errorf("vectorindex: the intent is %d bytes; the limit is %d: describe the task in fewer words, or search for each step on its own", len(intent), MaxIntentLen)
	}
	if !utf8.ValidString(intent) {
		intent = strings.ToValidUTF8(intent, " ")
	}
	if !ix.an.hasContent(intent) {
		return nil, ErrEmptyIntent
	}
	if k <= 0 {
		k = DefaultK
	}
	k = min(k, MaxK)
	st := ix.state.Load()
	in, n := st.among(allow)
	if n == 0 {
		return []Hit{}, nil
	}
	k = min(k, n)

	// Each ranking looks at least k deep: the hits are drawn from its
	// candidates, and a search asked for k must not come back with fewer
	// when the catalog has them.
	depth := max(candidates, k)
	whole, err := ix.scoreText(ctx, st, intent, in, nil, depth)
	if err != nil {
		return nil, err
	}
	scores := whole.scores
	strong := whole.strongTerms()
	var tops []int32 // each clause's best tool
	if steps := ix.an.splitSteps(intent); len(steps) > 1 {
		// Each step's best tools score like the whole intent's best; ties
		// (and everything below) are broken by the whole intent's score.
		merged := make(map[int32]float64, len(scores))
		for d, s := range scores {
			merged[d] = wWhole * s
		}
		for _, step := range steps {
			// The steps reuse the whole intent's nearest neighbours as vector
			// candidates (one pass over the collection per search, not one
			// per step); their own BM25 candidates come on top.
			sc, err := ix.scoreText(ctx, st, step, in, whole.near, depth)
			if err != nil {
				return nil, err
			}
			stepMerged := make(map[int32]float64, len(sc.scores))
			for d, s := range sc.scores {
				stepMerged[d] = wWhole*scores[d] + wStep*s
				merged[d] = max(merged[d], stepMerged[d])
			}
			// the step's best in the context of the whole intent ("delete
			// the pod" after "get the logs of pod api-1": kubernetes' delete,
			// not the first delete of any server)
			if best, ok := bestOf(stepMerged); ok && clauseBestFirst {
				tops = append(tops, best)
			}
			for t := range sc.strongTerms() {
				strong[t] = true
			}
		}
		for d := range merged {
			merged[d] /= wWhole + wStep // back to [0, 1]
		}
		scores = merged
	}
	var named []named
	if pinNamedTools {
		named = st.names.match(st.names.mentions(intent, in), in)
	}
	return ix.order(st, scores, named, tops, strong, in, k), nil
}

// among is the set of tools a search may return, by document: nil is every
// tool (Search), else the tools SearchAmong's filter accepted.
type among []bool

func (a among) has(d int32) bool { return a == nil || a[d] }

// among asks allow about every tool: the tools it accepts and how many. A
// nil allow, or one that accepts every tool, is nil: the unfiltered search.
func (st *state) among(allow func(id string) bool) (among, int) {
	if allow == nil {
		return nil, len(st.entries)
	}
	in := make(among, len(st.entries))
	n := 0
	for d, e := range st.entries {
		if allow(e.tool.ID) {
			in[d] = true
			n++
		}
	}
	if n == len(st.entries) {
		return nil, n
	}
	return in, n
}

// Switches of two rules of Search, for measuring what each buys
// (TestAblation); always on otherwise.
var (
	pinNamedTools   = true // tools the intent names come first
	clauseBestFirst = true // each clause's best tool comes before the rest
)

// scored is one text's ranking: scores of the candidate tools, the vector
// neighbours they came from, and the query groups it was analysed into.
type scored struct {
	scores map[int32]float64
	near   []int32
	groups []queryGroup
}

// scoreText ranks the tools in for one text: the whole intent (near nil:
// its vector neighbours are looked up) or one of its clauses (near: the
// whole intent's). A question ranks tools that only read first; a
// deprecated tool yields to its replacement.
func (ix *Index) scoreText(ctx context.Context, st *state, text string, in among, near []int32, depth int) (scored, error) {
	qv, err := ix.emb.embedQuery(ctx, text)
	if err != nil {
		return scored{}, fmt.Errorf("vectorindex: %w", err)
	}
	groups := ix.an.queryGroups(text, st.lex)
	cov := coverage(groups, st.lex)
	qv = ix.queryVector(qv, cov)
	if near == nil {
		near = st.nearestAmong(qv, in, depth)
	}
	scores := ix.rank(st, groups, cov, qv, in, near, depth)
	if isQuestion(text) && questionsPreferReads {
		for d := range scores {
			e := st.entries[d]
			s := scores[d] * effectWeight(e.traits.effect)
			if e.traits.effect == effectRead || e.traits.effect == effectUnknown {
				s += wFilterValue * overlap(groups, e.terms.values)
			}
			scores[d] = s
		}
	}
	yieldToReplacements(st, scores)
	return scored{scores: scores, near: near, groups: groups}, nil
}

// questionsPreferReads switches the question rules below, for measuring
// what they buy (TestAblation); always on otherwise.
var questionsPreferReads = true

// effectWeight scales a tool's score for a question by what calling it
// does: asked "which tasks are blocked", a tool that searches tasks is
// meant, not one that sets a task's status to blocked. Most servers say
// nothing of their tools: silence is not penalised.
func effectWeight(e effect) float64 {
	switch e {
	case effectWrite:
		return wQuestionWrite
	case effectDestructive:
		return wQuestionDestructive
	}
	return 1
}

var (
	wQuestionWrite       = 0.75
	wQuestionDestructive = 0.65
	// wFilterValue weighs, for a question, the share of its words that are
	// values the tool's input enumerates: asked "which projects are
	// archived", list_projects, which filters by status (active,
	// archived), is the tool that answers.
	wFilterValue = 0.5
)

// wDeprecated scales the score of a deprecated tool.
const wDeprecated = 0.9

// yieldToReplacements ranks each deprecated tool below the tools that
// replace it when both are candidates, and a little lower anyway.
func yieldToReplacements(st *state, scores map[int32]float64) {
	for d, s := range scores {
		if !st.entries[d].traits.deprecated {
			continue
		}
		s *= wDeprecated
		for _, r := range st.replacedBy[d] {
			if rs, ok := scores[r]; ok && rs <= s {
				s = rs * 0.99
			}
		}
		scores[d] = s
	}
}

// strongTerms are the terms of a text's words that say what the task is
// (queryGroup.strong), from the words of the request, not quoted values or
// paths.
func (s scored) strongTerms() map[string]bool {
	out := map[string]bool{}
	for _, g := range s.groups {
		if g.weight < wAcronym {
			continue
		}
		for _, t := range g.strong {
			out[t] = true
		}
	}
	return out
}

func bestOf(scores map[int32]float64) (int32, bool) {
	best, found := int32(0), false
	for d, s := range scores {
		if !found || s > scores[best] || s == scores[best] && d < best {
			best, found = d, true
		}
	}
	return best, found
}

// order makes the answer: tools the intent names first (exactly, then up
// to plural endings, then near names; a deprecated tool named is followed
// by its replacement), then each clause's best tool, then the rest by
// score. Scores are made to fall with the order: a promoted tool scores at
// least as much as the best of the rest.
func (ix *Index) order(st *state, scores map[int32]float64, named []named, tops []int32, strong map[string]bool, in among, k int) []Hit {
	byMention(named)
	var promoted []int32
	seen := map[int32]bool{}
	promote := func(d int32) {
		if !seen[d] {
			seen[d] = true
			promoted = append(promoted, d)
		}
	}
	isNamed := map[int32]bool{}
	for _, n := range named {
		promote(n.doc)
		isNamed[n.doc] = true
		if n.match == exactName {
			for _, r := range st.replacedBy[n.doc] {
				if in.has(r) {
					promote(r)
					isNamed[r] = true
				}
			}
		}
	}
	sort.SliceStable(tops, func(i, j int) bool { return scores[tops[i]] > scores[tops[j]] })
	for _, d := range tops {
		promote(d)
	}
	rest := make([]int32, 0, len(scores))
	for d := range scores {
		if !seen[d] {
			rest = append(rest, d)
		}
	}
	sort.Slice(rest, func(i, j int) bool {
		if scores[rest[i]] != scores[rest[j]] {
			return scores[rest[i]] > scores[rest[j]]
		}
		return st.entries[rest[i]].tool.ID < st.entries[rest[j]].tool.ID
	})
	all := append(promoted, rest...)
	if len(all) > k {
		all = all[:k]
	}
	var restBest float64
	if len(rest) > 0 {
		restBest = scores[rest[0]]
	}
	hits := make([]Hit, len(all))
	prev := 1.0
	for i, d := range all {
		s := scores[d]
		if i < len(promoted) {
			s = max(s, restBest)
		}
		s = min(s, prev)
		prev = s
		hits[i] = Hit{ID: st.entries[d].tool.ID, Score: s, Weak: !isNamed[d] && !st.matchesStrongly(d, strong), Named: isNamed[d]}
	}
	return hits
}

// matchesStrongly reports whether tool d has one of the strong terms other
// than as its server's boilerplate.
func (st *state) matchesStrongly(d int32, strong map[string]bool) bool {
	server := st.entries[d].tool.Server
	for _, t := range st.entries[d].terms.terms {
		if !strong[t.term] {
			continue
		}
		if !st.boilerplate[server][t.term] || slices.Contains(st.entries[d].traits.nameTerms, t.term) {
			return true
		}
	}
	return false
}

// nearestAmong returns the depth tools among in (nil: every tool) whose
// vectors are closest to qv, nearest first, by one pass over the state's
// own vectors (unit length: the dot product is the cosine). A large index
// is scanned in parallel.
//
// This replaced a chromem-go collection queried for the same: its filters
// are exact matches on one metadata value, not a set of tools (a scoped
// caller's search), a collection updated beside the published state could
// briefly disagree with it, and the pass over the state is faster (10,000
// tools: a search's median 15.5 ms with chromem's query, 8.7 ms with this;
// BenchmarkPeer measures both in the same run).
func (st *state) nearestAmong(qv []float32, in among, depth int) []int32 {
	parts := 1
	if len(st.entries) >= parallelNearestMin {
		parts = runtime.GOMAXPROCS(0)
	}
	size := (len(st.entries) + parts - 1) / parts
	found := make([][]neighbour, parts)
	var wg sync.WaitGroup
	for p := range parts {
		lo, hi := p*size, min((p+1)*size, len(st.entries))
		if parts == 1 {
			found[p] = st.nearestIn(qv, in, lo, hi, depth)
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			found[p] = st.nearestIn(qv, in, lo, hi, depth)
		}()
	}
	wg.Wait()
	best := slices.Concat(found...)
	if parts > 1 {
		slices.SortFunc(best, neighbour.compare)
		best = best[:min(len(best), depth)]
	}
	out := make([]int32, len(best))
	for i, b := range best {
		out[i] = b.d
	}
	return out
}

// parallelNearestMin is the size of index from which nearestAmong scans in
// parallel (a vector's dot product is about a microsecond; starting a
// goroutine, a few). A variable for the test that holds the parallel scan
// to the serial one.
var parallelNearestMin = 2048

// neighbour is a tool and its vector's similarity to a query's.
type neighbour struct {
	d   int32
	sim float32
}

// compare orders neighbours nearest first, then by document.
func (a neighbour) compare(b neighbour) int {
	if a.sim != b.sim {
		return cmp.Compare(b.sim, a.sim)
	}
	return cmp.Compare(a.d, b.d)
}

// nearestIn is the candidates tools among in, of documents lo to hi, nearest
// to qv, in neighbour.compare's order.
func (st *state) nearestIn(qv []float32, in among, lo, hi, depth int) []neighbour {
	best := make([]neighbour, 0, depth+1)
	for d := lo; d < hi; d++ {
		if in != nil && !in[d] {
			continue
		}
		sim := dot(qv, st.entries[d].vec)
		if len(best) == depth && sim <= best[depth-1].sim {
			continue
		}
		n := neighbour{int32(d), sim}
		i, _ := slices.BinarySearchFunc(best, n, neighbour.compare)
		best = slices.Insert(best, i, n)
		if len(best) > depth {
			best = best[:depth]
		}
	}
	return best
}

// queryVector adapts a query vector to how much of the query the tools'
// own words cover, when the embedder can (see builtinEmbedder.reweight).
func (ix *Index) queryVector(qv []float32, cov float64) []float32 {
	if r, ok := ix.emb.(interface {
		reweight([]float32, float64) []float32
	}); ok {
		return r.reweight(qv, cov)
	}
	return qv
}

// rank scores the candidate tools for one text (analysed into groups, with
// coverage cov): its BM25 top candidates among in and the given vector
// candidates.
func (ix *Index) rank(st *state, groups []queryGroup, cov float64, qv []float32, in among, near []int32, depth int) map[int32]float64 {
	n := len(st.entries)
	lex := make([]float32, n)
	st.lex.score(groups, lex)
	wl := wLexicalMin + (wLexical-wLexicalMin)*cov

	cand := map[int32]bool{}
	for _, d := range topN(lex, depth, in) {
		cand[d] = true
	}
	for _, d := range near {
		cand[d] = true
	}
	var maxLex float32
	for d := range cand {
		maxLex = max(maxLex, lex[d])
	}
	cos := make(map[int32]float32, len(cand))
	var maxCos float32 = -1
	for d := range cand {
		c := dot(qv, st.entries[d].vec)
		cos[d] = c
		maxCos = max(maxCos, c)
	}
	out := make(map[int32]float64, len(cand))
	for d := range cand {
		var l, v float64
		if maxLex > 0 {
			l = float64(lex[d] / maxLex)
		}
		if maxCos > 0 {
			v = max(0, float64(cos[d]/maxCos))
		}
		out[d] = (wl*l + (1-wl)*v + wNameOverlap*overlap(groups, st.entries[d].traits.nameTerms)) / (1 + wNameOverlap)
	}
	return out
}

// wNameOverlap weighs, beside BM25 and the vectors, the share of the
// intent's words that are words of the tool's name. In BM25 a word in the
// name counts only a little more than one in the description (its term
// frequency saturates): "which tasks are blocked" found update_task_status
// ("Move a task to another status (todo, in_progress, blocked, done)")
// before search_tasks, whose name says what it does with tasks.
var wNameOverlap = 0.2

// overlap is the share (by weight) of the query's groups whose own word,
// or a correction of it, is one of the terms (of a tool's name, say).
func overlap(groups []queryGroup, terms []string) float64 {
	var all, in float64
	for _, g := range groups {
		if len(g.terms) == 0 && g.weight < 1 {
			continue
		}
		all += float64(g.weight)
		for _, t := range g.strong {
			if slices.Contains(terms, t) {
				in += float64(g.weight)
				break
			}
		}
	}
	if all == 0 {
		return 0
	}
	return in / all
}

func dot(a, b []float32) float32 {
	if len(a) != len(b) {
		return 0
	}
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// topN returns the indexes of the n largest positive scores among in.
func topN(scores []float32, n int, in among) []int32 {
	var idx []int32
	for i, s := range scores {
		if s > 0 && in.has(int32(i)) {
			idx = append(idx, int32(i))
		}
	}
	sort.Slice(idx, func(a, b int) bool {
		if scores[idx[a]] != scores[idx[b]] {
			return scores[idx[a]] > scores[idx[b]]
		}
		return idx[a] < idx[b]
	})
	if len(idx) > n {
		idx = idx[:n]
	}
	return idx
}

// wLexical is the share of the BM25 score in the hybrid score.
var wLexical = 0.65

// coverage is the share of a query's words (by weight) that the tools use
// themselves: 1 when every word matched as is, 0 when words matched only
// through expansions or not at all (a paraphrase). The BM25 score weighs
// wLexical at full coverage, less below, where the vectors know as much.
func coverage(groups []queryGroup, ix *lexIndex) float64 {
	var all, own float64
	for _, g := range groups {
		if len(g.terms) == 0 && g.weight < 1 {
			continue
		}
		all += float64(g.weight)
		if len(g.terms) > 0 && g.terms[0].w == 1 && ix.hasTerm(g.terms[0].term) {
			own += float64(g.weight)
		}
	}
	if all == 0 {
		return 1
	}
	return own / all
}

var wLexicalMin = 0.3
