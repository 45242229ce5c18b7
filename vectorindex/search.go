package vectorindex

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
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
	scores := ix.rank(ctx, st, intent, qv)
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
			for d, s := range ix.rank(ctx, st, step, sv) {
				merged[d] = max(merged[d], wWhole*scores[d]+wStep*s)
			}
		}
		scores = merged
	}
	return topHits(st, scores, k), nil
}

// rank scores every candidate tool for one text.
func (ix *Index) rank(ctx context.Context, st *state, text string, qv []float32) map[int32]float64 {
	n := len(st.entries)
	lex := make([]float32, n)
	groups := ix.an.queryGroups(text, st.lex)
	st.lex.score(groups, lex)

	cand := map[int32]bool{}
	for _, d := range topN(lex, candidates) {
		cand[d] = true
	}
	// vector candidates from chromem
	nv := min(candidates, n, ix.coll.Count())
	if nv > 0 {
		res, err := ix.coll.QueryEmbedding(ctx, qv, nv, nil, nil)
		if err == nil {
			for _, r := range res {
				if i, ok := st.lex.pos[r.ID]; ok {
					cand[i] = true
				}
			}
		}
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
		out[d] = wLexical*l + (1-wLexical)*v
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
var wLexical = 0.55
