package domain

import (
	"encoding/binary"
	"math"
	"math/rand"
	"runtime"
	"sort"
	"testing"
)

func unit(q []int8) []float64 {
	v := make([]float64, len(q))
	var n float64
	for i, x := range q {
		v[i] = float64(x)
		n += v[i] * v[i]
	}
	n = math.Sqrt(n)
	for i := range v {
		v[i] /= n
	}
	return v
}

// nearest returns the n words closest to w by cosine.
func nearest(t *testing.T, v *Vectors, w string, n int) []string {
	t.Helper()
	id, ok := v.ID(w)
	if !ok {
		t.Fatalf("%q has no vector", w)
	}
	q := unit(v.Vector(id))
	type nb struct {
		w string
		c float64
	}
	var nbs []nb
	for i := 0; i < v.Len(); i++ {
		if i == id {
			continue
		}
		u := unit(v.Vector(i))
		var c float64
		for k := range q {
			c += q[k] * u[k]
		}
		nbs = append(nbs, nb{v.Word(i), c})
	}
	sort.Slice(nbs, func(a, b int) bool { return nbs[a].c > nbs[b].c })
	out := make([]string, n)
	for i := range out {
		out[i] = nbs[i].w
	}
	return out
}

// TestEmbeddedVectors checks that the embedded file is whole and that its
// vectors carry what they were made for: words of one software topic close
// together.
func TestEmbeddedVectors(t *testing.T) {
	v := Default()
	if v.Dims() != 128 || v.Len() < 15000 {
		t.Fatalf("embedded vectors look wrong: %d words x %d dims", v.Len(), v.Dims())
	}
	for _, w := range []string{"file", "directory", "invoice", "commit", "redis", "screenshot", "kubernete"} {
		if _, ok := v.ID(w); !ok {
			t.Errorf("no vector for %q", w)
		}
	}
	if _, ok := v.ID("the"); ok {
		t.Error("stopwords should have no vector")
	}
	file, _ := v.ID("file")
	sub, _ := v.ID("subdirectory")
	if v.Count(file) < 10*v.Count(sub) || v.Count(sub) < 5 {
		t.Errorf("counts: file %.0f, subdirectory %.0f", v.Count(file), v.Count(sub))
	}
	for w, want := range map[string]string{"directory": "subdirectory", "invoice": "customer", "history": "commit"} {
		got := nearest(t, v, w, 10)
		found := false
		for _, g := range got {
			found = found || g == want
		}
		if !found {
			t.Errorf("nearest to %q: %v; want %q among them", w, got, want)
		}
	}
}

// encodeSmall writes a file in ./gen's format.
func encodeSmall(words []string, dims int) []byte {
	b := []byte(magic)
	b = binary.AppendUvarint(b, uint64(dims))
	b = binary.AppendUvarint(b, uint64(len(words)))
	prev := ""
	for _, w := range words {
		p := 0
		for p < len(w) && p < len(prev) && w[p] == prev[p] {
			p++
		}
		b = binary.AppendUvarint(b, uint64(p))
		b = binary.AppendUvarint(b, uint64(len(w)-p))
		b = append(b, w[p:]...)
		prev = w
	}
	for range words {
		b = append(b, 32)
	}
	for i := range words {
		for d := 0; d < dims; d++ {
			b = append(b, byte(int8(i+d)))
		}
	}
	return b
}

func TestDecodeSmall(t *testing.T) {
	v, err := Decode((encodeSmall([]string{"alpha", "alps", "beta"}, 3)))
	if err != nil {
		t.Fatal(err)
	}
	if id, ok := v.ID("alps"); !ok || id != 1 || v.Word(id) != "alps" || v.Vector(id)[2] != 3 {
		t.Fatalf("ID(alps) = %d, %v; vector %v", id, ok, v.Vector(id))
	}
	if _, ok := v.ID("gamma"); ok {
		t.Fatal("found a word that is not there")
	}
	if c := v.Count(0); math.Abs(c-3) > 1e-9 {
		t.Fatalf("Count = %v, want 3", c)
	}
}

// TestDecodeRejectsCorruptData: a damaged file is an error, never a panic
// or a huge allocation.
func TestDecodeRejectsCorruptData(t *testing.T) {
	good := encodeSmall([]string{"alpha", "alps", "beta"}, 3)
	raw := embedded
	cases := [][]byte{
		nil,
		[]byte("not vectors"),
		([]byte("SBXDOM0\nold")),
		(good[:len(good)-1]),
		(append(append([]byte{}, good...), 1)),
		(encodeSmall([]string{"beta", "alpha"}, 3)),           // out of order
		(append([]byte(magic), 0xff, 0xff, 0xff, 0xff, 0x0f)), // absurd dims
		(raw[:len(raw)/2]),
	}
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 20; i++ {
		b := append([]byte{}, raw[:2048]...)
		b[len(magic)+rng.Intn(len(b)-len(magic))] ^= byte(1 + rng.Intn(255))
		cases = append(cases, (b))
	}
	for i, c := range cases {
		if _, err := Decode(c); err == nil {
			t.Errorf("case %d: corrupt input decoded without error", i)
		}
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(encodeSmall([]string{"alpha", "alps", "beta"}, 3))
	f.Add([]byte(magic + "\x01\x01\x00\x01a\x00\x05"))
	f.Add(embedded[:300])
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := Decode((b))
		if err != nil {
			return
		}
		for i := 0; i < v.Len(); i++ { // every id resolves to a full vector
			if len(v.Vector(i)) != v.Dims() {
				t.Fatalf("vector %d has %d dims, want %d", i, len(v.Vector(i)), v.Dims())
			}
			if id, ok := v.ID(v.Word(i)); !ok || id != i {
				t.Fatalf("ID(Word(%d)) = %d, %v", i, id, ok)
			}
		}
	})
}

// BenchmarkDecode measures the first-use cost of the embedded vectors: the
// time to decode them and the heap they hold.
func BenchmarkDecode(b *testing.B) {
	var v *Vectors
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := 0; i < b.N; i++ {
		var err error
		if v, err = Decode(embedded); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "MiB-heap")
	runtime.KeepAlive(v)
}
