// Command gen builds the software-domain word vectors that vectorindex
// embeds (../domain.bin) from real text about software that a Debian
// machine gets from its own package manager, offline once fetched:
//
//   - the English descriptions of every package in Debian's main archive
//     (apt's Translation-en index; `apt-get update -o Acquire::Languages=en`);
//   - the manual pages of the Linux man-pages project (Debian packages
//     manpages and manpages-dev).
//
// Each word gets a vector from the positive pointwise mutual information of
// the words within two words of it (context distribution smoothed), reduced
// by a truncated SVD: words used in the same contexts end up close
// ("invoice", "customer", "purchase"; "directory", "subdirectory", "path").
// See PROVENANCE.md for the sources, their licenses and how to rebuild, and
// docs/vectorindex.md for what the vectors are used for. The output is
// deterministic: the same inputs give the same bytes.
package main

import (
	"encoding/hex"
	"flag"
	"fmt"
	"log"
	"math"
	"os"
	"os/exec"
	"sort"
	"strings"
	"time"

	"github.com/sandboxrt/sandbox/vectorindex/internal/lexicon"
)

func main() {
	lists := flag.String("lists", "/var/lib/apt/lists", "apt's lists directory")
	suite := flag.String("suite", "bookworm", "Debian suite whose package descriptions to read")
	manPkgs := flag.String("man", "manpages,manpages-dev", "comma-separated Debian packages whose manual pages to read")
	out := flag.String("o", "domain.bin", "output file")
	vocabN := flag.Int("vocab", 40000, "most words that get a vector (the most frequent)")
	minCount := flag.Float64("mincount", 5, "least number of occurrences for a word to get a vector")
	dims := flag.Int("dims", 128, "dimensions of the vectors")
	window := flag.Int("window", 2, "co-occurrence window, in words each side")
	alpha := flag.Float64("alpha", 0.75, "context distribution smoothing exponent")
	power := flag.Float64("power", 0, "exponent of the singular values in the vectors")
	probe := flag.String("probe", "", "comma-separated words: print their nearest neighbours and exit")
	flag.Parse()
	start := time.Now()
	lex := lexicon.Default()
	cc := &corpusCounts{tok: &tokenizer{lex: lex, cache: map[string]string{}}, ids: map[string]int32{}}
	seen := dedup{}
	index := translationIndex(*lists, *suite, "main")
	recs, dparas, sum := readDebianDescriptions(index, seen, cc.add)
	log.Printf("%s: sha256 %s (decompressed)", index, hex.EncodeToString(sum[:]))
	dtok := cc.tokens
	nman, mparas := 0, 0
	for _, p := range strings.Split(*manPkgs, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		v, _ := exec.Command("dpkg-query", "-W", "-f", "${Version}", p).Output()
		log.Printf("manual pages of %s %s", p, v)
		for _, f := range manPages(p) {
			mparas += readManPage(f, seen, cc.add)
			nman++
		}
	}
	mtok := cc.tokens - dtok
	log.Printf("corpus: %d Debian descriptions (%d distinct paragraphs, %d terms), %d manual pages (%d paragraphs, %d terms); %d distinct terms [%s]",
		recs, dparas, dtok, nman, mparas, mtok, len(cc.words), time.Since(start).Round(time.Millisecond))

	vocab, remap := cc.vocabulary(*vocabN, *minCount)
	m := cc.ppmi(remap, len(vocab), *window, *alpha)
	log.Printf("PPMI: %d x %d, %d non-zeros [%s]", m.rows, m.cols, len(m.val), time.Since(start).Round(time.Millisecond))
	u, sigma := truncatedSVD(m, *dims, 16, 4, 1)
	log.Printf("SVD: singular values %.1f ... %.1f [%s]", sigma[0], sigma[len(sigma)-1], time.Since(start).Round(time.Millisecond))
	vecs := make([][]float64, len(vocab))
	for r := range vocab {
		v := make([]float64, *dims)
		var n float64
		for t := range v {
			v[t] = u.a[r*(*dims)+t] * math.Pow(sigma[t], *power)
			n += v[t] * v[t]
		}
		if n > 0 {
			n = math.Sqrt(n)
			for t := range v {
				v[t] /= n
			}
		}
		vecs[r] = v
	}
	if *probe != "" {
		probeWords(vocab, vecs, strings.Split(*probe, ","), cc.tok)
		return
	}
	counts := make([]float64, len(vocab))
	for old, nw := range remap {
		if nw >= 0 {
			counts[nw] = cc.counts[old]
		}
	}
	data := encode(vocab, vecs, counts, *dims)
	if err := os.WriteFile(*out, data, 0o644); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("domain vectors: %d words x %d dims: %d bytes -> %s [%s]\n",
		len(vocab), *dims, len(data), *out, time.Since(start).Round(time.Millisecond))
}

// probeWords prints each word's nearest neighbours, to judge the vectors.
func probeWords(vocab []string, vecs [][]float64, words []string, tok *tokenizer) {
	idx := map[string]int{}
	for i, w := range vocab {
		idx[w] = i
	}
	for _, w := range words {
		t := tok.term(strings.ToLower(strings.TrimSpace(w)))
		i, ok := idx[t]
		if !ok {
			fmt.Printf("%s (%s): no vector\n", w, t)
			continue
		}
		type nb struct {
			w string
			s float64
		}
		nbs := make([]nb, 0, len(vecs))
		for j, v := range vecs {
			var d float64
			for k := range v {
				d += v[k] * vecs[i][k]
			}
			nbs = append(nbs, nb{vocab[j], d})
		}
		sort.Slice(nbs, func(a, b int) bool { return nbs[a].s > nbs[b].s })
		fmt.Printf("%s (#%d):", t, i)
		for _, n := range nbs[1:min(16, len(nbs))] {
			fmt.Printf(" %s %.2f", n.w, n.s)
		}
		fmt.Println()
	}
}
