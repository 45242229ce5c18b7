package vectorindex

import "github.com/sandboxrt/sandbox/vectorindex/internal/lexicon"

// Semantic similarity in the WordNet hierarchy (Lin, 1998): two senses are
// as similar as the information content of their most specific common
// ancestor, relative to their own:
//
//	sim(a, b) = 2 IC(lcs(a, b)) / (IC(a) + IC(b))
//
// "evict" and "delete" share the ancestor "remove" and come out ~0.6, though
// no WordNet link joins them directly. It is used to expand query words the
// index does not contain: every index term whose nouns or verbs sit close in
// the hierarchy is added to the word's group, weighted by the similarity.

// Ancestors are followed up to linDepth levels; ancestors less informative
// than linMinIC ("act", "entity", "change") are too general to be evidence.
const (
	linDepth     = 5
	linMinIC     = 0.35
	linSensesPer = 3 // senses per part of speech considered for each word
)

// Weight of a Lin-similar term relative to the query word's own (at sim 1),
// and the least similarity kept.
var (
	linWeight float32 = 0.5
	linMin    float32 = 0.6
)

type ancestorPosting struct {
	term   int32   // index into ancestorIndex.terms
	ic     float32 // IC of the term's sense
	prior  float32 // the sense's weight among the term's senses
	synset int32
}

// ancestorIndex maps each WordNet synset to the index terms having a sense
// at or below it.
type ancestorIndex struct {
	terms []string
	anc   map[int32][]ancestorPosting
}

type senseRef struct {
	synset int32
	prior  float32
}

// nounVerbSenses are a word's most frequent noun and verb senses, with
// their priors.
func nounVerbSenses(lex *lexicon.Lexicon, w string) []senseRef {
	var out []senseRef
	for _, b := range lex.Bases(w) {
		if b.POS != 'n' && b.POS != 'v' {
			continue
		}
		var maxC uint32
		for _, s := range lex.Senses(b.Word) {
			if lex.POS(s.Synset) == b.POS {
				maxC = max(maxC, s.Count)
			}
		}
		rank := 0
		for _, s := range lex.Senses(b.Word) {
			if lex.POS(s.Synset) != b.POS {
				continue
			}
			if rank >= linSensesPer {
				break
			}
			out = append(out, senseRef{s.Synset, senseWeight(rank, s.Count, maxC)})
			rank++
		}
	}
	return out
}

// ancestors calls fn for s and each hypernym up to linDepth levels up, once.
func ancestors(lex *lexicon.Lexicon, s int32, fn func(a int32)) {
	seen := map[int32]bool{s: true}
	level := []int32{s}
	fn(s)
	for d := 0; d < linDepth && len(level) > 0; d++ {
		var next []int32
		for _, x := range level {
			for _, h := range lex.Hypernyms(x) {
				if !seen[h] {
					seen[h] = true
					fn(h)
					next = append(next, h)
				}
			}
		}
		level = next
	}
}

func buildAncestorIndex(a *analyzer, terms []string) *ancestorIndex {
	ix := &ancestorIndex{anc: map[int32][]ancestorPosting{}}
	lex := a.lex
	for _, t := range terms {
		senses := nounVerbSenses(lex, t)
		if len(senses) == 0 {
			continue
		}
		ti := int32(len(ix.terms))
		ix.terms = append(ix.terms, t)
		for _, s := range senses {
			ic := lex.IC(s.synset)
			ancestors(lex, s.synset, func(anc int32) {
				if lex.IC(anc) >= linMinIC {
					ix.anc[anc] = append(ix.anc[anc], ancestorPosting{term: ti, ic: ic, prior: s.prior, synset: s.synset})
				}
			})
		}
	}
	return ix
}

// similarTerms returns the index terms Lin-similar to a word, with
// similarity times the senses' priors, best first.
func (ix *ancestorIndex) similarTerms(a *analyzer, w string) []weighted {
	if ix == nil {
		return nil
	}
	lex := a.lex
	best := map[int32]float32{}
	for _, qs := range nounVerbSenses(lex, w) {
		qic := lex.IC(qs.synset)
		pos := lex.POS(qs.synset)
		ancestors(lex, qs.synset, func(anc int32) {
			aic := lex.IC(anc)
			if aic < linMinIC || lex.POS(anc) != pos {
				return
			}
			for _, p := range ix.anc[anc] {
				if p.synset == qs.synset {
					continue // same sense: a synonym, handled elsewhere
				}
				sim := 2 * aic / (qic + p.ic)
				if sim < linMin {
					continue
				}
				if v := sim * qs.prior * p.prior; v > best[p.term] {
					best[p.term] = v
				}
			}
		})
	}
	out := make([]weighted, 0, len(best))
	for t, v := range best {
		out = append(out, weighted{ix.terms[t], v})
	}
	sortWeighted(out)
	return out
}
