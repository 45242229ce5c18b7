package vectorindex

import "hash/maphash"

// typoIndex finds the index's own words within a small edit distance of a
// query word, so that misspelt intents ("lsit the comits", "screnshot") reach
// the tools. It is a symmetric-delete index (as in SymSpell): every word is
// stored under itself and each string obtained by deleting one character;
// a query word is looked up the same way, which finds every word within one
// edit (insert, delete, substitute, transpose) and many within two. The
// Damerau-Levenshtein distance then confirms each candidate.
type typoIndex struct {
	seed  maphash.Seed
	words []string
	keys  map[uint64][]int32
}

// Typo correction only applies to words of at least minTypoLen letters:
// shorter ones have too many neighbours to guess from.
const minTypoLen = 4

func newTypoIndex(words []string) *typoIndex {
	t := &typoIndex{seed: maphash.MakeSeed(), words: words, keys: make(map[uint64][]int32, len(words)*8)}
	for i, w := range words {
		if len(w) < minTypoLen-1 || len(w) > 32 {
			continue
		}
		t.eachKey(w, func(h uint64) {
			l := t.keys[h]
			if n := len(l); n > 0 && l[n-1] == int32(i) {
				return // "aa" -> "a" twice
			}
			t.keys[h] = append(l, int32(i))
		})
	}
	return t
}

func (t *typoIndex) eachKey(w string, fn func(uint64)) {
	fn(maphash.String(t.seed, w))
	b := make([]byte, 0, len(w))
	for i := 0; i < len(w); i++ {
		b = append(b[:0], w[:i]...)
		b = append(b, w[i+1:]...)
		fn(maphash.Bytes(t.seed, b))
	}
}

// lookup returns the indexed words within maxDist edits of w, with their
// distance, closest first.
func (t *typoIndex) lookup(w string, maxDist int) (out []typoMatch) {
	if t == nil || len(w) < minTypoLen || len(w) > 32 {
		return nil
	}
	seen := map[int32]bool{}
	t.eachKey(w, func(h uint64) {
		for _, i := range t.keys[h] {
			if seen[i] {
				continue
			}
			seen[i] = true
			if d := damerau(w, t.words[i], maxDist); d > 0 && d <= maxDist {
				out = append(out, typoMatch{word: t.words[i], dist: d})
			}
		}
	})
	for i := 1; i < len(out); i++ { // few candidates: insertion sort
		for j := i; j > 0 && (out[j].dist < out[j-1].dist ||
			out[j].dist == out[j-1].dist && out[j].word < out[j-1].word); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

type typoMatch struct {
	word string
	dist int
}

// damerau is the optimal-string-alignment distance between a and b (byte
// wise), or max+1 as soon as it is certain to exceed max.
func damerau(a, b string, max int) int {
	if d := len(a) - len(b); d > max || -d > max {
		return max + 1
	}
	// three rolling rows
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		rowMin := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			v := min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				v = min(v, prev2[j-2]+1)
			}
			cur[j] = v
			rowMin = min(rowMin, v)
		}
		if rowMin > max {
			return max + 1
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
