package typegen

import (
	"encoding/json"
	"testing"
)

// BenchmarkGenerateCorpus generates the whole 341-tool corpus without a
// cache. Target: < 50 µs per tool (see the µs/tool metric).
func BenchmarkGenerateCorpus(b *testing.B) {
	tools := corpusTools(b)
	names := AssignNames(tools)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Generate(tools, Options{Names: names}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*len(tools)), "µs/tool")
}

// BenchmarkGenerateCorpusCached is the same with a warm cache: per tool, a
// hash of its definition and a map lookup. Target: near zero.
func BenchmarkGenerateCorpusCached(b *testing.B) {
	tools := corpusTools(b)
	names := AssignNames(tools)
	cache := NewCache(0)
	if _, err := Generate(tools, Options{Names: names, Cache: cache}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Generate(tools, Options{Names: names, Cache: cache}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*len(tools)), "µs/tool")
}

// BenchmarkGenerateTop5 is the per-search case: five tools of the catalog,
// with catalog-wide names and a warm cache.
func BenchmarkGenerateTop5(b *testing.B) {
	tools := corpusTools(b)
	names := AssignNames(tools)
	cache := NewCache(0)
	subset := []Tool{tools[0], tools[50], tools[100], tools[200], tools[300]}
	Generate(subset, Options{Names: names, Cache: cache})
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Generate(subset, Options{Names: names, Cache: cache}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAssignNamesCorpus: naming the whole catalog, done once per catalog change.
func BenchmarkAssignNamesCorpus(b *testing.B) {
	tools := corpusTools(b)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		AssignNames(tools)
	}
}

// BenchmarkReferenceUnmarshalCorpus is the yardstick measured in the same
// run: only decoding every corpus schema with encoding/json into any. On a
// shared machine, compare ratios against it rather than absolute times.
func BenchmarkReferenceUnmarshalCorpus(b *testing.B) {
	tools := corpusTools(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, t := range tools {
			var v any
			if err := json.Unmarshal(t.InputSchema, &v); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*len(tools)), "µs/tool")
}
