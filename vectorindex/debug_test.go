package vectorindex

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
)

// TestDebugQuery prints how one intent is analysed and scored; run with
// VI_DEBUG="the intent" go test ./vectorindex -run TestDebugQuery -v
func TestDebugQuery(t *testing.T) {
	q := os.Getenv("VI_DEBUG")
	if q == "" {
		t.Skip("set VI_DEBUG to an intent")
	}
	ix, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Sync(context.Background(), loadCorpus(t)); err != nil {
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
	near, _ := ix.nearest(context.Background(), st, qv)
	scores := ix.rank(st, q, qv, near)
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
