package statetest

import (
	"context"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/client/transport"

	"github.com/sandboxrt/sandbox/gateway"
)

// TestOAuthStore is the contract of gateway.OAuthStore (OAuth grants to
// upstream servers). newStore makes an empty store.
func TestOAuthStore(t *testing.T, newStore func(t *testing.T) gateway.OAuthStore) {
	ctx := context.Background()
	put := func(t *testing.T, s gateway.OAuthStore, owner, server, tok string) {
		t.Helper()
		if err := s.Update(ctx, owner, server, func(*gateway.OAuthGrant) *gateway.OAuthGrant {
			return &gateway.OAuthGrant{URL: "https://" + server + "/mcp", ClientID: "c", Token: transport.Token{AccessToken: tok, RefreshToken: "r-" + tok}}
		}); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("grants are per owner and server", func(t *testing.T) {
		s := newStore(t)
		if g, err := s.Grant(ctx, "operator", "gh"); g != nil || err != nil {
			t.Fatalf("an empty store: %+v %v", g, err)
		}
		put(t, s, "operator", "gh", "one")
		put(t, s, "acme/bob", "gh", "two")
		put(t, s, "operator", "linear", "three")
		for _, c := range []struct{ owner, server, want string }{{"operator", "gh", "one"}, {"acme/bob", "gh", "two"}, {"operator", "linear", "three"}} {
			g, err := s.Grant(ctx, c.owner, c.server)
			if err != nil || g == nil || g.Token.AccessToken != c.want || g.Token.RefreshToken != "r-"+c.want || g.URL != "https://"+c.server+"/mcp" {
				t.Fatalf("%s/%s: %+v %v", c.owner, c.server, g, err)
			}
		}
		if g, _ := s.Grant(ctx, "acme/bob", "linear"); g != nil {
			t.Fatal("bob has the operator's linear grant")
		}
	})
	t.Run("update sees the current grant; nil removes it", func(t *testing.T) {
		s := newStore(t)
		put(t, s, "operator", "gh", "one")
		var seen string
		if err := s.Update(ctx, "operator", "gh", func(cur *gateway.OAuthGrant) *gateway.OAuthGrant {
			seen = cur.Token.AccessToken
			cur.Token.AccessToken = "renewed"
			return cur
		}); err != nil {
			t.Fatal(err)
		}
		if g, _ := s.Grant(ctx, "operator", "gh"); seen != "one" || g.Token.AccessToken != "renewed" || g.ClientID != "c" {
			t.Fatalf("saw %q, now %+v", seen, g)
		}
		if err := s.Update(ctx, "operator", "gh", func(*gateway.OAuthGrant) *gateway.OAuthGrant { return nil }); err != nil {
			t.Fatal(err)
		}
		if g, _ := s.Grant(ctx, "operator", "gh"); g != nil {
			t.Fatal("a removed grant is still there")
		}
	})
	t.Run("concurrent updates lose nothing", func(t *testing.T) {
		s := newStore(t)
		put(t, s, "operator", "gh", "")
		var wg sync.WaitGroup
		for range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := s.Update(ctx, "operator", "gh", func(cur *gateway.OAuthGrant) *gateway.OAuthGrant {
					cur.Token.AccessToken += "x"
					return cur
				}); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		if g, _ := s.Grant(ctx, "operator", "gh"); len(g.Token.AccessToken) != 16 {
			t.Fatalf("%d of 16 updates kept", len(g.Token.AccessToken))
		}
	})
}
