// Package jsonscan walks JSON text known to be valid (json.Valid passed it,
// or encoding/json decoded it into a json.RawMessage), finding the
// members of an object and the elements of an array without decoding
// them: for the gateway's hot path, where an upstream's answer is checked
// once and only its outer layers are read. The values it hands out are
// slices of the text, their capacity cut to their length so that an
// append to one never writes over the next.
package jsonscan

import (
	"bytes"
	"strings"
)

// Fields tells the first sight of each of a split's fields from a second:
// a key that comes twice is left to encoding/json, which keeps the last.
type Fields uint32

// First reports whether field i (0-31) is seen for the first time, and
// marks it seen.
func (f *Fields) First(i int) bool {
	if *f&(1<<i) != 0 {
		return false
	}
	*f |= 1 << i
	return true
}

// Members calls fn with each member of the object b, its key as written
// between the quotes (escapes and all) and its value raw, until fn returns
// false. It reports false when b is not an object or fn stopped it. b must
// be valid JSON (json.Valid).
func Members(b []byte, fn func(key, value []byte) bool) bool {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	for i = skipSpace(b, i+1); i < len(b) && b[i] != '}'; i = skipSpace(b, i) {
		if b[i] == ',' {
			i = skipSpace(b, i+1)
		}
		end := StringEnd(b, i)
		key := b[i+1 : end-1]
		i = skipSpace(b, end) // at ':'
		i = skipSpace(b, i+1) // at the value
		end = valueEnd(b, i)
		if !fn(key, b[i:end:end]) {
			return false
		}
		i = end
	}
	return true
}

// Elements calls fn with each element of the array b, raw, until fn
// returns false. It reports false when b is not an array or fn stopped
// it. b must be valid JSON (json.Valid).
func Elements(b []byte, fn func(elem []byte) bool) bool {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '[' {
		return false
	}
	for i = skipSpace(b, i+1); i < len(b) && b[i] != ']'; i = skipSpace(b, i) {
		if b[i] == ',' {
			i = skipSpace(b, i+1)
		}
		end := valueEnd(b, i)
		if !fn(b[i:end:end]) {
			return false
		}
		i = end
	}
	return true
}

// OtherKey reports whether a key as written is none of names however
// encoding/json would read it: ASCII without escapes, and equal to none of
// them in any case (encoding/json matches struct fields ignoring case,
// Unicode's folds included, which is why any other key is in doubt).
func OtherKey(key []byte, names ...string) bool {
	if !PlainKey(key) {
		return false
	}
	for _, n := range names {
		if strings.EqualFold(string(key), n) {
			return false
		}
	}
	return true
}

// PlainKey reports whether a key as written is ASCII without escapes: one
// that encoding/json reads as written, and matches to a field by ASCII case
// folding alone.
func PlainKey(key []byte) bool {
	for _, c := range key {
		if c == '\\' || c >= 0x80 {
			return false
		}
	}
	return true
}

// PlainString is a JSON string value of printable ASCII without escapes,
// unquoted; false for any other value.
func PlainString(v []byte) (string, bool) {
	if len(v) < 2 || v[0] != '"' {
		return "", false
	}
	for _, c := range v[1 : len(v)-1] {
		if c < 0x20 || c >= 0x7f || c == '\\' {
			return "", false
		}
	}
	return string(v[1 : len(v)-1]), true
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// StringEnd is the index past the JSON string that starts at b[i] (its
// opening quote), in valid JSON. A string
// without escapes (most) is two IndexByte calls; one with an escape before
// its closing quote is read byte by byte from that escape on, so each byte
// is looked at once or twice however densely the escapes come (two
// IndexByte calls an escape took twice as long as encoding/json on 8M
// escaped quotes).
func StringEnd(b []byte, i int) int {
	i++
	quote := i + bytes.IndexByte(b[i:], '"')
	escape := bytes.IndexByte(b[i:quote], '\\')
	if escape < 0 {
		return quote + 1
	}
	for i += escape; ; i++ {
		switch b[i] {
		case '\\':
			i++ // what it escapes
		case '"':
			return i + 1
		}
	}
}

// valueEnd is the index past the value that starts at b[i].
func valueEnd(b []byte, i int) int {
	switch b[i] {
	case '"':
		return StringEnd(b, i)
	case '{', '[':
		depth := 0
		for ; ; i++ {
			switch b[i] {
			case '"':
				i = StringEnd(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
	}
	for ; i < len(b); i++ {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			return i
		}
	}
	return i
}
