// Package fuzzy finds the names closest to a misspelt one, for "did you
// mean" suggestions in errors (an unknown tool in the gateway and in code
// mode). One rule for both, so an agent gets the same suggestions whichever
// way it called.
package fuzzy

import (
	"sort"
	"strings"
)

// Distance is the edit distance between a and b (Levenshtein, bytes), or a
// large number for names over 128 bytes, which are never suggestions.
func Distance(a, b string) int {
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

// Score is how far candidate is from want for a suggestion: the edit
// distance, or 1 when one contains the other; ok is false when it is too
// far to suggest (more than max(3, len(want)/2)).
func Score(want, candidate string) (dist int, ok bool) {
	d := Distance(want, candidate)
	if strings.Contains(candidate, want) || strings.Contains(want, candidate) {
		d = min(d, 1)
	}
	return d, d <= max(3, len(want)/2)
}

// Closest returns up to n of candidates nearest to want by Score, nearest
// first, ties in byte order; keys are what is compared, and the result holds
// the matching values (a tool's name compared, its id returned, say).
func Closest(want string, keys, values []string, n int) []string {
	type cand struct {
		value string
		dist  int
	}
	var cands []cand
	for i, k := range keys {
		if d, ok := Score(want, k); ok {
			cands = append(cands, cand{values[i], d})
		}
	}
	sort.Slice(cands, func(i, j int) bool {
		if cands[i].dist != cands[j].dist {
			return cands[i].dist < cands[j].dist
		}
		return cands[i].value < cands[j].value
	})
	out := []string{}
	seen := map[string]bool{}
	for _, c := range cands {
		if len(out) == n {
			break
		}
		if !seen[c.value] {
			seen[c.value] = true
			out = append(out, c.value)
		}
	}
	return out
}
