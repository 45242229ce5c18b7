package vectorindex

import "sort"

// RRFConstant is reciprocal rank fusion's k (Cormack, Clarke and Büttcher,
// 2009): a hit ranked r-th (from 0) in one ranking adds 1/(RRFConstant+r+1).
const RRFConstant = 60

// Fuse merges rankings of the same candidates (one per phrasing of a task,
// say) by reciprocal rank and returns the best k, highest fused score
// first, ties by id. Scores are the fused ones; a ranking's own scores,
// which are not comparable across phrasings, are not used.
func Fuse(rankings [][]Hit, k int) []Hit {
	fused := map[string]float64{}
	for _, ranking := range rankings {
		for r, h := range ranking {
			fused[h.ID] += 1 / float64(RRFConstant+r+1)
		}
	}
	out := make([]Hit, 0, len(fused))
	for id, score := range fused {
		out = append(out, Hit{ID: id, Score: score})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Score != out[j].Score {
			return out[i].Score > out[j].Score
		}
		return out[i].ID < out[j].ID
	})
	return out[:min(k, len(out))]
}
