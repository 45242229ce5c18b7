package vectorindex

import "sort"

// RRFConstant is reciprocal rank fusion's k (Cormack, Clarke and Büttcher,
// 2009): a hit ranked r-th (from 0) in one ranking adds 1/(RRFConstant+r+1).
const RRFConstant = 60

// Fuse merges rankings of the same candidates (one per phrasing of a task,
// say) and returns the best k. Each ranking's first hit comes first (what
// one phrasing found best is kept, however the others rank it: four
// phrasings over two servers, fused by rank alone, made a top 5 without
// any of their four best tools), ordered by fused score; then the rest by
// fused score, reciprocal rank summed over the rankings; ties by id.
// Scores are the fused ones, raised for the first hits so that they fall
// with the order; a ranking's own scores, which are not comparable across
// phrasings, are not used.
func Fuse(rankings [][]Hit, k int) []Hit {
	fused := map[string]float64{}
	for _, ranking := range rankings {
		for r, h := range ranking {
			fused[h.ID] += 1 / float64(RRFConstant+r+1)
		}
	}
	first := map[string]bool{}
	for _, ranking := range rankings {
		if len(ranking) > 0 {
			first[ranking[0].ID] = true
		}
	}
	out := make([]Hit, 0, len(fused))
	for id, score := range fused {
		out = append(out, Hit{ID: id, Score: score})
	}
	sort.Slice(out, func(i, j int) bool {
		if first[out[i].ID] != first[out[j].ID] {
			return first[out[i].ID]
		}
		if out[i].Score != out[j].Score {
			return out[i].Score > out[j].Score
		}
		return out[i].ID < out[j].ID
	})
	var restBest float64
	if len(first) < len(out) {
		restBest = out[len(first)].Score
	}
	for i := range out[:len(first)] {
		out[i].Score = max(out[i].Score, restBest)
	}
	weak, named := map[string]bool{}, map[string]bool{}
	for _, ranking := range rankings {
		for _, h := range ranking {
			if w, seen := weak[h.ID]; !seen || w {
				weak[h.ID] = h.Weak
			}
			named[h.ID] = named[h.ID] || h.Named
		}
	}
	for i := range out {
		out[i].Weak, out[i].Named = weak[out[i].ID], named[out[i].ID]
	}
	return out[:min(k, len(out))]
}
