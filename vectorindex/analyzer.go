package vectorindex

import (
	"math"
	"strings"
	"sync"

	"github.com/sandboxrt/sandbox/vectorindex/internal/domain"
	"github.com/sandboxrt/sandbox/vectorindex/internal/lexicon"
)

// analyzer turns words into canonical terms (lemmas) and finds the words a
// term is related to in WordNet. It holds no per-index state, so one value
// serves every index; its cache only memoises pure functions of the word.
type analyzer struct {
	lex     *lexicon.Lexicon
	dom     *domain.Vectors
	terms   memo[string]    // word -> canonical term
	vectors memo[[]float32] // term -> WordNet word vector (nil: none)
	domVecs memo[[]float32] // term -> software-domain word vector (nil: none)
	related memo[[]weighted]
}

var (
	sharedAnalyzerOnce sync.Once
	sharedAnalyzer     *analyzer
)

// defaultAnalyzer decodes the embedded lexicon and domain vectors on first
// use, the two at once (each is tens of milliseconds of a cold start).
func defaultAnalyzer() *analyzer {
	sharedAnalyzerOnce.Do(func() {
		dom := make(chan *domain.Vectors, 1)
		go func() { dom <- domain.Default() }()
		lex := lexicon.Default()
		sharedAnalyzer = &analyzer{lex: lex, dom: <-dom}
	})
	return sharedAnalyzer
}

// maxCachedWordLen bounds what is memoised, so hostile text with endless
// distinct long "words" cannot grow the cache without bound.
const maxCachedWordLen = 24

// term is the canonical form of a lowercased word: its WordNet lemma
// ("files" -> file, "running" -> run, "stopped" -> stop), or for words WordNet
// does not know (product names, jargon) the word without a plural "s".
// Stopwords give "". When a word has several lemmas the shortest wins, so
// that the same word always maps to the same term on both the document and
// the query side.
func (a *analyzer) term(w string) string {
	if stopwords[w] {
		return ""
	}
	w = truncate(w, 64)
	if v, ok := a.terms.get(w); ok {
		return v
	}
	t := a.lemma(w)
	a.terms.put(w, t)
	return t
}

func (a *analyzer) lemma(w string) string {
	if l, ok := a.lex.Lemma(w); ok {
		return l
	}
	return stripPlural(w)
}

// stripPlural is the fallback lemmatiser for words WordNet does not know.
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

// isKnownWord reports whether WordNet knows the word in some inflection.
func (a *analyzer) isKnownWord(w string) bool { return len(a.lex.Bases(w)) > 0 }

// specificity is how much a word can say about a tool, from 1 for words
// with one sense (or none WordNet knows: product names, jargon) down to
// ~0.5 for words with dozens ("get", "run", "make").
func (a *analyzer) specificity(t string) float64 {
	n := 0
	for _, b := range a.lex.Bases(t) {
		for _, s := range a.lex.Senses(b.Word) {
			if a.lex.POS(s.Synset) == b.POS {
				n++
			}
		}
	}
	return 1 / math.Sqrt(1+math.Log1p(float64(n)))
}

// wordVector is the unit-length WordNet word vector of a term, or nil.
func (a *analyzer) wordVector(t string) []float32 {
	if v, ok := a.vectors.get(t); ok {
		return v
	}
	var out []float32
	if id, ok := a.lex.ID(t); ok {
		if q := a.lex.Vector(id); q != nil {
			out = make([]float32, len(q))
			for i, x := range q {
				out[i] = float32(x)
			}
			l2normalize(out)
		}
	}
	a.vectors.put(t, out)
	return out
}

// domainVector is the unit-length software-domain word vector of a term,
// or nil.
func (a *analyzer) domainVector(t string) []float32 {
	if v, ok := a.domVecs.get(t); ok {
		return v
	}
	var out []float32
	if id, ok := a.dom.ID(t); ok {
		q := a.dom.Vector(id)
		out = make([]float32, len(q))
		for i, x := range q {
			out[i] = float32(x)
		}
		l2normalize(out)
	}
	a.domVecs.put(t, out)
	return out
}

// domainWeight is how much a term's domain vector counts in a text's: by
// its inverse frequency in the training text, so that "use" or "file" say
// less than "redis" or "invoice".
func (a *analyzer) domainWeight(t string) float32 {
	id, ok := a.dom.ID(t)
	if !ok {
		return 0
	}
	c := a.dom.Count(id)
	return float32(max(0.1, math.Log(domTotal/(1+c))))
}

// domTotal is about the number of terms in the text the domain vectors
// were trained on.
const domTotal = 5e6

// hasContent reports whether a text has at least one word that is not a
// stopword.
func (a *analyzer) hasContent(s string) bool {
	found := false
	splitWords(s, func(w string) {
		if !found && a.term(w) != "" {
			found = true
		}
	})
	return found
}
