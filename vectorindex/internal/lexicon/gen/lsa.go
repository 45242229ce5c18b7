package main

import (
	"github.com/sandboxrt/sandbox/vectorindex/internal/linalg"

	"math"
	"math/rand"
	"sort"
	"strings"

	"github.com/sandboxrt/sandbox/vectorindex/internal/lexicon"
)

// Word vectors by latent semantic analysis of WordNet itself: every synset
// is a small document made of its lemmas, its gloss (definition and
// examples) and its hypernyms' lemmas; a words x synsets matrix of
// log-entropy weighted counts is reduced by a truncated SVD. Words used to
// define one another ("refund": "money returned", "invoice": "an itemized
// statement of money owed") end up close even when WordNet links them by no
// pointer. That is what lets an intent share no word with a tool and still
// find it.

type lsaDoc struct {
	words map[int]float64 // vocab index -> count
}

// glossWords tokenises a gloss into lowercased letter runs.
func glossWords(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return r < 'a' || r > 'z' })
}

var lsaStop = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a about above after again against all am an and any are as at be because been
before being below between both but by can could did do does doing down during each few for from further
had has have having he her here hers herself him himself his how i if in into is it its itself just me more
most my myself no nor not now of off on once only or other our ours ourselves out over own same she should
so some such than that the their theirs them themselves then there these they this those through to too
under until up very was we were what when where which while who whom why will with would you your yours
yourself yourselves also e g etc something someone one ones used use especially usually often may might
must shall thing things way kind sort type make made cause become`) {
		lsaStop[w] = true
	}
}

type lsaResult struct {
	dims  int
	words []string    // lemma per vector
	vecs  [][]float64 // unit length
}

func (g *gen) computeLSA(lex *lexicon.Lexicon, dims int, power float64, minDF int, seed int64) lsaResult {
	lemma := func(w string) string {
		if l, ok := lex.Lemma(w); ok {
			return l
		}
		return w
	}
	vocab := map[string]int{}
	var vocabList []string
	id := func(w string) int {
		if i, ok := vocab[w]; ok {
			return i
		}
		vocab[w] = len(vocabList)
		vocabList = append(vocabList, w)
		return len(vocabList) - 1
	}
	keys := make([]key, 0, len(g.syns))
	for k := range g.syns {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].pos != keys[j].pos {
			return keys[i].pos < keys[j].pos
		}
		return keys[i].offset < keys[j].offset
	})
	docs := make([]lsaDoc, 0, len(keys))
	for _, k := range keys {
		s := g.syns[k]
		d := lsaDoc{words: map[int]float64{}}
		addWord := func(w string, c float64) {
			if len(w) < 2 || lsaStop[w] {
				return
			}
			l := lemma(w)
			if lsaStop[l] {
				return
			}
			d.words[id(l)] += c
		}
		for _, m := range s.raw {
			for _, w := range strings.Split(m, "_") {
				addWord(w, 2)
			}
		}
		for _, w := range glossWords(g.gloss[k]) {
			addWord(w, 1)
		}
		for _, h := range s.hyper {
			if hs := g.syns[h]; hs != nil {
				for _, m := range hs.raw {
					for _, w := range strings.Split(m, "_") {
						addWord(w, 1)
					}
				}
			}
		}
		if len(d.words) >= 2 {
			docs = append(docs, d)
		}
	}
	// document frequency and vocabulary filter
	df := make([]int, len(vocabList))
	for _, d := range docs {
		for w := range d.words {
			df[w]++
		}
	}
	keep := make([]int, len(vocabList)) // old -> new+1
	var kept []string
	for i, w := range vocabList {
		if df[i] >= minDF {
			kept = append(kept, w)
			keep[i] = len(kept)
		}
	}
	V, D := len(kept), len(docs)
	// log-entropy weights
	gf := make([]float64, V)
	ent := make([]float64, V)
	for _, d := range docs {
		for _, w := range sortedKeys(d.words) {
			if keep[w] > 0 {
				gf[keep[w]-1] += d.words[w]
			}
		}
	}
	for _, d := range docs {
		for _, w := range sortedKeys(d.words) {
			if j := keep[w] - 1; j >= 0 {
				p := d.words[w] / gf[j]
				ent[j] += p * math.Log(p)
			}
		}
	}
	logD := math.Log(float64(D))
	// CSR by word (rows) and by doc (cols)
	type cell struct {
		r, c int
		v    float64
	}
	var cells []cell
	for j, d := range docs {
		for w, c := range d.words {
			if r := keep[w] - 1; r >= 0 {
				gw := 1 + ent[r]/logD
				cells = append(cells, cell{r, j, math.Log1p(c) * gw})
			}
		}
	}
	// a fixed order, so that float sums (and the output) are reproducible
	sort.Slice(cells, func(a, b int) bool {
		if cells[a].r != cells[b].r {
			return cells[a].r < cells[b].r
		}
		return cells[a].c < cells[b].c
	})
	// A (V x D) times X (D x l) and A^T times Y
	mulA := func(x [][]float64, l int) [][]float64 { // x: D rows of l
		y := make([][]float64, V)
		for i := range y {
			y[i] = make([]float64, l)
		}
		for _, c := range cells {
			yr, xr := y[c.r], x[c.c]
			for t := 0; t < l; t++ {
				yr[t] += c.v * xr[t]
			}
		}
		return y
	}
	mulAT := func(y [][]float64, l int) [][]float64 {
		x := make([][]float64, D)
		for i := range x {
			x[i] = make([]float64, l)
		}
		for _, c := range cells {
			xr, yr := x[c.c], y[c.r]
			for t := 0; t < l; t++ {
				xr[t] += c.v * yr[t]
			}
		}
		return x
	}
	l := dims + 16
	rng := rand.New(rand.NewSource(seed))
	omega := make([][]float64, D)
	for i := range omega {
		omega[i] = make([]float64, l)
		for t := range omega[i] {
			omega[i][t] = rng.NormFloat64()
		}
	}
	Q := orthonormalize(mulA(omega, l), l)
	for it := 0; it < 3; it++ {
		Z := orthonormalize(mulAT(Q, l), l)
		Q = orthonormalize(mulA(Z, l), l)
	}
	Bt := mulAT(Q, l) // D x l  (B = Q^T A is l x D)
	// C = B B^T (l x l)
	C := make([][]float64, l)
	for i := range C {
		C[i] = make([]float64, l)
	}
	for _, row := range Bt {
		for a := 0; a < l; a++ {
			if row[a] == 0 {
				continue
			}
			for b := a; b < l; b++ {
				C[a][b] += row[a] * row[b]
			}
		}
	}
	for a := 0; a < l; a++ {
		for b := 0; b < a; b++ {
			C[a][b] = C[b][a]
		}
	}
	evals, evecs := linalg.JacobiEigen(C)
	order := make([]int, l)
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return evals[order[a]] > evals[order[b]] })
	res := lsaResult{dims: dims}
	for r := 0; r < V; r++ {
		v := make([]float64, dims)
		for t := 0; t < dims; t++ {
			e := order[t]
			sigma := math.Sqrt(math.Max(evals[e], 0))
			var u float64
			for a := 0; a < l; a++ {
				u += Q[r][a] * evecs[a][e]
			}
			v[t] = u * math.Pow(sigma, power)
		}
		var n float64
		for _, x := range v {
			n += x * x
		}
		if n == 0 {
			continue
		}
		n = math.Sqrt(n)
		for t := range v {
			v[t] /= n
		}
		res.words = append(res.words, kept[r])
		res.vecs = append(res.vecs, v)
	}
	return res
}

// orthonormalize returns an orthonormal basis of the columns of m (rows x l),
// by modified Gram-Schmidt, twice for stability.
func orthonormalize(m [][]float64, l int) [][]float64 {
	for pass := 0; pass < 2; pass++ {
		for c := 0; c < l; c++ {
			for p := 0; p < c; p++ {
				var d float64
				for _, row := range m {
					d += row[c] * row[p]
				}
				for _, row := range m {
					row[c] -= d * row[p]
				}
			}
			var n float64
			for _, row := range m {
				n += row[c] * row[c]
			}
			n = math.Sqrt(n)
			if n == 0 {
				continue
			}
			for _, row := range m {
				row[c] /= n
			}
		}
	}
	return m
}

func sortedKeys(m map[int]float64) []int {
	ks := make([]int, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Ints(ks)
	return ks
}
