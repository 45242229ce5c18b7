package jsonstream

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"
)

// TestAppendStringBodyIsEncodingJSONs: the body of a string is what
// json.Marshal writes between the quotes, for []byte and string alike,
// and StringBodyLen is its length.
func TestAppendStringBodyIsEncodingJSONs(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	alphabet := []string{"a", "\"", "\\", "\n", "\t", "\x00", "\x1f", "\x7f", "<", ">", "&", "é", "\u2028", "\u2029", "😀", "\xff", "\xe2\x80", "\xed\xa0\x80"}
	for range 5000 {
		var b []byte
		for range rng.IntN(12) {
			b = append(b, alphabet[rng.IntN(len(alphabet))]...)
		}
		marshalled, _ := json.Marshal(string(b))
		want := marshalled[1 : len(marshalled)-1]
		if got := AppendStringBody([]byte("x"), b); !bytes.Equal(got[1:], want) || got[0] != 'x' {
			t.Fatalf("%q:\n got  %s\n want %s", b, got, want)
		}
		if got := AppendStringBody(nil, string(b)); !bytes.Equal(got, want) || StringBodyLen(b) != len(want) || StringBodyLen(string(b)) != len(want) {
			t.Fatalf("%q: string form or length (%d) differ from %s", b, StringBodyLen(b), want)
		}
	}
}
