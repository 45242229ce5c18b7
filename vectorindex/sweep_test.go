package vectorindex

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
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
	"wNestedName": &wNestedName, "wNestedDesc": &wNestedDesc, "wEnumValue": &wEnumValue,
	"pinNamedTools": &pinNamedTools, "clauseBestFirst": &clauseBestFirst, "questionsPreferReads": &questionsPreferReads,
	"wNameOverlap": &wNameOverlap, "wFilterValue": &wFilterValue, "wQuestionWrite": &wQuestionWrite, "wQuestionDestructive": &wQuestionDestructive,
	"wOutputName": &wOutputName, "wOutputDesc": &wOutputDesc, "wInstructions": &wInstructions,
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
	case *bool:
		*p, _ = strconv.ParseBool(val)
	default:
		t.Fatalf("unknown tunable %q", name)
	}
}

// TestSweep evaluates the development and the first held-out set, and the
// agent servers' development set, for each configuration of
// VI_SWEEP="name=v,name2=v2|name=v3" (for tuning; the second held-out set
// and the agent servers' held-out set are deliberately not part of it).
func TestSweep(t *testing.T) {
	spec := os.Getenv("VI_SWEEP")
	if spec == "" {
		t.Skip("set VI_SWEEP")
	}
	tools := loadCorpus(t)
	base := newPlainBM25(tools)
	dev := loadQueries(t, corpusPath("queries-dev.json"))
	ho := loadQueries(t, filepath.Join("testdata", "queries-heldout.json"))
	agentTools := loadAgentServers(t)
	agentBase := newPlainBM25(agentTools)
	agentDev := loadQueries(t, agentServersPath("queries-dev.json"))
	saved := saveTunables(t)
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
		ax, err := New(Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ax.Sync(context.Background(), agentTools); err != nil {
			t.Fatal(err)
		}
		a := evaluateAgentSet(t, ax, agentBase, agentDev)
		fmt.Printf("%-44s dev %.3f %.3f | ho %.3f %.3f | para %.3f %.3f | agent %.3f %.3f fused %.3f joined %.3f\n", cfg, d.R5(), d.MRR(), h.R5(), h.MRR(), p.R5(), p.MRR(),
			a.single.R5(), a.single.MRR(), a.fused.R5(), a.joined.R5())
	}
}

// saveTunables remembers every tunable and restores them when the test
// ends; it returns what it saved.
func saveTunables(t *testing.T) map[string]string {
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
		case *bool:
			saved[name] = fmt.Sprint(*p)
		}
	}
	t.Cleanup(func() {
		for name, v := range saved {
			setTunable(t, name, v)
		}
	})
	return saved
}

// TestAblation prints, as a markdown table, what each rule of the query
// understanding buys: every set measured with this version, then with one
// rule switched off at a time (VI_ABLATION=1 go test ./vectorindex -run
// TestAblation -v). It measures the held-out sets too: it is a report,
// not a tuning tool, and docs/vectorindex.md quotes it.
func TestAblation(t *testing.T) {
	if os.Getenv("VI_ABLATION") == "" {
		t.Skip("set VI_ABLATION=1")
	}
	saved := saveTunables(t)
	corpus, agent := loadCorpus(t), loadAgentServers(t)
	sets := map[string][]labelledQuery{
		"dev":   loadQueries(t, corpusPath("queries-dev.json")),
		"ho1":   loadQueries(t, filepath.Join("testdata", "queries-heldout.json")),
		"ho2":   loadQueries(t, filepath.Join("testdata", "queries-heldout2.json")),
		"multi": loadQueries(t, filepath.Join("testdata", "queries-multi.json")),
		"adev":  loadQueries(t, agentServersPath("queries-dev.json")),
		"aho":   loadQueries(t, agentServersPath("queries-heldout.json")),
	}
	fmt.Println("| switched off | corpus dev R@5 / MRR | held-out 1 | held-out 2 | multi: fused R@5 / joined R@5 | agents dev: single R@5 / MRR | agents held-out: single R@5 / MRR | fused R@5 | joined R@5 / MRR |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|")
	// the rules as they were before issue 26 (29e8838)
	steps := stepBreak
	oldSteps := regexp.MustCompile(`(?i)\s*(?:;|\band then\b|,\s*then\b|\bthen\b|\bafter that\b|\bafterwards\b|\bfinally\b|\bfollowed by\b|\s->\s|\s=>\s|\n)\s*`)
	rrfOnly := func(rankings [][]Hit, k int) []Hit {
		fused := map[string]float64{}
		for _, ranking := range rankings {
			for r, h := range ranking {
				fused[h.ID] += 1 / float64(RRFConstant+r+1)
			}
		}
		out := make([]Hit, 0, len(fused))
		for id, score := range fused {
			out = append(out, Hit{ID: id, Score: score})
		}
		sort.Slice(out, func(i, j int) bool {
			if out[i].Score != out[j].Score {
				return out[i].Score > out[j].Score
			}
			return out[i].ID < out[j].ID
		})
		return out[:min(k, len(out))]
	}
	t.Cleanup(func() { stepBreak, fuse = steps, Fuse })
	for _, row := range []struct{ name, cfg string }{
		{"nothing (this version)", ""},
		{"\" \\| \" and lists split an intent", "oldSteps"},
		{"Fuse keeps each ranking's best first", "rrfOnly"},
		{"tools named first", "pinNamedTools=false"},
		{"each clause's best first", "clauseBestFirst=false"},
		{"questions prefer reading tools", "questionsPreferReads=false"},
		{"share of the intent's words in the name", "wNameOverlap=0"},
		{"schemas, enums, outputs, instructions indexed", "wNestedName=0,wNestedDesc=0,wEnumValue=0,wOutputName=0,wOutputDesc=0,wInstructions=0"},
	} {
		for name, v := range saved {
			setTunable(t, name, v)
		}
		stepBreak, fuse = steps, Fuse
		switch row.cfg {
		case "oldSteps":
			stepBreak = oldSteps
		case "rrfOnly":
			fuse = rrfOnly
		}
		for _, kv := range strings.Split(row.cfg, ",") {
			if p := strings.SplitN(kv, "=", 2); len(p) == 2 {
				setTunable(t, p[0], p[1])
			}
		}
		cx, ax := mustIndex(t, Options{}, corpus), mustIndex(t, Options{}, agent)
		cb, ab := newPlainBM25(corpus), newPlainBM25(agent)
		d, _ := evaluate(t, cx, cb, sets["dev"])
		h1, _ := evaluate(t, cx, cb, sets["ho1"])
		h2, _ := evaluate(t, cx, cb, sets["ho2"])
		m := evaluateAgentSet(t, cx, cb, sets["multi"])
		ad := evaluateAgentSet(t, ax, ab, sets["adev"])
		ah := evaluateAgentSet(t, ax, ab, sets["aho"])
		fmt.Printf("| %s | %.3f / %.3f | %.3f / %.3f | %.3f / %.3f | %.3f / %.3f | %.3f / %.3f | %.3f / %.3f | %.3f | %.3f / %.3f |\n", row.name,
			d.R5(), d.MRR(), h1.R5(), h1.MRR(), h2.R5(), h2.MRR(), m.fused.R5(), m.joined.R5(),
			ad.single.R5(), ad.single.MRR(), ah.single.R5(), ah.single.MRR(), ah.fused.R5(), ah.joined.R5(), ah.joined.MRR())
	}
}
