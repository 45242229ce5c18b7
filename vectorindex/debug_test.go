package vectorindex

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestDebugQuery prints how one intent is analysed and scored; run with
// VI_DEBUG="the intent" go test ./vectorindex -run TestDebugQuery -v
// (over the corpus, or the tools debugTools says).
func TestDebugQuery(t *testing.T) {
	q := os.Getenv("VI_DEBUG")
	if q == "" {
		t.Skip("set VI_DEBUG to an intent")
	}
	ix, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Sync(context.Background(), debugTools(t)); err != nil {
		t.Fatal(err)
	}
	st := ix.state.Load()
	for _, g := range ix.an.queryGroups(q, st.lex) {
		var ts []string
		for i, x := range g.terms {
			if i > 12 {
				ts = append(ts, "...")
				break
			}
			ts = append(ts, fmt.Sprintf("%s:%.2f", x.term, x.w))
		}
		fmt.Printf("group %q w=%.2f: %s\n", g.word, g.weight, strings.Join(ts, " "))
	}
	lex := make([]float32, len(st.entries))
	st.lex.score(ix.an.queryGroups(q, st.lex), lex)
	qv, _ := ix.emb.embedQuery(context.Background(), q)
	groups := ix.an.queryGroups(q, st.lex)
	cov := coverage(groups, st.lex)
	qv = ix.queryVector(qv, cov)
	fmt.Printf("coverage %.2f\n", cov)
	near := st.nearestAmong(qv, nil, candidates)
	scores := ix.rank(st, groups, cov, qv, nil, near, candidates)
	type row struct {
		id       string
		s        float64
		lex, cos float32
	}
	var rows []row
	for d, s := range scores {
		rows = append(rows, row{st.entries[d].tool.ID, s, lex[d], dot(qv, st.entries[d].vec)})
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].s > rows[j].s })
	for i, r := range rows {
		if i >= 15 {
			break
		}
		fmt.Printf("%2d %-45s %.3f lex=%.2f cos=%.3f\n", i+1, r.id, r.s, r.lex, r.cos)
	}
	hits, _ := ix.Search(context.Background(), q, 10)
	fmt.Println("search:", hits)
}

func TestDebugSteps(t *testing.T) {
	if os.Getenv("VI_STEPS") == "" {
		t.Skip()
	}
	a := defaultAnalyzer()
	for _, q := range loadQueries(t, "testdata/queries-heldout.json") {
		if q.Kind == "multi-step" {
			fmt.Printf("%q\n", a.splitSteps(q.Query))
		}
	}
	for _, q := range loadQueries(t, corpusPath("queries-dev.json")) {
		if s := a.splitSteps(q.Query); len(s) > 1 {
			fmt.Printf("DEV SPLIT %q\n", s)
		}
	}
}

func TestDebugLinks(t *testing.T) {
	if os.Getenv("VI_LINKS") == "" {
		t.Skip()
	}
	a := defaultAnalyzer()
	tools := map[string]Tool{}
	for _, tl := range loadCorpus(t) {
		tools[tl.ID] = tl
	}
	for _, q := range loadQueries(t, "testdata/queries-heldout.json") {
		if q.Kind != "paraphrase" {
			continue
		}
		g := tools[q.Relevant[0]]
		var docTerms []string
		splitWords(g.Name+" "+g.Description, func(w string) {
			if tt := a.term(w); tt != "" {
				docTerms = append(docTerms, tt)
			}
		})
		fmt.Printf("%q -> %s\n", q.Query, g.ID)
		splitWords(q.Query, func(w string) {
			qt := a.term(w)
			if qt == "" {
				return
			}
			qv := a.wordVector(qt)
			best, bestT := float32(-1), ""
			for _, dt := range docTerms {
				if dv := a.wordVector(dt); qv != nil && dv != nil {
					if c := dot(qv, dv); c > best {
						best, bestT = c, dt
					}
				}
			}
			rel := ""
			for _, r := range a.relatedTerms(w) {
				for _, dt := range docTerms {
					if r.term == dt {
						rel += fmt.Sprintf(" %s(%.2f)", dt, r.w)
					}
				}
			}
			fmt.Printf("   %-12s lsa=%-14s %.2f  wn:%s\n", qt, bestT, best, rel)
		})
	}
}

func TestDebugRanks(t *testing.T) {
	kind := os.Getenv("VI_RANKS")
	if kind == "" {
		t.Skip()
	}
	ix, _ := New(Options{})
	ix.Sync(context.Background(), loadCorpus(t))
	for _, q := range loadQueries(t, "testdata/queries-heldout.json") {
		if q.Kind != kind {
			continue
		}
		hits, _ := ix.Search(context.Background(), q.Query, 50)
		var ranks []string
		for _, g := range q.Relevant {
			r := "-"
			for i, h := range hits {
				if h.ID == g {
					r = fmt.Sprint(i + 1)
				}
			}
			ranks = append(ranks, r)
		}
		top := ""
		if len(hits) > 0 {
			top = hits[0].ID
		}
		fmt.Printf("%-8s %-70.70q top=%s\n", strings.Join(ranks, ","), q.Query, top)
	}
}

// TestDebugDomain prints each VI_DOM word's nearest words in the whole
// software-domain vocabulary:
// VI_DOM="evict inbox" go test ./vectorindex -run TestDebugDomain -v
func TestDebugDomain(t *testing.T) {
	q := os.Getenv("VI_DOM")
	if q == "" {
		t.Skip("set VI_DOM to some words")
	}
	a := defaultAnalyzer()
	var all []string
	for i := 0; i < a.dom.Len(); i++ {
		all = append(all, a.dom.Word(i))
	}
	ts := newTermSpace(all, a.dom.Dims(), a.domainVector)
	splitWords(q, func(w string) {
		tt := a.term(w)
		var out []string
		for _, r := range ts.nearest(a.domainVector(tt), -1, 15) {
			out = append(out, fmt.Sprintf("%s:%.2f", r.term, r.w))
		}
		fmt.Printf("%-12s %s\n", tt, strings.Join(out, " "))
	})
}

// TestDebugSignals prints, for each held-out intent of kind VI_SIGNALS, the
// best gold rank by each signal alone: hybrid, BM25 with expansions, the
// built-in vector, and each block of it.
func TestDebugSignals(t *testing.T) {
	kind := os.Getenv("VI_SIGNALS")
	if kind == "" {
		t.Skip()
	}
	ix, _ := New(Options{})
	ix.Sync(context.Background(), loadCorpus(t))
	st := ix.state.Load()
	n := len(st.entries)
	rankOf := func(score func(d int) float64, gold []string) int {
		type p struct {
			d int
			s float64
		}
		ps := make([]p, n)
		for d := 0; d < n; d++ {
			ps[d] = p{d, score(d)}
		}
		sort.SliceStable(ps, func(i, j int) bool { return ps[i].s > ps[j].s })
		for i, x := range ps {
			for _, g := range gold {
				if st.entries[x.d].tool.ID == g {
					return i + 1
				}
			}
		}
		return 999
	}
	dd := sparseDims + lsaDims
	block := func(a, b []float32, lo, hi int) float64 {
		var s float64
		for i := lo; i < hi && i < len(a); i++ {
			s += float64(a[i]) * float64(b[i])
		}
		return s
	}
	sum := map[string][3]float64{}
	for _, q := range loadQueries(t, "testdata/queries-heldout.json") {
		if q.Kind != kind && kind != "all" {
			continue
		}
		hits, _ := ix.Search(context.Background(), q.Query, 50)
		hr := 999
		for i, h := range hits {
			for _, g := range q.Relevant {
				if h.ID == g && hr == 999 {
					hr = i + 1
				}
			}
		}
		lex := make([]float32, n)
		st.lex.score(ix.an.queryGroups(q.Query, st.lex), lex)
		qv, _ := ix.emb.embedQuery(context.Background(), q.Query)
		ranks := map[string]int{
			"hybrid": hr,
			"bm25":   rankOf(func(d int) float64 { return float64(lex[d]) }, q.Relevant),
			"cos":    rankOf(func(d int) float64 { return float64(dot(qv, st.entries[d].vec)) }, q.Relevant),
			"sparse": rankOf(func(d int) float64 { return block(qv, st.entries[d].vec, 0, sparseDims) }, q.Relevant),
			"lsa":    rankOf(func(d int) float64 { return block(qv, st.entries[d].vec, sparseDims, dd) }, q.Relevant),
			"dom":    rankOf(func(d int) float64 { return block(qv, st.entries[d].vec, dd, len(qv)) }, q.Relevant),
		}
		var parts []string
		for _, k := range []string{"hybrid", "bm25", "cos", "sparse", "lsa", "dom"} {
			parts = append(parts, fmt.Sprintf("%s=%-3d", k, ranks[k]))
			s := sum[k]
			s[0]++
			if ranks[k] <= 5 {
				s[1]++
			}
			s[2] += 1 / float64(ranks[k])
			sum[k] = s
		}
		fmt.Printf("%s  %.60q\n", strings.Join(parts, " "), q.Query)
	}
	for _, k := range []string{"hybrid", "bm25", "cos", "sparse", "lsa", "dom"} {
		s := sum[k]
		fmt.Printf("%-7s top5 %.3f  mrr %.3f\n", k, s[1]/s[0], s[2]/s[0])
	}
}

// debugTools are the tools the debug helpers search: the corpus, or with
// VI_TOOLS=agent the servers an agent meets (testdata/agentservers), or the
// file VI_TOOLS_FILE (the corpus format). VI_SET="name=v,name2=v2" sets
// tunables first (see sweep_test.go).
func debugTools(t *testing.T) []Tool {
	for _, kv := range strings.Split(os.Getenv("VI_SET"), ",") {
		if p := strings.SplitN(kv, "=", 2); len(p) == 2 {
			setTunable(t, p[0], p[1])
		}
	}
	switch {
	case os.Getenv("VI_TOOLS_FILE") != "":
		return loadToolsFile(t, os.Getenv("VI_TOOLS_FILE"))
	case os.Getenv("VI_TOOLS") == "agent":
		return loadAgentServers(t)
	}
	return loadCorpus(t)
}

// TestDebugProbe prints the top 6 of each intent of VI_PROBE="a||b", with
// scores and weak flags:
// VI_TOOLS=agent VI_PROBE="which tasks are blocked" go test ./vectorindex -run TestDebugProbe -v
func TestDebugProbe(t *testing.T) {
	qs := os.Getenv("VI_PROBE")
	if qs == "" {
		t.Skip("set VI_PROBE to intents separated by ||")
	}
	ix := mustIndex(t, Options{}, debugTools(t))
	for _, q := range strings.Split(qs, "||") {
		hits, err := ix.Search(context.Background(), q, 6)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Printf("%q\n", q)
		for _, h := range hits {
			fmt.Printf("   %-42s %.3f weak=%v\n", h.ID, h.Score, h.Weak)
		}
	}
}

// TestDebugDumpRanks writes, for every intent of the sets tuned on (the
// corpus's development and first held-out sets, the agent servers'
// development set; never the held-out sets kept pristine), its gold ranks
// and top 3, one tab-separated line each, to the file VI_DUMP: run it on
// two versions and compare the files to see what a change did to which
// intent.
func TestDebugDumpRanks(t *testing.T) {
	out := os.Getenv("VI_DUMP")
	if out == "" {
		t.Skip("set VI_DUMP to a file")
	}
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	corpus, agent := loadCorpus(t), loadAgentServers(t)
	for _, set := range []struct {
		name  string
		tools []Tool
		path  string
	}{
		{"dev", corpus, corpusPath("queries-dev.json")},
		{"ho1", corpus, filepath.Join("testdata", "queries-heldout.json")},
		{"agentdev", agent, agentServersPath("queries-dev.json")},
	} {
		ix := mustIndex(t, Options{}, set.tools)
		for _, q := range loadQueries(t, set.path) {
			hits, err := ix.Search(context.Background(), q.Query, MaxK)
			if err != nil {
				t.Fatal(err)
			}
			got := ids(hits)
			var ranks []string
			for _, g := range q.Relevant {
				if p := pos(got, g); p < len(got) {
					ranks = append(ranks, fmt.Sprint(p+1))
				} else {
					ranks = append(ranks, "-")
				}
			}
			qq, _ := json.Marshal(q.Query)
			fmt.Fprintf(f, "%s\t%s\t%s\t%s\t%s\n", set.name, q.Kind, qq, strings.Join(ranks, ","), strings.Join(got[:min(3, len(got))], " "))
		}
	}
}
