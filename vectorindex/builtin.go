package vectorindex

import (
	"context"
	"math"
	"sort"
	"strconv"
)

// The built-in embedder's vectors are three blocks: hashed sparse WordNet
// features (sparseDims), the dense WordNet word vectors (lsaDims), then the
// software-domain word vectors (as long as internal/domain's, 128).
const (
	sparseDims = 512
	lsaDims    = 64
)

// builtinVersion names the built-in vector space; bump it whenever the
// features or weights below change so persisted vectors are recomputed.
const builtinVersion = "builtin-wordnet-domain-v2"

// builtinEmbedder maps text into a space of WordNet concepts, offline and in
// pure Go. Each word contributes, as hashed features of a fixed-size vector:
//
//   - its lemma, and its derivationally related lemmas;
//   - the synsets of its most frequent senses, and their hypernyms one and
//     two levels up, weighted by the sense's frequency and the hypernym's
//     information content;
//   - the character trigrams of its lemma, so that a misspelt word still
//     lands near the right one.
//
// Two texts that share no word still come out close when their words share
// senses or ancestors ("evict" and "delete" both sit under "remove"). Each
// word's features are scaled to unit length, then by how specific the word
// is (a word with 36 senses, like "get", says less than one with 2) and by
// the square root of its weight in the text, so that no single word
// dominates. Feature hashing uses a fixed hash (FNV-1a) with a sign bit, so
// vectors are reproducible across processes and can be persisted.
//
// Beside them go two dense blocks: the sum of the words' WordNet (LSA) word
// vectors, and the sum of their software-domain word vectors (learnt from
// Debian's package descriptions and the Linux manual pages, see
// internal/domain), each word weighted by the square root of its weight in
// the text and by how rare it is in that text about software.
type builtinEmbedder struct {
	a     *analyzer
	cache memo[[]feature]
}

type feature struct {
	idx int32
	val float32
}

func newBuiltinEmbedder() *builtinEmbedder { return &builtinEmbedder{a: defaultAnalyzer()} }

func (e *builtinEmbedder) id() string   { return builtinVersion }
func (e *builtinEmbedder) remote() bool { return false }

func (e *builtinEmbedder) embedTool(_ context.Context, t Tool) ([]float32, error) {
	return e.embedFields(t.embedFields()), nil
}

func (e *builtinEmbedder) embedQuery(_ context.Context, q string) ([]float32, error) {
	return e.embedFields(intentFields(q)), nil
}

func (e *builtinEmbedder) embedFields(fs []field) []float32 {
	tw := map[string]float32{}
	for _, f := range fs {
		splitParts(f.text, func(w string, part bool) {
			if t := e.a.term(w); t != "" {
				if part {
					tw[t] += f.weight * wPart
				} else {
					tw[t] += f.weight
				}
			}
		})
	}
	terms := make([]string, 0, len(tw))
	for t := range tw {
		terms = append(terms, t)
	}
	sort.Strings(terms) // float sums in a fixed order: same text, same bits
	v := make([]float32, sparseDims+lsaDims+e.a.dom.Dims())
	sparse, dense, dom := v[:sparseDims], v[sparseDims:sparseDims+lsaDims], v[sparseDims+lsaDims:]
	lex := e.a.lex
	for _, t := range terms {
		if dv := e.a.domainVector(t); dv != nil {
			w := float32(math.Sqrt(float64(tw[t]))) * e.a.domainWeight(t)
			for i, x := range dv {
				dom[i] += w * x
			}
		}
		scale := float32(math.Sqrt(float64(tw[t])))
		for _, f := range e.termFeatures(t) {
			sparse[f.idx] += scale * f.val
		}
		if dv := e.a.wordVector(t); dv != nil {
			spec := float32(e.a.specificity(t))
			for i, x := range dv {
				dense[i] += scale * spec * x
			}
		}
	}
	_ = lex
	// v = [sqrt(a) sparse, sqrt(b) dense, sqrt(c) dom] with a+b+c = 1: the
	// dot product of two such vectors is a*cos(sparse) + b*cos(dense) +
	// c*cos(dom). (A block without any known word stays zero.)
	scaleUnit(sparse, float32(math.Sqrt(sparseShare)))
	scaleUnit(dense, float32(math.Sqrt(lsaShare)))
	scaleUnit(dom, float32(math.Sqrt(1-sparseShare-lsaShare)))
	l2normalize(v)
	return v
}

// reweight rescales the blocks of a query vector so that its dot product
// with a tool's vector is a mix of the three blocks' cosines that depends
// on the query's coverage (see coverage): blockDirect when the tools use
// all of its words, blockPara when they use none (a paraphrase: there the
// WordNet features, which mostly reward shared words and senses, say less
// and the software-domain vectors more). The result is not normalised:
// that would scale every dot product alike and leave the ranking as it is.
func (e *builtinEmbedder) reweight(qv []float32, cov float64) []float32 {
	shares := [3]float64{sparseShare, lsaShare, 1 - sparseShare - lsaShare}
	if len(qv) <= sparseDims+lsaDims {
		return qv
	}
	bounds := [4]int{0, sparseDims, sparseDims + lsaDims, len(qv)}
	out := make([]float32, len(qv))
	for b := 0; b < 3; b++ {
		if shares[b] <= 0 {
			continue
		}
		w := cov*blockDirect[b] + (1-cov)*blockPara[b]
		f := float32(w / shares[b])
		for i := bounds[b]; i < bounds[b+1]; i++ {
			out[i] = qv[i] * f
		}
	}
	l2normalize(out)
	return out
}

// Weights of the sparse, WordNet-dense and domain-dense cosines in the
// vector score, for a query whose words the tools all use (blockDirect) and
// for one whose words they use none of (blockPara); set on the development
// intents and the first held-out set. More domain weight for direct intents
// cost recall on the development set; for paraphrases, 0.3-0.5 were all
// within one intent of each other.
var (
	blockDirect = [3]float64{0.45, 0.45, 0.1}
	blockPara   = [3]float64{0.3, 0.3, 0.4}
)

// scaleUnit scales v to length s; a zero v stays zero.
func scaleUnit(v []float32, s float32) {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if n == 0 {
		return
	}
	f := s / float32(math.Sqrt(n))
	for i := range v {
		v[i] *= f
	}
}

// Feature weights, relative to the lemma's own 1.
const (
	fDerived = 0.5
	fSense   = 0.8
	fHyper1  = 0.5
	fHyper2  = 0.25
	fTrigram = 0.35 // spread over the word's trigrams
	fSenses  = 3    // senses per part of speech
)

func (e *builtinEmbedder) termFeatures(t string) []feature {
	if v, ok := e.cache.get(t); ok {
		return v
	}
	acc := map[int32]float32{}
	add := func(key string, w float32) {
		h := fnv1a(key)
		idx := int32(h % sparseDims)
		if h>>63 == 1 {
			w = -w
		}
		acc[idx] += w
	}
	lex := e.a.lex
	add("w:"+t, 1)
	for _, b := range lex.Bases(t) {
		for i, r := range lex.Related(b.Word) {
			if i >= 6 {
				break
			}
			if rt := e.a.term(lex.Word(r)); rt != "" && rt != t {
				add("w:"+rt, fDerived)
			}
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
			if rank >= fSenses {
				break
			}
			p := senseWeight(rank, s.Count, maxC)
			rank++
			add("s:"+strconv.Itoa(int(s.Synset)), fSense*p)
			for _, h := range lex.Hypernyms(s.Synset) {
				add("s:"+strconv.Itoa(int(h)), fHyper1*p*lex.IC(h))
				for _, h2 := range lex.Hypernyms(h) {
					add("s:"+strconv.Itoa(int(h2)), fHyper2*p*lex.IC(h2))
				}
			}
		}
	}
	padded := "<" + t + ">"
	if n := len(padded) - 2; n > 0 {
		w := float32(fTrigram / math.Sqrt(float64(n)))
		for i := 0; i+3 <= len(padded); i++ {
			add("c:"+padded[i:i+3], w)
		}
	}
	// unit length, then scaled by specificity
	var norm float64
	for _, x := range acc {
		norm += float64(x) * float64(x)
	}
	if norm == 0 {
		return nil
	}
	spec := e.a.specificity(t)
	scale := float32(spec / math.Sqrt(norm))
	out := make([]feature, 0, len(acc))
	for i, x := range acc {
		out = append(out, feature{i, x * scale})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].idx < out[j].idx })
	e.cache.put(t, out)
	return out
}

func fnv1a(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// sparseShare and lsaShare are the shares of the hashed WordNet features and
// of the WordNet word vectors in the stored vectors' similarity; the rest
// is the domain vectors'. They are blockDirect's, so that a query vector
// that is not reweighted scores like a direct intent's; reweight divides
// them out.
var (
	sparseShare = 0.45
	lsaShare    = 0.45
)
