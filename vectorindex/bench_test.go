package vectorindex

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/philippgille/chromem-go"
)

// synthCatalog grows the 341-tool corpus to n tools: each copy beyond the
// first renames the server ("github" -> "github-r7"), and rewrites the name
// and description by swapping words for WordNet synonyms and dropping some,
// so that the vocabulary grows as a real catalog's would instead of
// repeating the same documents.
func synthCatalog(t testing.TB, n int) []Tool {
	base := loadCorpus(t)
	a := defaultAnalyzer()
	rng := rand.New(rand.NewSource(int64(n)))
	out := make([]Tool, 0, n)
	for i := 0; len(out) < n; i++ {
		src := base[i%len(base)]
		rep := i / len(base)
		if rep == 0 {
			out = append(out, src)
			continue
		}
		t := src
		t.Server = fmt.Sprintf("%s-r%d", src.Server, rep)
		t.Name = perturb(a, rng, src.Name, "_")
		t.Description = perturb(a, rng, src.Description, " ")
		t.ID = t.Server + ":" + t.Name + fmt.Sprintf("-%d", i)
		out = append(out, t)
	}
	return out
}

func perturb(a *analyzer, rng *rand.Rand, s, sep string) string {
	var words []string
	splitWords(s, func(w string) { words = append(words, w) })
	var out []string
	for _, w := range words {
		switch r := rng.Float64(); {
		case r < 0.1:
			continue // dropped
		case r < 0.4:
			if rel := a.relatedTerms(w); len(rel) > 0 {
				w = rel[rng.Intn(min(len(rel), 5))].term
			}
		}
		out = append(out, w)
	}
	if len(out) == 0 {
		out = words
	}
	return strings.Join(out, sep)
}

var benchIntents = []string{
	"list the last 10 commits on the main branch of acme/webapp on GitHub",
	"take a screenshot of the current page",
	"give the buyer of pi_3Kx their money back",
	"// TODO: fetch open PRs for acme/webapp",
	"lsit the comits on main in acme/webapp on githb",
	"read /workspace/report.md and then post its summary to the #team Slack channel",
	"scale the deployment api-server to 5 replicas",
	"what time is it in Tokyo",
	"list_commits | listPullRequests | show the open pull requests | github:get_me",
}

var (
	benchMu  sync.Mutex
	benchIxs = map[int]*Index{}
)

func benchIndex(b *testing.B, n int) *Index {
	benchMu.Lock()
	defer benchMu.Unlock()
	if ix := benchIxs[n]; ix != nil {
		return ix
	}
	ix, err := New(Options{})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := ix.Sync(context.Background(), synthCatalog(b, n)); err != nil {
		b.Fatal(err)
	}
	benchIxs[n] = ix
	return ix
}

// BenchmarkSearch measures one search (the intents above in turn) over
// catalogs of 1,000 and 10,000 tools. Targets: < 2 ms and < 20 ms median.
func BenchmarkSearch(b *testing.B) {
	for _, n := range []int{341, 1000, 10000} {
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			ix := benchIndex(b, n)
			ctx := context.Background()
			for _, q := range benchIntents { // warm the word caches
				ix.Search(ctx, q, 5)
			}
			durs := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				start := time.Now()
				if _, err := ix.Search(ctx, benchIntents[i%len(benchIntents)], 5); err != nil {
					b.Fatal(err)
				}
				durs = append(durs, time.Since(start))
			}
			b.StopTimer()
			b.ReportMetric(float64(median(durs).Microseconds())/1000, "median-ms")
		})
	}
}

// BenchmarkSearchAmong measures a filtered search (SearchAmong) over the
// catalogs of BenchmarkSearch: a caller of one server (github-r1's 85
// tools), and one that may use every server but one (a filter that lets
// almost everything through: the vector side's own pass is over nearly
// every vector). The filter is a map lookup by id, as code mode's is.
func BenchmarkSearchAmong(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		ix := benchIndex(b, n)
		for _, c := range []struct {
			name  string
			allow func(server string) bool
		}{
			{"one-server", func(s string) bool { return s == "github-r1" }},
			{"all-but-one", func(s string) bool { return s != "github" }},
		} {
			allowed := map[string]bool{}
			for _, t := range synthCatalog(b, n) {
				allowed[t.ID] = c.allow(t.Server)
			}
			allow := func(id string) bool { return allowed[id] }
			b.Run(fmt.Sprintf("%s/tools=%d", c.name, n), func(b *testing.B) {
				ctx := context.Background()
				for _, q := range benchIntents { // warm the word caches
					ix.SearchAmong(ctx, q, 5, allow)
				}
				durs := make([]time.Duration, 0, b.N)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					start := time.Now()
					hits, err := ix.SearchAmong(ctx, benchIntents[i%len(benchIntents)], 5, allow)
					if err != nil || len(hits) != 5 {
						b.Fatal(hits, err)
					}
					durs = append(durs, time.Since(start))
				}
				b.StopTimer()
				b.ReportMetric(float64(median(durs).Microseconds())/1000, "median-ms")
			})
		}
	}
}

// BenchmarkBuild measures indexing a catalog from scratch with the built-in
// embedder: time per tool and the heap the index holds afterwards.
func BenchmarkBuild(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			tools := synthCatalog(b, n)
			defaultAnalyzer()
			var heap uint64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				runtime.GC()
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				ix, err := New(Options{})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := ix.Sync(context.Background(), tools); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				runtime.GC()
				runtime.ReadMemStats(&after)
				heap = after.HeapAlloc - before.HeapAlloc
				runtime.KeepAlive(ix)
				b.StartTimer()
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/build")
			b.ReportMetric(float64(heap)/(1<<20), "MiB-heap")
		})
	}
}

func median(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// BenchmarkReopen measures a restart: opening a persisted index of 1,000
// and 10,000 tools (reading the store file, rebuilding the BM25 index) and
// syncing the unchanged catalog, which embeds nothing.
func BenchmarkReopen(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			tools := synthCatalog(b, n)
			dir := b.TempDir()
			ix, err := New(Options{Dir: dir})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := ix.Sync(context.Background(), tools); err != nil {
				b.Fatal(err)
			}
			var open, sync time.Duration
			for b.Loop() {
				t0 := time.Now()
				ix, err := New(Options{Dir: dir})
				if err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				st, err := ix.Sync(context.Background(), tools)
				if err != nil || st.Unchanged != len(tools) {
					b.Fatalf("%+v %v", st, err)
				}
				open += t1.Sub(t0)
				sync += time.Since(t1)
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/reopen")
			b.ReportMetric(float64(open.Milliseconds())/float64(b.N), "ms/open")
			b.ReportMetric(float64(sync.Milliseconds())/float64(b.N), "ms/sync")
		})
	}
}

// BenchmarkPeer measures, on the same catalogs, the two halves a search is
// built on: the nearest-neighbour query (the vector half alone: the
// index's own pass over its vectors, unfiltered and for a filter, beside a
// chromem-go collection of the same vectors queried for the same, the peer
// it replaced) and the plain BM25 baseline of the eval (a lexical search
// alone), so that BenchmarkSearch can be read as a ratio against them.
func BenchmarkPeer(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		ix := benchIndex(b, n)
		ctx := context.Background()
		qv, _ := ix.emb.embedQuery(ctx, benchIntents[0])
		st := ix.state.Load()
		coll, err := chromem.NewDB().CreateCollection("peer", nil, func(context.Context, string) ([]float32, error) {
			return nil, errors.New("the peer collection is given its vectors")
		})
		if err != nil {
			b.Fatal(err)
		}
		docs := make([]chromem.Document, len(st.entries))
		for i, e := range st.entries {
			docs[i] = chromem.Document{ID: e.tool.ID, Embedding: e.vec}
		}
		if err := coll.AddDocuments(ctx, docs, runtime.GOMAXPROCS(0)); err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("chromem-query/tools=%d", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := coll.QueryEmbedding(ctx, qv, candidates, nil, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("own-pass/tools=%d", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				st.nearestAmong(qv, nil, candidates)
			}
		})
		// the same pass for a filter that hides one server (85 tools)
		in, _ := st.among(func(id string) bool { return !strings.HasPrefix(id, "github:") })
		b.Run(fmt.Sprintf("filtered-pass/tools=%d", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				st.nearestAmong(qv, in, candidates)
			}
		})
		base := newPlainBM25(synthCatalog(b, n))
		b.Run(fmt.Sprintf("plain-bm25/tools=%d", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				base.rank(benchIntents[i%len(benchIntents)])
			}
		})
	}
}
