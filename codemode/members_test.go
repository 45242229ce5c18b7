package codemode

import (
	"slices"
	"strings"
	"testing"
)

func TestMemberAccesses(t *testing.T) {
	for _, c := range []struct {
		code string
		want []string // "a.b" for a free a, "~a.b" for a member
	}{
		{"return 6*7", nil},
		{"await github.listCommits({})", []string{"github.listCommits"}},
		{"x.github.listCommits()", []string{"x.github", "~github.listCommits"}},
		{"a?.b", []string{"a.b"}},
		{"a ?. b", []string{"a.b"}},
		{"a\n  .b\n  .c", []string{"a.b", "~b.c"}},
		{"x?.github.list", []string{"x.github", "~github.list"}},
		{"[...github.tools]", []string{"github.tools"}},
		{"1abc.def", []string{"abc.def"}},
		{"1.5.toFixed(1)", nil},
		{"a.1b", nil},
		{"$x._y", []string{"$x._y"}},
		{"// slack.postMessage in a comment", []string{"slack.postMessage"}},
		{"a.", nil},
		{".b", nil},
		{"a..b", nil},
		{"é.b", nil},
	} {
		var got []string
		for m, free := range memberAccesses(c.code) {
			s := m[0] + "." + m[1]
			if !free {
				s = "~" + s
			}
			got = append(got, s)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%q: %q, want %q", c.code, got, c.want)
		}
	}
}

// FuzzMemberAccesses: every pair the scan yields is two identifiers found
// around a dot of the text, and it never panics.
func FuzzMemberAccesses(f *testing.F) {
	for _, s := range []string{"a.b", "x?.y.z", "...a.b", "1a.b", "a . b", "\xff.\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, code string) {
		for m := range memberAccesses(code) {
			for _, id := range m {
				if id == "" || identEnd(id, 0) != len(id) {
					t.Fatalf("%q: %q is not an identifier", code, id)
				}
			}
			if !strings.Contains(code, m[0]) || !strings.Contains(code, m[1]) {
				t.Fatalf("%q: %q is not in the text", code, m)
			}
		}
	})
}

func BenchmarkMemberAccesses(b *testing.B) {
	code := strings.Repeat("const r = await github.listCommits({ owner: o.name, repo: 'x' });\n", 100)
	for b.Loop() {
		for range memberAccesses(code) {
		}
	}
}
