package vectorindex

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/philippgille/chromem-go"
)

// Hit is one search result: a tool id ("server:tool") and its score in
// [0, 1], higher is better. Scores rank tools within one search; they are not
// comparable across searches.
type Hit struct {
	ID    string  `json:"id"`
	Score float64 `json:"score"`
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
func (ix *Index) Search(ctx context.Context, intent string, k int) ([]Hit, error) {
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
	n := len(st.entries)
	if n == 0 {
		return []Hit{}, nil
	}
	k = min(k, n)

	qv, err := ix.emb.embedQuery(ctx, intent)
	if err != nil {
		return nil, fmt.Errorf("vectorindex: %w", err)
	}
	groups := ix.an.queryGroups(intent, st.lex)
	cov := coverage(groups, st.lex)
	qv = ix.queryVector(qv, cov)
	near, err := ix.nearest(ctx, st, qv)
	if err != nil {
		return nil, err
	}
	scores := ix.rank(st, groups, cov, qv, near)
	if steps := ix.an.splitSteps(intent); len(steps) > 1 {
		// Each step's best tools score like the whole intent's best; ties
		// (and everything below) are broken by the whole intent's score.
		merged := make(map[int32]float64, len(scores))
		for d, s := range scores {
			merged[d] = wWhole * s
		}
		for _, step := range steps {
			sv, err := ix.emb.embedQuery(ctx, step)
			if err != nil {
				return nil, fmt.Errorf("vectorindex: %w", err)
			}
			sg := ix.an.queryGroups(step, st.lex)
			scov := coverage(sg, st.lex)
			sv = ix.queryVector(sv, scov)
			// The steps reuse the whole intent's nearest neighbours as vector
			// candidates (one pass over the collection per search, not one
			// per step); their own BM25 candidates come on top.
			for d, s := range ix.rank(st, sg, scov, sv, near) {
				merged[d] = max(merged[d], wWhole*scores[d]+wStep*s)
			}
		}
		for d := range merged {
			merged[d] /= wWhole + wStep // back to [0, 1]
		}
		scores = merged
	}
	return topHits(st, scores, k), nil
}

// nearest asks chromem for the tools whose vectors are closest to qv.
// chromem may briefly hold tools the published state no longer names (an
// update adds to chromem before publishing and deletes after): those are
// skipped.
func (ix *Index) nearest(ctx context.Context, st *state, qv []float32) ([]int32, error) {
	var res []chromem.Result
	var err error
	for try := 0; try < 3; try++ {
		// chromem fails when asked for more results than it holds, and an
		// update may delete between Count and the query: count again.
		nv := min(candidates, len(st.entries), ix.coll.Count())
		if nv <= 0 {
			return nil, nil
		}
		res, err = ix.coll.QueryEmbedding(ctx, qv, nv, nil, nil)
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	if err != nil {
		return nil, fmt.Errorf("vectorindex: vector query: %w", err)
	}
	out := make([]int32, 0, len(res))
	for _, r := range res {
		if i, ok := st.lex.pos[r.ID]; ok {
			out = append(out, i)
		}
	}
	return out, nil
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
// coverage cov): its BM25 top candidates and the given vector candidates.
func (ix *Index) rank(st *state, groups []queryGroup, cov float64, qv []float32, near []int32) map[int32]float64 {
	n := len(st.entries)
	lex := make([]float32, n)
	st.lex.score(groups, lex)
	wl := wLexicalMin + (wLexical-wLexicalMin)*cov

	cand := map[int32]bool{}
	for _, d := range topN(lex, candidates) {
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
		out[d] = wl*l + (1-wl)*v
	}
	return out
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

// topN returns the indexes of the n largest positive scores.
func topN(scores []float32, n int) []int32 {
	var idx []int32
	for i, s := range scores {
		if s > 0 {
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

func topHits(st *state, scores map[int32]float64, k int) []Hit {
	hits := make([]Hit, 0, len(scores))
	for d, s := range scores {
		hits = append(hits, Hit{ID: st.entries[d].tool.ID, Score: s})
	}
	sort.Slice(hits, func(i, j int) bool {
		if hits[i].Score != hits[j].Score {
			return hits[i].Score > hits[j].Score
		}
		return hits[i].ID < hits[j].ID
	})
	if len(hits) > k {
		hits = hits[:k]
	}
	return hits
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
