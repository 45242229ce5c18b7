package redisstate

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"testing"
)

// BenchmarkSealData is what sealing adds to a write and opening to a
// read, without Redis: a typical sandbox.store value, and a chunk of a big
// result.
func BenchmarkSealData(b *testing.B) {
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	c, err := Open(Config{URL: "redis://127.0.0.1:1/0", EncryptionKey: base64.StdEncoding.EncodeToString(key)})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	for _, size := range []int{64, resultChunk} {
		plain := make([]byte, size)
		b.Run(fmt.Sprintf("seal/%d", size), func(b *testing.B) {
			b.SetBytes(int64(size))
			for b.Loop() {
				c.sealData("sandbox:store:{acme%2Falice}:values\x00s1\x00cursor", plain)
			}
		})
		sealed := c.sealData("w", plain)
		b.Run(fmt.Sprintf("open/%d", size), func(b *testing.B) {
			b.SetBytes(int64(size))
			for b.Loop() {
				if _, err := c.openData("w", sealed); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
