package runtime

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// goja writes some TypeErrors with the offending value's whole text in the
// message ("Value is not an object: " and then the value, which can be a
// token a tool returned, or megabytes), and names no operation ("Value is
// not an object" is what `"a" in s`, `s()`, `x instanceof "y"` and
// Reflect.ownKeys("s") all say). engineTypeErrors rewrites them, for an
// uncaught error and an unhandled rejection, into a TypeError that says
// which operation failed and shows the value cut short. A snippet that
// catches the error and reads e.message still gets goja's text: the message
// is goja's, made inside it.
var engineTypeErrors = []struct {
	re *regexp.Regexp
	// say writes the message from the match (m[1] is the value or the
	// property) and the native function that raised it ("" when an operator
	// did).
	say func(m []string, native string) string
}{
	{regexp.MustCompile(`^Value is not an object: (?s:(.*))$`), func(m []string, native string) string {
		if native != "" {
			return fmt.Sprintf("%s() needs an object (or a function) where it got %s", native, cutValue(m[1]))
		}
		return "a value that is not an object was used as one (the right side of `in` or `instanceof`, or a call of something that is not a function): " + cutValue(m[1])
	}},
	{regexp.MustCompile(`^Not a function: (?s:(.*))$`), func(m []string, _ string) string {
		return "called something that is not a function: " + cutValue(m[1])
	}},
	{regexp.MustCompile(`^Expecting a function in instanceof check, but got (?s:(.*))$`), func(m []string, _ string) string {
		return "the right side of `instanceof` must be a class or function, not " + cutValue(m[1])
	}},
	{regexp.MustCompile(`^Property 'toLocaleString' of object (?s:(.*)) is not a function$`), func(m []string, native string) string {
		return withNative(native, "an element has no toLocaleString function: "+cutValue(m[1]))
	}},
	{regexp.MustCompile(`^(?s:(.*)) is not a function$`), func(m []string, native string) string {
		return withNative(native, "a callback must be a function, not "+cutValue(m[1]))
	}},
	{regexp.MustCompile(`^Object prototype may only be an Object or null: (?s:(.*))$`), func(m []string, native string) string {
		return withNative(native, "a prototype must be an object or null, not "+cutValue(m[1]))
	}},
	// goja says "of undefined" for null too, and the property can be a
	// computed key: a value of the snippet's.
	{regexp.MustCompile(`^Cannot read property '(?s:(.*))' of undefined(?: or null)?$`), func(m []string, _ string) string {
		return "Cannot read properties of undefined or null (reading " + cutValue(m[1]) + ")"
	}},
	{regexp.MustCompile(`^Object has no member '(?s:(.*))'$`), func(m []string, _ string) string {
		return "the value has no method " + cutValue(m[1]) + " to call: it is not the type the code expects (log it to see what it is)"
	}},
	// A property's name (a computed key: a value of the snippet's) on a
	// frozen, sealed or non-extensible object.
	{regexp.MustCompile(`^Cannot add property (?s:(.*)), object is not extensible$`), func(m []string, native string) string {
		return withNative(native, "Cannot add property "+cutValue(m[1])+", object is not extensible (frozen, sealed or made so)")
	}},
	{regexp.MustCompile(`^Cannot define property (?s:(.*)), object is not extensible$`), func(m []string, native string) string {
		return withNative(native, "Cannot define property "+cutValue(m[1])+", object is not extensible (frozen, sealed or made so)")
	}},
	{regexp.MustCompile(`^(?s:(.*)) is not a symbol$`), func(m []string, native string) string {
		return withNative(native, "a symbol was needed, not "+cutValue(m[1]))
	}},
	{regexp.MustCompile(`^Property description must be an object: (?s:(.*))$`), func(m []string, native string) string {
		return withNative(native, "a property descriptor must be an object, not "+cutValue(m[1]))
	}},
}

// withNative names the built-in that failed, when one did.
func withNative(native, msg string) string {
	if native == "" {
		return msg
	}
	return native + "(): " + msg
}

// maxValueRunes is how much of a value an engine message keeps.
const maxValueRunes = 24

// cutValue quotes a value's text for a message: at most maxValueRunes
// characters of it, on one line, and how long it was when it was cut.
func cutValue(v string) string {
	if n := utf8.RuneCountInString(v); n > maxValueRunes {
		v = truncateRunes(v, maxValueRunes) + fmt.Sprintf("… (%d characters)", n)
	}
	return "'" + strings.NewReplacer("\n", `\n`, "\r", `\r`, "\t", `\t`).Replace(v) + "'"
}

// truncateRunes keeps the first n runes of s.
func truncateRunes(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

// explainEngineTypeError rewrites goja's own TypeError text (see
// engineTypeErrors); stack is the error's stack as goja wrote it, whose
// first frame is "at name (native)" when a built-in raised it.
func explainEngineTypeError(message, stack string) string {
	for _, t := range engineTypeErrors {
		if m := t.re.FindStringSubmatch(message); m != nil {
			return t.say(m, nativeFrame(stack))
		}
	}
	return message
}

// nativeFrame is the built-in at the top of a goja stack ("ownKeys" of
// "\tat ownKeys (native)"), or "".
func nativeFrame(stack string) string {
	for _, line := range strings.Split(stack, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "at ") {
			continue
		}
		if name, ok := strings.CutSuffix(strings.TrimPrefix(line, "at "), " (native)"); ok {
			return name
		}
		return ""
	}
	return ""
}
