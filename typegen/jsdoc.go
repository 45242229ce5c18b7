package typegen

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Doc comments. Everything that comes from a server (descriptions, defaults,
// patterns, examples) is untrusted text placed inside /** */: it must never
// end the comment early, and it should stay compact because the agent pays
// for every character.

// defaultMaxDoc bounds one doc text. The longest description in the 341-tool
// corpus is 5,231 characters, so every real description is kept whole; a
// hostile megabyte is not.
const defaultMaxDoc = 8192

// maxTagValue bounds one rendered tag value (a default object, an example).
const maxTagValue = 200

// cleanDoc makes server text safe and tidy inside a block comment: line breaks
// normalized, control characters dropped, "*/" broken up, "@ts-" directives
// defused, blank-line runs collapsed, cut to max runes.
func cleanDoc(s string, max int) string {
	if s == "" {
		return ""
	}
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if len(s) <= max && !docNeedsWork(s) {
		return strings.TrimSpace(s)
	}
	var b strings.Builder
	b.Grow(len(s))
	runes := 0
	for i, r := range s {
		if runes >= max {
			b.WriteString("…")
			break
		}
		runes++
		switch {
		case r == '\r':
			if i+1 < len(s) && s[i+1] == '\n' {
				continue
			}
			b.WriteByte('\n')
		case r == '\n' || r == '\u2028' || r == '\u2029':
			b.WriteByte('\n')
		case r == '\t':
			b.WriteByte(' ')
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			// control characters: dropped
		case r == '/' && i > 0 && s[i-1] == '*':
			b.WriteString(`\/`)
		case r == '@' && strings.HasPrefix(s[i:], "@ts-"):
			b.WriteString(`@\`)
		default:
			b.WriteRune(r)
		}
	}
	// Trim each line's trailing space and collapse runs of blank lines.
	lines := strings.Split(b.String(), "\n")
	out := lines[:0]
	blank := 0
	for _, l := range lines {
		l = strings.TrimRight(l, " ")
		if l == "" {
			blank++
			if blank > 1 {
				continue
			}
		} else {
			blank = 0
		}
		out = append(out, l)
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}

// docNeedsWork reports whether cleanDoc has anything to change besides
// trimming: most descriptions are one clean line and skip the rewrite.
func docNeedsWork(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\n':
			if i > 0 && s[i-1] == ' ' || strings.HasPrefix(s[i:], "\n\n\n") {
				return true
			}
		case c < 0x20 || c == 0x7f:
			return true
		case c == '*':
			if i+1 < len(s) && s[i+1] == '/' {
				return true
			}
		case c == '@':
			if strings.HasPrefix(s[i:], "@ts-") {
				return true
			}
		case c == 0xc2: // C1 controls U+0080-U+009F
			if i+1 < len(s) && s[i+1] >= 0x80 && s[i+1] <= 0x9f {
				return true
			}
		case c == 0xe2: // U+2028, U+2029
			if i+2 < len(s) && s[i+1] == 0x80 && (s[i+2] == 0xa8 || s[i+2] == 0xa9) {
				return true
			}
		}
	}
	return false
}

// docInfo is what a schema (or a tool) says about itself in prose and tags.
type docInfo struct {
	text string   // cleaned description, may span lines
	tags []string // "@default 5", "@integer", ...
}

func (d docInfo) empty() bool { return d.text == "" && len(d.tags) == 0 }

// writeBlock writes d as a JSDoc block at the given indentation, on one line
// when the description is one line.
func (d docInfo) writeBlock(b *strings.Builder, indent string) {
	if d.empty() {
		return
	}
	tags := strings.Join(d.tags, " ")
	if !strings.Contains(d.text, "\n") {
		b.WriteString(indent)
		b.WriteString("/** ")
		b.WriteString(d.text)
		if d.text != "" && tags != "" {
			b.WriteByte(' ')
		}
		b.WriteString(tags)
		b.WriteString(" */\n")
		return
	}
	// Lines without the conventional leading " * ": JSDoc does not need
	// them, and long markdown descriptions read (and cost) better without.
	b.WriteString(indent)
	b.WriteString("/**\n")
	for _, line := range strings.Split(d.text, "\n") {
		if line != "" {
			b.WriteString(indent)
			b.WriteString(line)
		}
		b.WriteByte('\n')
	}
	if tags != "" {
		b.WriteString(indent)
		b.WriteString(tags)
		b.WriteByte('\n')
	}
	b.WriteString(indent)
	b.WriteString("*/\n")
}

// writeLead writes d in front of a declaration that starts at indent: on the
// declaration's own line when d is one line (saves a line and an indentation
// per property), else as a block above it. It always leaves b ready for the
// declaration itself, indentation included.
func (d docInfo) writeLead(b *strings.Builder, indent string) {
	if d.empty() {
		b.WriteString(indent)
		return
	}
	if strings.Contains(d.text, "\n") {
		d.writeBlock(b, indent)
		b.WriteString(indent)
		return
	}
	b.WriteString(indent)
	b.WriteString("/** ")
	b.WriteString(d.text)
	if d.text != "" && len(d.tags) > 0 {
		b.WriteByte(' ')
	}
	b.WriteString(strings.Join(d.tags, " "))
	b.WriteString(" */ ")
}

// inline renders d as a one-line comment to put in front of a type, or "".
func (d docInfo) inline() string {
	if d.empty() {
		return ""
	}
	text := strings.Join(strings.Fields(d.text), " ")
	if len(d.tags) > 0 {
		if text != "" {
			text += " "
		}
		text += strings.Join(d.tags, " ")
	}
	return "/** " + text + " */ "
}

// schemaDoc collects the documentation keywords of a schema object.
func schemaDoc(s *jsonValue, maxDoc int) docInfo {
	var d docInfo
	if !s.isObject() {
		return d
	}
	for _, m := range s.members {
		v := m.value
		switch m.key {
		case "description":
			if v.kind == jsonString {
				d.text = cleanDoc(v.str, maxDoc)
			}
		case "deprecated":
			if v.kind == jsonBool && v.boolean {
				d.tags = append(d.tags, "@deprecated")
			}
		case "default":
			d.tags = append(d.tags, "@default "+tagValue(v, maxDoc))
		case "examples":
			if v.kind == jsonArray {
				for _, e := range v.items {
					d.tags = append(d.tags, "@example "+tagValue(e, maxDoc))
				}
			}
		case "example": // OpenAPI 3.0 style, common in converted schemas
			d.tags = append(d.tags, "@example "+tagValue(v, maxDoc))
		case "format", "pattern", "contentEncoding", "contentMediaType":
			if v.kind == jsonString {
				d.tags = append(d.tags, "@"+m.key+" "+cleanTag(v.str, maxDoc))
			}
		case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
			"minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties":
			if v.kind == jsonNumber {
				d.tags = append(d.tags, "@"+m.key+" "+v.str)
			} else if v.kind == jsonBool && v.boolean && (m.key == "exclusiveMinimum" || m.key == "exclusiveMaximum") {
				d.tags = append(d.tags, "@"+m.key) // draft-04: the bound itself is excluded
			}
		case "uniqueItems":
			if v.kind == jsonBool && v.boolean {
				d.tags = append(d.tags, "@uniqueItems")
			}
		case "type":
			if hasTypeName(v, "integer") {
				d.tags = append(d.tags, "@integer")
			}
		case "not":
			d.tags = append(d.tags, "@not "+tagValue(v, maxDoc))
		case "if":
			d.tags = append(d.tags, "@remarks further constrained by if/then/else in the schema")
		case "dependentRequired", "dependentSchemas", "dependencies":
			d.tags = append(d.tags, "@remarks "+m.key+" in the schema adds constraints")
		}
	}
	if d.text == "" {
		if t := s.get("title"); t != nil && t.kind == jsonString {
			d.text = cleanDoc(t.str, maxDoc)
		}
	}
	d.tags = dropRedundantTags(d.text, d.tags)
	return d
}

// maxSafeInteger is the bound zod and friends add to every .int(); as a tag
// it only adds noise.
const maxSafeInteger = "9007199254740991"

// dropRedundantTags removes tags that repeat what the description already
// says ("Results per page (min 1, max 100)" needs no "@minimum 1 @maximum
// 100"; "Defaults to open" no "@default \"open\"") and the bounds that only
// restate JavaScript's safe-integer range. The type itself stays exact; tags
// are hints, and every character is paid for by the agent.
func dropRedundantTags(text string, tags []string) []string {
	out := tags[:0]
	for _, tag := range tags {
		name, value, _ := strings.Cut(tag, " ")
		switch name {
		case "@minimum", "@maximum", "@exclusiveMinimum", "@exclusiveMaximum", "@minLength", "@maxLength", "@minItems", "@maxItems":
			if strings.TrimPrefix(value, "-") == maxSafeInteger || mentions(text, value) {
				continue
			}
		case "@default":
			if strings.Contains(strings.ToLower(text), "default") && mentions(text, strings.Trim(value, `"`)) && value != `""` {
				continue
			}
		}
		out = append(out, tag)
	}
	return out
}

// mentions reports whether text contains token as a whole word.
func mentions(text, token string) bool {
	if token == "" {
		return false
	}
	for i := 0; ; {
		j := strings.Index(text[i:], token)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(token)
		if (start == 0 || !isWordByte(text[start-1])) && (end == len(text) || !isWordByte(text[end])) {
			return true
		}
		i = start + 1
	}
}

func isWordByte(c byte) bool { return isAlnum(c) || c == '_' }

func hasTypeName(v *jsonValue, name string) bool {
	switch v.kind {
	case jsonString:
		return v.str == name
	case jsonArray:
		for _, it := range v.items {
			if it.kind == jsonString && it.str == name {
				return true
			}
		}
	}
	return false
}

// tagValue renders a JSON value compactly for a tag, cut to maxTagValue.
func tagValue(v *jsonValue, maxDoc int) string {
	var b strings.Builder
	writeCompactJSON(&b, v, maxTagValue+1)
	s := b.String()
	if len(s) > maxTagValue {
		s = s[:maxTagValue]
		for !utf8.ValidString(s) {
			s = s[:len(s)-1]
		}
		s += "…"
	}
	return cleanTag(s, maxDoc)
}

func cleanTag(s string, maxDoc int) string {
	return strings.Join(strings.Fields(cleanDoc(s, min(maxDoc, maxTagValue))), " ")
}

// writeCompactJSON writes v as compact JSON, stopping once b holds limit bytes.
func writeCompactJSON(b *strings.Builder, v *jsonValue, limit int) {
	if b.Len() > limit {
		return
	}
	switch v.kind {
	case jsonNull:
		b.WriteString("null")
	case jsonBool:
		b.WriteString(strconv.FormatBool(v.boolean))
	case jsonNumber:
		b.WriteString(v.str)
	case jsonString:
		b.WriteString(quoteString(v.str))
	case jsonArray:
		b.WriteByte('[')
		for i, it := range v.items {
			if i > 0 {
				b.WriteByte(',')
			}
			writeCompactJSON(b, it, limit)
			if b.Len() > limit {
				return
			}
		}
		b.WriteByte(']')
	case jsonObject:
		b.WriteByte('{')
		for i, m := range v.members {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(quoteString(m.key))
			b.WriteByte(':')
			writeCompactJSON(b, m.value, limit)
			if b.Len() > limit {
				return
			}
		}
		b.WriteByte('}')
	}
}

// quoteString renders s as a double-quoted string literal valid in both JSON
// and TypeScript (U+2028/2029 escaped, no HTML escaping).
func quoteString(s string) string {
	simple := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
			simple = false
			break
		}
	}
	if simple {
		return `"` + s + `"`
	}
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\u2028':
			b.WriteString(`\u2028`)
		case '\u2029':
			b.WriteString(`\u2029`)
		default:
			if r < 0x20 {
				b.WriteString(`\u00`)
				b.WriteByte("0123456789abcdef"[r>>4])
				b.WriteByte("0123456789abcdef"[r&0xf])
				continue
			}
			b.WriteRune(r) // invalid UTF-8 became U+FFFD here
		}
	}
	b.WriteByte('"')
	return b.String()
}
