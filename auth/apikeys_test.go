package auth

import (
	"context"
	"errors"
	"slices"
	"testing"
)

func TestAPIKeys(t *testing.T) {
	const (
		ciKey    = "ci-0123456789abcdef"
		aliceKey = "alice-fedcba9876543210"
		opsKey   = "ops-only-its-digest-is-in-the-file"
	)
	v, err := NewVerifier(Config{APIKeys: []APIKey{
		{Name: "ci-bot", Key: ciKey, Servers: []string{"github", "fs"}},
		{Name: "alice", Key: aliceKey, Tenant: "acme"},
		{Name: "ops", SHA256: hexDigest(opsKey), Operator: true},
	}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, tc := range []struct {
		name       string
		credential string
		want       Principal
	}{
		{"restricted key", ciKey, Principal{ID: "ci-bot", Tenant: "ci-bot", Scopes: []string{"server:github", "server:fs"}}},
		{"key with a tenant", aliceKey, Principal{ID: "alice", Tenant: "acme"}},
		{"key given as sha256", opsKey, Principal{ID: "ops", Tenant: "ops", Operates: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := v.Verify(ctx, tc.credential)
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			if p.ID != tc.want.ID || p.Tenant != tc.want.Tenant || !slices.Equal(p.Scopes, tc.want.Scopes) || p.Operates != tc.want.Operates || p.MayOperate() != tc.want.Operates {
				t.Errorf("Verify = %+v, want %+v", p, tc.want)
			}
		})
	}

	p, _ := v.Verify(ctx, ciKey)
	if !p.MaySee("github") || p.MaySee("memory") {
		t.Errorf("ci-bot: MaySee(github)=%v MaySee(memory)=%v, want true, false", p.MaySee("github"), p.MaySee("memory"))
	}
	p.Scopes[0] = "server:memory" // a caller's copy: the key's own scopes do not change
	if p, _ := v.Verify(ctx, ciKey); p.Scopes[0] != "server:github" {
		t.Errorf("a principal's scopes alias the key's: %q", p.Scopes)
	}
	if p, _ := v.Verify(ctx, aliceKey); !p.MaySee("memory") {
		t.Error("alice has no server limit but may not see memory")
	}

	for _, tc := range []struct{ name, credential string }{
		{"wrong key", "ci-0123456789abcdeX"},
		{"prefix of a key", ciKey[:len(ciKey)-1]},
		{"key plus a byte", ciKey + "0"},
		{"a key's name", "ci-bot"},
		{"a key's digest", hexDigest(opsKey)},
		{"empty", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := v.Verify(ctx, tc.credential)
			var ae *Error
			if !errors.As(err, &ae) || ae.Code != CodeInvalidToken || ae.Status() != 401 {
				t.Fatalf("Verify = %+v, %v; want invalid_token", p, err)
			}
		})
	}
}

// TestAPIKeysConstantTime checks that every credential is compared with
// every key's digest by the constant-time compare: the matching key's
// position and the credential's length change nothing in the work done.
func TestAPIKeysConstantTime(t *testing.T) {
	keys := []APIKey{
		{Name: "a", Key: "aaaaaaaaaaaaaaaa1"},
		{Name: "b", Key: "bbbbbbbbbbbbbbbb22"},
		{Name: "c", SHA256: hexDigest("cccccccccccccccc333")},
	}
	ks := newAPIKeys(keys)
	orig := constantTimeCompare
	t.Cleanup(func() { constantTimeCompare = orig })
	var calls, lengths []int
	constantTimeCompare = func(x, y []byte) int {
		calls[len(calls)-1]++
		lengths = append(lengths, len(x), len(y))
		return orig(x, y)
	}
	for _, tc := range []struct {
		credential string
		want       string // the key's name; "": no key
	}{
		{"aaaaaaaaaaaaaaaa1", "a"},   // the first key
		{"cccccccccccccccc333", "c"}, // the last key
		{"nope", ""},                 // shorter than any key
		{"a-much-longer-credential-than-any-key-of-the-list", ""},
	} {
		calls = append(calls, 0)
		if p, ok := ks.lookup(tc.credential); p.ID != tc.want || ok != (tc.want != "") {
			t.Errorf("lookup(%q) = %+v, %v; want key %q", tc.credential, p, ok, tc.want)
		}
	}
	for i, n := range calls {
		if n != len(keys) {
			t.Errorf("credential %d was compared with %d keys, want all %d", i, n, len(keys))
		}
	}
	for _, l := range lengths {
		if l != 32 {
			t.Fatalf("compared %d bytes: only SHA-256 digests are compared", l)
		}
	}
}
