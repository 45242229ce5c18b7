package gateway

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The question a person reads when a policy rule asks for approval. It is
// what the person decides on, so it must show what will run, whatever the
// agent (or the server describing its tool) put in front of it:
//
//   - every key of the arguments, at every depth, in sorted order, so that
//     nothing the caller puts first (padding) pushes a key out of sight;
//   - long values cut one by one, each saying how much was cut, never the
//     arguments cut as a whole;
//   - text shown escaped where it is not plainly printable: control
//     characters (C0, C1: a newline would forge a line of the question, an
//     ESC drive a terminal) and the invisible format characters, among them
//     the bidirectional overrides and isolates (U+202A-U+202E,
//     U+2066-U+2069) and marks (U+200E, U+200F) that make a reader's screen
//     show text in another order than it runs;
//   - the tool's title (or the first line of its description) and its
//     annotations, as the server declares them.
//
// Arguments whose keys cannot all be shown within maxQuestionBytes, even
// with every value cut short, are not asked about: the call is denied.

// maxQuestionBytes bounds the question: clients show it in a dialog or on
// a terminal, where a person reads it whole.
const maxQuestionBytes = 4000

// questionCuts are how far values are cut, tried in order until the
// question fits: most of each value first, then less of each so that more
// keys fit. Runes are a string's (or a number's) characters shown, items
// an array's items shown (items are cut only when the ones cut hold no
// keys, so that every key is still shown).
var questionCuts = []struct{ runes, items int }{{200, 20}, {40, 5}, {12, 2}}

// Limits of the parts of the question that do not depend on the arguments.
const (
	maxQuestionKeyRunes   = 80  // a key longer than this is cut, saying so
	maxQuestionTitleRunes = 160 // the tool's title or description line
)

// tooManyKeysError is why a call cannot be asked about.
type tooManyKeysError struct{ keys int }

func (e tooManyKeysError) Error() string {
	return fmt.Sprintf("its arguments cannot all be shown to the person (%d keys do not fit in the %d bytes an approval question may take, even with every value cut short: "+
		"send fewer keys per call, or ask the operator to let this tool run without approval)", e.keys, maxQuestionBytes)
}

// approvalQuestion is the question for a call of t with args (decoded by
// canonicalArgs), or tooManyKeysError when the arguments' keys do not fit.
func approvalQuestion(t *Tool, args any) (string, error) {
	var head strings.Builder
	fmt.Fprintf(&head, "An agent wants to call %s.\n", escapeText(t.ID, false))
	head.WriteString("Tool: ")
	head.WriteString(toolLine(t))
	head.WriteString("\nAnnotations: ")
	head.WriteString(annotationLine(t))
	head.WriteString("\n")
	const tail = "Allow it?"
	for _, cut := range questionCuts {
		w := &argsWriter{runes: cut.runes, items: cut.items}
		w.arguments(args)
		if head.Len()+w.b.Len()+len(tail) <= maxQuestionBytes {
			return head.String() + w.b.String() + tail, nil
		}
	}
	return "", tooManyKeysError{keys: countKeys(args)}
}

// toolLine is the tool's title, or the first line of its description,
// escaped and cut, in quotes: the server's words, not the gateway's.
func toolLine(t *Tool) string {
	line := strings.TrimSpace(t.Title)
	if line == "" {
		for _, l := range strings.Split(t.Description, "\n") {
			if l = strings.TrimSpace(l); l != "" {
				line = l
				break
			}
		}
	}
	if line == "" {
		return "(it has no title or description)"
	}
	shown, cut := cutRunes(line, maxQuestionTitleRunes)
	return `"` + escapeText(shown, true) + `"` + cutNote(cut, "characters")
}

// annotationLine is the four hints the policy matches on, each as the
// server declares it or, when it does not, MCP's default (which the
// policy applies too: toolHints).
func annotationLine(t *Tool) string {
	declared := map[string]any{}
	if len(t.Annotations) > 0 {
		_ = json.Unmarshal(t.Annotations, &declared)
	}
	hints := toolHints(t)
	var parts []string
	defaulted := false
	for _, h := range []string{"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"} {
		part := h + " " + strconv.FormatBool(hints[h])
		if _, ok := declared[h].(bool); !ok && !(h == "destructiveHint" && hints["readOnlyHint"]) {
			part += "*"
			defaulted = true
		}
		parts = append(parts, part)
	}
	line := strings.Join(parts, ", ")
	if defaulted {
		line += " (* not declared: MCP's default)"
	}
	return line
}

// argsWriter writes the arguments as indented lines, one key per line. It
// stops writing once the question cannot fit anyway (arguments may be
// megabytes).
type argsWriter struct {
	b            strings.Builder
	runes, items int
}

func (w *argsWriter) full() bool { return w.b.Len() > maxQuestionBytes }

func (w *argsWriter) arguments(args any) {
	obj, ok := args.(map[string]any)
	switch {
	case ok && len(obj) == 0:
		w.b.WriteString("Arguments: none.\n")
	case ok:
		fmt.Fprintf(&w.b, "Arguments (every key, in sorted order):\n")
		w.members("  ", obj)
	default: // a schema may allow arguments that are not an object
		w.b.WriteString("Arguments:")
		w.value("  ", args)
	}
}

// members writes an object's keys in sorted order (byte order, as Go sorts
// strings: the same for every caller whatever order it sent).
func (w *argsWriter) members(indent string, obj map[string]any) {
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if w.full() {
			return
		}
		w.b.WriteString(indent)
		w.b.WriteString(questionKey(k))
		w.b.WriteString(":")
		w.value(indent+"  ", obj[k])
	}
}

// value writes what follows a key or an item's dash: a scalar on the same
// line, an object's or array's size on it and its members below.
func (w *argsWriter) value(indent string, v any) {
	switch v := v.(type) {
	case map[string]any:
		if len(v) == 0 {
			w.b.WriteString(" {}\n")
			return
		}
		fmt.Fprintf(&w.b, " (%s)\n", plural(len(v), "key"))
		w.members(indent, v)
	case []any:
		if len(v) == 0 {
			w.b.WriteString(" []\n")
			return
		}
		shown := v
		if len(v) > w.items && !anyKeys(v[w.items:]) {
			shown = v[:w.items]
		}
		if scalars(v) { // on one line: [1, "two", null]
			w.b.WriteString(" [")
			for i, item := range shown {
				if i > 0 {
					w.b.WriteString(",")
				}
				w.scalar(item)
			}
			w.b.WriteString(" ]")
			if n := len(v) - len(shown); n > 0 {
				fmt.Fprintf(&w.b, "… (%d of %s cut)", n, plural(len(v), "item"))
			}
			w.b.WriteString("\n")
			return
		}
		fmt.Fprintf(&w.b, " (%s)\n", plural(len(v), "item"))
		for _, item := range shown {
			if w.full() {
				return
			}
			w.b.WriteString(indent)
			w.b.WriteString("-")
			w.value(indent+"  ", item)
		}
		if n := len(v) - len(shown); n > 0 {
			fmt.Fprintf(&w.b, "%s… (%d of %s cut)\n", indent, n, plural(len(v), "item"))
		}
	default:
		w.scalar(v)
		w.b.WriteString("\n")
	}
}

// scalar writes a string, number, boolean or null after a space.
func (w *argsWriter) scalar(v any) {
	switch v := v.(type) {
	case string:
		shown, cut := cutRunes(v, w.runes)
		w.b.WriteString(` "`)
		w.b.WriteString(escapeText(shown, true))
		w.b.WriteString(`"`)
		w.b.WriteString(cutNote(cut, "characters"))
	case json.Number:
		shown, cut := cutRunes(string(v), w.runes)
		w.b.WriteString(" ")
		w.b.WriteString(escapeText(shown, false))
		w.b.WriteString(cutNote(cut, "digits"))
	case nil:
		w.b.WriteString(" null")
	default: // bool; float64 from a decoder without UseNumber
		shown, cut := cutRunes(fmt.Sprint(v), w.runes)
		w.b.WriteString(" ")
		w.b.WriteString(escapeText(shown, false))
		w.b.WriteString(cutNote(cut, "characters"))
	}
}

// plainKey is a key shown as it is; any other is quoted and escaped, so a
// key can never pass for the end of a line and the start of another.
var plainKey = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]*$`)

func questionKey(k string) string {
	shown, cut := cutRunes(k, maxQuestionKeyRunes)
	if cut == 0 && plainKey.MatchString(k) {
		return k
	}
	return `"` + escapeText(shown, true) + `"` + cutNote(cut, "characters")
}

// cutRunes is s's first n runes and how many runes were cut.
func cutRunes(s string, n int) (string, int) {
	if len(s) <= n { // n bytes hold at most n runes
		return s, 0
	}
	i, count := 0, 0
	for i < len(s) && count < n {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		count++
	}
	return s[:i], utf8.RuneCountInString(s[i:])
}

// cutNote says how much of a value was cut ("" when nothing was).
func cutNote(cut int, unit string) string {
	if cut == 0 {
		return ""
	}
	return fmt.Sprintf("… (%d more %s cut)", cut, unit)
}

// escapeText writes s with every character that is not plainly printable
// escaped: \n, \r, \t, and \uXXXX (\UXXXXXXXX beyond the BMP) for control
// and format characters, unassigned code points, and spaces other than
// U+0020 (which all look alike or like nothing). Inside quotes (quoted),
// " and \ are escaped too, so the quotes shown are the value's bounds.
func escapeText(s string, quoted bool) string {
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"):
			fmt.Fprintf(&b, `\x%02x`, s[i]) // not UTF-8 (canonicalArgs refuses it; a Title need not be)
		case quoted && (r == '"' || r == '\\'):
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == ' ' || unicode.IsPrint(r): // IsPrint: no Cc, Cf, Co, Cs, unassigned, nor spaces but ' '
			b.WriteRune(r)
		case r <= 0xFFFF:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			fmt.Fprintf(&b, `\U%08X`, r)
		}
	}
	return b.String()
}

// scalars reports whether no item is an object or an array.
func scalars(vs []any) bool {
	for _, v := range vs {
		switch v.(type) {
		case map[string]any, []any:
			return false
		}
	}
	return true
}

// anyKeys reports whether any of the values is, or holds, an object with
// keys: array items that may not be cut without hiding a key.
func anyKeys(vs []any) bool {
	for _, v := range vs {
		if countKeys(v) > 0 {
			return true
		}
	}
	return false
}

// countKeys is how many object keys v holds, at every depth.
func countKeys(v any) int {
	n := 0
	switch v := v.(type) {
	case map[string]any:
		n += len(v)
		for _, m := range v {
			n += countKeys(m)
		}
	case []any:
		for _, item := range v {
			n += countKeys(item)
		}
	}
	return n
}

func plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return strconv.Itoa(n) + " " + unit + "s"
}
