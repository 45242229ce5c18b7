package redisstate_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/sandboxrt/sandbox/codemode"
	"github.com/sandboxrt/sandbox/gateway"
)

// BenchmarkSharedStateOverhead is what keeping state in Redis (a local
// redis-server, over loopback) costs per operation, beside the in-memory
// default in the same run: the overhead a replica pays per call that needs
// shared state (a rate-limited call: one Reserve; a sandbox.store call:
// one Get or Set; a big result: kept once, read whole).
func BenchmarkSharedStateOverhead(b *testing.B) {
	ctx := context.Background()
	_, open := clients(b)
	c := open(b)
	limit := gateway.RateLimit{PerSecond: 1e9, Burst: 1 << 30}
	for name, rl := range map[string]gateway.RateLimiter{"memory": gateway.NewMemoryRateLimiter(nil), "redis": c.RateLimiter(nil)} {
		b.Run("reserve/"+name, func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				if _, ok, err := rl.Reserve(ctx, fmt.Sprint("k", i%64), limit, time.Second); !ok || err != nil {
					b.Fatal(ok, err)
				}
			}
		})
	}
	mem, _ := codemode.NewMemoryStore("", codemode.StoreLimits{}, nil)
	value := json.RawMessage(`{"cursor":"abcdef0123456789","page":3,"seen":[1,2,3,4,5,6,7,8]}`)
	scope := codemode.StoreScope{Principal: "acme/alice", Session: "s1"}
	for name, s := range map[string]codemode.Store{"memory": mem, "redis": c.Store(codemode.StoreLimits{}, nil)} {
		b.Run("store-set/"+name, func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				if err := s.Set(ctx, scope, fmt.Sprint("k", i%64), value, 0); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("store-get/"+name, func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				if _, _, err := s.Get(ctx, scope, fmt.Sprint("k", i%64)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	files, err := codemode.NewFileResultStore(b.TempDir(), codemode.ResultLimits{}, nil)
	if err != nil {
		b.Fatal(err)
	}
	result := bytes.Repeat([]byte(`{"id":12345,"title":"a row of a big result","done":false},`), (4<<20)/58)
	for name, s := range map[string]codemode.ResultStore{"file": files, "redis": c.ResultStore(codemode.ResultLimits{}, nil)} {
		b.Run("result-4MiB/"+name, func(b *testing.B) {
			b.SetBytes(int64(len(result)))
			for i := 0; b.Loop(); i++ {
				r := codemode.HeldResult{ID: fmt.Sprint("res_b", i), Principal: "acme/alice", Tool: "files:read", Bytes: int64(len(result))}
				if err := s.Put(ctx, r, bytes.NewReader(result)); err != nil {
					b.Fatal(err)
				}
				rc, err := s.Open(ctx, r.Principal, r.ID, 0)
				if err != nil {
					b.Fatal(err)
				}
				if n, err := io.Copy(io.Discard, rc); err != nil || n != r.Bytes {
					b.Fatal(n, err)
				}
				rc.Close()
			}
		})
	}
}
