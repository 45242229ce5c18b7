package jsregexp

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/sandboxrt/sandbox/runtime/internal/lru"
)

// The RegExp v flag (unicodeSets) is u plus set operations in character
// classes: [\p{L}--[a-z]], [\p{Script=Greek}&&\p{Letter}], nested classes
// and \q{strings}. goja knows only u, so a v pattern is rewritten to the u
// pattern that matches the same: each class is computed as a set of code
// points (and strings) in Go and written out as explicit ranges. The
// rewritten regexp reports the flag u, not v; \p{RGI_Emoji} and the other
// properties of strings are not supported (a SyntaxError that says so).

// translateUnicodeSets rewrites a v-flag pattern into a u-flag one.
// Results are cached, as ExpandUnicodeProperties' are: a literal in a loop
// is a new RegExp each time round (esbuild lowers v literals to calls).
func translateUnicodeSets(pattern string) (string, error) {
	if x, ok := translatedSets.Get(pattern); ok {
		return x.out, x.err
	}
	out, err := translateSets(pattern)
	translatedSets.Put(pattern, expansion{out, err}, len(pattern)+len(out))
	return out, err
}

var translatedSets = lru.New[string, expansion](256, 4<<20)

func translateSets(pattern string) (string, error) {
	p := &vParser{src: pattern}
	var b strings.Builder
	for p.i < len(p.src) {
		c := p.src[p.i]
		switch {
		case strings.HasPrefix(p.src[p.i:], `\p{`):
			name, _, _ := strings.Cut(p.src[p.i+3:], "}")
			if stringProperties[name] {
				return "", fmt.Errorf("SyntaxError: invalid regular expression /%s/v: \\p{%s} (a property of strings) is not supported here; list the sequences with [\\q{...}]", pattern, name)
			}
			b.WriteString(`\p`)
			p.i += 2
		case c == '\\' && p.i+1 < len(p.src):
			b.WriteString(p.src[p.i : p.i+2])
			p.i += 2
		case c == '[':
			set, err := p.class()
			if err != nil {
				return "", fmt.Errorf("SyntaxError: invalid regular expression /%s/v: %v", pattern, err)
			}
			b.WriteString(set.source())
		default:
			b.WriteByte(c)
			p.i++
		}
	}
	return b.String(), nil
}

type vParser struct {
	src string
	i   int
}

// classSet is a character class's meaning: code points, plus the strings
// \q{...} adds; negated only when written [^...].
type classSet struct {
	runes   runeSet
	strs    map[string]bool
	negated bool
}

func (s classSet) source() string {
	ranges := rangesText(s.runes)
	class := "[" + ranges + "]"
	if s.negated {
		return "[^" + ranges + "]"
	}
	if len(s.strs) == 0 {
		return class
	}
	strs := make([]string, 0, len(s.strs))
	for str := range s.strs {
		strs = append(strs, str)
	}
	// The longest string is tried first, as the v flag specifies.
	sort.Slice(strs, func(i, j int) bool {
		if a, b := utf8.RuneCountInString(strs[i]), utf8.RuneCountInString(strs[j]); a != b {
			return a > b
		}
		return strs[i] < strs[j]
	})
	var alts []string
	for _, str := range strs {
		var e strings.Builder
		for _, r := range str {
			fmt.Fprintf(&e, `\u{%X}`, r)
		}
		alts = append(alts, e.String())
	}
	if len(s.runes) > 0 {
		alts = append(alts, class)
	}
	return "(?:" + strings.Join(alts, "|") + ")"
}

// class parses [ ... ] at p.i: a union of items, or items joined by one
// kind of operator (&& or --), as ClassSetExpression in the spec.
func (p *vParser) class() (classSet, error) {
	p.i++ // [
	out := classSet{strs: map[string]bool{}}
	if p.peek("^") {
		out.negated = true
		p.i++
	}
	op := ""
	first := true
	for {
		if p.i >= len(p.src) {
			return out, fmt.Errorf("unterminated character class")
		}
		if p.peek("]") {
			p.i++
			break
		}
		if p.peek("&&") || p.peek("--") {
			next := p.src[p.i : p.i+2]
			if first || (op != "" && op != next) {
				return out, fmt.Errorf("%s needs operands on both sides and cannot mix with another operator without brackets", next)
			}
			op = next
			p.i += 2
			operand, err := p.operand()
			if err != nil {
				return out, err
			}
			if op == "&&" {
				out.runes = intersectRunes(out.runes, operand.runes)
				for s := range out.strs {
					if !operand.strs[s] {
						delete(out.strs, s)
					}
				}
			} else {
				out.runes = subtractRunes(out.runes, operand.runes)
				for s := range operand.strs {
					delete(out.strs, s)
				}
			}
			continue
		}
		if op != "" {
			return out, fmt.Errorf("%s and a union cannot mix without brackets", op)
		}
		item, err := p.operand()
		if err != nil {
			return out, err
		}
		// A range a-z is a union item.
		if p.peek("-") && !p.peek("--") && len(item.strs) == 0 && len(item.runes) == 1 && item.runes[0][0] == item.runes[0][1] {
			p.i++
			hi, err := p.operand()
			if err != nil {
				return out, err
			}
			if len(hi.runes) != 1 || hi.runes[0][0] != hi.runes[0][1] || hi.runes[0][0] < item.runes[0][0] {
				return out, fmt.Errorf("range out of order in character class")
			}
			item.runes = runeSet{{item.runes[0][0], hi.runes[0][0]}}
		}
		out.runes = normalize(append(out.runes, item.runes...))
		for s := range item.strs {
			out.strs[s] = true
		}
		first = false
	}
	if out.negated && len(out.strs) > 0 {
		return out, fmt.Errorf("a negated class cannot contain strings")
	}
	return out, nil
}

// operand is one class item: a nested class, an escape, \q{...} or a
// single character.
func (p *vParser) operand() (classSet, error) {
	one := func(r rune) classSet { return classSet{runes: runeSet{{r, r}}} }
	if p.i >= len(p.src) {
		return classSet{}, fmt.Errorf("unterminated character class")
	}
	if p.src[p.i] == '[' {
		inner, err := p.class()
		if err != nil {
			return inner, err
		}
		if inner.negated {
			inner.runes = complementRunes(inner.runes)
			inner.negated = false
		}
		return inner, nil
	}
	if p.src[p.i] != '\\' {
		r, size := utf8.DecodeRuneInString(p.src[p.i:])
		if strings.ContainsRune("()[]{}/|", r) {
			return classSet{}, fmt.Errorf("%q must be escaped inside a character class with the v flag", r)
		}
		p.i += size
		return one(r), nil
	}
	if p.i+1 >= len(p.src) {
		return classSet{}, fmt.Errorf("\\ at end of pattern")
	}
	c := p.src[p.i+1]
	p.i += 2
	table := func(t *unicode.RangeTable) classSet { return classSet{runes: normalize(flatten(t))} }
	switch c {
	case 'd', 'D', 'w', 'W', 's', 'S':
		var set runeSet
		switch c {
		case 'd', 'D':
			set = runeSet{{'0', '9'}}
		case 'w', 'W':
			set = runeSet{{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}}
		case 's', 'S':
			set = normalize(append(flatten(unicode.White_Space), [2]rune{0xFEFF, 0xFEFF}))
		}
		if c >= 'A' && c <= 'Z' {
			set = complementRunes(set)
		}
		return classSet{runes: set}, nil
	case 'p', 'P':
		end := strings.IndexByte(p.src[p.i:], '}')
		if !p.peek("{") || end < 0 {
			return classSet{}, fmt.Errorf("invalid property escape")
		}
		name := p.src[p.i+1 : p.i+end]
		p.i += end + 1
		if stringProperties[name] {
			return classSet{}, fmt.Errorf("\\p{%s} (a property of strings) is not supported here; list the sequences with \\q{...}", name)
		}
		t, err := unicodeTable(name)
		if err != nil {
			return classSet{}, err
		}
		if c == 'P' {
			t = complementTable(t)
		}
		return table(t), nil
	case 'q':
		end := strings.IndexByte(p.src[p.i:], '}')
		if !p.peek("{") || end < 0 {
			return classSet{}, fmt.Errorf("invalid \\q{...}")
		}
		body := p.src[p.i+1 : p.i+end]
		p.i += end + 1
		out := classSet{strs: map[string]bool{}}
		for _, alt := range strings.Split(body, "|") {
			str, err := unescapeClassString(alt)
			if err != nil {
				return out, err
			}
			if utf8.RuneCountInString(str) == 1 {
				r, _ := utf8.DecodeRuneInString(str)
				out.runes = normalize(append(out.runes, [2]rune{r, r}))
			} else {
				out.strs[str] = true // "" included: \q{} matches the empty string
			}
		}
		return out, nil
	case 'u':
		if p.peek("{") {
			end := strings.IndexByte(p.src[p.i:], '}')
			if end < 0 {
				return classSet{}, fmt.Errorf("invalid unicode escape")
			}
			n, err := strconv.ParseUint(p.src[p.i+1:p.i+end], 16, 32)
			if err != nil || n > unicode.MaxRune {
				return classSet{}, fmt.Errorf("invalid unicode escape")
			}
			p.i += end + 1
			return one(rune(n)), nil
		}
		if p.i+4 > len(p.src) {
			return classSet{}, fmt.Errorf("invalid unicode escape")
		}
		n, err := strconv.ParseUint(p.src[p.i:p.i+4], 16, 16)
		if err != nil {
			return classSet{}, fmt.Errorf("invalid unicode escape")
		}
		p.i += 4
		r := rune(n)
		// A surrogate pair written as two \u escapes is one code point.
		if utf16IsHigh(r) && p.peek(`\u`) && p.i+6 <= len(p.src) {
			if lo, err := strconv.ParseUint(p.src[p.i+2:p.i+6], 16, 16); err == nil && rune(lo) >= 0xDC00 && rune(lo) <= 0xDFFF {
				p.i += 6
				r = (r-0xD800)<<10 + (rune(lo) - 0xDC00) + 0x10000
			}
		}
		return one(r), nil
	case 'x':
		if p.i+2 > len(p.src) {
			return classSet{}, fmt.Errorf("invalid hex escape")
		}
		n, err := strconv.ParseUint(p.src[p.i:p.i+2], 16, 8)
		if err != nil {
			return classSet{}, fmt.Errorf("invalid hex escape")
		}
		p.i += 2
		return one(rune(n)), nil
	case 'c':
		if p.i < len(p.src) && ((p.src[p.i] >= 'a' && p.src[p.i] <= 'z') || (p.src[p.i] >= 'A' && p.src[p.i] <= 'Z')) {
			p.i++
			return one(rune(p.src[p.i-1] % 32)), nil
		}
		return classSet{}, fmt.Errorf("invalid control escape")
	}
	if r, ok := simpleEscapes[c]; ok {
		return one(r), nil
	}
	if strings.IndexByte(`^$\.*+?()[]{}|/-&!#%,:;<=>@`+"`~", c) >= 0 {
		return one(rune(c)), nil
	}
	return classSet{}, fmt.Errorf("invalid escape \\%c", c)
}

func (p *vParser) peek(s string) bool { return strings.HasPrefix(p.src[p.i:], s) }

var simpleEscapes = map[byte]rune{'n': '\n', 't': '\t', 'r': '\r', 'f': '\f', 'v': '\v', '0': 0, 'b': '\b'}

// stringProperties are the Unicode properties of strings only the v flag
// has; there are no Go tables for their sequences.
var stringProperties = map[string]bool{"Basic_Emoji": true, "Emoji_Keycap_Sequence": true, "RGI_Emoji_Modifier_Sequence": true,
	"RGI_Emoji_Flag_Sequence": true, "RGI_Emoji_Tag_Sequence": true, "RGI_Emoji_ZWJ_Sequence": true, "RGI_Emoji": true}

func utf16IsHigh(r rune) bool { return r >= 0xD800 && r <= 0xDBFF }

// unescapeClassString reads one alternative of \q{...}.
func unescapeClassString(s string) (string, error) {
	var b strings.Builder
	p := &vParser{src: s}
	for p.i < len(p.src) {
		item, err := p.operand()
		if err != nil {
			return "", err
		}
		if len(item.runes) != 1 || item.runes[0][0] != item.runes[0][1] {
			return "", fmt.Errorf("\\q{...} holds characters and escapes of one character only")
		}
		b.WriteRune(item.runes[0][0])
	}
	return b.String(), nil
}

func complementRunes(s runeSet) runeSet {
	var out runeSet
	next := rune(0)
	for _, r := range normalize(s) {
		if r[0] > next {
			out = append(out, [2]rune{next, r[0] - 1})
		}
		next = r[1] + 1
	}
	if next <= unicode.MaxRune {
		out = append(out, [2]rune{next, unicode.MaxRune})
	}
	return out
}

func intersectRunes(a, b runeSet) runeSet {
	var out runeSet
	for i, j := 0, 0; i < len(a) && j < len(b); {
		lo, hi := max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
		if lo <= hi {
			out = append(out, [2]rune{lo, hi})
		}
		if a[i][1] < b[j][1] {
			i++
		} else {
			j++
		}
	}
	return out
}

func subtractRunes(a, b runeSet) runeSet {
	return intersectRunes(a, complementRunes(b))
}
