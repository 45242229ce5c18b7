package statetest

import (
	"context"
	"testing"
	"time"

	"github.com/sandboxrt/sandbox/console"
)

// TestConsoleRevocations is the contract of console.Revocations (the
// operator console's signed-out sessions): a revoked session is revoked
// until the time given and not after; other sessions are not; a revocation
// for a cookie already ended need not be kept.
func TestConsoleRevocations(t *testing.T, newStore func(t *testing.T) console.Revocations) {
	ctx := context.Background()
	r := newStore(t)
	issued := time.Now().Add(-time.Minute)
	if err := r.Revoke(ctx, "session-a", time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := r.Revoke(ctx, "session-short", time.Now().Add(300*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]bool{"session-a": true, "session-short": true, "session-b": false} {
		got, err := r.Revoked(ctx, id, issued)
		if err != nil || got != want {
			t.Errorf("Revoked(%q) = %v, %v; want %v", id, got, err, want)
		}
	}
	time.Sleep(500 * time.Millisecond)
	if got, err := r.Revoked(ctx, "session-short", issued); err != nil || got {
		t.Errorf("a revocation outlived its time: %v, %v", got, err)
	}
	if got, _ := r.Revoked(ctx, "session-a", issued); !got {
		t.Error("a revocation ended early")
	}
}
