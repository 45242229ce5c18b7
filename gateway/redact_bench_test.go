package gateway

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// benchResult is a 1 MiB tool result of the usual shape (a text block
// holding JSON rows, with escapes), with a secret in one row or none.
func benchResult(secret string) []byte {
	var inner strings.Builder
	inner.WriteString(`{"rows":[`)
	for i := 0; inner.Len() < 1<<20; i++ {
		if i > 0 {
			inner.WriteByte(',')
		}
		v := fmt.Sprintf(`row \"%d\" of the table, é`, i)
		if secret != "" && i == 5000 {
			v = secret
		}
		fmt.Fprintf(&inner, `{"id":%d,"name":"%s","path":"/srv/data/%d.json"}`, i, v, i)
	}
	inner.WriteString(`]}`)
	quoted, _ := json.Marshal(inner.String())
	return []byte(`{"type":"text","text":` + string(quoted) + `}`)
}

// BenchmarkRedactResult is what redaction costs a 1 MiB result, with ten
// secrets configured: the common case (no secret in it) and one with a
// secret in one string. RATIONALE.md ("Redaction reads what a client
// reads") has the figures against the raw-byte redactor it replaced.
func BenchmarkRedactResult(b *testing.B) {
	var secrets []string
	for i := range 10 {
		secrets = append(secrets, fmt.Sprintf("secret-value-%02d-abcdefgh", i))
	}
	s := newRedactor(secrets).secrets
	for _, c := range []struct{ name, secret string }{{"clean", ""}, {"one-secret", secrets[3]}} {
		block := benchResult(c.secret)
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(block)))
			for b.Loop() {
				res := &CallResult{Content: []json.RawMessage{block}}
				s.result(res)
				if c.secret != "" && strings.Contains(string(res.Content[0]), c.secret) {
					b.Fatal("secret left in the result")
				}
			}
		})
	}
}
