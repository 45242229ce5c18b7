package vectorindex

import (
	"math"
	"sort"
	"strings"
)

// Weights of the WordNet relations used to expand a query word. A word's
// own lemma weighs 1. The relations were chosen by what each means for a
// tool request, then the numbers set on the development intents only:
//   - derivationally related forms ("deletion" -> delete) say the same act;
//   - synonyms (members of one of the word's senses) usually do, weighted by
//     how common that sense is;
//   - hypernyms ("evict" -> expel, eject) generalise, weighted by their
//     information content so that "act" or "change" add next to nothing;
//   - hyponyms ("remove" -> delete, erase) specialise, and a user saying the
//     general word often means one of them;
//   - "similar" links (verb groups, similar adjectives, also-see).
const (
	wDerived = 0.7
	wSynonym = 0.6
	wHyper   = 0.4
	wHypo    = 0.35
	wSimilar = 0.35

	maxSensesPerBase = 5
	maxHyponyms      = 40 // skip hyponyms of synsets with more (too general)
)

type weighted struct {
	term string
	w    float32
}

// senseWeight is the prior of the r-th sense (0 = most frequent) of a lemma
// with SemCor tag count c: WordNet orders senses by frequency, and a sense
// seen in the corpus is kept up even when it comes late.
func senseWeight(r int, c uint32, maxC uint32) float32 {
	p := float32(1 / math.Pow(float64(r+1), 0.8))
	if maxC > 0 && c > 0 {
		if q := float32(c) / float32(maxC); q > p {
			p = q
		}
	}
	return p
}

// relatedTerms lists the canonical terms WordNet relates to a lowercased
// word, with weights in (0, 1), strongest first, not including the word's
// own term. It does not depend on any index, so it is memoised.
func (a *analyzer) relatedTerms(w string) []weighted {
	if v, ok := a.related.get(w); ok {
		return v
	}
	own := a.term(w)
	best := map[string]float32{}
	add := func(word string, wt float32) {
		if strings.IndexByte(word, '_') >= 0 || wt <= 0.02 {
			return
		}
		t := a.term(word)
		if t == "" || t == own {
			return
		}
		if wt > best[t] {
			best[t] = wt
		}
	}
	lex := a.lex
	for _, b := range lex.Bases(w) {
		for _, r := range lex.Related(b.Word) {
			add(lex.Word(r), wDerived)
		}
		var maxC uint32
		for _, s := range lex.Senses(b.Word) {
			if lex.POS(s.Synset) == b.POS && s.Count > maxC {
				maxC = s.Count
			}
		}
		rank := 0
		for _, s := range lex.Senses(b.Word) {
			if lex.POS(s.Synset) != b.POS {
				continue
			}
			if rank >= maxSensesPerBase {
				break
			}
			p := senseWeight(rank, s.Count, maxC)
			rank++
			for _, m := range lex.Members(s.Synset) {
				add(lex.Word(m), wSynonym*p)
			}
			for _, h := range lex.Hypernyms(s.Synset) {
				for _, m := range lex.Members(h) {
					add(lex.Word(m), wHyper*p*lex.IC(h))
				}
			}
			if hy := lex.Hyponyms(s.Synset); len(hy) <= maxHyponyms {
				for _, o := range hy {
					for _, m := range lex.Members(o) {
						add(lex.Word(m), wHypo*p)
					}
				}
			}
			for _, o := range lex.Similar(s.Synset) {
				for _, m := range lex.Members(o) {
					add(lex.Word(m), wSimilar*p)
				}
			}
		}
	}
	out := make([]weighted, 0, len(best))
	for t, wt := range best {
		out = append(out, weighted{t, wt})
	}
	sortWeighted(out)
	a.related.put(w, out)
	return out
}

// sortWeighted orders by weight, then term, so results are deterministic.
func sortWeighted(ws []weighted) {
	sort.Slice(ws, func(i, j int) bool {
		if ws[i].w != ws[j].w {
			return ws[i].w > ws[j].w
		}
		return ws[i].term < ws[j].term
	})
}
