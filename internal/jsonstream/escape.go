package jsonstream

import "unicode/utf8"

// Writing JSON strings: the escaping encoding/json does, for code that
// spells JSON by hand (code mode's report, the gateway's stdio transport).

const hexDigits = "0123456789abcdef"

// jsonEscape is what encoding/json writes for the ASCII bytes it escapes
// (control characters, quote, backslash, and <, >, & for HTML safety); ""
// for the ones it writes as they are.
var jsonEscape = func() (t [utf8.RuneSelf]string) {
	for c := range utf8.RuneSelf {
		switch {
		case c == '"' || c == '\\':
			t[c] = `\` + string(rune(c))
		case c == '\b':
			t[c] = `\b`
		case c == '\f':
			t[c] = `\f`
		case c == '\n':
			t[c] = `\n`
		case c == '\r':
			t[c] = `\r`
		case c == '\t':
			t[c] = `\t`
		case c < 0x20 || c == '<' || c == '>' || c == '&':
			t[c] = `\u00` + string(hexDigits[c>>4]) + string(hexDigits[c&0xF])
		}
	}
	return t
}()

// AppendStringBody appends s escaped exactly as encoding/json escapes a
// string (HTML characters, U+2028 and U+2029 escaped; invalid UTF-8 as
// U+FFFD), without the quotes around it: for writers that spell JSON by
// hand on a hot path and must give json.Marshal's bytes.
func AppendStringBody[T []byte | string](dst []byte, s T) []byte {
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if esc := jsonEscape[c]; esc != "" {
				dst = append(dst, s[start:i]...)
				dst = append(dst, esc...)
				start = i + 1
			}
			i++
			continue
		}
		r, size := decodeRune(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			start = i + size
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\u202`...)
			dst = append(dst, hexDigits[r&0xF])
			start = i + size
		}
		i += size
	}
	return append(dst, s[start:]...)
}

// StringBodyLen is the length of AppendStringBody's output for s.
func StringBodyLen[T []byte | string](s T) int {
	n := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if esc := jsonEscape[c]; esc != "" {
				n += len(esc)
			} else {
				n++
			}
			i++
			continue
		}
		r, size := decodeRune(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			n += len(`\ufffd`)
		case r == '\u2028' || r == '\u2029':
			n += len(`\u2028`)
		default:
			n += size
		}
		i += size
	}
	return n
}

// decodeRune decodes the rune at the start of s; the conversion of at most
// four bytes stays on the stack (as in encoding/json).
func decodeRune[T []byte | string](s T) (rune, int) {
	return utf8.DecodeRuneInString(string(s[:min(len(s), utf8.UTFMax)]))
}
