package runtime

import (
	"strconv"
	"strings"
	"testing"
)

// TestLongOperatorChains: chains far deeper than the barrier interval keep
// their value, their evaluation order and their error positions.
func TestLongOperatorChains(t *testing.T) {
	t.Parallel()
	rt := runtimes(t)[IsolateWorkers]
	cases := []struct{ name, code, want string }{
		{"a sum of 40,000 ones", "return " + strings.Repeat("1+", 39999) + "1", "40000"},
		{"string concatenation keeps left-to-right typing", `return "n" + ` + strings.Repeat("1+", 299) + "1", `"n` + strings.Repeat("1", 300) + `"`},
		{"numbers then a string", "return " + strings.Repeat("1+", 299) + `"s"`, `"299s"`},
		{"evaluation order", "const seen: number[] = []; const f = (i: number) => (seen.push(i), i); return [" +
			func() string {
				var terms []string
				for i := range 200 {
					terms = append(terms, "f("+strconv.Itoa(i)+")")
				}
				return strings.Join(terms, "-")
			}() + ", seen.every((v, i) => v === i), seen.length]", "[-19900,true,200]"},
		{"a right-deep chain", "return " + strings.Repeat("(1+", 500) + "1" + strings.Repeat(")", 500), "501"},
		{"logical chains", "return " + strings.Repeat("1 && ", 999) + "2", "2"},
	}
	for _, c := range cases {
		res := run(t, rt, Request{Code: c.code})
		if !res.OK || string(res.Value) != c.want {
			t.Errorf("%s: %s %+v, want %s", c.name, res.Value, res.Error, c.want)
		}
	}
	// An error at the far end of a long chain points at its place.
	code := "const a = 1;\nreturn " + strings.Repeat("a+", 5000) + "missing"
	res := run(t, rt, Request{Code: code})
	if res.OK || res.Error.Line != 2 || !strings.Contains(res.Error.Message, "missing") {
		t.Errorf("error at the end of a chain: %+v", res.Error)
	}
}

// TestSlowCompileSaysSo: a snippet whose compiling outlasts its time limit
// is told so, not that a built-in ran long.
func TestSlowCompileSaysSo(t *testing.T) {
	t.Parallel()
	rt := runtimes(t)[IsolateWorkers]
	code := "return " + strings.Repeat("1+", 120000) + "1" // 240 KB: about a second to compile
	res := run(t, rt, Request{Code: code, Limits: Limits{Timeout: 50 * 1e6}})
	if res.OK || res.Error.Limit != LimitTime || !strings.Contains(res.Error.Message, "to compile, before any of it ran") {
		t.Errorf("%+v", res.Error)
	}
}

// BenchmarkCompileLongSnippet: compile time by size, for a 1+1+...+1 chain
// (the case that was quadratic in goja's compiler): ns per KB should stay
// flat from 10 to 256 KB (target: 80 KB under 200 ms).
func BenchmarkCompileLongSnippet(b *testing.B) {
	for _, kb := range []int{10, 80, 256} {
		b.Run(strconv.Itoa(kb)+"KB", func(b *testing.B) {
			i := 0
			for b.Loop() {
				i++ // a new snippet each time: no cache
				code := "return " + strings.Repeat("1+", kb<<9-8) + strconv.Itoa(i)
				t, err := transpile("s.ts", code)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := compileProgram(t, "s.ts"); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(kb), "ns/KB")
		})
	}
}
