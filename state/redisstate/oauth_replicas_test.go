package redisstate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/gateway"
	"github.com/sandboxrt/sandbox/internal/oauthtest"
)

// TestReplicasRenewAGrantOnce: two gateways (replicas) share one grant in
// Redis and call with it at once after it expired. The authorization server
// rotates refresh tokens and revokes a grant whose refresh token is used
// twice, so the two must not both renew: one renews, the other waits and
// uses the renewed token, round after round.
func TestReplicasRenewAGrantOnce(t *testing.T) {
	issuer := oauthtest.StartAuthServer(t)
	secure := oauthtest.StartProtectedServer(t, issuer)
	_, open := clients(t)
	c := open(t)
	replica := func() *gateway.Gateway {
		cfg := &gateway.Config{Servers: map[string]*gateway.ServerConfig{
			"secure": {Name: "secure", Transport: gateway.TransportStreamableHTTP, URL: secure, CheckPaths: true},
		}, Settings: gateway.DefaultSettings()}
		cfg.Settings.RestartBackoff, cfg.Settings.MaxRestartBackoff = 100*time.Millisecond, 200*time.Millisecond
		g, err := gateway.New(cfg, gateway.WithOAuthStore(c.OAuthStore()))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { g.Close() })
		return g
	}
	a, b := replica(), replica()
	ctx := context.Background()
	if _, err := a.Login(ctx, "secure", gateway.LoginOptions{Show: func(u string) { oauthtest.Browse(t, u) }, Wait: 30 * time.Second}); err != nil {
		t.Fatal(err)
	}
	for _, g := range []*gateway.Gateway{a, b} {
		if err := g.Start(ctx); err != nil {
			t.Fatal(err)
		}
	}
	whoami := func(g *gateway.Gateway) error {
		res, err := g.Call(ctx, gateway.CallRequest{Tool: "secure:whoami", Caller: auth.Caller{Principal: auth.Operator()}})
		if err != nil {
			return err
		}
		var blk struct{ Text string }
		_ = json.Unmarshal(res.Content[0], &blk)
		if blk.Text != "alice" {
			return fmt.Errorf("whoami = %q", blk.Text)
		}
		return nil
	}
	store := c.OAuthStore()
	for round := range 4 {
		if err := store.Update(ctx, auth.Operator().Key(), "secure", func(g *gateway.OAuthGrant) *gateway.OAuthGrant {
			g.Token.ExpiresAt = time.Now().Add(-time.Second)
			return g
		}); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make([]error, 6)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = whoami([]*gateway.Gateway{a, b}[i%2])
			}()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d, call %d: %v", round, i, err)
			}
		}
	}
}
