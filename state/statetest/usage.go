package statetest

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/sandboxrt/sandbox/codemode"
)

// TestUsageStore is the contract of codemode.UsageStore (what code mode
// learns from use: which tools principals called after searching with
// which words). newStore makes an empty store with the given clock.
func TestUsageStore(t *testing.T, newStore func(t *testing.T, now func() time.Time) codemode.UsageStore) {
	ctx := context.Background()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	evidence := func(t *testing.T, s codemode.UsageStore, words ...string) map[string]map[string]int {
		t.Helper()
		ev, err := s.Evidence(ctx, words)
		if err != nil {
			t.Fatal(err)
		}
		return ev
	}
	record := func(t *testing.T, s codemode.UsageStore, principal string, words, tools []string) {
		t.Helper()
		if err := s.Record(ctx, principal, words, tools); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("principals are counted, not calls", func(t *testing.T) {
		clock := start
		s := newStore(t, func() time.Time { return clock })
		for range 5 {
			record(t, s, "alice", []string{"list", "proje"}, []string{"tracker:list_projects"})
		}
		record(t, s, "acme/bob:1", []string{"list", "proje"}, []string{"tracker:list_projects"})
		record(t, s, "carol", []string{"list"}, []string{"files:list_directory", "a:b:c"})
		got := evidence(t, s, "list", "proje", "nothing", "")
		want := map[string]map[string]int{
			"list":  {"tracker:list_projects": 2, "files:list_directory": 1, "a:b:c": 1},
			"proje": {"tracker:list_projects": 2},
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("evidence %v, want %v", got, want)
		}
		if ev := evidence(t, s); len(ev) != 0 {
			t.Errorf("no words: %v", ev)
		}
		if err := s.Record(ctx, "dave", nil, []string{"x:y"}); err != nil {
			t.Errorf("a record without words: %v", err)
		}
	})

	t.Run("one record counts at most MaxUsageWords words and MaxUsageTools tools", func(t *testing.T) {
		clock := start
		s := newStore(t, func() time.Time { return clock })
		var words, tools []string
		for i := range codemode.MaxUsageWords + 4 {
			words = append(words, fmt.Sprintf("w%02d", i))
		}
		words = append([]string{"w00", strings.Repeat("x", codemode.MaxUsageTermBytes+1)}, words...) // a repeat and a word too long
		for i := range codemode.MaxUsageTools + 2 {
			tools = append(tools, fmt.Sprintf("s:t%d", i))
		}
		record(t, s, "alice", words, tools)
		all := append([]string{strings.Repeat("x", codemode.MaxUsageTermBytes+1)}, words...)
		ev := evidence(t, s, all...)
		if len(ev) != codemode.MaxUsageWords || ev["w15"] == nil || ev["w16"] != nil {
			t.Errorf("words counted: %v", keys(ev))
		}
		if n := len(ev["w00"]); n != codemode.MaxUsageTools || ev["w00"]["s:t3"] != 1 || ev["w00"]["s:t4"] != 0 {
			t.Errorf("tools counted for w00: %v", ev["w00"])
		}
	})

	t.Run("a principal holds at most MaxUsagePairsPerPrincipal pairs; its oldest go", func(t *testing.T) {
		clock := start
		s := newStore(t, func() time.Time { return clock })
		record(t, s, "bob", []string{"p0000"}, []string{"s:t"})
		n := codemode.MaxUsagePairsPerPrincipal + 10
		for i := range n {
			clock = clock.Add(time.Second)
			record(t, s, "alice", []string{fmt.Sprintf("p%04d", i)}, []string{"s:t"})
		}
		ev := evidence(t, s, "p0000", "p0009", "p0010", fmt.Sprintf("p%04d", n-1))
		if ev["p0000"]["s:t"] != 1 || ev["p0009"] != nil {
			t.Errorf("alice's oldest pairs were kept, or bob's went with them: %v", ev)
		}
		if ev["p0010"]["s:t"] != 1 || ev[fmt.Sprintf("p%04d", n-1)]["s:t"] != 1 {
			t.Errorf("alice's newest pairs are gone: %v", ev)
		}
		// recording an old pair again makes it new: the next to go is p0011
		clock = clock.Add(time.Second)
		record(t, s, "alice", []string{"p0010"}, []string{"s:t"})
		clock = clock.Add(time.Second)
		record(t, s, "alice", []string{"q"}, []string{"s:t"})
		ev = evidence(t, s, "p0010", "p0011", "q")
		if ev["p0010"] == nil || ev["p0011"] != nil || ev["q"] == nil {
			t.Errorf("after renewing p0010: %v", ev)
		}
	})

	t.Run("pairs expire UsageTTL after they were last recorded", func(t *testing.T) {
		clock := start
		s := newStore(t, func() time.Time { return clock })
		record(t, s, "alice", []string{"old"}, []string{"s:t"})
		record(t, s, "bob", []string{"old"}, []string{"s:t"})
		clock = start.Add(codemode.UsageTTL / 2)
		record(t, s, "bob", []string{"old"}, []string{"s:t"}) // renewed
		clock = start.Add(codemode.UsageTTL - time.Minute)
		if ev := evidence(t, s, "old"); ev["old"]["s:t"] != 2 {
			t.Errorf("before the TTL: %v", ev)
		}
		clock = start.Add(codemode.UsageTTL + time.Minute)
		if ev := evidence(t, s, "old"); ev["old"]["s:t"] != 1 {
			t.Errorf("after alice's pair expired: %v", ev)
		}
		clock = start.Add(codemode.UsageTTL*3/2 + time.Minute)
		if ev := evidence(t, s, "old"); len(ev) != 0 {
			t.Errorf("after every pair expired: %v", ev)
		}
	})

	t.Run("a word's tools: the most recorded first, at most MaxUsageToolsPerWord", func(t *testing.T) {
		clock := start
		s := newStore(t, func() time.Time { return clock })
		counts := map[string]int{}
		for i := range codemode.MaxUsageToolsPerWord + 8 {
			tool := fmt.Sprintf("s:tool%02d", i)
			counts[tool] = 1 + i%4
			for p := range counts[tool] {
				record(t, s, fmt.Sprintf("p%d", p), []string{"w"}, []string{tool})
			}
		}
		got := evidence(t, s, "w")["w"]
		tools := make([]string, 0, len(counts))
		for tool := range counts {
			tools = append(tools, tool)
		}
		sort.Slice(tools, func(i, j int) bool {
			if counts[tools[i]] != counts[tools[j]] {
				return counts[tools[i]] > counts[tools[j]]
			}
			return tools[i] < tools[j]
		})
		want := map[string]int{}
		for _, tool := range tools[:codemode.MaxUsageToolsPerWord] {
			want[tool] = counts[tool]
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("got %v\nwant %v", got, want)
		}
	})
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
