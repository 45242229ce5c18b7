// Package jsonvm turns JSON bytes into goja values in one pass: the values
// the VM's own JSON.parse gives for the same text, built without it.
//
// goja's JSON.parse reads through encoding/json's token reader, which
// allocates for every token and decodes each scalar through reflection; in a
// worker it was a quarter of the CPU a tool call costs (docs/performance.md).
// Parser reads the bytes itself and builds the objects, arrays, strings and
// numbers JSON.parse would: plain objects with Object.prototype and arrays
// from the VM's intrinsics, keys in the order JSON.parse leaves them (integer-like
// keys first, ascending, then the rest as they came), a duplicate key's last
// value in its first key's place, "__proto__" as an own data property,
// numbers as goja's floatToValue makes them (integers as integers, -0 as -0,
// a literal out of float64's range as an error: goja rejects 1e400), strings
// decoded as encoding/json decodes them (a lone surrogate escape or an
// invalid UTF-8 byte becomes U+FFFD) and stored as the same kind of goja
// string.
//
// It does not explain bad input: on any error the caller is expected to hand
// the text to the VM's JSON.parse, which gives the SyntaxError it always gave
// (the runtime's bindings.Installed.ParseJSON does). Nesting deeper than
// MaxDepth stops this parser rather than grow its stack; the caller decides
// (ParseJSON hands it to JSON.parse up to a bound that keeps goja's
// recursion well inside a worker's stack).
//
// The differential tests and fuzz target (jsonvm_test.go) compare every
// value with JSON.parse's on the same input.
package jsonvm

import (
	"errors"
	"fmt"
	"strconv"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/dop251/goja"
)

// MaxDepth is how many objects and arrays may enclose a value before Parse
// gives up with ErrTooDeep, bounding its recursion. encoding/json (with
// which MCP clients decode) refuses nesting past 10,000 levels, so deeper
// results are rare; the caller measures them (NestingDepth) and decides.
const MaxDepth = 10000

// ErrTooDeep is Parse's answer for input nested deeper than MaxDepth.
var ErrTooDeep = errors.New("jsonvm: nested deeper than MaxDepth")

// SyntaxError is Parse's answer for input JSON.parse rejects; its message is
// this parser's, not the VM's.
type SyntaxError struct {
	Offset int // byte offset of the problem in the input
	Msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("jsonvm: %s at byte %d", e.Msg, e.Offset)
}

// maxInterned bounds the table of object keys kept between calls (keys
// repeat across the elements of a list and across the results of a run).
const (
	maxInterned    = 4096
	maxInternedLen = 64
)

// maxShared and maxSharedLen bound the table of short string values kept
// between calls, as maxInterned does for keys.
const (
	maxShared    = 4096
	maxSharedLen = 32
)

// Parser builds values in one VM. It keeps scratch space between calls, so
// it is used from the VM's goroutine only, like the VM itself.
type Parser struct {
	vm    *goja.Runtime
	data  []byte
	pos   int
	depth int
	items []any    // elements of the arrays being read, innermost last
	text  []byte   // a string's decoded UTF-8 (escapes resolved)
	units []uint16 // a string value's UTF-16, as goja stores it
	keys  map[string]string
	strs  map[string]goja.Value // short string values, shared (strings are immutable)
}

// NewParser returns a parser building values in vm.
func NewParser(vm *goja.Runtime) *Parser {
	return &Parser{vm: vm, keys: make(map[string]string), strs: make(map[string]goja.Value)}
}

// Parse returns the value JSON.parse gives for data, or an error
// (*SyntaxError or ErrTooDeep) where JSON.parse would throw or where the
// input is nested deeper than MaxDepth.
func (p *Parser) Parse(data []byte) (goja.Value, error) {
	p.data, p.pos, p.depth = data, 0, 0
	v, err := p.value()
	if err == nil {
		p.skipSpace()
		if p.pos < len(p.data) {
			v, err = nil, p.syntax("unexpected text after the value")
		}
	}
	// Each array clears its elements as it ends; a failed parse leaves the
	// unfinished ones behind. Scratch grown by one huge result is let go.
	clear(p.items)
	p.items = p.items[:0]
	if cap(p.items) > maxKeptScratch/16 {
		p.items = nil
	}
	if cap(p.text) > maxKeptScratch || cap(p.units) > maxKeptScratch/2 {
		p.text, p.units = nil, nil
	}
	p.data = nil
	return v, err
}

// maxKeptScratch bounds the bytes of scratch space a parser keeps between
// calls.
const maxKeptScratch = 1 << 20

func (p *Parser) syntax(msg string) error {
	return &SyntaxError{Offset: p.pos, Msg: msg}
}

func (p *Parser) skipSpace() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *Parser) value() (goja.Value, error) {
	p.skipSpace()
	if p.pos >= len(p.data) {
		return nil, p.syntax("unexpected end of input")
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		ascii, err := p.str()
		if err != nil {
			return nil, err
		}
		return p.stringValue(ascii), nil
	case c == 't':
		return p.literal("true", p.vm.ToValue(true))
	case c == 'f':
		return p.literal("false", p.vm.ToValue(false))
	case c == 'n':
		return p.literal("null", goja.Null())
	case c == '-' || ('0' <= c && c <= '9'):
		return p.number()
	}
	return nil, p.syntax("unexpected character looking for a value")
}

func (p *Parser) literal(word string, v goja.Value) (goja.Value, error) {
	if len(p.data)-p.pos < len(word) || string(p.data[p.pos:p.pos+len(word)]) != word {
		return nil, p.syntax("invalid literal")
	}
	p.pos += len(word)
	return v, nil
}

func (p *Parser) enter() error {
	p.depth++
	if p.depth > MaxDepth {
		return ErrTooDeep
	}
	return nil
}

func (p *Parser) object() (goja.Value, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	p.pos++ // {
	obj := p.vm.NewObject()
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		p.depth--
		return obj, nil
	}
	for {
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return nil, p.syntax("expected a string key")
		}
		if _, err := p.str(); err != nil {
			return nil, err
		}
		key := p.intern(p.text)
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return nil, p.syntax("expected ':' after a key")
		}
		p.pos++
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		// Defined, not set: JSON.parse creates own data properties, so
		// "__proto__" stays a key and a setter a snippet put on
		// Object.prototype is never called. A key seen before keeps its
		// place and takes the new value, as in JSON.parse.
		_ = obj.DefineDataProperty(key, v, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_TRUE)
		p.skipSpace()
		if p.pos < len(p.data) {
			switch p.data[p.pos] {
			case ',':
				p.pos++
				continue
			case '}':
				p.pos++
				p.depth--
				return obj, nil
			}
		}
		return nil, p.syntax("expected ',' or '}' after a member")
	}
}

func (p *Parser) array() (goja.Value, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	p.pos++ // [
	start := len(p.items)
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		p.depth--
		return p.vm.NewArray(), nil
	}
	for {
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		p.items = append(p.items, v)
		p.skipSpace()
		if p.pos < len(p.data) {
			switch p.data[p.pos] {
			case ',':
				p.pos++
				continue
			case ']':
				p.pos++
				p.depth--
				arr := p.vm.NewArray(p.items[start:]...) // copies the elements
				clear(p.items[start:])
				p.items = p.items[:start]
				return arr, nil
			}
		}
		return nil, p.syntax("expected ',' or ']' after an element")
	}
}

// number reads a JSON number and converts it as encoding/json does for
// JSON.parse: strconv.ParseFloat, an error where it fails (out of range),
// and goja's ToValue(float64), which makes integers integers.
func (p *Parser) number() (goja.Value, error) {
	d := p.data
	start := p.pos
	i := p.pos
	if d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && '1' <= d[i] && d[i] <= '9':
		for i++; i < len(d) && '0' <= d[i] && d[i] <= '9'; i++ {
		}
	default:
		p.pos = i
		return nil, p.syntax("expected a digit")
	}
	integer := true
	if i < len(d) && d[i] == '.' {
		integer = false
		i++
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			p.pos = i
			return nil, p.syntax("expected a digit after '.'")
		}
		for ; i < len(d) && '0' <= d[i] && d[i] <= '9'; i++ {
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		integer = false
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			p.pos = i
			return nil, p.syntax("expected a digit in the exponent")
		}
		for ; i < len(d) && '0' <= d[i] && d[i] <= '9'; i++ {
		}
	}
	p.pos = i
	lit := d[start:i]
	// Short integers are exact in a float64 and goja keeps them as integers
	// either way; "-0" is the one that must stay a float.
	if digits := len(lit); integer && digits <= 15 && !(lit[0] == '-' && lit[1] == '0') {
		var n int64
		neg := lit[0] == '-'
		if neg {
			lit = lit[1:]
		}
		for _, c := range lit {
			n = n*10 + int64(c-'0')
		}
		if neg {
			n = -n
		}
		return p.vm.ToValue(n), nil
	}
	f, err := strconv.ParseFloat(string(lit), 64)
	if err != nil {
		p.pos = start
		return nil, p.syntax("number out of range")
	}
	return p.vm.ToValue(f), nil
}

// str reads a string at p.pos (its opening quote) into p.text, resolving
// escapes as encoding/json does, and reports whether it is all ASCII.
func (p *Parser) str() (ascii bool, err error) {
	p.pos++ // "
	d := p.data
	start := p.pos
	i := p.pos
	for i < len(d) {
		c := d[i]
		if c == '"' {
			p.text = append(p.text[:0], d[start:i]...)
			p.pos = i + 1
			return true, nil
		}
		if c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			break
		}
		i++
	}
	p.text = append(p.text[:0], d[start:i]...)
	ascii = true
	for {
		if i >= len(d) {
			p.pos = i
			return false, p.syntax("unterminated string")
		}
		c := d[i]
		switch {
		case c == '"':
			p.pos = i + 1
			return ascii, nil
		case c < 0x20:
			p.pos = i
			return false, p.syntax("control character in a string")
		case c == '\\':
			if i+1 >= len(d) {
				p.pos = i
				return false, p.syntax("unterminated string")
			}
			switch e := d[i+1]; e {
			case '"', '\\', '/':
				p.text = append(p.text, e)
			case 'b':
				p.text = append(p.text, '\b')
			case 'f':
				p.text = append(p.text, '\f')
			case 'n':
				p.text = append(p.text, '\n')
			case 'r':
				p.text = append(p.text, '\r')
			case 't':
				p.text = append(p.text, '\t')
			case 'u':
				r := hex4(d[i+2:])
				if r < 0 {
					p.pos = i
					return false, p.syntax("invalid \\u escape")
				}
				i += 6
				if utf16.IsSurrogate(r) {
					// A pair makes one character; a lone half becomes
					// U+FFFD and the escape after it is read on its own.
					r2 := rune(-1)
					if len(d)-i >= 6 && d[i] == '\\' && d[i+1] == 'u' {
						r2 = hex4(d[i+2:])
					}
					if dec := utf16.DecodeRune(r, r2); dec != unicode.ReplacementChar {
						r = dec
						i += 6
					} else {
						r = unicode.ReplacementChar
					}
				}
				if r >= utf8.RuneSelf {
					ascii = false
				}
				p.text = utf8.AppendRune(p.text, r)
				continue
			default:
				p.pos = i
				return false, p.syntax("invalid escape")
			}
			i += 2
		case c < utf8.RuneSelf:
			p.text = append(p.text, c)
			i++
		default:
			// An invalid byte decodes to U+FFFD, one for each byte.
			r, size := utf8.DecodeRune(d[i:])
			p.text = utf8.AppendRune(p.text, r)
			ascii = false
			i += size
		}
	}
}

// hex4 decodes the four hex digits at the start of b, or returns -1.
func hex4(b []byte) rune {
	if len(b) < 4 {
		return -1
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// stringValue makes p.text a goja string of the kind JSON.parse makes
// (goja's ASCII or UTF-16 string, never a wrapped Go string). Short values
// repeat across a list's elements ("open", "User", a label's colour) and are
// built once per parser.
func (p *Parser) stringValue(ascii bool) goja.Value {
	short := len(p.text) <= maxSharedLen
	if short {
		if v, ok := p.strs[string(p.text)]; ok {
			return v
		}
	}
	v := p.buildString(ascii)
	if short {
		if len(p.strs) >= maxShared {
			clear(p.strs)
		}
		p.strs[string(p.text)] = v
	}
	return v
}

func (p *Parser) buildString(ascii bool) goja.Value {
	u := p.units[:0]
	if ascii {
		for _, c := range p.text {
			u = append(u, uint16(c))
		}
	} else {
		for t := p.text; len(t) > 0; {
			r, size := utf8.DecodeRune(t) // valid: str wrote it
			u = utf16.AppendRune(u, r)
			t = t[size:]
		}
	}
	p.units = u
	return goja.StringFromUTF16(u)
}

// intern returns b as a string, shared with earlier keys spelled the same.
func (p *Parser) intern(b []byte) string {
	if s, ok := p.keys[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(b) <= maxInternedLen {
		if len(p.keys) >= maxInterned {
			clear(p.keys)
		}
		p.keys[s] = s
	}
	return s
}

// NestingDepth is how deeply data nests objects and arrays at its deepest
// (brackets inside strings not counted), read without building anything.
// For malformed input it is only an estimate.
func NestingDepth(data []byte) int {
	depth, deepest := 0, 0
	inString := false
	for i := 0; i < len(data); i++ {
		c := data[i]
		switch {
		case inString:
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			depth++
			deepest = max(deepest, depth)
		case c == ']' || c == '}':
			depth--
		}
	}
	return deepest
}
