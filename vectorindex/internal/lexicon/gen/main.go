// Command gen builds the compact lexical resource that vectorindex embeds
// (../wordnet.bin) from a WordNet 3.0 database as Debian's wordnet-base
// package installs it:
//
//	apt-get install wordnet-base
//	go generate ./vectorindex/internal/lexicon
//
// It keeps what lemmatisation and query expansion need and drops the rest
// (glosses, example sentences, verb frames, most pointer kinds):
//
//   - every lemma of one or two words, lowercased;
//   - for each lemma, its senses in WordNet's order (most frequent first) with
//     the SemCor tag count from cntlist.rev;
//   - for each synset: its member lemmas, its hypernyms (with instance
//     hypernyms), its "similar" links (similar to, also see, verb group,
//     entailment) and an information-content weight from how many synsets sit
//     below it, so that generic synsets ("act", "entity") weigh ~0;
//   - derivationally related forms and pertainyms, word to word;
//   - the irregular inflections of the four exception lists (*.exc).
//
// The output is deterministic: the same input gives the same bytes.
package main

import (
	"bufio"
	"encoding/binary"
	"flag"
	"fmt"
	"log"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/sandboxrt/sandbox/vectorindex/internal/lexicon"
)

// Format (integers are unsigned varints), read by ../lexicon.go:
//
//	magic "SBXLEX2\n"
//	nWords; each word front-coded against the previous (sorted bytewise):
//	    sharedPrefixLen, suffixLen, suffix bytes
//	nSynsets; each synset: pos byte ('n','v','a','r'), ic byte,
//	    nMembers, word ids; nHypernyms, synset ids; nSimilar, synset ids
//	for each word id in order: nSenses, then (synset id, tag count) pairs;
//	    nRelated, word ids
//	nExceptions; each: surface word id, pos byte, base word id
const magic = "SBXLEX2\n"

type key struct {
	pos    byte
	offset int
}

type synset struct {
	k       key
	raw     []string // every member lemma, lowercased, in file order
	hyper   []key
	similar []key
	ic      byte
	id      int
}

type lexPtr struct {
	from   string
	target key
	tgtIdx int // 1-based word number in the target synset
}

type sense struct {
	syn   key
	count int
}

type gen struct {
	gloss      map[key]string
	syns       map[key]*synset
	senseKey   map[string]key // "lemma%sstype:lexfile:lexid" -> synset
	counts     map[key]map[string]int
	senses     map[string][]sense
	related    map[string]map[string]bool
	exc        [][3]string // surface, pos, base
	words      map[string]bool
	pendingLex []lexPtr
}

var posFiles = []struct {
	file string
	pos  byte
}{{"noun", 'n'}, {"verb", 'v'}, {"adj", 'a'}, {"adv", 'r'}}

func main() {
	dir := flag.String("wordnet", "/usr/share/wordnet", "WordNet 3.0 dict directory (Debian package wordnet-base)")
	out := flag.String("o", "wordnet.bin", "output file")
	dims := flag.Int("dims", 64, "dimensions of the LSA word vectors (0: none)")
	power := flag.Float64("power", 0.5, "exponent of the singular values in the word vectors")
	minDF := flag.Int("mindf", 3, "minimum number of synsets a word must occur in to get a vector")
	probe := flag.String("probe", "", "comma-separated words: print their nearest neighbours and exit")
	flag.Parse()
	if _, err := os.Stat(filepath.Join(*dir, "data.noun")); err != nil {
		log.Fatalf("no WordNet database in %s (%v): install it with `apt-get install wordnet-base` or pass -wordnet DIR", *dir, err)
	}
	g := &gen{
		gloss:    map[key]string{},
		syns:     map[key]*synset{},
		senseKey: map[string]key{},
		counts:   map[key]map[string]int{},
		senses:   map[string][]sense{},
		related:  map[string]map[string]bool{},
		words:    map[string]bool{},
	}
	for _, p := range posFiles {
		g.readData(filepath.Join(*dir, "data."+p.file), p.pos)
	}
	g.resolveLex()
	g.readCounts(filepath.Join(*dir, "cntlist.rev"))
	for _, p := range posFiles {
		g.readIndex(filepath.Join(*dir, "index."+p.file), p.pos)
		g.readExc(filepath.Join(*dir, p.file+".exc"), p.pos)
	}
	g.computeIC()
	data, nWords, nSyn := g.encode(lsaResult{})
	nVec := 0
	if *dims > 0 {
		lex, err := lexicon.Decode(data)
		if err != nil {
			log.Fatalf("decoding the lexicon just built: %v", err)
		}
		res := g.computeLSA(lex, *dims, *power, *minDF, 1)
		if *probe != "" {
			probeLSA(res, strings.Split(*probe, ","))
			return
		}
		data, _, _ = g.encode(res)
		nVec = len(res.words)
	}
	if err := os.WriteFile(*out, data, 0o644); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("lexicon: %d words, %d synsets, %d exceptions, %d word vectors: %d bytes -> %s\n",
		nWords, nSyn, len(g.exc), nVec, len(data), *out)
}

func probeLSA(res lsaResult, words []string) {
	idx := map[string]int{}
	for i, w := range res.words {
		idx[w] = i
	}
	for _, w := range words {
		i, ok := idx[w]
		if !ok {
			fmt.Printf("%s: no vector\n", w)
			continue
		}
		type nb struct {
			w string
			s float64
		}
		var nbs []nb
		for j, v := range res.vecs {
			var d float64
			for t := range v {
				d += v[t] * res.vecs[i][t]
			}
			nbs = append(nbs, nb{res.words[j], d})
		}
		sort.Slice(nbs, func(a, b int) bool { return nbs[a].s > nbs[b].s })
		fmt.Printf("%s:", w)
		for _, n := range nbs[1:16] {
			fmt.Printf(" %s %.2f", n.w, n.s)
		}
		fmt.Println()
	}
}

// normLemma lowercases a WordNet lemma and strips adjective markers such as
// "(p)"; ok is false for lemmas of more than two words, which a query
// analyser that looks at one or two tokens at a time never asks for.
func normLemma(w string) (lemma string, ok bool) {
	if i := strings.IndexByte(w, '('); i > 0 {
		w = w[:i]
	}
	w = strings.ToLower(w)
	return w, w != "" && strings.Count(w, "_") <= 1
}

func eachLine(path string, fn func(line string)) {
	f, err := os.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<22)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == ' ' { // license header lines
			continue
		}
		fn(line)
	}
	if err := sc.Err(); err != nil {
		log.Fatal(err)
	}
}

var ssTypeNum = map[string]string{"n": "1", "v": "2", "a": "3", "r": "4", "s": "5"}

func normPos(p byte) byte {
	if p == 's' {
		return 'a'
	}
	return p
}

func (g *gen) readData(path string, pos byte) {
	eachLine(path, func(line string) {
		gloss := ""
		if i := strings.Index(line, " | "); i >= 0 {
			line, gloss = line[:i], line[i+3:]
		}
		f := strings.Fields(line)
		off, _ := strconv.Atoi(f[0])
		g.gloss[key{pos, off}] = gloss
		lexfile, ssType := f[1], f[2]
		wcnt, _ := strconv.ParseInt(f[3], 16, 32)
		s := &synset{k: key{pos, off}}
		i := 4
		for j := 0; j < int(wcnt); j++ {
			word, lexID := f[i], f[i+1]
			i += 2
			lw, ok := normLemma(word)
			s.raw = append(s.raw, lw)
			lid, _ := strconv.ParseInt(lexID, 16, 32)
			g.senseKey[fmt.Sprintf("%s%%%s:%s:%02d", lw, ssTypeNum[ssType], lexfile, lid)] = s.k
			if ok {
				g.words[lw] = true
			}
		}
		pcnt, _ := strconv.Atoi(f[i])
		i++
		for j := 0; j < pcnt; j++ {
			sym, toff, tpos, st := f[i], f[i+1], f[i+2], f[i+3]
			i += 4
			o, _ := strconv.Atoi(toff)
			t := key{normPos(tpos[0]), o}
			switch sym {
			case "@", "@i":
				s.hyper = append(s.hyper, t)
			case "&", "^", "$", "*":
				s.similar = append(s.similar, t)
			case "+", "\\", "<":
				src, _ := strconv.ParseInt(st[:2], 16, 32)
				dst, _ := strconv.ParseInt(st[2:], 16, 32)
				if src > 0 && int(src) <= len(s.raw) && dst > 0 {
					// s.raw is complete: pointers follow the word list.
					g.pendingLex = append(g.pendingLex, lexPtr{from: s.raw[src-1], target: t, tgtIdx: int(dst)})
				}
			}
		}
		g.syns[s.k] = s
	})
}

// resolveLex turns word-to-word pointers (derivation, pertainym, participle)
// into symmetric related-word links once every synset is known.
func (g *gen) resolveLex() {
	for _, p := range g.pendingLex {
		s := g.syns[p.target]
		if s == nil || p.tgtIdx > len(s.raw) {
			continue
		}
		w := s.raw[p.tgtIdx-1]
		if w == p.from || !g.words[p.from] || !g.words[w] {
			continue
		}
		for _, pair := range [][2]string{{p.from, w}, {w, p.from}} {
			if g.related[pair[0]] == nil {
				g.related[pair[0]] = map[string]bool{}
			}
			g.related[pair[0]][pair[1]] = true
		}
	}
}

// readCounts reads cntlist.rev: "sense_key sense_number tag_cnt".
func (g *gen) readCounts(path string) {
	eachLine(path, func(line string) {
		f := strings.Fields(line)
		if len(f) != 3 {
			return
		}
		sk := f[0] // lemma%ss_type:lex_filenum:lex_id:head_word:head_id
		parts := strings.Split(sk, ":")
		if len(parts) < 3 {
			return
		}
		k, ok := g.senseKey[strings.Join(parts[:3], ":")]
		if !ok {
			return
		}
		n, _ := strconv.Atoi(f[2])
		lemma := sk[:strings.IndexByte(sk, '%')]
		if g.counts[k] == nil {
			g.counts[k] = map[string]int{}
		}
		g.counts[k][lemma] += n
	})
}

// readIndex reads "lemma pos synset_cnt p_cnt [ptr...] sense_cnt tagsense_cnt offsets...":
// the offsets are the lemma's senses, most frequent first.
func (g *gen) readIndex(path string, pos byte) {
	eachLine(path, func(line string) {
		f := strings.Fields(line)
		lemma, ok := normLemma(f[0])
		if !ok {
			return
		}
		synCnt, _ := strconv.Atoi(f[2])
		pCnt, _ := strconv.Atoi(f[3])
		offs := f[4+pCnt+2:]
		if len(offs) != synCnt {
			log.Fatalf("%s: malformed index line %q", path, line)
		}
		for _, o := range offs {
			off, _ := strconv.Atoi(o)
			k := key{pos, off}
			if g.syns[k] == nil {
				log.Fatalf("%s: %s points at missing synset %v", path, lemma, k)
			}
			g.senses[lemma] = append(g.senses[lemma], sense{syn: k, count: g.counts[k][lemma]})
		}
	})
}

func (g *gen) readExc(path string, pos byte) {
	eachLine(path, func(line string) {
		f := strings.Fields(line)
		if len(f) < 2 {
			return
		}
		surface, ok := normLemma(f[0])
		if !ok {
			return
		}
		for _, b := range f[1:] {
			base, ok := normLemma(b)
			if !ok || !g.words[base] {
				continue
			}
			g.words[surface] = true
			g.exc = append(g.exc, [3]string{surface, string(pos), base})
		}
	})
}

// computeIC gives each synset an information-content weight in 0..255:
// IC = -log(P(s)) with P(s) the share of the synsets of its part of speech
// that sit at or below s in the hypernym hierarchy (a synset reached by two
// paths counts twice, which keeps the count a simple, order-independent
// recursion), scaled by the largest possible IC. Adjective and adverb
// synsets have no hierarchy and all get the maximum.
func (g *gen) computeIC() {
	children := map[key][]key{}
	for k, s := range g.syns {
		for _, h := range s.hyper {
			children[h] = append(children[h], k)
		}
	}
	below := map[key]float64{}
	onPath := map[key]bool{}
	var count func(k key) float64
	count = func(k key) float64 {
		if n, ok := below[k]; ok {
			return n
		}
		if onPath[k] { // WordNet has no hypernym cycles, but do not trust input
			return 0
		}
		onPath[k] = true
		n := 1.0
		for _, c := range children[k] {
			n += count(c)
		}
		onPath[k] = false
		below[k] = n
		return n
	}
	total := map[byte]float64{}
	for k, s := range g.syns {
		if len(s.hyper) == 0 {
			total[k.pos] += count(k) // roots
		}
	}
	for k, s := range g.syns {
		if k.pos != 'n' && k.pos != 'v' {
			s.ic = 255
			continue
		}
		ic := -math.Log(count(k) / total[k.pos])
		s.ic = byte(math.Round(255 * math.Min(1, ic/math.Log(total[k.pos]))))
	}
}

func (g *gen) encode(lsa lsaResult) (data []byte, nWords, nSyn int) {
	words := make([]string, 0, len(g.words))
	for w := range g.words {
		words = append(words, w)
	}
	sort.Strings(words)
	wid := make(map[string]int, len(words))
	for i, w := range words {
		wid[w] = i
	}
	// Synsets in a fixed order: by pos then offset.
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
	for i, k := range keys {
		g.syns[k].id = i
	}
	var b []byte
	put := func(v int) { b = binary.AppendUvarint(b, uint64(v)) }
	b = append(b, magic...)
	put(len(words))
	prev := ""
	for _, w := range words {
		p := 0
		for p < len(w) && p < len(prev) && w[p] == prev[p] {
			p++
		}
		put(p)
		put(len(w) - p)
		b = append(b, w[p:]...)
		prev = w
	}
	put(len(keys))
	for _, k := range keys {
		s := g.syns[k]
		b = append(b, k.pos, s.ic)
		var members []int
		for _, w := range s.raw {
			if id, ok := wid[w]; ok {
				members = append(members, id)
			}
		}
		put(len(members))
		for _, m := range members {
			put(m)
		}
		for _, list := range [][]key{s.hyper, s.similar} {
			var ids []int
			for _, t := range list {
				if ts := g.syns[t]; ts != nil {
					ids = append(ids, ts.id)
				}
			}
			put(len(ids))
			for _, id := range ids {
				put(id)
			}
		}
	}
	for _, w := range words {
		ss := g.senses[w]
		put(len(ss))
		for _, s := range ss {
			put(g.syns[s.syn].id)
			put(s.count)
		}
		rel := make([]int, 0, len(g.related[w]))
		for r := range g.related[w] {
			rel = append(rel, wid[r])
		}
		sort.Ints(rel)
		put(len(rel))
		for _, r := range rel {
			put(r)
		}
	}
	sort.Slice(g.exc, func(i, j int) bool {
		a, c := g.exc[i], g.exc[j]
		if a[0] != c[0] {
			return a[0] < c[0]
		}
		if a[1] != c[1] {
			return a[1] < c[1]
		}
		return a[2] < c[2]
	})
	put(len(g.exc))
	for _, e := range g.exc {
		put(wid[e[0]])
		b = append(b, e[1][0])
		put(wid[e[2]])
	}
	// word vectors: dims, count, then (word id delta, dims int8) sorted by id
	type wv struct {
		id  int
		vec []float64
	}
	var wvs []wv
	for i, w := range lsa.words {
		if id, ok := wid[w]; ok {
			wvs = append(wvs, wv{id, lsa.vecs[i]})
		}
	}
	sort.Slice(wvs, func(i, j int) bool { return wvs[i].id < wvs[j].id })
	put(lsa.dims)
	if lsa.dims > 0 {
		put(len(wvs))
		prevID := 0
		for _, x := range wvs {
			put(x.id - prevID)
			prevID = x.id
			var m float64
			for _, f := range x.vec {
				m = math.Max(m, math.Abs(f))
			}
			for _, f := range x.vec {
				b = append(b, byte(int8(math.Round(f/m*127))))
			}
		}
	}
	return b, len(words), len(keys)
}
