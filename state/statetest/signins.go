package statetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sandboxrt/sandbox/gateway"
)

// TestSignInStore is the contract of gateway.SignInStore (principals'
// sign-ins by URL in progress). newStore makes an empty store; a store
// used from many goroutines stands for many replicas.
func TestSignInStore(t *testing.T, newStore func(t *testing.T) gateway.SignInStore) {
	ctx := context.Background()
	n := 0
	record := func(owner string, life time.Duration) gateway.SignInRecord {
		n++
		return gateway.SignInRecord{ID: fmt.Sprintf("link%d", n), ElicitationID: fmt.Sprintf("e%d", n), Owner: owner, Server: "secure",
			Expires: time.Now().Add(life)}
	}
	put := func(t *testing.T, s gateway.SignInStore, r gateway.SignInRecord) {
		t.Helper()
		if err := s.Put(ctx, r, 3); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("a sign-in is kept whole and found by its state", func(t *testing.T) {
		s := newStore(t)
		r := record("acme/bob", time.Minute)
		put(t, s, r)
		got, err := s.Get(ctx, r.ID)
		if err != nil || got == nil || got.Owner != r.Owner || got.Server != r.Server || got.ElicitationID != r.ElicitationID || !got.Expires.Equal(r.Expires) || got.Opened || got.Login != nil {
			t.Fatalf("got %+v %v", got, err)
		}
		if got, _ := s.Get(ctx, "nope"); got != nil {
			t.Fatal("an unknown link was found")
		}
		if got, _ := s.ByState(ctx, "st-1"); got != nil {
			t.Fatal("a state was found before any login")
		}
		login := &gateway.SignInLogin{State: "st-1", Verifier: "v-1", Issuer: "https://as", IssuerRequired: true, TokenEndpoint: "https://as/token",
			Client: gateway.OAuthGrant{URL: "https://secure/mcp", ClientID: "cid", ClientSecret: "csecret", RedirectURI: "https://gw/oauth/callback"}}
		if err := s.Update(ctx, r.ID, func(cur *gateway.SignInRecord) error {
			cur.Opened, cur.BrowserHash, cur.Login = true, "hash", login
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		got, err = s.ByState(ctx, "st-1")
		if err != nil || got == nil || got.ID != r.ID || !got.Opened || got.BrowserHash != "hash" || got.Login == nil ||
			got.Login.State != "st-1" || got.Login.Verifier != "v-1" || got.Login.Issuer != "https://as" || !got.Login.IssuerRequired || got.Login.TokenEndpoint != "https://as/token" ||
			got.Login.Client.ClientID != "cid" || got.Login.Client.ClientSecret != "csecret" || got.Login.Client.RedirectURI != "https://gw/oauth/callback" {
			t.Fatalf("by state: %+v %v", got, err)
		}
		if got, _ := s.ByState(ctx, "st-2"); got != nil {
			t.Fatal("another state found the sign-in")
		}
	})
	t.Run("update is atomic: a link is used once", func(t *testing.T) {
		s := newStore(t)
		r := record("acme/bob", time.Minute)
		put(t, s, r)
		used := errors.New("used")
		var wins atomic.Int32
		var wg sync.WaitGroup
		for i := range 12 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				err := s.Update(ctx, r.ID, func(cur *gateway.SignInRecord) error {
					if cur.Opened {
						return used
					}
					cur.Opened, cur.BrowserHash = true, fmt.Sprint(i)
					return nil
				})
				switch {
				case err == nil:
					wins.Add(1)
				case !errors.Is(err, used):
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		if wins.Load() != 1 {
			t.Fatalf("%d of 12 racing opens took the link", wins.Load())
		}
		// An error from fn changes nothing.
		if err := s.Update(ctx, r.ID, func(cur *gateway.SignInRecord) error { cur.Ended = true; return used }); !errors.Is(err, used) {
			t.Fatal(err)
		}
		if got, _ := s.Get(ctx, r.ID); got.Ended {
			t.Fatal("a refused update was kept")
		}
		if err := s.Update(ctx, "nope", func(*gateway.SignInRecord) error { return nil }); !errors.Is(err, gateway.ErrNoSuchSignIn) {
			t.Fatalf("updating an unknown link: %v", err)
		}
	})
	t.Run("a link expires", func(t *testing.T) {
		s := newStore(t)
		r := record("acme/bob", 150*time.Millisecond)
		put(t, s, r)
		time.Sleep(300 * time.Millisecond)
		if got, _ := s.Get(ctx, r.ID); got != nil {
			t.Fatalf("an expired link: %+v", got)
		}
		if err := s.Update(ctx, r.ID, func(*gateway.SignInRecord) error { return nil }); !errors.Is(err, gateway.ErrNoSuchSignIn) {
			t.Fatalf("updating an expired link: %v", err)
		}
	})
	t.Run("the cap counts an owner's open sign-ins", func(t *testing.T) {
		s := newStore(t)
		var bobs []gateway.SignInRecord
		for range 3 {
			r := record("acme/bob", time.Minute)
			put(t, s, r)
			bobs = append(bobs, r)
		}
		if err := s.Put(ctx, record("acme/bob", time.Minute), 3); !errors.Is(err, gateway.ErrTooManySignIns) {
			t.Fatalf("a fourth of bob's: %v", err)
		}
		put(t, s, record("acme/alice", time.Minute))
		if err := s.Update(ctx, bobs[0].ID, func(cur *gateway.SignInRecord) error { cur.Ended = true; return nil }); err != nil {
			t.Fatal(err)
		}
		put(t, s, record("acme/bob", time.Minute)) // an ended one makes room
		if got, _ := s.Get(ctx, bobs[0].ID); got == nil || !got.Ended {
			t.Fatalf("an ended sign-in is kept until its link expires, for a late retry: %+v", got)
		}
	})
	t.Run("an owner's ended sign-ins are bounded too", func(t *testing.T) {
		// A client that declines every link at once ends each: kept for
		// a late retry, they must not pile up. Past max-1 the oldest go.
		s := newStore(t)
		alices := record("acme/alice", time.Hour)
		put(t, s, alices)
		var ended []gateway.SignInRecord
		for i := range 5 {
			r := record("acme/bob", time.Minute+time.Duration(i)*time.Second) // the later, the newer
			put(t, s, r)
			if err := s.Update(ctx, r.ID, func(cur *gateway.SignInRecord) error { cur.Ended, cur.Err = true, "declined"; return nil }); err != nil {
				t.Fatal(err)
			}
			ended = append(ended, r)
		}
		if err := s.Update(ctx, alices.ID, func(cur *gateway.SignInRecord) error { cur.Ended = true; return nil }); err != nil {
			t.Fatal(err)
		}
		put(t, s, record("acme/bob", time.Minute))
		for i, r := range ended {
			got, err := s.Get(ctx, r.ID)
			if err != nil {
				t.Fatal(err)
			}
			if kept := i >= len(ended)-2; kept != (got != nil) {
				t.Errorf("bob's ended sign-in %d of 5: kept %v, want %v (the newest max-1 = 2 stay)", i+1, got != nil, kept)
			}
			if got != nil && (!got.Ended || got.Err != "declined") {
				t.Errorf("a kept ended sign-in lost how it ended: %+v", got)
			}
		}
		if got, _ := s.Get(ctx, alices.ID); got == nil || !got.Ended {
			t.Fatalf("another owner's ended sign-in went: %+v", got)
		}
		// The two left are still not counted: bob opens max.
		put(t, s, record("acme/bob", time.Minute))
		put(t, s, record("acme/bob", time.Minute))
		if err := s.Put(ctx, record("acme/bob", time.Minute), 3); !errors.Is(err, gateway.ErrTooManySignIns) {
			t.Fatalf("a fourth open of bob's: %v", err)
		}
	})
}
