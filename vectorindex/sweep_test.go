package vectorindex

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// tunables are the package variables TestSweep can set.
var tunables = map[string]any{
	"lsaMinCos": &lsaMinCos, "lsaWeight": &lsaWeight, "lsaMaxTerms": &lsaMaxTerms,
	"linWeight": &linWeight, "linMin": &linMin, "linMaxTerms": &linMaxTerms,
	"wLexical": &wLexical, "wLexicalMin": &wLexicalMin,
	"blockDirect": &blockDirect, "blockPara": &blockPara,
}

func setTunable(t *testing.T, name, val string) {
	switch p := tunables[name].(type) {
	case *float32:
		f, _ := strconv.ParseFloat(val, 32)
		*p = float32(f)
	case *float64:
		f, _ := strconv.ParseFloat(val, 64)
		*p = f
	case *int:
		n, _ := strconv.Atoi(val)
		*p = n
	case *[3]float64:
		for i, x := range strings.Split(val, "/") {
			p[i], _ = strconv.ParseFloat(x, 64)
		}
	default:
		t.Fatalf("unknown tunable %q", name)
	}
}

// TestSweep evaluates the development and the first held-out set for each
// configuration of VI_SWEEP="name=v,name2=v2|name=v3" (for tuning; the
// second held-out set is deliberately not part of it).
func TestSweep(t *testing.T) {
	spec := os.Getenv("VI_SWEEP")
	if spec == "" {
		t.Skip("set VI_SWEEP")
	}
	tools := loadCorpus(t)
	base := newPlainBM25(tools)
	dev := loadQueries(t, corpusPath("queries-dev.json"))
	ho := loadQueries(t, filepath.Join("testdata", "queries-heldout.json"))
	saved := map[string]string{}
	for name, p := range tunables {
		switch p := p.(type) {
		case *float32:
			saved[name] = fmt.Sprint(*p)
		case *float64:
			saved[name] = fmt.Sprint(*p)
		case *int:
			saved[name] = fmt.Sprint(*p)
		case *[3]float64:
			saved[name] = fmt.Sprintf("%v/%v/%v", p[0], p[1], p[2])
		}
	}
	t.Cleanup(func() {
		for name, v := range saved {
			setTunable(t, name, v)
		}
	})
	for _, cfg := range strings.Split(spec, "|") {
		for name, v := range saved {
			setTunable(t, name, v)
		}
		for _, kv := range strings.Split(cfg, ",") {
			if kv = strings.TrimSpace(kv); kv != "" {
				p := strings.SplitN(kv, "=", 2)
				setTunable(t, p[0], p[1])
			}
		}
		ix, err := New(Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ix.Sync(context.Background(), tools); err != nil {
			t.Fatal(err)
		}
		d, _ := evaluate(t, ix, base, dev)
		h, _ := evaluate(t, ix, base, ho)
		p := h.perKind["paraphrase"]
		fmt.Printf("%-44s dev %.3f %.3f | ho %.3f %.3f | para %.3f %.3f\n", cfg, d.R5(), d.MRR(), h.R5(), h.MRR(), p.R5(), p.MRR())
	}
}
