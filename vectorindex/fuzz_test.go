package vectorindex

import (
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math"
	"strings"
	"sync"
	"testing"
	"unicode"
)

func FuzzSplitParts(f *testing.F) {
	for _, s := range []string{"listPullRequests", "HTMLParser", "PRs", "k8s_pod-name.v2", "GitHub", "", "____", "ÄÖÜäöü", "a\xffb", "x1Y2z3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		splitParts(s, func(w string, part bool) {
			if w == "" {
				t.Fatalf("empty word from %q", s)
			}
			hasLetter := false
			for _, r := range w {
				if unicode.ToLower(r) != r {
					t.Fatalf("%q: word %q not lowercased", s, w)
				}
				if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
					t.Fatalf("%q: word %q has %q", s, w, r)
				}
				hasLetter = hasLetter || unicode.IsLetter(r)
			}
			if !hasLetter {
				t.Fatalf("%q: word %q has no letter", s, w)
			}
		})
	})
}

var (
	fuzzIxOnce sync.Once
	fuzzIx     *Index
)

// FuzzSearch: any intent either finds up to k tools with finite scores in
// [0, 1], or fails with ErrEmptyIntent or the length limit. Never a panic.
func FuzzSearch(f *testing.F) {
	for _, s := range []string{
		"list the commits", "// TODO: fetch open PRs", "lsit comits", "", " ", "'unterminated quote",
		"\"\"\"", "https://x", "a/b/c/d", "read a.md, then post it; finally delete it and list", "@@@.@",
		"'" + strings.Repeat("a", 500) + "'", "and and and then then ;;;", "\u202e\u0000\xff",
	} {
		f.Add(s, 5)
	}
	f.Fuzz(func(t *testing.T, intent string, k int) {
		fuzzIxOnce.Do(func() {
			fuzzIx = mustIndex(t, Options{}, smallCatalog())
		})
		hits, err := fuzzIx.Search(context.Background(), intent, k)
		if err != nil {
			if errors.Is(err, ErrEmptyIntent) || len(intent) > MaxIntentLen {
				return
			}
			t.Fatalf("Search(%q, %d): %v", intent, k, err)
		}
		if len(hits) > MaxK || len(hits) > len(smallCatalog()) {
			t.Fatalf("%d hits", len(hits))
		}
		for _, h := range hits {
			if math.IsNaN(h.Score) || h.Score < 0 || h.Score > 1.000001 {
				t.Fatalf("Search(%q): score %v", intent, h.Score)
			}
		}
	})
}

func FuzzIntentFields(f *testing.F) {
	for _, s := range []string{"open 'x' in a/b", "`code` and \"q\"", "mail a@b.c now", "‘curly’ “quotes”", "'", "a'b'c", "http://x.y/z?q=1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fs := intentFields(s)
		if len(fs) == 0 || fs[0].weight != 1 {
			t.Fatalf("%q: first field must be the main text: %+v", s, fs)
		}
	})
}

// FuzzDecodeStore: any bytes in the store file are either read as a valid
// index or refused; never a panic. Seeded with a real store; with fixCRC
// the input's checksum is made right first, so that the fuzzer reaches the
// parser (otherwise almost every input stops at the checksum).
func FuzzDecodeStore(f *testing.F) {
	ix := mustIndex(f, Options{}, smallCatalog()[:3])
	good := encodeStore(ix.emb.id(), len(ix.state.Load().entries[0].vec), ix.state.Load().entries)
	f.Add(good, false)
	f.Add(good[:len(good)/2], true)
	f.Add([]byte(storeMagic), true)
	f.Fuzz(func(t *testing.T, b []byte, fixCRC bool) {
		if fixCRC && len(b) >= 4 {
			b = binary.LittleEndian.AppendUint32(b[:len(b)-4:len(b)-4], crc32.Checksum(b[:len(b)-4], castagnoli))
		}
		entries, err := decodeStore(b, ix.emb.id())
		if err != nil {
			return
		}
		for _, e := range entries {
			if e.tool.ID == "" || !validVector(e.vec, len(entries[0].vec)) {
				t.Fatalf("decoded an invalid entry %+v", e)
			}
		}
	})
}
