package vectorindex

import (
	"math"
	"sort"
	"strings"
)

// analyzerVersion names what analyzeDoc produces. Persisted indexes keep
// each tool's analysed terms (see store.go), so bump it whenever analyzeDoc's
// output changes, or restarted servers search stale terms;
// TestAnalyzerVersionNamesTheAnalysis fails until it is bumped.
const analyzerVersion = "terms-v2"

// docTerms is a tool analysed for lexical search: canonical terms with
// field-weighted frequencies, and the distinct surface words (the
// vocabulary misspellings are corrected against).
type docTerms struct {
	terms  []weighted // sorted by term
	length float32
	words  []string
	name   []string // the words of the tool's name, in order
	// values are the terms of the values the tool's input enumerates
	// (status: todo, in_progress, blocked, done): a question naming one
	// ("which tasks are blocked") is answered by a tool that filters by it
	values []string
}

func (a *analyzer) analyzeDoc(t Tool) docTerms {
	tf := map[string]float32{}
	words := map[string]bool{}
	var length float32
	in := readSchema(t.InputSchema)
	for _, f := range t.fields(in) {
		if f.weight == 0 {
			continue
		}
		splitParts(f.text, func(w string, part bool) {
			term := a.term(w)
			if term == "" {
				return
			}
			wt := f.weight
			if part {
				wt *= wPart
			}
			if f.secondary {
				tf[secondaryTerm(term)] += wt
				return
			}
			tf[term] += wt
			length += wt
			words[w] = true
		})
	}
	d := docTerms{length: length, name: splitAll(t.Name), values: a.valueTerms(in)}
	for term, w := range tf {
		d.terms = append(d.terms, weighted{term, w})
	}
	sort.Slice(d.terms, func(i, j int) bool { return d.terms[i].term < d.terms[j].term })
	for w := range words {
		d.words = append(d.words, w)
	}
	sort.Strings(d.words)
	return d
}

// secondaryTerm is the term under which a word of a secondary field (what
// a tool accepts beyond its top-level parameters, what it returns, what its
// server says) is indexed: apart from the tool's own words, so that they
// neither lengthen the tool's text nor make the word one "the tools use"
// (which damps its WordNet relatives, see wordGroups: an enum value
// "past_due" once made "the past day" miss "channel history"). A query word
// matches it beside its own term.
func secondaryTerm(t string) string { return "~" + t }

// valueTerms are the distinct terms of the values a tool's input offers as
// choices (schemaText.choices), sorted.
func (a *analyzer) valueTerms(in schemaText) []string {
	seen := map[string]bool{}
	var out []string
	for _, v := range in.choices {
		splitWords(v, func(w string) {
			if term := a.term(w); term != "" && !seen[term] {
				seen[term] = true
				out = append(out, term)
			}
		})
	}
	sort.Strings(out)
	return out
}

// wPart is the weight of the parts of a camelCase word relative to the
// whole: "GitHub" is mostly github and a little git and hub.
const wPart = 0.5

type posting struct {
	doc int32
	tf  float32
}

// lexIndex is an immutable BM25 index over the analysed tools. Updates build
// a new one (from the cached docTerms, without re-analysing text) and swap
// it in, so searches never see a half-built index.
type lexIndex struct {
	ids      []string
	pos      map[string]int32
	postings map[string][]posting
	// wordDF is, for a word indexed both as a tool's own and apart
	// (secondaryTerm), the number of tools with either: both terms take
	// the word's rarity from it, or a word that most tools say and one
	// returns would count as rare where it is returned.
	wordDF   map[string]int
	length   []float32
	avgLen   float32
	vocab    map[string]string // surface word -> term, for every indexed word
	typo     *typoIndex
	acronyms map[string][]string

	// the index terms' WordNet (LSA) word vectors, for expanding query
	// words by relatedness
	lsa termSpace

	lin *ancestorIndex
}

// BM25 parameters: the usual defaults.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

func buildLexIndex(ids []string, docs []docTerms) *lexIndex {
	ix := &lexIndex{
		ids:      ids,
		postings: map[string][]posting{},
		length:   make([]float32, len(ids)),
		vocab:    map[string]string{},
		pos:      make(map[string]int32, len(ids)),
	}
	for i, id := range ids {
		ix.pos[id] = int32(i)
	}
	var total float64
	for i, d := range docs {
		for _, t := range d.terms {
			ix.postings[t.term] = append(ix.postings[t.term], posting{doc: int32(i), tf: t.w})
		}
		ix.length[i] = d.length
		total += float64(d.length)
	}
	if len(ids) > 0 {
		ix.avgLen = float32(total / float64(len(ids)))
	}
	if ix.avgLen == 0 {
		ix.avgLen = 1
	}
	a := defaultAnalyzer()
	words := []string{}
	for _, d := range docs {
		for _, w := range d.words {
			if _, ok := ix.vocab[w]; !ok {
				ix.vocab[w] = a.term(w)
				words = append(words, w)
			}
		}
	}
	sort.Strings(words)
	ix.typo = newTypoIndex(words)
	names := make([][]string, len(docs))
	for i, d := range docs {
		names[i] = d.name
	}
	ix.acronyms = mineAcronyms(a, names)
	ix.wordDF = map[string]int{}
	terms := make([]string, 0, len(ix.postings))
	for t, ps := range ix.postings {
		own, ok := strings.CutPrefix(t, "~")
		if !ok {
			terms = append(terms, t)
			continue
		}
		if ops := ix.postings[own]; len(ops) > 0 {
			u := unionCount(ops, ps)
			ix.wordDF[t], ix.wordDF[own] = u, u
		}
	}
	sort.Strings(terms)
	ix.lin = buildAncestorIndex(a, terms)
	ix.lsa = newTermSpace(terms, a.lex.VectorDims(), a.wordVector)
	return ix
}

// unionCount is the number of distinct documents in two posting lists,
// each in document order.
func unionCount(a, b []posting) int {
	n, i, j := 0, 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || i < len(a) && a[i].doc < b[j].doc:
			i++
		case i == len(a) || b[j].doc < a[i].doc:
			j++
		default:
			i++
			j++
		}
		n++
	}
	return n
}

func (ix *lexIndex) idf(term string) float32 {
	df := len(ix.postings[term])
	if df == 0 {
		return 0
	}
	if u, ok := ix.wordDF[term]; ok {
		df = u
	}
	n := float64(len(ix.ids))
	return float32(math.Log(1 + (n-float64(df)+0.5)/(float64(df)+0.5)))
}

// hasTerm reports whether some tool contains the term.
func (ix *lexIndex) hasTerm(t string) bool { return len(ix.postings[t]) > 0 }

// score adds to scores (one per document) the BM25 score of each query
// group: within a group (one query word and its expansions) a document
// scores its best-matching term only, so a word with many synonyms does not
// outweigh a word with one.
func (ix *lexIndex) score(groups []queryGroup, scores []float32) {
	best := make([]float32, len(ix.ids))
	var touched []int32
	for _, g := range groups {
		touched = touched[:0]
		for _, t := range g.terms {
			ps := ix.postings[t.term]
			if len(ps) == 0 {
				continue
			}
			idf := ix.idf(t.term) * t.w * g.weight
			for _, p := range ps {
				norm := bm25K1 * (1 - bm25B + bm25B*ix.length[p.doc]/ix.avgLen)
				s := idf * p.tf * (bm25K1 + 1) / (p.tf + norm)
				if best[p.doc] == 0 {
					touched = append(touched, p.doc)
				}
				if s > best[p.doc] {
					best[p.doc] = s
				}
			}
		}
		for _, d := range touched {
			scores[d] += best[d]
			best[d] = 0
		}
	}
}

// termSpace holds unit word vectors of a set of terms, concatenated, to
// find the terms nearest to a query word.
type termSpace struct {
	terms []string
	vecs  []float32
	dims  int
}

func newTermSpace(terms []string, dims int, vec func(string) []float32) termSpace {
	ts := termSpace{dims: dims}
	for _, t := range terms {
		if v := vec(t); v != nil {
			ts.terms = append(ts.terms, t)
			ts.vecs = append(ts.vecs, v...)
		}
	}
	return ts
}

// nearest returns the terms whose vectors are closest to v, with cosine at
// least minCos, best first, at most n.
func (ts *termSpace) nearest(v []float32, minCos float32, n int) []weighted {
	if len(v) != ts.dims || ts.dims == 0 {
		return nil
	}
	var out []weighted
	d := ts.dims
	for i, t := range ts.terms {
		u := ts.vecs[i*d : (i+1)*d]
		var c float32
		for j, x := range v {
			c += x * u[j]
		}
		if c >= minCos {
			out = append(out, weighted{t, c})
		}
	}
	sortWeighted(out)
	if len(out) > n {
		out = out[:n]
	}
	return out
}
