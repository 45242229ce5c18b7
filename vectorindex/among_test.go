package vectorindex

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// shadowedCatalog is the corpus and 60 servers whose two tools each are
// exactly what a screenshot intent asks for: 120 tools that outrank every
// tool of the corpus, more than MaxK.
func shadowedCatalog(t testing.TB) []Tool {
	tools := loadCorpus(t)
	for i := 1; i <= 60; i++ {
		s := fmt.Sprintf("shots-%02d", i)
		tools = append(tools,
			Tool{Server: s, Name: "take_screenshot", Description: "Take a screenshot of the current page"},
			Tool{Server: s, Name: "capture_page", Description: "Capture the current page as a screenshot image"})
	}
	return tools
}

func ofServer(server string) func(id string) bool {
	return func(id string) bool { return strings.HasPrefix(id, server+":") }
}

// TestSearchAmongReachesBelowTheHiddenBest: when every one of the MaxK best
// tools is one the caller may not use, filtering Search's hits leaves
// nothing; SearchAmong ranks only the allowed tools, so the k best of them
// come back, best first, in the order the index ranks them when nothing
// hides them.
func TestSearchAmongReachesBelowTheHiddenBest(t *testing.T) {
	ctx := context.Background()
	ix := mustIndex(t, Options{}, shadowedCatalog(t))
	const intent = "take a screenshot of the current page"
	allow := ofServer("puppeteer")

	top, err := ix.Search(ctx, intent, MaxK)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range top {
		if allow(h.ID) {
			t.Fatalf("the construction is wrong: %s is among the unfiltered top %d", h.ID, MaxK)
		}
	}

	hits, err := ix.SearchAmong(ctx, intent, 5, allow)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 5 {
		t.Fatalf("got %d hits, want 5 of puppeteer's 7 tools: %v", len(hits), ids(hits))
	}
	prev := 1.0
	for _, h := range hits {
		if !allow(h.ID) {
			t.Fatalf("%s is not a tool the filter allows: %v", h.ID, ids(hits))
		}
		if h.Score > prev || h.Score <= 0 {
			t.Fatalf("scores do not fall from 1: %+v", hits)
		}
		prev = h.Score
	}
	if hits[0].ID != "puppeteer:puppeteer_screenshot" {
		t.Fatalf("best allowed tool is %s, want puppeteer:puppeteer_screenshot: %v", hits[0].ID, ids(hits))
	}
	// The hidden tools take nothing from the ranking of the allowed ones:
	// over the corpus alone, the same filter ranks puppeteer's tools the
	// same way. (The catalog's word statistics are the whole index's, so
	// this holds where the ranking is clear, as here, not at every near
	// tie.)
	alone, err := mustIndex(t, Options{}, loadCorpus(t)).SearchAmong(ctx, intent, 5, allow)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ids(hits), ids(alone); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("beside the hidden tools puppeteer's tools rank\n%v\nwithout them\n%v", got, want)
	}
	// k is applied after the filter: a larger k extends the same ranking.
	more, err := ix.SearchAmong(ctx, intent, MaxK, allow)
	if err != nil {
		t.Fatal(err)
	}
	if len(more) != 7 || strings.Join(ids(more[:5]), " ") != strings.Join(ids(hits), " ") {
		t.Fatalf("k=%d gave %v; k=5 gave %v", MaxK, ids(more), ids(hits))
	}
}

// TestSearchAmongNamesOnlyAllowedTools: 60 hidden tools are named exactly
// take_screenshot; to a caller of playwright alone they do not exist, so
// its browser_take_screenshot, a word more than the name, is the named tool.
func TestSearchAmongNamesOnlyAllowedTools(t *testing.T) {
	ctx := context.Background()
	ix := mustIndex(t, Options{}, shadowedCatalog(t))
	allow := ofServer("playwright")
	top, err := ix.Search(ctx, "take_screenshot", MaxK)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range top {
		if allow(h.ID) {
			t.Fatalf("the construction is wrong: %s is among the unfiltered top %d", h.ID, MaxK)
		}
	}
	hits, err := ix.SearchAmong(ctx, "take_screenshot", 3, allow)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 3 || hits[0].ID != "playwright:browser_take_screenshot" || !hits[0].Named {
		t.Fatalf("want playwright:browser_take_screenshot named first, got %+v", hits)
	}
	// A server the caller may not use is no server to it: its prefix is
	// not read as one, and the name names the allowed tool as before.
	hits, err = ix.SearchAmong(ctx, "shots-01.take_screenshot", 3, allow)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 3 || hits[0].ID != "playwright:browser_take_screenshot" || !hits[0].Named {
		t.Fatalf("after a hidden server's prefix, want playwright:browser_take_screenshot named first, got %+v", hits)
	}
}

// TestSearchAmongEdges: no filter, or one that allows every tool, is
// Search; one that allows none gives no hits and no error; the intent is
// checked first either way. Every clause of a multi-step intent draws on
// the allowed tools only.
func TestSearchAmongEdges(t *testing.T) {
	ctx := context.Background()
	ix := mustIndex(t, Options{}, shadowedCatalog(t))
	for _, intent := range benchIntents {
		want := searchIDs(t, ix, intent, 5)
		for name, allow := range map[string]func(string) bool{"nil": nil, "all": func(string) bool { return true }} {
			hits, err := ix.SearchAmong(ctx, intent, 5, allow)
			if err != nil || strings.Join(ids(hits), " ") != strings.Join(want, " ") {
				t.Fatalf("%q with %s filter: %v %v, Search gave %v", intent, name, ids(hits), err, want)
			}
		}
	}
	hits, err := ix.SearchAmong(ctx, "take a screenshot", 5, func(string) bool { return false })
	if err != nil || len(hits) != 0 {
		t.Fatalf("a filter that allows nothing: %v %v", hits, err)
	}
	if _, err := ix.SearchAmong(ctx, "the", 5, func(string) bool { return false }); err != ErrEmptyIntent {
		t.Fatalf("an empty intent: %v", err)
	}
	// A deprecated tool named exactly is followed by its replacement, but
	// not by one the filter holds back (a filter is by tool, not server).
	noReplacement := func(id string) bool { return id != "filesystem:read_text_file" }
	if got := searchIDs(t, ix, "read_file", 3); got[0] != "filesystem:read_file" || got[1] != "filesystem:read_text_file" {
		t.Fatalf("the construction is wrong: read_file's replacement does not follow it: %v", got)
	}
	hits, err = ix.SearchAmong(ctx, "read_file", 3, noReplacement)
	if err != nil || len(hits) != 3 || hits[0].ID != "filesystem:read_file" || pos(ids(hits), "filesystem:read_text_file") < 3 {
		t.Fatalf("a replacement the filter holds back: %v %v", ids(hits), err)
	}
	twoServers := func(id string) bool { return ofServer("slack")(id) || ofServer("filesystem")(id) }
	hits, err = ix.SearchAmong(ctx, "take a screenshot of the page, then read /workspace/report.md and then post its summary to #team", 10, twoServers)
	if err != nil || len(hits) != 10 {
		t.Fatalf("multi-step: %v %v", ids(hits), err)
	}
	for _, h := range hits {
		if !twoServers(h.ID) {
			t.Fatalf("multi-step: %s is not allowed: %v", h.ID, ids(hits))
		}
	}
	if !strings.HasPrefix(hits[0].ID, "filesystem:read") || pos(ids(hits), "slack:slack_post_message") > 2 {
		t.Fatalf("multi-step: each clause's best should come first: %v", ids(hits))
	}
}

// TestNearestAmongInParallel: the parallel scan of a large index finds the
// neighbours the serial one does, in the same order.
func TestNearestAmongInParallel(t *testing.T) {
	ix := mustIndex(t, Options{}, shadowedCatalog(t))
	st := ix.state.Load()
	in, _ := st.among(func(id string) bool { return !strings.HasPrefix(id, "shots-0") })
	defer func(n int) { parallelNearestMin = n }(parallelNearestMin)
	parallelNearestMin = 1
	for _, intent := range benchIntents {
		qv, err := ix.emb.embedQuery(context.Background(), intent)
		if err != nil {
			t.Fatal(err)
		}
		var serial []int32
		for _, n := range st.nearestIn(qv, in, 0, len(st.entries), candidates) {
			serial = append(serial, n.d)
		}
		for _, procs := range []int{2, 3, 7} {
			old := runtime.GOMAXPROCS(procs)
			got := st.nearestAmong(qv, in, candidates)
			runtime.GOMAXPROCS(old)
			if len(got) != candidates || !slices.Equal(got, serial) {
				t.Fatalf("%q with %d procs: %v, serially %v", intent, procs, got, serial)
			}
		}
	}
}
