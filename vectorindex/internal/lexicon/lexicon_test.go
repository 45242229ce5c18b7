package lexicon

import (
	"math/rand"
	"testing"
)

func TestEmbeddedLexicon(t *testing.T) {
	l := Default()
	if l.NumWords() < 100000 || l.NumSynsets() < 100000 || l.VectorDims() == 0 {
		t.Fatalf("embedded lexicon looks truncated: %d words, %d synsets, %d vector dims", l.NumWords(), l.NumSynsets(), l.VectorDims())
	}
	for w, want := range map[string]string{
		"files": "file", "running": "run", "stopped": "stop", "staged": "stage", "customer": "customer",
		"data": "data", "branches": "branch", "geese": "goose", "better": "good", "commits": "commit",
	} {
		if got, ok := l.Lemma(w); !ok || got != want {
			t.Errorf("Lemma(%q) = %q, %v; want %q", w, got, ok, want)
		}
	}
	if _, ok := l.Lemma("kubectl"); ok {
		t.Error("WordNet should not know kubectl")
	}
	del, _ := l.ID("delete")
	found := false
	for _, r := range l.Related(del) {
		if l.Word(r) == "deletion" {
			found = true
		}
	}
	if !found {
		t.Error("delete is not related to deletion")
	}
	// "remove" is a hypernym of a sense of "delete"
	rm, _ := l.ID("remove")
	isHyper := false
	for _, s := range l.Senses(del) {
		for _, h := range l.Hypernyms(s.Synset) {
			for _, m := range l.Members(h) {
				isHyper = isHyper || m == rm
			}
		}
	}
	if !isHyper {
		t.Error("remove is not a hypernym of delete")
	}
	if l.Vector(del) == nil {
		t.Error("delete has no word vector")
	}
}

// TestDecodeRejectsCorruptData: a damaged file is an error, never a panic
// or an endless loop.
func TestDecodeRejectsCorruptData(t *testing.T) {
	raw := embedded
	cases := [][]byte{
		nil,
		[]byte("not a lexicon"),
		([]byte("SBXLEX1\nold")),
		(raw[:len(raw)/2]),
		(append(append([]byte{}, raw...), 1, 2, 3)),
	}
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 20; i++ {
		b := append([]byte{}, raw[:4096]...)
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
	raw := embedded
	f.Add(raw[:200])
	f.Add([]byte(magic + "\x01\x00\x01a"))
	f.Add([]byte(magic + "\x02\x00\x01a\x01\x01b\x01n\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = Decode((b)) // must not panic
	})
}

func FuzzBases(f *testing.F) {
	for _, s := range []string{"files", "geese", "", "s", "ies", "men", "ing", "xyzzying", "\xff"} {
		f.Add(s)
	}
	l := Default()
	f.Fuzz(func(t *testing.T, w string) {
		for _, b := range l.Bases(w) {
			if !l.HasPOS(b.Word, b.POS) {
				t.Fatalf("Bases(%q) gave %q/%c, which has no such sense", w, l.Word(b.Word), b.POS)
			}
		}
		l.Lemma(w)
	})
}
