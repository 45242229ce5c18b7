package statetest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/sandboxrt/sandbox/codemode"
)

// TestResultStore is the contract of codemode.ResultStore (the results
// sandbox.results reads in parts). newStore makes an empty store with the
// given limits and clock.
func TestResultStore(t *testing.T, newStore func(t *testing.T, limits codemode.ResultLimits, now func() time.Time) codemode.ResultStore) {
	ctx := context.Background()
	clock := &manualClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	// bytesOf is n bytes no two megabytes of which are alike, so a read
	// from the wrong place (a chunk out of order) shows.
	bytesOf := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(i*7 + i>>20)
		}
		return b
	}
	put := func(t *testing.T, s codemode.ResultStore, principal, id string, data []byte) error {
		t.Helper()
		return s.Put(ctx, codemode.HeldResult{ID: id, Principal: principal, Tool: "files:read", Bytes: int64(len(data))}, bytes.NewReader(data))
	}
	held := func(t *testing.T, s codemode.ResultStore, principal, id string) bool {
		t.Helper()
		_, ok, err := s.Get(ctx, principal, id)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	// kept checks without a use (Open is none), so that checking does
	// not change which result is used least recently.
	kept := func(t *testing.T, s codemode.ResultStore, principal, id string) bool {
		t.Helper()
		rc, err := s.Open(ctx, principal, id, 0)
		if errors.Is(err, codemode.ErrResultNotHeld) {
			return false
		}
		if err != nil {
			t.Fatal(err)
		}
		rc.Close()
		return true
	}
	read := func(t *testing.T, s codemode.ResultStore, principal, id string, offset int64) []byte {
		t.Helper()
		rc, err := s.Open(ctx, principal, id, offset)
		if err != nil {
			t.Fatalf("open %s at %d: %v", id, offset, err)
		}
		defer rc.Close()
		b, err := io.ReadAll(rc)
		if err != nil {
			t.Fatalf("read %s at %d: %v", id, offset, err)
		}
		return b
	}

	t.Run("a result is its principal's, and reads from any offset", func(t *testing.T) {
		s := newStore(t, codemode.ResultLimits{}, clock.Now)
		data := bytesOf(3<<20 + 17) // several chunks of any chunked store
		if err := put(t, s, "alice", "res_a1", data); err != nil {
			t.Fatal(err)
		}
		r, ok, err := s.Get(ctx, "alice", "res_a1")
		if err != nil || !ok || r != (codemode.HeldResult{ID: "res_a1", Principal: "alice", Tool: "files:read", Bytes: int64(len(data))}) {
			t.Fatalf("get: %+v %v %v", r, ok, err)
		}
		for _, off := range []int64{0, 1, 1<<20 - 3, 1 << 20, 2<<20 + 5, int64(len(data)) - 1, int64(len(data))} {
			if got := read(t, s, "alice", "res_a1", off); !bytes.Equal(got, data[off:]) {
				t.Errorf("from %d: %d bytes, not the %d from there", off, len(got), len(data)-int(off))
			}
		}
		if held(t, s, "bob", "res_a1") {
			t.Error("bob holds alice's result")
		}
		if _, err := s.Open(ctx, "bob", "res_a1", 0); !errors.Is(err, codemode.ErrResultNotHeld) {
			t.Errorf("bob opened alice's result: %v", err)
		}
		if held(t, s, "alice", "res_none") {
			t.Error("an unknown id is held")
		}
		if _, err := s.Open(ctx, "alice", "res_none", 0); !errors.Is(err, codemode.ErrResultNotHeld) {
			t.Errorf("open of an unknown id: %v", err)
		}
		empty := []byte{}
		if err := put(t, s, "alice", "res_empty", empty); err != nil || len(read(t, s, "alice", "res_empty", 0)) != 0 {
			t.Errorf("an empty result: %v", err)
		}
	})

	t.Run("the least recently used make room, the principal's own first", func(t *testing.T) {
		s := newStore(t, codemode.ResultLimits{PerPrincipalBytes: 100, TotalBytes: 250}, clock.Now)
		step := func(f func() error) {
			t.Helper()
			clock.advance(time.Second)
			if err := f(); err != nil {
				t.Fatal(err)
			}
		}
		step(func() error { return put(t, s, "bob", "res_b1", bytesOf(60)) })
		step(func() error { return put(t, s, "alice", "res_a1", bytesOf(40)) })
		step(func() error { return put(t, s, "alice", "res_a2", bytesOf(40)) })
		step(func() error { held(t, s, "alice", "res_a1"); return nil }) // a1 used after a2
		// alice would hold 120 > 100: her least recently used (a2) goes,
		// not bob's older result.
		step(func() error { return put(t, s, "alice", "res_a3", bytesOf(40)) })
		if kept(t, s, "alice", "res_a2") || !kept(t, s, "alice", "res_a1") || !kept(t, s, "alice", "res_a3") || !kept(t, s, "bob", "res_b1") {
			t.Fatal("alice's least recently used result should have made room, and only it")
		}
		// 60 + 80 + carol's 100 = 240; then 60 more pass 250: the least
		// recently used of anyone's goes (bob's, untouched the longest).
		step(func() error { return put(t, s, "carol", "res_c1", bytesOf(100)) })
		step(func() error { return put(t, s, "dave", "res_d1", bytesOf(60)) })
		if kept(t, s, "bob", "res_b1") || !kept(t, s, "dave", "res_d1") || !kept(t, s, "carol", "res_c1") {
			t.Fatal("the least recently used result in the store should have made room")
		}
		// One result over what a principal may hold is refused, and drops
		// nothing.
		err := put(t, s, "alice", "res_big", bytesOf(101))
		var limit *codemode.ResultLimitError
		if !errors.As(err, &limit) || !strings.Contains(limit.Message, "101 bytes") {
			t.Fatalf("a result over the per-principal limit: %v", err)
		}
		if !kept(t, s, "alice", "res_a1") || !kept(t, s, "alice", "res_a3") || kept(t, s, "alice", "res_big") {
			t.Fatal("a refused result dropped others, or was kept")
		}
	})

	t.Run("results expire a TTL after their last use", func(t *testing.T) {
		s := newStore(t, codemode.ResultLimits{TTL: 10 * time.Minute}, clock.Now)
		if err := put(t, s, "alice", "res_t1", bytesOf(10)); err != nil {
			t.Fatal(err)
		}
		clock.advance(9 * time.Minute)
		if !held(t, s, "alice", "res_t1") {
			t.Fatal("gone before its TTL")
		}
		clock.advance(9 * time.Minute) // 18 minutes after the put, 9 after its use
		if !held(t, s, "alice", "res_t1") {
			t.Fatal("a use did not start its TTL again")
		}
		clock.advance(11 * time.Minute)
		if held(t, s, "alice", "res_t1") {
			t.Fatal("still held past its TTL")
		}
		if _, err := s.Open(ctx, "alice", "res_t1", 0); !errors.Is(err, codemode.ErrResultNotHeld) {
			t.Errorf("open past its TTL: %v", err)
		}
	})

	t.Run("a body shorter than its size is not kept", func(t *testing.T) {
		s := newStore(t, codemode.ResultLimits{}, clock.Now)
		err := s.Put(ctx, codemode.HeldResult{ID: "res_short", Principal: "alice", Tool: "t", Bytes: 10}, strings.NewReader("12345"))
		if err == nil || held(t, s, "alice", "res_short") {
			t.Fatalf("a short body: %v", err)
		}
	})
}
