package jsregexp

import (
	"strconv"
	"strings"
	"testing"
)

// TestCachesAreBoundedInBytes: agent code decides the patterns, and each
// \p{L} expands to ~13 KB of ranges; the caches of rewrites must evict by
// size, not only by count.
func TestCachesAreBoundedInBytes(t *testing.T) {
	for i := 0; i < 60; i++ {
		if _, err := ExpandUnicodeProperties("(" + strings.Repeat(`\p{L}`, 10) + "x" + strconv.Itoa(i)); err != nil {
			t.Fatal(err)
		}
		if _, err := translateUnicodeSets(strings.Repeat(`[\p{L}--[x]]`, 10) + "x" + strconv.Itoa(i)); err != nil {
			t.Fatal(err)
		}
	}
	for name, c := range map[string]interface{ Size() (int, int) }{"expanded": expandedPatterns, "translated": translatedSets} {
		kept, cost := c.Size()
		if cost > 4<<20 || kept >= 60 {
			t.Errorf("%s pattern cache holds %d bytes in %d entries; 60 rewrites of ~130 KB must have evicted some", name, cost, kept)
		}
	}
}

func TestExpandUnicodeProperties(t *testing.T) {
	for _, c := range []struct{ in, want, err string }{
		{in: `\p{ASCII}`, want: `[\u{0}-\u{7F}]`},
		{in: `[\p{ASCII}x]`, want: `[\u{0}-\u{7F}x]`},
		{in: `\P{ASCII}`, want: `[^\u{0}-\u{7F}]`},
		{in: `[\P{ASCII}]`, want: `[\u{80}-\u{10FFFF}]`},
		{in: `\\p{ASCII}`, want: `\\p{ASCII}`},
		{in: `\p{Nope}`, err: `SyntaxError: invalid regular expression /\p{Nope}/: unicode property \p{Nope} is not supported here; use explicit ranges`},
		{in: `\p{Script=Nope}`, err: `unknown script "Nope"`},
		{in: `\p{L`, err: `unterminated \p{`},
	} {
		out, err := ExpandUnicodeProperties(c.in)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: error %v, want one containing %q", c.in, err, c.err)
		case c.err == "" && (err != nil || out != c.want):
			t.Errorf("%s = %q, %v; want %q", c.in, out, err, c.want)
		}
	}
}
