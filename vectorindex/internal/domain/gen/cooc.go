package main

import (
	"math"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/sandboxrt/sandbox/vectorindex/internal/lexicon"
)

// tokenizer turns text into the canonical terms vectorindex uses for
// documents and queries: lowercased words of letters and digits, reduced to
// their WordNet lemma (or, for words WordNet does not know, stripped of a
// plural "s"), function words dropped. The vectors are keyed by these terms,
// so this must agree with vectorindex's analyzer (analyzer.term).
type tokenizer struct {
	lex   *lexicon.Lexicon
	cache map[string]string
}

func (t *tokenizer) term(w string) string {
	if v, ok := t.cache[w]; ok {
		return v
	}
	v := ""
	if !stopwords[w] {
		if l, ok := t.lex.Lemma(w); ok {
			v = l
		} else {
			v = stripPlural(w)
		}
		if stopwords[v] {
			v = ""
		}
	}
	t.cache[w] = v
	return v
}

// stripPlural is vectorindex's fallback lemmatiser (analyzer.go).
func stripPlural(w string) string {
	switch {
	case len(w) > 4 && strings.HasSuffix(w, "ies"):
		return w[:len(w)-3] + "y"
	case len(w) > 4 && strings.HasSuffix(w, "sses"):
		return w[:len(w)-2]
	case len(w) > 3 && strings.HasSuffix(w, "s") &&
		!strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		return w[:len(w)-1]
	}
	return w
}

// words calls fn for each term of s, in order.
func (t *tokenizer) words(s string, fn func(term string)) {
	start := -1
	hasLetter := false
	for i := 0; i <= len(s); {
		r, size := rune(' '), 1
		if i < len(s) {
			r, size = utf8.DecodeRuneInString(s[i:])
		}
		if i < len(s) && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			if start < 0 {
				start, hasLetter = i, false
			}
			if unicode.IsLetter(r) {
				hasLetter = true
			}
		} else if start >= 0 {
			w := s[start:i]
			start = -1
			if hasLetter && len(w) >= 2 && len(w) <= 24 {
				if tt := t.term(strings.ToLower(w)); tt != "" {
					fn(tt)
				}
			}
		}
		i += size
	}
}

// stopwords: English function words (vectorindex's list) and the filler
// of package descriptions and manual pages.
var stopwords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a about above after again against am an and any are as at
be because been before being below between both but by can could did do does doing down during
each either else etc eg ie few for from further had has have having he her here hers herself him
himself his how i if in into is it its itself just let lets me might more most must my myself no
nor not now of off on once only or other our ours ourselves out over own same shall she should so
some such than that the their theirs them themselves then there these they this those through to
too under until up very via was we were what when where which while who whom whose why will with
within without would you your yours yourself yourselves also whether may us onto upon per
please pls want wants need needs like thanks kindly someone something somehow ok okay hey
todo fixme xxx hack note nb fyi one ones used use uses using usually often thing things way
package packages provide provides provided contain contains include includes including`) {
		stopwords[w] = true
	}
}

// corpusCounts accumulates paragraphs as sequences of term ids.
type corpusCounts struct {
	tok    *tokenizer
	ids    map[string]int32
	words  []string
	counts []float64
	paras  [][]int32
	tokens int
}

func (c *corpusCounts) add(p string) {
	var seq []int32
	c.tok.words(p, func(t string) {
		id, ok := c.ids[t]
		if !ok {
			id = int32(len(c.words))
			c.ids[t] = id
			c.words = append(c.words, t)
			c.counts = append(c.counts, 0)
		}
		c.counts[id]++
		seq = append(seq, id)
	})
	if len(seq) >= 2 {
		c.paras = append(c.paras, seq)
		c.tokens += len(seq)
	}
}

// vocabulary keeps the n most frequent terms seen at least minCount times;
// it returns them (most frequent first; ties by term) and the old id -> new
// id map (-1: dropped).
func (c *corpusCounts) vocabulary(n int, minCount float64) ([]string, []int32) {
	order := make([]int32, 0, len(c.words))
	for i, k := range c.counts {
		if k >= minCount {
			order = append(order, int32(i))
		}
	}
	sort.Slice(order, func(a, b int) bool {
		ca, cb := c.counts[order[a]], c.counts[order[b]]
		if ca != cb {
			return ca > cb
		}
		return c.words[order[a]] < c.words[order[b]]
	})
	if len(order) > n {
		order = order[:n]
	}
	remap := make([]int32, len(c.words))
	for i := range remap {
		remap[i] = -1
	}
	vocab := make([]string, len(order))
	for i, o := range order {
		remap[o] = int32(i)
		vocab[i] = c.words[o]
	}
	return vocab, remap
}

// csr is a sparse matrix in compressed rows.
type csr struct {
	rows, cols int
	off        []int // len rows+1
	col        []int32
	val        []float64
}

// ppmi builds the positive pointwise mutual information matrix of the
// vocabulary's co-occurrences within window words (weighted 1/distance),
// with the context distribution smoothed by the exponent alpha (Levy,
// Goldberg and Dagan 2015: 0.75 keeps rare contexts from dominating).
func (c *corpusCounts) ppmi(remap []int32, v int, window int, alpha float64) *csr {
	pair := map[uint64]float64{}
	for _, p := range c.paras {
		for i, a := range p {
			ra := remap[a]
			if ra < 0 {
				continue
			}
			for d := 1; d <= window && i+d < len(p); d++ {
				rb := remap[p[i+d]]
				if rb < 0 || rb == ra {
					continue
				}
				x, y := ra, rb
				if x > y {
					x, y = y, x
				}
				pair[uint64(x)<<32|uint64(y)] += 1 / float64(d)
			}
		}
	}
	keys := make([]uint64, 0, len(pair))
	for k := range pair {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	row := make([]float64, v)
	var total float64
	for _, k := range keys {
		w := pair[k]
		row[k>>32] += w
		row[uint32(k)] += w
		total += 2 * w
	}
	ctx := make([]float64, v)
	var ctxTotal float64
	for i, r := range row {
		ctx[i] = math.Pow(r, alpha)
		ctxTotal += ctx[i]
	}
	type cell struct {
		r, c int32
		v    float64
	}
	cells := make([]cell, 0, 2*len(keys))
	for _, k := range keys {
		a, b := int32(k>>32), int32(uint32(k))
		w := pair[k]
		for _, rc := range [2][2]int32{{a, b}, {b, a}} {
			pmi := math.Log(w * total / row[rc[0]] * ctxTotal / ctx[rc[1]] / total)
			if pmi > 0 {
				cells = append(cells, cell{rc[0], rc[1], pmi})
			}
		}
	}
	sort.Slice(cells, func(i, j int) bool {
		if cells[i].r != cells[j].r {
			return cells[i].r < cells[j].r
		}
		return cells[i].c < cells[j].c
	})
	m := &csr{rows: v, cols: v, off: make([]int, v+1), col: make([]int32, len(cells)), val: make([]float64, len(cells))}
	for i, x := range cells {
		m.off[x.r+1]++
		m.col[i] = x.c
		m.val[i] = x.v
	}
	for i := 0; i < v; i++ {
		m.off[i+1] += m.off[i]
	}
	return m
}

// transpose returns m's transpose, also in compressed rows.
func (m *csr) transpose() *csr {
	t := &csr{rows: m.cols, cols: m.rows, off: make([]int, m.cols+1), col: make([]int32, len(m.col)), val: make([]float64, len(m.val))}
	for _, c := range m.col {
		t.off[c+1]++
	}
	for i := 0; i < m.cols; i++ {
		t.off[i+1] += t.off[i]
	}
	next := append([]int(nil), t.off[:m.cols]...)
	for r := 0; r < m.rows; r++ {
		for k := m.off[r]; k < m.off[r+1]; k++ {
			c := m.col[k]
			t.col[next[c]] = int32(r)
			t.val[next[c]] = m.val[k]
			next[c]++
		}
	}
	return t
}
