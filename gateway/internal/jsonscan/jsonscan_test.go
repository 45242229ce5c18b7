package jsonscan

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestMembersAndElements: members and elements come out raw, in order,
// whatever they hold and however they are spaced, each capped at its end.
func TestMembersAndElements(t *testing.T) {
	t.Parallel()
	var got []string
	ok := Members([]byte(" {\"a\\\"\" : \"x\\\\\"  , \"b\":[1,{\"c\":\"]}\"}] ,\"d\":-1.5e3,\"e\":null}\n"), func(k, v []byte) bool {
		got = append(got, string(k)+"="+string(v))
		if cap(v) != len(v) {
			t.Errorf("%s: capacity past the value", v)
		}
		return true
	})
	if want := `a\"="x\\"|b=[1,{"c":"]}"}]|d=-1.5e3|e=null`; !ok || strings.Join(got, "|") != want {
		t.Fatalf("members %v %q, want %q", ok, strings.Join(got, "|"), want)
	}
	got = got[:0]
	ok = Elements([]byte(`[ "a" , {"b":[]} ,[],true ]`), func(e []byte) bool { got = append(got, string(e)); return true })
	if !ok || strings.Join(got, "|") != `"a"|{"b":[]}|[]|true` {
		t.Fatalf("elements %v %q", ok, got)
	}
	if Members([]byte(`[]`), nil) || Elements([]byte(`{}`), nil) || Members([]byte(`{"a":1,"b":2}`), func(k, _ []byte) bool { return string(k) != "b" }) {
		t.Fatal("not an object, not an array, or stopped: false")
	}
	if OtherKey([]byte("ID"), "id") || OtherKey([]byte(`\u0069d`), "id") || OtherKey([]byte("\xc5\xbfesult"), "result") || !OtherKey([]byte("params"), "id", "result") {
		t.Fatal("OtherKey")
	}
}

// TestLongEscapedString: a long string escaped every few bytes (a text
// file's lines) is found whole, each byte looked at a bounded number of
// times (looking for its closing quote from every escape took minutes).
func TestLongEscapedString(t *testing.T) {
	t.Parallel()
	text := strings.Repeat(`0123456789abcdef\n\t\\`, 300_000) + `\"` // 6.6 MB, 900,000 escapes, no quote but the last
	doc := []byte(`{"text":"` + text + `","after":1}`)
	var got []string
	if !Members(doc, func(k, v []byte) bool { got = append(got, string(k)+"="+string(v)); return true }) {
		t.Fatal("not read")
	}
	if len(got) != 2 || got[0] != `text="`+text+`"` || got[1] != "after=1" {
		t.Fatalf("members: %d, %.80q", len(got), got)
	}
}

// TestStringEnd: a string ends where encoding/json's reading of it ends,
// escapes anywhere in it (before, at and after its first quote-like byte).
func TestStringEnd(t *testing.T) {
	t.Parallel()
	for _, s := range []string{`""`, `"a"`, `"\\"`, `"\""`, `"\\\""`, `"a\"b\"c"`, `"\u0022"`, `"\\\\"`,
		`"x\ny"`, `"` + strings.Repeat(`\"`, 1000) + `"`, `"` + strings.Repeat("ab", 1000) + `\\"`, `"é\t☃"`} {
		doc := s + `,"next"`
		dec := json.NewDecoder(strings.NewReader(doc))
		if _, err := dec.Token(); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		if got, want := StringEnd([]byte(doc), 0), int(dec.InputOffset()); got != want {
			t.Errorf("%.40s: ends at %d, encoding/json at %d", s, got, want)
		}
	}
}

func TestFieldsFirst(t *testing.T) {
	var f Fields
	if !f.First(0) || !f.First(31) || f.First(0) || f.First(31) || !f.First(4) {
		t.Fatalf("First: %b", f)
	}
}
