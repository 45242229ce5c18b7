package typegen

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// This file is a small JSON parser that keeps the order of object members.
//
// Why not encoding/json: decoding into map[string]any loses the order in which
// a schema lists its properties, and that order is meaningful to the reader of
// the declarations (servers put the important arguments first) and is needed
// for byte-identical output. It also lets us bound the nesting depth, which a
// hostile schema could otherwise use to blow the stack of a recursive walk.
// The parser is differential-fuzzed against encoding/json (FuzzParseJSON in fuzz_test.go).

type jsonKind uint8

const (
	jsonNull jsonKind = iota
	jsonBool
	jsonNumber
	jsonString
	jsonArray
	jsonObject
)

// jsonValue is one parsed JSON value. For numbers, str holds the literal text
// exactly as written (valid JSON number syntax, which is also a valid
// TypeScript numeric literal); for strings, the decoded text.
type jsonValue struct {
	kind    jsonKind
	boolean bool
	str     string
	items   []*jsonValue
	members []jsonMember
}

type jsonMember struct {
	key   string
	value *jsonValue
}

// get returns the member named key, or nil. Duplicate keys were merged at
// parse time (last value wins, as with encoding/json).
func (v *jsonValue) get(key string) *jsonValue {
	if v == nil || v.kind != jsonObject {
		return nil
	}
	for i := range v.members {
		if v.members[i].key == key {
			return v.members[i].value
		}
	}
	return nil
}

func (v *jsonValue) isObject() bool { return v != nil && v.kind == jsonObject }

// maxJSONDepth bounds nesting. Real schemas in the corpus nest at most ~20
// levels; 128 leaves room while keeping every recursive walk shallow.
const maxJSONDepth = 128

// parseJSON parses one JSON document. Errors carry the byte offset.
func parseJSON(data []byte) (*jsonValue, error) {
	p := jsonParser{data: data, src: string(data)}
	p.skipSpace()
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.pos != len(p.data) {
		return nil, p.errorf("unexpected %s after the end of the JSON value", p.describe())
	}
	return v, nil
}

type jsonParser struct {
	data []byte
	src  string // data as one string: plain strings are slices of it, not copies
	pos  int
	slab []jsonValue

	// Members and items being parsed, for all open objects and arrays; each
	// container copies its own run out once it is complete, so a container
	// costs one exact-size allocation instead of a series of appends.
	members []jsonMember
	items   []*jsonValue
}

// alloc hands out values from slabs that grow from 16 to 256 values, so a
// small schema costs a few allocations instead of one per value.
func (p *jsonParser) alloc(v jsonValue) *jsonValue {
	if len(p.slab) == cap(p.slab) {
		p.slab = make([]jsonValue, 0, min(256, max(16, 2*cap(p.slab))))
	}
	p.slab = append(p.slab, v)
	return &p.slab[len(p.slab)-1]
}

type jsonSyntaxError struct {
	Offset int
	Msg    string
}

func (e *jsonSyntaxError) Error() string {
	return fmt.Sprintf("invalid JSON at byte %d: %s", e.Offset, e.Msg)
}

func (p *jsonParser) errorf(format string, args ...any) error {
	return &jsonSyntaxError{Offset: p.pos, Msg: fmt.Sprintf(format, args...)}
}

func (p *jsonParser) describe() string {
	if p.pos >= len(p.data) {
		return "end of input"
	}
	c := p.data[p.pos]
	if c >= 0x20 && c < 0x7f {
		return fmt.Sprintf("character %q", c)
	}
	return fmt.Sprintf("byte 0x%02x", c)
}

func (p *jsonParser) skipSpace() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *jsonParser) value(depth int) (*jsonValue, error) {
	if depth > maxJSONDepth {
		return nil, p.errorf("nested deeper than %d levels", maxJSONDepth)
	}
	if p.pos >= len(p.data) {
		return nil, p.errorf("unexpected end of input, expected a value")
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		s, err := p.string()
		if err != nil {
			return nil, err
		}
		return p.alloc(jsonValue{kind: jsonString, str: s}), nil
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	case c == 't':
		return p.literal("true", jsonValue{kind: jsonBool, boolean: true})
	case c == 'f':
		return p.literal("false", jsonValue{kind: jsonBool})
	case c == 'n':
		return p.literal("null", jsonValue{kind: jsonNull})
	default:
		return nil, p.errorf("unexpected %s, expected a value", p.describe())
	}
}

func (p *jsonParser) literal(word string, v jsonValue) (*jsonValue, error) {
	if !strings.HasPrefix(p.src[p.pos:], word) {
		return nil, p.errorf("unexpected %s, expected %s", p.describe(), word)
	}
	p.pos += len(word)
	return p.alloc(v), nil
}

func (p *jsonParser) number() (*jsonValue, error) {
	start := p.pos
	d := p.data
	if p.pos < len(d) && d[p.pos] == '-' {
		p.pos++
	}
	switch {
	case p.pos < len(d) && d[p.pos] == '0':
		p.pos++
	case p.pos < len(d) && d[p.pos] >= '1' && d[p.pos] <= '9':
		for p.pos < len(d) && d[p.pos] >= '0' && d[p.pos] <= '9' {
			p.pos++
		}
	default:
		return nil, p.errorf("invalid number")
	}
	if p.pos < len(d) && d[p.pos] == '.' {
		p.pos++
		if p.pos >= len(d) || d[p.pos] < '0' || d[p.pos] > '9' {
			return nil, p.errorf("invalid number: expected a digit after '.'")
		}
		for p.pos < len(d) && d[p.pos] >= '0' && d[p.pos] <= '9' {
			p.pos++
		}
	}
	if p.pos < len(d) && (d[p.pos] == 'e' || d[p.pos] == 'E') {
		p.pos++
		if p.pos < len(d) && (d[p.pos] == '+' || d[p.pos] == '-') {
			p.pos++
		}
		if p.pos >= len(d) || d[p.pos] < '0' || d[p.pos] > '9' {
			return nil, p.errorf("invalid number: expected a digit in the exponent")
		}
		for p.pos < len(d) && d[p.pos] >= '0' && d[p.pos] <= '9' {
			p.pos++
		}
	}
	return p.alloc(jsonValue{kind: jsonNumber, str: p.src[start:p.pos]}), nil
}

// string parses a JSON string at p.pos. The common case (no escapes, valid
// UTF-8) is a single slice; anything else goes through encoding/json so that
// escapes and invalid UTF-8 are decoded exactly as the standard library does.
func (p *jsonParser) string() (string, error) {
	start := p.pos
	p.pos++ // opening quote
	escaped, nonASCII := false, false
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		switch {
		case c == '"':
			p.pos++
			raw := p.data[start:p.pos]
			body := p.src[start+1 : p.pos-1]
			if !escaped && (!nonASCII || utf8.ValidString(body)) {
				return body, nil
			}
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				p.pos = start
				return "", p.errorf("invalid string: %v", err)
			}
			return s, nil
		case c == '\\':
			escaped = true
			p.pos += 2
		case c < 0x20:
			return "", p.errorf("control character 0x%02x in string (escape it as \\u%04x)", c, c)
		case c >= utf8.RuneSelf:
			nonASCII = true
			p.pos++
		default:
			p.pos++
		}
	}
	p.pos = len(p.data)
	return "", p.errorf("unterminated string starting at byte %d", start)
}

func (p *jsonParser) array(depth int) (*jsonValue, error) {
	p.pos++ // [
	v := p.alloc(jsonValue{kind: jsonArray})
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		return v, nil
	}
	start := len(p.items)
	for {
		p.skipSpace()
		item, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		p.items = append(p.items, item)
		p.skipSpace()
		if p.pos >= len(p.data) {
			return nil, p.errorf("unexpected end of input in array, expected ',' or ']'")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case ']':
			p.pos++
			v.items = append([]*jsonValue(nil), p.items[start:]...)
			p.items = p.items[:start]
			return v, nil
		default:
			return nil, p.errorf("unexpected %s in array, expected ',' or ']'", p.describe())
		}
	}
}

func (p *jsonParser) object(depth int) (*jsonValue, error) {
	p.pos++ // {
	v := p.alloc(jsonValue{kind: jsonObject})
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		return v, nil
	}
	var index map[string]int // built only for large objects, to keep duplicate detection linear
	start := len(p.members)
	for {
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return nil, p.errorf("unexpected %s in object, expected a member name in double quotes", p.describe())
		}
		key, err := p.string()
		if err != nil {
			return nil, err
		}
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return nil, p.errorf("unexpected %s after member name %q, expected ':'", p.describe(), key)
		}
		p.pos++
		p.skipSpace()
		val, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		// Duplicate names: keep the first position and the last value, as
		// encoding/json does for the value.
		dup := -1
		own := p.members[start:]
		if index != nil {
			if i, ok := index[key]; ok {
				dup = i
			}
		} else {
			for i := range own {
				if own[i].key == key {
					dup = i
					break
				}
			}
		}
		if dup >= 0 {
			own[dup].value = val
		} else {
			p.members = append(p.members, jsonMember{key: key, value: val})
			n := len(p.members) - start
			if index != nil {
				index[key] = n - 1
			} else if n > 32 {
				index = make(map[string]int, 2*n)
				for i, m := range p.members[start:] {
					index[m.key] = i
				}
			}
		}
		p.skipSpace()
		if p.pos >= len(p.data) {
			return nil, p.errorf("unexpected end of input in object, expected ',' or '}'")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case '}':
			p.pos++
			v.members = append([]jsonMember(nil), p.members[start:]...)
			p.members = p.members[:start]
			return v, nil
		default:
			return nil, p.errorf("unexpected %s in object, expected ',' or '}'", p.describe())
		}
	}
}
