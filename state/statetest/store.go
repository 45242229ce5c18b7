package statetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/sandboxrt/sandbox/codemode"
)

// TestStore is the contract of codemode.Store (sandbox.store's values).
// newStore makes an empty store with the given limits and clock.
func TestStore(t *testing.T, newStore func(t *testing.T, limits codemode.StoreLimits, now func() time.Time) codemode.Store) {
	ctx := context.Background()
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := func() time.Time { return clock }
	alice := codemode.StoreScope{Principal: "alice"}
	aliceS1 := codemode.StoreScope{Principal: "alice", Session: "s1"}
	bob := codemode.StoreScope{Principal: "bob"}
	get := func(t *testing.T, s codemode.Store, scope codemode.StoreScope, key string) string {
		t.Helper()
		v, ok, err := s.Get(ctx, scope, key)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return "<none>"
		}
		return string(v)
	}

	t.Run("values are per scope", func(t *testing.T) {
		s := newStore(t, codemode.StoreLimits{}, now)
		if err := s.Set(ctx, alice, "k", json.RawMessage(`{"a":1}`), 0); err != nil {
			t.Fatal(err)
		}
		if err := s.Set(ctx, aliceS1, "k", json.RawMessage(`2`), 0); err != nil {
			t.Fatal(err)
		}
		if got := get(t, s, alice, "k"); got != `{"a":1}` {
			t.Errorf("alice's own: %s", got)
		}
		if got := get(t, s, aliceS1, "k"); got != `2` {
			t.Errorf("alice's session: %s", got)
		}
		if got := get(t, s, bob, "k"); got != "<none>" {
			t.Errorf("bob sees alice's value: %s", got)
		}
		if err := s.Set(ctx, alice, "k", json.RawMessage(`3`), 0); err != nil {
			t.Fatal(err)
		}
		if got := get(t, s, alice, "k"); got != `3` {
			t.Errorf("after an overwrite: %s", got)
		}
		deleted, err := s.Delete(ctx, alice, "k")
		if err != nil || !deleted {
			t.Errorf("delete: %v %v", deleted, err)
		}
		if deleted, _ := s.Delete(ctx, alice, "k"); deleted {
			t.Error("a second delete says it deleted")
		}
		if got := get(t, s, aliceS1, "k"); got != `2` {
			t.Errorf("deleting alice's own value touched her session's: %s", got)
		}
	})

	t.Run("keys are sorted, by prefix, and bounded", func(t *testing.T) {
		s := newStore(t, codemode.StoreLimits{KeysListed: 3}, now)
		for _, k := range []string{"b/2", "a/1", "b/1", "c", "b/3", "b/4"} {
			if err := s.Set(ctx, alice, k, json.RawMessage(`true`), 0); err != nil {
				t.Fatal(err)
			}
		}
		keys, err := s.Keys(ctx, alice, "b/")
		if err != nil || fmt.Sprint(keys) != "[b/1 b/2 b/3]" {
			t.Errorf("keys b/: %v %v", keys, err)
		}
		if keys, _ := s.Keys(ctx, bob, ""); keys == nil || len(keys) != 0 {
			t.Errorf("an empty scope lists %#v, want an empty list", keys)
		}
	})

	t.Run("values expire", func(t *testing.T) {
		s := newStore(t, codemode.StoreLimits{}, now)
		if err := s.Set(ctx, alice, "short", json.RawMessage(`1`), time.Minute); err != nil {
			t.Fatal(err)
		}
		if got := get(t, s, alice, "short"); got != "1" {
			t.Fatalf("before expiry: %s", got)
		}
		clock = clock.Add(2 * time.Minute)
		if got := get(t, s, alice, "short"); got != "<none>" {
			t.Errorf("after expiry: %s", got)
		}
		if keys, _ := s.Keys(ctx, alice, ""); len(keys) != 0 {
			t.Errorf("an expired key is listed: %v", keys)
		}
	})

	t.Run("limits refuse a write and change nothing", func(t *testing.T) {
		s := newStore(t, codemode.StoreLimits{ValueBytes: 10, Keys: 3, TotalBytes: 30}, now)
		var limit *codemode.StoreLimitError
		if err := s.Set(ctx, alice, "big", json.RawMessage(`"0123456789"`), 0); !errors.As(err, &limit) || limit.Limit != "value" {
			t.Errorf("a value over ValueBytes: %v", err)
		}
		for _, k := range []string{"a", "b", "c"} {
			if err := s.Set(ctx, aliceS1, k, json.RawMessage(`1`), 0); err != nil {
				t.Fatal(err)
			}
		}
		// The limit is per principal: its sessions and its own values together.
		if err := s.Set(ctx, alice, "d", json.RawMessage(`1`), 0); !errors.As(err, &limit) || limit.Limit != "keys" {
			t.Errorf("a fourth key: %v", err)
		}
		if err := s.Set(ctx, aliceS1, "a", json.RawMessage(`2`), 0); err != nil {
			t.Errorf("overwriting a key is not a new key: %v", err)
		}
		if err := s.Set(ctx, bob, "d", json.RawMessage(`1`), 0); err != nil {
			t.Errorf("bob is limited by alice's keys: %v", err)
		}
		if err := s.Set(ctx, aliceS1, "a", json.RawMessage(`"123456"`), 0); err != nil {
			t.Fatal(err)
		}
		if err := s.Set(ctx, aliceS1, "b", json.RawMessage(`"12345678"`), 0); err != nil {
			t.Fatal(err)
		}
		if err := s.Set(ctx, aliceS1, "c", json.RawMessage(`"12345678"`), 0); !errors.As(err, &limit) || limit.Limit != "total" {
			t.Errorf("over TotalBytes: %v", err)
		}
		if got := get(t, s, aliceS1, "c"); got != "1" {
			t.Errorf("a refused write changed the value: %s", got)
		}
		// Expired values free their room.
		if err := s.Set(ctx, bob, "t1", json.RawMessage(`1`), time.Second); err != nil {
			t.Fatal(err)
		}
		if err := s.Set(ctx, bob, "t2", json.RawMessage(`1`), time.Second); err != nil {
			t.Fatal(err)
		}
		clock = clock.Add(time.Hour)
		if err := s.Set(ctx, bob, "t3", json.RawMessage(`1`), 0); err != nil {
			t.Errorf("expired keys still count: %v", err)
		}
	})
	t.Run("an inventory lists keys, sizes and expiry, never values", func(t *testing.T) {
		s := newStore(t, codemode.StoreLimits{}, now)
		inv, ok := s.(codemode.StoreInventory)
		if !ok {
			t.Skip("this store is not a codemode.StoreInventory")
		}
		for _, v := range []struct {
			scope codemode.StoreScope
			key   string
			value string
			ttl   time.Duration
		}{{alice, "b", `"two"`, 0}, {alice, "a", `1`, time.Hour}, {aliceS1, "a", `[1,2,3]`, 0}, {bob, "gone", `0`, time.Minute}} {
			if err := s.Set(ctx, v.scope, v.key, json.RawMessage(v.value), v.ttl); err != nil {
				t.Fatal(err)
			}
		}
		aliceExpires := clock.Add(time.Hour).UTC()
		clock = clock.Add(2 * time.Minute) // bob's value expires
		defer func() { clock = clock.Add(-2 * time.Minute) }()
		entries, err := inv.Entries(ctx, "alice")
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range entries {
			got = append(got, fmt.Sprintf("%s/%s %d %v", e.Scope.Session, e.Key, e.Bytes, e.Expires.UTC()))
		}
		want := []string{"/a 1 " + aliceExpires.String(), "/b 5 0001-01-01 00:00:00 +0000 UTC", "s1/a 7 0001-01-01 00:00:00 +0000 UTC"}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("alice's entries:\n%v\nwant:\n%v", got, want)
		}
		if entries, err := inv.Entries(ctx, "bob"); err != nil || len(entries) != 0 {
			t.Errorf("bob's expired value is listed: %+v %v", entries, err)
		}
		principals, err := inv.Principals(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(principals) == 0 || principals[0] != "alice" {
			t.Errorf("principals: %v", principals)
		}
	})
}
