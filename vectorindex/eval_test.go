package vectorindex

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"unicode"
)

// corpusTool is an entry of testdata/toolcorpus/tools.json.
type corpusTool struct {
	Server      string          `json:"server"`
	Name        string          `json:"name"`
	Title       string          `json:"title"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
	Annotations json.RawMessage `json:"annotations"`
}

type labelledQuery struct {
	Query    string   `json:"query"`
	Relevant []string `json:"relevant"`
	Kind     string   `json:"kind"`
	// Phrasings are more phrasings of the same task (queries-multi.json).
	Phrasings []string `json:"phrasings,omitempty"`
}

func corpusPath(name string) string { return filepath.Join("..", "testdata", "toolcorpus", name) }

func loadCorpus(t testing.TB) []Tool {
	t.Helper()
	b, err := os.ReadFile(corpusPath("tools.json"))
	if err != nil {
		t.Fatalf("reading the tool corpus: %v", err)
	}
	var ct []corpusTool
	if err := json.Unmarshal(b, &ct); err != nil {
		t.Fatal(err)
	}
	tools := make([]Tool, len(ct))
	for i, c := range ct {
		tools[i] = Tool{ID: c.Server + ":" + c.Name, Server: c.Server, Name: c.Name, Title: c.Title,
			Description: c.Description, InputSchema: c.InputSchema, Annotations: c.Annotations}
	}
	return tools
}

func loadQueries(t testing.TB, path string) []labelledQuery {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var qs []labelledQuery
	if err := json.Unmarshal(b, &qs); err != nil {
		t.Fatal(err)
	}
	return qs
}

// metrics over a set of queries. recall@k is the share of a query's gold
// tools found in the top k, out of min(k, number of gold tools): for k = 5
// (every query has at most 5 gold tools) that is the plain share of gold
// tools found, as the corpus README defines it; for k = 1 it is whether the
// first hit is a gold tool. MRR is the mean of 1/rank of the first gold
// tool in the top MaxK (0 when none is).
type metrics struct {
	n              int
	r1, r5, mrr    float64
	missed         []string
	perKind        map[string]*metrics
	perKindOrdered []string
}

func (m *metrics) add(kind string, ranked []string, gold []string, q string) {
	r1, r5, rr := scoreRanking(ranked, gold)
	for _, mm := range []*metrics{m, m.kind(kind)} {
		mm.n++
		mm.r1 += r1
		mm.r5 += r5
		mm.mrr += rr
	}
	if r5 < 1 {
		top := ranked
		if len(top) > 5 {
			top = top[:5]
		}
		m.missed = append(m.missed, fmt.Sprintf("[%s] %q\n      gold %v\n      got  %v", kind, q, gold, top))
	}
}

func (m *metrics) kind(k string) *metrics {
	if m.perKind == nil {
		m.perKind = map[string]*metrics{}
	}
	if m.perKind[k] == nil {
		m.perKind[k] = &metrics{}
		m.perKindOrdered = append(m.perKindOrdered, k)
	}
	return m.perKind[k]
}

func (m *metrics) R1() float64  { return m.r1 / float64(m.n) }
func (m *metrics) R5() float64  { return m.r5 / float64(m.n) }
func (m *metrics) MRR() float64 { return m.mrr / float64(m.n) }

func scoreRanking(ranked, gold []string) (r1, r5, rr float64) {
	isGold := map[string]bool{}
	for _, g := range gold {
		isGold[g] = true
	}
	found5 := 0
	for i, id := range ranked {
		if !isGold[id] {
			continue
		}
		if rr == 0 {
			rr = 1 / float64(i+1)
		}
		if i == 0 {
			r1 = 1
		}
		if i < 5 {
			found5++
		}
	}
	r5 = float64(found5) / math.Min(5, float64(len(gold)))
	return
}

// plainBM25 is the baseline the corpus README reports: BM25 (k1 1.2, b 0.75)
// over each tool's name and description, lowercased words split at anything
// not a letter or digit, no stemming, no stopwords, no expansion.
type plainBM25 struct {
	ids    []string
	tf     []map[string]float64
	df     map[string]int
	length []float64
	avg    float64
}

func plainWords(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

func newPlainBM25(tools []Tool) *plainBM25 {
	b := &plainBM25{df: map[string]int{}}
	var total float64
	for _, t := range tools {
		tf := map[string]float64{}
		ws := plainWords(t.Name + " " + t.Description)
		for _, w := range ws {
			tf[w]++
		}
		for w := range tf {
			b.df[w]++
		}
		b.ids = append(b.ids, t.ID)
		b.tf = append(b.tf, tf)
		b.length = append(b.length, float64(len(ws)))
		total += float64(len(ws))
	}
	b.avg = total / float64(len(tools))
	return b
}

func (b *plainBM25) rank(q string) []string {
	n := float64(len(b.ids))
	scores := make([]float64, len(b.ids))
	for _, w := range plainWords(q) {
		df := float64(b.df[w])
		if df == 0 {
			continue
		}
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		for i, tf := range b.tf {
			if f := tf[w]; f > 0 {
				scores[i] += idf * f * 2.2 / (f + 1.2*(1-0.75+0.75*b.length[i]/b.avg))
			}
		}
	}
	idx := make([]int, 0, len(scores))
	for i, s := range scores {
		if s > 0 {
			idx = append(idx, i)
		}
	}
	sort.SliceStable(idx, func(x, y int) bool { return scores[idx[x]] > scores[idx[y]] })
	out := make([]string, 0, MaxK)
	for _, i := range idx {
		if len(out) == MaxK {
			break
		}
		out = append(out, b.ids[i])
	}
	return out
}

func evaluate(t testing.TB, ix *Index, base *plainBM25, qs []labelledQuery) (hybrid, bm25 *metrics) {
	hybrid, bm25 = &metrics{}, &metrics{}
	for _, q := range qs {
		hits, err := ix.Search(context.Background(), q.Query, MaxK)
		if err != nil {
			t.Fatalf("%q: %v", q.Query, err)
		}
		ids := make([]string, len(hits))
		for i, h := range hits {
			ids[i] = h.ID
		}
		hybrid.add(q.Kind, ids, q.Relevant, q.Query)
		bm25.add(q.Kind, base.rank(q.Query), q.Relevant, q.Query)
	}
	return hybrid, bm25
}

func report(t testing.TB, name string, hybrid, bm25 *metrics) {
	var b strings.Builder
	fmt.Fprintf(&b, "\n%s (%d intents)\n", name, hybrid.n)
	fmt.Fprintf(&b, "  %-14s %5s | %-22s | %-22s\n", "kind", "n", "hybrid R@1  R@5   MRR", "plain BM25 R@1 R@5 MRR")
	line := func(kind string, h, p *metrics) {
		fmt.Fprintf(&b, "  %-14s %5d | %6.3f %6.3f %6.3f   | %6.3f %6.3f %6.3f\n", kind, h.n, h.R1(), h.R5(), h.MRR(), p.R1(), p.R5(), p.MRR())
	}
	line("all", hybrid, bm25)
	kinds := append([]string(nil), hybrid.perKindOrdered...)
	sort.Strings(kinds)
	if len(kinds) > 1 {
		for _, k := range kinds {
			line(k, hybrid.perKind[k], bm25.perKind[k])
		}
	}
	if testing.Verbose() && os.Getenv("EVAL_MISSES") != "" {
		fmt.Fprintf(&b, "  misses (gold not all in top 5):\n")
		for _, m := range hybrid.missed {
			fmt.Fprintf(&b, "    %s\n", m)
		}
	}
	t.Log(b.String())
}

// TestEval measures retrieval quality on the tool corpus: the development
// intents that came with it and two held-out sets written for this package
// (the second one committed before the software-domain vectors were built,
// and never tuned against). It asserts the targets on the
// development set and regression floors on the held-out sets.
func TestEval(t *testing.T) {
	tools := loadCorpus(t)
	ix, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Sync(context.Background(), tools); err != nil {
		t.Fatal(err)
	}
	base := newPlainBM25(tools)
	for _, set := range []struct {
		name, path    string
		minR5, minMRR float64
	}{
		{"dev: testdata/toolcorpus/queries-dev.json", corpusPath("queries-dev.json"), 0.97, 0.90},
		// The issue asks for 0.97 / 0.90 on intents worded differently too.
		// That is NOT met on either held-out set (paraphrases sharing no
		// word with their tool are the gap, see docs/vectorindex.md); these
		// floors sit just under what is achieved (0.737 / 0.655 and
		// 0.541 / 0.442) so that regressions show.
		{"held-out: vectorindex/testdata/queries-heldout.json", filepath.Join("testdata", "queries-heldout.json"), 0.72, 0.64},
		{"held-out 2: vectorindex/testdata/queries-heldout2.json", filepath.Join("testdata", "queries-heldout2.json"), 0.52, 0.43},
	} {
		qs := loadQueries(t, set.path)
		h, p := evaluate(t, ix, base, qs)
		report(t, set.name, h, p)
		if h.R5() < set.minR5 || h.MRR() < set.minMRR {
			t.Errorf("%s: recall@5 %.3f (target %.2f), MRR %.3f (target %.2f)", set.name, h.R5(), set.minR5, h.MRR(), set.minMRR)
		}
	}
}

// TestEvalMultiPhrasing measures what several phrasings of one task buy:
// 30 held-out-2 intents, each with two more phrasings in the product's own
// API words, as an agent writes them without having seen the tools; fused
// by Fuse (each phrasing searched on its own), and joined by " | " into one
// intent (as search_tools does now). Reported beside plain BM25 treated the
// same way; the floors sit just under what is achieved, so regressions show.
func TestEvalMultiPhrasing(t *testing.T) {
	tools := loadCorpus(t)
	ix, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Sync(context.Background(), tools); err != nil {
		t.Fatal(err)
	}
	base := newPlainBM25(tools)
	qs := loadQueries(t, filepath.Join("testdata", "queries-multi.json"))
	one, oneBM25, fused, fusedBM25 := &metrics{}, &metrics{}, &metrics{}, &metrics{}
	joined, joinedBM25 := &metrics{}, &metrics{}
	for _, q := range qs {
		if len(q.Phrasings) == 0 {
			t.Fatalf("%q has no other phrasings", q.Query)
		}
		var rankings, bm25Rankings [][]Hit
		for i, p := range append([]string{q.Query}, q.Phrasings...) {
			hits, err := ix.Search(context.Background(), p, MaxK)
			if err != nil {
				t.Fatal(err)
			}
			var bm []Hit
			for _, id := range base.rank(p) {
				bm = append(bm, Hit{ID: id})
			}
			if i == 0 {
				one.add("multi", ids(hits), q.Relevant, q.Query)
				oneBM25.add("multi", ids(bm), q.Relevant, q.Query)
			}
			rankings, bm25Rankings = append(rankings, hits), append(bm25Rankings, bm)
		}
		fused.add("multi", ids(Fuse(rankings, MaxK)), q.Relevant, q.Query)
		fusedBM25.add("multi", ids(Fuse(bm25Rankings, MaxK)), q.Relevant, q.Query)
		all := strings.Join(append([]string{q.Query}, q.Phrasings...), " | ")
		hits, err := ix.Search(context.Background(), all, MaxK)
		if err != nil {
			t.Fatal(err)
		}
		joined.add("multi", ids(hits), q.Relevant, all)
		joinedBM25.add("multi", base.rank(all), q.Relevant, all)
	}
	report(t, "multi-phrasing: the first phrasing alone", one, oneBM25)
	report(t, "multi-phrasing: three phrasings fused by Fuse", fused, fusedBM25)
	report(t, "multi-phrasing: three phrasings joined by \" | \" into one intent", joined, joinedBM25)
	// Measured: alone 0.350 / 0.239; fused 0.983 / 0.900 (plain BM25 fused:
	// 1.000 / 0.872); joined 1.000 / 0.983. Before each phrasing's best hit
	// was kept first, fused was 0.683 / 0.637.
	if fused.R5() <= one.R5() || fused.R5() < 0.95 || fused.MRR() < 0.85 {
		t.Errorf("fused recall@5 %.3f MRR %.3f (alone: %.3f, %.3f)", fused.R5(), fused.MRR(), one.R5(), one.MRR())
	}
	if joined.R5() < 0.97 || joined.MRR() < 0.95 {
		t.Errorf("joined recall@5 %.3f MRR %.3f", joined.R5(), joined.MRR())
	}
}

func ids(hits []Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.ID
	}
	return out
}

// agentServersPath names a file of testdata/agentservers: the tools an agent
// meets behind sandbox serve with the example tracker, server-filesystem,
// server-memory, server-everything and a SQLite server, and intents for them.
func agentServersPath(name string) string { return filepath.Join("testdata", "agentservers", name) }

func loadAgentServers(t testing.TB) []Tool {
	t.Helper()
	b, err := os.ReadFile(agentServersPath("tools.json"))
	if err != nil {
		t.Fatal(err)
	}
	var tools []Tool
	if err := json.Unmarshal(b, &tools); err != nil {
		t.Fatal(err)
	}
	for i := range tools {
		tools[i].ID = tools[i].Server + ":" + tools[i].Name
	}
	return tools
}

// agentEval is what TestEvalAgentServers measures on one intent set, for
// the index and for plain BM25 in the same run: every intent as given
// (single-shot; a "phrasings" intent by its first phrasing alone), and the
// "phrasings" intents fused (each phrasing searched, the rankings fused by
// Fuse, as search_tools' intents are) and joined by " | " into one intent.
type agentEval struct {
	single, fused, joined       *metrics
	singleBM, fusedBM, joinedBM *metrics
}

// fuse is Fuse, or in TestAblation the reciprocal rank fusion alone.
var fuse = Fuse

func evaluateAgentSet(t testing.TB, ix *Index, base *plainBM25, qs []labelledQuery) agentEval {
	ev := agentEval{&metrics{}, &metrics{}, &metrics{}, &metrics{}, &metrics{}, &metrics{}}
	search := func(q string) []Hit {
		hits, err := ix.Search(context.Background(), q, MaxK)
		if err != nil {
			t.Fatalf("%q: %v", q, err)
		}
		return hits
	}
	bm := func(q string) []Hit {
		var out []Hit
		for _, id := range base.rank(q) {
			out = append(out, Hit{ID: id})
		}
		return out
	}
	for _, q := range qs {
		ev.single.add(q.Kind, ids(search(q.Query)), q.Relevant, q.Query)
		ev.singleBM.add(q.Kind, base.rank(q.Query), q.Relevant, q.Query)
		if len(q.Phrasings) == 0 {
			continue
		}
		all := append([]string{q.Query}, q.Phrasings...)
		var rankings, bmRankings [][]Hit
		for _, p := range all {
			rankings = append(rankings, search(p))
			bmRankings = append(bmRankings, bm(p))
		}
		ev.fused.add(q.Kind, ids(fuse(rankings, MaxK)), q.Relevant, q.Query)
		ev.fusedBM.add(q.Kind, ids(fuse(bmRankings, MaxK)), q.Relevant, q.Query)
		joined := strings.Join(all, " | ")
		ev.joined.add(q.Kind, ids(search(joined)), q.Relevant, joined)
		ev.joinedBM.add(q.Kind, base.rank(joined), q.Relevant, joined)
	}
	return ev
}

// TestEvalAgentServers measures retrieval over the servers an agent meets
// (testdata/agentservers): the intents tuned on, and the held-out ones,
// written and committed before any tuning. Issue 26's targets, on a
// held-out set: single-shot recall@5 at least 0.80, an agent's phrasings
// fused by the product at least 0.97 (search_tools joins them into one
// intent: "joined"). The floors sit just under what is achieved.
func TestEvalAgentServers(t *testing.T) {
	tools := loadAgentServers(t)
	ix, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Sync(context.Background(), tools); err != nil {
		t.Fatal(err)
	}
	base := newPlainBM25(tools)
	for _, set := range []struct {
		name, file                           string
		minSingle, minMRR, minFused, minJoin float64
	}{
		// measured: single-shot 0.857 / 0.819, fused 0.938, joined 1.000
		{"agent servers, dev", "queries-dev.json", 0.84, 0.80, 0.93, 0.97},
		// measured: single-shot 0.840 / 0.758, fused 0.977, joined 1.000
		// (before: 0.789 / 0.682, fused 0.932, joined 1.000)
		{"agent servers, held-out", "queries-heldout.json", 0.82, 0.74, 0.97, 0.97},
	} {
		ev := evaluateAgentSet(t, ix, base, loadQueries(t, agentServersPath(set.file)))
		report(t, set.name+": single-shot", ev.single, ev.singleBM)
		report(t, set.name+": phrasings fused", ev.fused, ev.fusedBM)
		report(t, set.name+": phrasings joined by \" | \"", ev.joined, ev.joinedBM)
		if ev.single.R5() < set.minSingle || ev.single.MRR() < set.minMRR || ev.fused.R5() < set.minFused || ev.joined.R5() < set.minJoin {
			t.Errorf("%s: single-shot recall@5 %.3f (floor %.2f), MRR %.3f (floor %.2f); fused recall@5 %.3f (floor %.2f); joined %.3f (floor %.2f)",
				set.name, ev.single.R5(), set.minSingle, ev.single.MRR(), set.minMRR, ev.fused.R5(), set.minFused, ev.joined.R5(), set.minJoin)
		}
	}
}

// loadToolsFile reads tools in the corpus format from a file.
func loadToolsFile(t testing.TB, path string) []Tool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var tools []Tool
	if err := json.Unmarshal(b, &tools); err != nil {
		t.Fatal(err)
	}
	for i := range tools {
		tools[i].ID = tools[i].Server + ":" + tools[i].Name
	}
	return tools
}
