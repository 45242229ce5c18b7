package statetest

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/gateway"
)

// TestTokenStore runs the gateway.TokenStore contract against the stores
// newStore makes (a new, empty store for each call).
func TestTokenStore(t *testing.T, newStore func(t *testing.T) gateway.TokenStore) {
	ctx := context.Background()
	alice := gateway.TokenScope{Principal: "acme/alice", Session: "s1"}
	aliceOther := gateway.TokenScope{Principal: "acme/alice", Session: "s2"}
	aliceAll := gateway.TokenScope{Principal: "acme/alice"}
	bob := gateway.TokenScope{Principal: "acme/bob", Session: "s1"} // same session id, other principal

	mustToken := func(t *testing.T, s gateway.TokenStore, scope gateway.TokenScope, server, want string) {
		t.Helper()
		got, ok, err := s.Token(ctx, scope, server)
		if err != nil {
			t.Fatalf("Token(%+v, %q): %v", scope, server, err)
		}
		if want == "" && ok {
			t.Fatalf("Token(%+v, %q) = %q, want none", scope, server, got)
		}
		if want != "" && (!ok || got != want) {
			t.Fatalf("Token(%+v, %q) = %q, %v; want %q", scope, server, got, ok, want)
		}
	}
	mustSet := func(t *testing.T, s gateway.TokenStore, scope gateway.TokenScope, server, tok string) {
		t.Helper()
		if err := s.SetToken(ctx, scope, server, tok); err != nil {
			t.Fatalf("SetToken(%+v, %q): %v", scope, server, err)
		}
	}

	t.Run("EmptyHasNone", func(t *testing.T) {
		mustToken(t, newStore(t), alice, "github", "")
	})
	t.Run("SetThenGet", func(t *testing.T) {
		s := newStore(t)
		mustSet(t, s, alice, "github", "tok-a")
		mustToken(t, s, alice, "github", "tok-a")
		mustToken(t, s, alice, "linear", "")
		mustSet(t, s, alice, "github", "tok-a2")
		mustToken(t, s, alice, "github", "tok-a2")
	})
	t.Run("ScopesAreIsolated", func(t *testing.T) {
		s := newStore(t)
		mustSet(t, s, alice, "github", "tok-a")
		mustToken(t, s, aliceOther, "github", "")
		mustToken(t, s, aliceAll, "github", "")
		mustToken(t, s, bob, "github", "")
		mustSet(t, s, aliceAll, "github", "tok-all")
		mustToken(t, s, alice, "github", "tok-a")
		mustToken(t, s, aliceAll, "github", "tok-all")
	})
	t.Run("EmptyTokenRemoves", func(t *testing.T) {
		s := newStore(t)
		mustSet(t, s, alice, "github", "tok-a")
		mustSet(t, s, alice, "github", "")
		mustToken(t, s, alice, "github", "")
		mustSet(t, s, alice, "never-set", "") // removing what is absent is no error
	})
	t.Run("ForgetDropsOneScope", func(t *testing.T) {
		s := newStore(t)
		mustSet(t, s, alice, "github", "tok-a")
		mustSet(t, s, alice, "linear", "tok-l")
		mustSet(t, s, aliceAll, "github", "tok-all")
		mustSet(t, s, bob, "github", "tok-b")
		if err := s.Forget(ctx, alice); err != nil {
			t.Fatal(err)
		}
		mustToken(t, s, alice, "github", "")
		mustToken(t, s, alice, "linear", "")
		mustToken(t, s, aliceAll, "github", "tok-all")
		mustToken(t, s, bob, "github", "tok-b")
		if err := s.Forget(ctx, alice); err != nil {
			t.Fatalf("forgetting twice: %v", err)
		}
	})
	t.Run("ValuesAreKeptByteForByte", func(t *testing.T) {
		s := newStore(t)
		tok := "Bearer-ish \x00 ünïcode " + string(make([]byte, 4096))
		mustSet(t, s, alice, "github", tok)
		mustToken(t, s, alice, "github", tok)
	})
	t.Run("ConcurrentUse", func(t *testing.T) {
		s := newStore(t)
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				scope := gateway.TokenScope{Principal: "p", Session: sessionN(i)}
				for j := range 100 {
					tok := fmt.Sprintf("t-%d-%d", i, j)
					if err := s.SetToken(ctx, scope, "srv", tok); err != nil {
						t.Error(err)
						return
					}
					if got, ok, err := s.Token(ctx, scope, "srv"); err != nil || !ok || got != tok {
						t.Errorf("session %d read %q, %v, %v after writing %q", i, got, ok, err, tok)
						return
					}
				}
				if err := s.Forget(ctx, scope); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
	})
}

func sessionN(i int) auth.SessionID { return auth.SessionID(fmt.Sprintf("s%d", i)) }
