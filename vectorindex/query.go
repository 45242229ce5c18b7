package vectorindex

import (
	"math"
	"sort"
	"strings"
)

// queryGroup is one word of the intent with the terms that stand for it:
// its own lemma, corrections when it is misspelt, abbreviations spelled
// out, and WordNet relatives that occur in the index.
type queryGroup struct {
	word   string
	weight float32
	terms  []weighted
	// strong are the terms that are the word itself: its lemma, a
	// correction of its spelling, the phrase it abbreviates, the one word
	// the tools write for two ("log in" -> login). The rest of terms are
	// its relatives, which rank but do not make a match (Hit.Weak).
	strong []string
}

// Weights of the non-WordNet rewrites of a query word (WordNet relations are
// in expand.go).
const (
	wTypo1     = 0.85 // one edit away from an indexed word
	wTypo2     = 0.55 // two edits away (long words only)
	wTypoKnown = 0.5  // factor when the word is itself English: maybe no typo
	wPrefix    = 0.5  // "repo" -> repository, "env" -> environment
	wAcronym   = 0.8  // "pr" -> pull request, mined from the tool names
	maxRelated = 30   // WordNet relatives kept per word
	// wRelatedWhenMatched damps WordNet relatives of a word the index has.
	wRelatedWhenMatched = 0.35
	maxTypoCands        = 4
)

// queryGroups analyses one intent (or one step of it) against an index.
// A camelCase word is taken whole when the index or WordNet knows it
// ("GitHub"), else by its parts ("createIssue" -> create, issue).
func (a *analyzer) queryGroups(text string, ix *lexIndex) []queryGroup {
	var groups []queryGroup
	at := map[string]int{} // term -> index in groups
	for _, f := range intentFields(text) {
		skipParts := false
		prev := ""
		splitParts(f.text, func(w string, part bool) {
			if part && skipParts {
				return
			}
			if !part {
				skipParts = false
				// two words the tools write as one: "check out" -> checkout,
				// "log in" -> login, "drop down" -> dropdown
				if prev != "" {
					joined := prev + w
					if jt, ok := ix.vocab[joined]; ok && jt != "" {
						if _, dup := at[jt]; !dup {
							at[jt] = len(groups)
							groups = append(groups, queryGroup{word: joined, weight: f.weight, terms: []weighted{{jt, 1}}, strong: []string{jt}})
						}
					}
				}
				prev = w
			}
			own := a.term(w)
			if own == "" {
				return
			}
			if !part && strings.IndexFunc(w, isDigit) < 0 {
				// a whole word that may have parts coming: keep it whole if known
				_, inVocab := ix.vocab[w]
				if inVocab || ix.hasTerm(own) || a.isKnownWord(w) {
					skipParts = true
				}
			}
			if i, ok := at[own]; ok {
				groups[i].weight = max(groups[i].weight, f.weight)
				return
			}
			for _, g := range a.wordGroups(w, own, ix) {
				g.weight *= f.weight
				if len(g.terms) > 0 && g.terms[0].term == own {
					at[own] = len(groups)
				}
				groups = append(groups, g)
			}
		})
	}
	return groups
}

func isDigit(r rune) bool { return r >= '0' && r <= '9' }

func (a *analyzer) wordGroups(w, own string, ix *lexIndex) []queryGroup {
	g := queryGroup{word: w, weight: 1}
	best := map[string]float32{}
	add := func(t string, wt float32) {
		if t != "" && wt > best[t] && ix.hasTerm(t) {
			best[t] = wt
		}
	}
	add(own, 1)
	if ix.hasTerm(own) {
		g.strong = append(g.strong, own)
	}
	_, inVocab := ix.vocab[w]
	known := a.isKnownWord(w)
	if !inVocab && !ix.hasTerm(own) {
		maxDist := 1
		if len(w) >= 7 {
			maxDist = 2
		}
		cands := ix.typo.lookup(w, maxDist)
		if len(cands) > maxTypoCands {
			cands = cands[:maxTypoCands]
		}
		for _, c := range cands {
			wt := float32(wTypo1)
			if c.dist > 1 {
				wt = wTypo2
			}
			if known {
				wt *= wTypoKnown
			}
			add(ix.vocab[c.word], wt)
			if t := ix.vocab[c.word]; t != "" && !known {
				g.strong = append(g.strong, t)
			}
		}
		if len(w) >= 2 && len(w) <= 5 {
			for _, v := range ix.prefixed(w, 4) {
				add(ix.vocab[v], wPrefix)
			}
		}
	}
	// WordNet relatives: in full when the word itself is not in the index
	// (the user's word is not the tools' word: a paraphrase), damped when
	// it is (the tools already use the user's word, in the sense they mean).
	damp := float32(1)
	if ix.hasTerm(own) {
		damp = wRelatedWhenMatched
	}
	related := a.relatedTerms(w)
	n := 0
	for _, r := range related {
		if n >= maxRelated {
			break
		}
		if ix.hasTerm(r.term) {
			add(r.term, r.w*damp)
			n++
		}
	}
	// Related by the word vectors (words that define one another in
	// WordNet's glosses) and by Lin similarity in the hierarchy, for words
	// the tools do not use.
	if !ix.hasTerm(own) {
		for i, r := range ix.lin.similarTerms(a, w) {
			if i >= linMaxTerms {
				break
			}
			add(r.term, linWeight*r.w)
		}
		if v := a.wordVector(own); v != nil {
			for _, r := range ix.lsa.nearest(v, lsaMinCos, lsaMaxTerms) {
				if r.term != own {
					add(r.term, lsaWeight*(r.w-lsaMinCos)/(1-lsaMinCos))
				}
			}
		}
	}
	// what the tools accept and return, and what their servers say,
	// indexed apart: matched by the word itself and its corrections
	for _, t := range g.strong {
		if st := secondaryTerm(t); ix.hasTerm(st) {
			best[st] = 1
		}
	}
	if !ix.hasTerm(own) {
		if st := secondaryTerm(own); ix.hasTerm(st) {
			best[st] = 1
			g.strong = append(g.strong, st)
		}
	}
	for t, wt := range best {
		g.terms = append(g.terms, weighted{t, wt})
	}
	sortWeighted(g.terms)
	groups := []queryGroup{g}
	if phrase, ok := ix.acronyms[w]; ok {
		for _, pw := range phrase {
			groups = append(groups, queryGroup{word: w, weight: wAcronym, terms: []weighted{{pw, 1}}, strong: []string{pw}})
		}
	}
	return groups
}

// prefixed returns up to max indexed words that start with p and are at
// least two letters longer (abbreviations: "repo", "dir", "env", "config").
func (ix *lexIndex) prefixed(p string, max int) []string {
	words := ix.typo.words
	i := sort.SearchStrings(words, p)
	var out []string
	for ; i < len(words) && strings.HasPrefix(words[i], p) && len(out) < max; i++ {
		if len(words[i]) >= len(p)+2 {
			out = append(out, words[i])
		}
	}
	return out
}

// mineAcronyms finds the two- and three-word phrases of the tool names
// ("pull_request", "merge_request") and maps their initials ("pr", "mr") to
// the phrase's terms, when the phrase occurs in the names of at least
// minAcronymTools tools. That is how "fetch open PRs" reaches
// list_pull_requests without a hand-made list of abbreviations.
func mineAcronyms(a *analyzer, names [][]string) map[string][]string {
	const minAcronymTools = 3
	count := map[string]int{}
	for _, words := range names {
		seen := map[string]bool{}
		for n := 2; n <= 3; n++ {
			for i := 0; i+n <= len(words); i++ {
				ph := strings.Join(words[i:i+n], " ")
				if !seen[ph] {
					seen[ph] = true
					count[ph]++
				}
			}
		}
	}
	byAcr := map[string]string{}
	for ph, c := range count {
		if c < minAcronymTools {
			continue
		}
		acr := ""
		for _, w := range strings.Fields(ph) {
			acr += w[:1]
		}
		if stopwords[acr] {
			continue
		}
		// the most frequent phrase wins; ties by phrase for determinism
		if old, ok := byAcr[acr]; !ok || c > count[old] || c == count[old] && ph < old {
			byAcr[acr] = ph
		}
	}
	out := map[string][]string{}
	for acr, ph := range byAcr {
		var terms []string
		for _, w := range strings.Fields(ph) {
			if t := a.term(w); t != "" {
				terms = append(terms, t)
			}
		}
		if len(terms) < 2 {
			continue
		}
		out[acr] = terms
		out[acr+"s"] = terms // "PRs"
	}
	return out
}

// l2normalize scales v to unit length in place; a zero vector becomes the
// first unit vector so that cosine similarity is never NaN.
func l2normalize(v []float32) {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	if s == 0 || math.IsNaN(s) || math.IsInf(s, 0) {
		for i := range v {
			v[i] = 0
		}
		if len(v) > 0 {
			v[0] = 1
		}
		return
	}
	inv := float32(1 / math.Sqrt(s))
	for i := range v {
		v[i] *= inv
	}
}

// Expansion by word vectors: index terms at least lsaMinCos from the query
// word, weighted from 0 (at lsaMinCos) to lsaWeight (identical).
var (
	linMaxTerms         = 10
	lsaMinCos   float32 = 0.5
	lsaWeight   float32 = 0.6
	lsaMaxTerms         = 5
)
