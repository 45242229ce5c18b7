package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"

	"github.com/sandboxrt/sandbox/gateway/internal/jsonscan"
)

// Call arguments are decoded once, strictly, and what goes upstream is the
// canonical re-encoding of exactly what was decoded (and so of what the
// schema and path checks saw), never the caller's bytes. Every parser
// upstream then reads the same values the gateway judged:
//
//   - a key twice in one object is refused (one parser keeps the first, the
//     next the last: the check would judge one value and the server use the
//     other);
//   - invalid UTF-8 and unpaired UTF-16 surrogate escapes in strings are
//     refused (encoding/json would turn them into U+FFFD for the check while
//     a lenient server reads the raw bytes);
//   - numbers are kept as written (1e400, 12345678901234567890, 0.1) and
//     object members stay in the caller's order;
//   - nesting is bounded by maxArgsDepth, and nothing may follow the value.

// maxArgsDepth bounds nesting in call arguments.
const maxArgsDepth = maxScanDepth

// argsError is why arguments were refused, at a JSON pointer.
type argsError struct {
	Path    string // JSON pointer, "" for the arguments as a whole
	Message string
}

func (e *argsError) Error() string {
	if e.Path == "" {
		return e.Message
	}
	return e.Path + ": " + e.Message
}

// canonicalArgs decodes call arguments strictly and returns the decoded value
// (objects as map[string]any, numbers as json.Number) and its canonical
// encoding: compact, members in the caller's order, strings re-escaped.
// Empty input is {}.
func canonicalArgs(raw []byte) (canonical []byte, decoded any, err *argsError) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return []byte(`{}`), map[string]any{}, nil
	}
	if canonical, decoded, ok := splitArgs(raw); ok {
		return canonical, decoded, nil
	}
	return tokenArgs(raw)
}

// tokenArgs is canonicalArgs by encoding/json's token reader, which says
// what is wrong with arguments that splitArgs does not take.
func tokenArgs(raw []byte) (canonical []byte, decoded any, err *argsError) {
	d := &argsDecoder{dec: json.NewDecoder(bytes.NewReader(raw)), raw: raw}
	d.dec.UseNumber()
	d.out.Grow(len(raw))
	v, err := d.value("", 0)
	if err != nil {
		return nil, nil, err
	}
	if _, terr := d.dec.Token(); terr != io.EOF {
		return nil, nil, &argsError{Message: "arguments are not valid JSON: unexpected data after the top-level value"}
	}
	return d.out.Bytes(), v, nil
}

// splitArgs is canonicalArgs for arguments it finds nothing wrong with, in
// one pass that checks the JSON (json.Valid) and one that walks it
// (jsonscan), rather than encoding/json's token reader, which costs an
// allocation or more a token. ok is false for anything it would refuse (a
// key twice, a string that is not UTF-8 or holds half a surrogate pair,
// not JSON), for a key written with escapes and for nesting past
// maxSplitArgsDepth: canonicalArgs then decodes them as before, and says
// what is wrong.
func splitArgs(raw []byte) (canonical []byte, decoded any, ok bool) {
	// Each level of nesting skips over what it holds before walking into
	// it, so a byte is looked at once per level around it: bounded for
	// arguments this size and depth (the token reader, linear, takes
	// larger and deeper ones).
	if len(raw) > maxSplitArgsBytes || !json.Valid(raw) {
		return nil, nil, false
	}
	var out bytes.Buffer
	out.Grow(len(raw))
	v, ok := splitArgsValue(&out, bytes.TrimSpace(raw), 0)
	if !ok {
		return nil, nil, false
	}
	return out.Bytes(), v, true
}

// maxSplitArgsBytes is the largest arguments splitArgs takes: tool
// arguments are mostly a few hundred bytes.
const maxSplitArgsBytes = 64 << 10

// maxSplitArgsDepth is the deepest nesting splitArgs walks into; deeper
// arguments go to the token reader, which refuses past maxArgsDepth. A
// byte is looked at once per level around it, so the walk's cost is its
// size times its depth: 64 KiB nested maxArgsDepth (128) levels deep took
// 30 ms, against the token reader's 18 ms, and as long again before the
// token reader refused it when a key came twice at the bottom (0.2 ms).
// Agents' arguments nest a few levels.
const maxSplitArgsDepth = 16

func splitArgsValue(out *bytes.Buffer, v []byte, depth int) (any, bool) {
	if depth > maxSplitArgsDepth {
		return nil, false
	}
	switch v[0] {
	case '{':
		obj := map[string]any{}
		out.WriteByte('{')
		ok := jsonscan.Members(v, func(key, value []byte) bool {
			if bytes.IndexByte(key, '\\') >= 0 {
				return false // its decoded form is canonicalArgs' to find
			}
			if !utf8.Valid(key) {
				return false
			}
			k := string(key)
			if _, dup := obj[k]; dup {
				return false
			}
			if len(obj) > 0 {
				out.WriteByte(',')
			}
			writeJSONString(out, k)
			out.WriteByte(':')
			x, ok := splitArgsValue(out, value, depth+1)
			obj[k] = x
			return ok
		})
		out.WriteByte('}')
		return obj, ok
	case '[':
		arr := []any{}
		out.WriteByte('[')
		ok := jsonscan.Elements(v, func(elem []byte) bool {
			if len(arr) > 0 {
				out.WriteByte(',')
			}
			x, ok := splitArgsValue(out, elem, depth+1)
			arr = append(arr, x)
			return ok
		})
		out.WriteByte(']')
		return arr, ok
	case '"':
		if checkStringLiteral(v) != "" {
			return nil, false
		}
		var str string
		if bytes.IndexByte(v, '\\') < 0 {
			str = string(v[1 : len(v)-1])
		} else if json.Unmarshal(v, &str) != nil {
			return nil, false
		}
		writeJSONString(out, str)
		return str, true
	case 't', 'f':
		out.Write(v)
		return v[0] == 't', true
	case 'n':
		out.WriteString("null")
		return nil, true
	}
	out.Write(v) // a number, as written
	return json.Number(v), true
}

// decodeArgs parses call arguments for the checks; see canonicalArgs.
func decodeArgs(raw json.RawMessage) (any, error) {
	_, v, err := canonicalArgs(raw)
	if err != nil {
		return nil, err
	}
	return v, nil
}

type argsDecoder struct {
	dec *json.Decoder
	raw []byte
	out bytes.Buffer
}

// token reads the next token and returns it with the raw bytes it spans
// (including any separator and white space before it).
func (d *argsDecoder) token(ptr string) (json.Token, []byte, *argsError) {
	start := d.dec.InputOffset()
	tok, err := d.dec.Token()
	if err != nil {
		msg := err.Error()
		var se *json.SyntaxError
		if errors.As(err, &se) {
			msg = fmt.Sprintf("%s (at byte %d)", se.Error(), se.Offset)
		} else if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
			msg = "unexpected end of JSON"
		}
		return nil, nil, &argsError{Path: ptr, Message: "arguments are not valid JSON: " + msg}
	}
	return tok, d.raw[start:d.dec.InputOffset()], nil
}

func (d *argsDecoder) value(ptr string, depth int) (any, *argsError) {
	if depth > maxArgsDepth {
		return nil, &argsError{Path: ptr, Message: fmt.Sprintf("arguments are nested more than %d levels deep; send flatter arguments", maxArgsDepth)}
	}
	tok, raw, err := d.token(ptr)
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case nil:
		d.out.WriteString("null")
		return nil, nil
	case bool:
		d.out.WriteString(strconv.FormatBool(t))
		return t, nil
	case json.Number:
		// The decoder has checked the literal's syntax; it goes on as written.
		d.out.WriteString(string(t))
		return t, nil
	case string:
		if e := checkStringLiteral(raw); e != "" {
			return nil, &argsError{Path: ptr, Message: "the string " + e}
		}
		writeJSONString(&d.out, t)
		return t, nil
	case json.Delim:
		switch t {
		case '[':
			d.out.WriteByte('[')
			arr := []any{}
			for i := 0; d.dec.More(); i++ {
				if i > 0 {
					d.out.WriteByte(',')
				}
				v, err := d.value(ptr+"/"+strconv.Itoa(i), depth+1)
				if err != nil {
					return nil, err
				}
				arr = append(arr, v)
			}
			if _, _, err := d.token(ptr); err != nil {
				return nil, err
			}
			d.out.WriteByte(']')
			return arr, nil
		case '{':
			d.out.WriteByte('{')
			obj := map[string]any{}
			for i := 0; d.dec.More(); i++ {
				kt, kraw, err := d.token(ptr)
				if err != nil {
					return nil, err
				}
				key, _ := kt.(string)
				kptr := ptr + "/" + escapePointer(key)
				if e := checkStringLiteral(kraw); e != "" {
					return nil, &argsError{Path: kptr, Message: "the object key " + e}
				}
				if _, dup := obj[key]; dup {
					where := ptr
					if where == "" {
						where = "the top level"
					}
					return nil, &argsError{Path: kptr, Message: fmt.Sprintf(
						"the key %q appears more than once in the object at %s; servers disagree on which copy counts, so the call was not sent: send each key once", truncate(key, 60), where)}
				}
				if i > 0 {
					d.out.WriteByte(',')
				}
				writeJSONString(&d.out, key)
				d.out.WriteByte(':')
				v, verr := d.value(kptr, depth+1)
				if verr != nil {
					return nil, verr
				}
				obj[key] = v
			}
			if _, _, err := d.token(ptr); err != nil {
				return nil, err
			}
			d.out.WriteByte('}')
			return obj, nil
		}
	}
	return nil, &argsError{Path: ptr, Message: fmt.Sprintf("arguments are not valid JSON: unexpected %v", tok)}
}

// checkStringLiteral looks at the raw bytes of one JSON string token (which
// encoding/json has already accepted) for what its decoder would silently
// replace with U+FFFD: bytes that are not UTF-8 and \u escapes of unpaired
// surrogates. It returns "" or what is wrong, ending in what to do.
func checkStringLiteral(raw []byte) string {
	i := bytes.IndexByte(raw, '"')
	if i < 0 {
		return ""
	}
	s := raw[i+1:]
	if len(s) > 0 && s[len(s)-1] == '"' {
		s = s[:len(s)-1]
	}
	for j := 0; j < len(s); {
		c := s[j]
		switch {
		case c == '\\' && j+1 < len(s) && s[j+1] == 'u':
			r, ok := hex4(s[j+2:])
			if !ok {
				return "" // the decoder refused it already
			}
			j += 6
			if r < 0xd800 || r >= 0xe000 {
				continue
			}
			if r < 0xdc00 && j+1 < len(s) && s[j] == '\\' && s[j+1] == 'u' {
				if lo, ok := hex4(s[j+2:]); ok && lo >= 0xdc00 && lo < 0xe000 {
					j += 6
					continue
				}
			}
			return fmt.Sprintf(`has the escape \u%04x, half of a UTF-16 surrogate pair without its other half; send text as valid Unicode`, r)
		case c == '\\':
			j += 2
		case c < utf8.RuneSelf:
			j++
		default:
			r, size := utf8.DecodeRune(s[j:])
			if r == utf8.RuneError && size == 1 {
				return fmt.Sprintf("is not valid UTF-8 (byte 0x%02x at byte %d of the string); send text as UTF-8, and binary data as base64", c, j)
			}
			j += size
		}
	}
	return ""
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		v := hexVal(c)
		if v < 0 {
			return 0, false
		}
		r = r<<4 | rune(v)
	}
	return r, true
}

// writeJSONString writes s (valid UTF-8) as a JSON string: quotes,
// backslashes and control characters escaped, U+2028 and U+2029 too (for
// JavaScript readers); everything else as it is (no HTML escaping).
func writeJSONString(b *bytes.Buffer, s string) {
	const hexDigits = "0123456789abcdef"
	b.WriteByte('"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r != '\u2028' && r != '\u2029' {
				i += size
				continue
			}
			b.WriteString(s[start:i])
			fmt.Fprintf(b, `\u%04x`, r)
			i += size
			start = i
			continue
		}
		b.WriteString(s[start:i])
		switch c {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			b.WriteString(`\u00`)
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&0xf])
		}
		i++
		start = i
	}
	b.WriteString(s[start:])
	b.WriteByte('"')
}
