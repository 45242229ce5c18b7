package statetest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sandboxrt/sandbox/codemode"
)

// TestScriptStore is the contract of codemode.ScriptStore (saved scripts).
// newStore makes an empty store.
func TestScriptStore(t *testing.T, newStore func(t *testing.T) codemode.ScriptStore) {
	ctx := context.Background()
	put := func(t *testing.T, s codemode.ScriptStore, owner, name, code string) {
		t.Helper()
		if err := s.Put(ctx, codemode.Script{Name: name, Owner: owner, Code: code, Description: "d " + name, Saved: time.Unix(1e9, 0).UTC()}); err != nil {
			t.Fatal(err)
		}
	}
	names := func(scripts []codemode.Script, err error) string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, s := range scripts {
			out = append(out, s.Owner+"/"+s.Name+"="+s.Code)
		}
		return strings.Join(out, " ")
	}

	t.Run("each principal sees its own and the shared ones", func(t *testing.T) {
		s := newStore(t)
		put(t, s, "alice", "report", "return 1")
		put(t, s, "alice", "count", "return 2")
		put(t, s, "bob", "report", "return 3")
		put(t, s, "bob", "tally", "return 4")
		if got := names(s.Visible(ctx, "alice")); got != "alice/count=return 2 alice/report=return 1" {
			t.Errorf("alice sees %s", got)
		}
		if err := s.Share(ctx, "bob", "report", true); err != nil {
			t.Fatal(err)
		}
		if err := s.Share(ctx, "bob", "tally", true); err != nil {
			t.Fatal(err)
		}
		// Her own report wins the name over bob's shared one.
		if got := names(s.Visible(ctx, "alice")); got != "alice/count=return 2 alice/report=return 1 bob/tally=return 4" {
			t.Errorf("alice sees %s", got)
		}
		if got := names(s.Visible(ctx, "carol")); got != "bob/report=return 3 bob/tally=return 4" {
			t.Errorf("carol sees %s", got)
		}
		if got := names(s.All(ctx)); got != "alice/count=return 2 alice/report=return 1 bob/report=return 3 bob/tally=return 4" {
			t.Errorf("all: %s", got)
		}
		all, _ := s.All(ctx)
		if all[0].Description != "d count" || !all[0].Saved.Equal(time.Unix(1e9, 0)) || all[0].Shared || !all[3].Shared {
			t.Errorf("fields: %+v", all)
		}
		// Saving again replaces the code and keeps the operator's sharing.
		put(t, s, "bob", "tally", "return 5")
		if got := names(s.Visible(ctx, "carol")); got != "bob/report=return 3 bob/tally=return 5" {
			t.Errorf("after replacing: %s", got)
		}
		if err := s.Share(ctx, "bob", "tally", false); err != nil {
			t.Fatal(err)
		}
		if got := names(s.Visible(ctx, "carol")); got != "bob/report=return 3" {
			t.Errorf("after unsharing: %s", got)
		}
		if err := s.Share(ctx, "bob", "nothing", true); err == nil {
			t.Error("sharing a script that does not exist")
		}
		if ok, err := s.Delete(ctx, "bob", "report"); !ok || err != nil {
			t.Fatalf("delete: %v %v", ok, err)
		}
		if ok, _ := s.Delete(ctx, "bob", "report"); ok {
			t.Error("a second delete says it deleted")
		}
		if got := names(s.Visible(ctx, "carol")); got != "" {
			t.Errorf("carol sees a deleted script: %s", got)
		}
	})

	t.Run("a principal's scripts are bounded", func(t *testing.T) {
		s := newStore(t)
		big := strings.Repeat("x", 1<<20)
		for i := range 3 {
			put(t, s, "p", fmt.Sprintf("s%d", i), big)
		}
		if err := s.Put(ctx, codemode.Script{Name: "s9", Owner: "p", Code: big + big}); err == nil || !strings.Contains(err.Error(), "over the 4194304 a principal may keep") {
			t.Errorf("over the byte bound: %v", err)
		}
		if err := s.Put(ctx, codemode.Script{Name: "s0", Owner: "p", Code: "return 1"}); err != nil {
			t.Errorf("replacing a script with a shorter one: %v", err)
		}
		if err := s.Put(ctx, codemode.Script{Name: "s9", Owner: "other", Code: big + big}); err != nil {
			t.Errorf("another principal is bounded by p's scripts: %v", err)
		}
		for i := range codemode.MaxScriptsPerPrincipal {
			if err := s.Put(ctx, codemode.Script{Name: fmt.Sprintf("n%d", i), Owner: "many", Code: "1"}); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Put(ctx, codemode.Script{Name: "one_more", Owner: "many", Code: "1"}); err == nil || !strings.Contains(err.Error(), "the most there may be") {
			t.Errorf("over the count: %v", err)
		}
		if err := s.Put(ctx, codemode.Script{Name: "n0", Owner: "many", Code: "2"}); err != nil {
			t.Errorf("replacing at the count: %v", err)
		}
	})
}
