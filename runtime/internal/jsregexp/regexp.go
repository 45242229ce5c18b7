// Package jsregexp makes goja's regular expressions match what JavaScript
// means by Unicode property escapes (\p{L}, \p{Script=Greek}) and the v flag
// (set operations in classes): goja silently mis-matches the first and
// refuses the second, so both are rewritten, in Go, into explicit ranges of
// the u-flag patterns goja matches correctly. Install wraps the RegExp
// constructor for the patterns a snippet builds; ExpandUnicodeProperties is
// the same rewrite for the regexp literals the runtime compiles.
package jsregexp

import (
	"fmt"
	"sort"
	"strings"
	"unicode"

	"github.com/dop251/goja"

	"github.com/sandboxrt/sandbox/runtime/internal/jsenv"
	"github.com/sandboxrt/sandbox/runtime/internal/lru"
)

// Install wraps the RegExp constructor so that \p{...} and
// \P{...} in a u-flag pattern are rewritten into explicit character ranges
// from Go's Unicode tables. esbuild turns such regexp literals into
// `new RegExp(...)` calls (unicode property escapes are marked unsupported),
// so literals and constructed patterns both come through here. A property Go
// has no table for is a SyntaxError, never a silent mismatch.
//
// Install also takes re.compile away (see below), and answers instanceof
// RegExp for the proxy it puts in RegExp's place.
func Install(env *jsenv.Env) error {
	vm := env.VM
	g := vm.GlobalObject()
	orig := g.Get("RegExp").ToObject(vm)
	construct, _ := goja.AssertConstructor(orig)
	syntaxError := g.Get("SyntaxError").ToObject(vm) // taken before user code runs
	rewrite := func(args []goja.Value) []goja.Value {
		if len(args) < 2 || goja.IsUndefined(args[1]) {
			return args
		}
		flags := args[1].String()
		if !strings.ContainsAny(flags, "uv") {
			return args
		}
		src := args[0]
		if _, isObj := src.(*goja.Object); isObj && src.ToObject(vm).ClassName() == "RegExp" {
			src = src.ToObject(vm).Get("source")
		}
		pattern := src.String()
		if strings.Contains(flags, "v") {
			if strings.Contains(flags, "u") {
				se, _ := vm.New(syntaxError, vm.ToValue("Invalid flags supplied to RegExp constructor '"+flags+"'"))
				panic(se)
			}
			out, err := translateUnicodeSets(pattern)
			if err != nil {
				se, _ := vm.New(syntaxError, vm.ToValue(strings.TrimPrefix(err.Error(), "SyntaxError: ")))
				panic(se)
			}
			pattern, flags = out, strings.Replace(flags, "v", "u", 1)
			args = append([]goja.Value{vm.ToValue(pattern), vm.ToValue(flags)}, args[2:]...)
		}
		if !strings.Contains(pattern, `\p{`) && !strings.Contains(pattern, `\P{`) {
			return args
		}
		out, err := ExpandUnicodeProperties(pattern)
		if err != nil {
			se, _ := vm.New(syntaxError, vm.ToValue(strings.TrimPrefix(err.Error(), "SyntaxError: ")))
			panic(se)
		}
		return append([]goja.Value{vm.ToValue(out)}, args[1:]...)
	}
	// A v regexp runs as its u rewrite, and says what it was written as.
	marked := func(obj *goja.Object, args []goja.Value) *goja.Object {
		if len(args) < 2 || goja.IsUndefined(args[1]) || !strings.Contains(args[1].String(), "v") {
			return obj
		}
		src := args[0]
		if o, isObj := src.(*goja.Object); isObj && o.ClassName() == "RegExp" {
			src = o.Get("source")
		}
		_ = obj.DefineDataProperty("source", vm.ToValue(src.String()), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE)
		_ = obj.DefineDataProperty("flags", vm.ToValue(args[1].String()), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE)
		_ = obj.DefineDataProperty("unicode", vm.ToValue(false), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE)
		_ = obj.DefineDataProperty("unicodeSets", vm.ToValue(true), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE)
		return obj
	}
	// A rewritten regexp (v, or u with \p{...}) is compiled once per run
	// and cloned after: the rewrite is a class of hundreds of ranges that
	// takes goja ~150 µs to compile, and a loop that builds the same RegExp
	// (as esbuild's lowering of a v literal does each time round) would pay
	// it every time, where V8 reuses the literal.
	compiled := map[[2]string]*goja.Object{}
	var self *goja.Object // the proxy, once made
	cachedConstruct := func(args []goja.Value) *goja.Object {
		var key [2]string
		if len(args) >= 2 && !goja.IsUndefined(args[1]) && strings.ContainsAny(args[1].String(), "uv") {
			src := args[0]
			if o, isObj := src.(*goja.Object); isObj && o.ClassName() == "RegExp" {
				src = o.Get("source")
			}
			key = [2]string{src.String(), args[1].String()}
		}
		template, ok := compiled[key]
		if !ok {
			rewritten := rewrite(args)
			obj, err := construct(orig, rewritten...)
			if err != nil {
				panic(err)
			}
			if key[1] == "" || rewritten[0] == args[0] {
				return obj // nothing was rewritten: nothing to save
			}
			template = obj
			if len(compiled) < 256 {
				compiled[key] = template
			}
		}
		clone, err := construct(orig, template) // no flags: goja clones the compiled pattern
		if err != nil {
			panic(err)
		}
		return marked(clone, args)
	}
	proxy := vm.NewProxy(orig, &goja.ProxyTrapConfig{
		Construct: func(target *goja.Object, args []goja.Value, newTarget *goja.Object) *goja.Object {
			if newTarget == nil || newTarget.SameAs(target) || newTarget.SameAs(self) {
				return cachedConstruct(args)
			}
			obj, err := construct(newTarget, rewrite(args)...)
			if err != nil {
				panic(err)
			}
			return marked(obj, args)
		},
		Apply: func(target *goja.Object, this goja.Value, args []goja.Value) goja.Value {
			return cachedConstruct(args)
		},
	})
	// goja's instanceof does not see through a proxy of a constructor; answer
	// it on the target, which the proxy forwards to.
	regexpProto := orig.Get("prototype").ToObject(vm)
	hasInstance := jsenv.NativeFunc(vm, "[Symbol.hasInstance]", func(call goja.FunctionCall) goja.Value {
		obj, ok := call.Argument(0).(*goja.Object)
		return vm.ToValue(ok && jsenv.HasProto(obj, regexpProto))
	})
	if err := orig.DefineDataPropertySymbol(goja.SymHasInstance, hasInstance, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE); err != nil {
		return err
	}
	pv := vm.ToValue(proxy)
	self = pv.(*goja.Object)
	if err := regexpProto.DefineDataProperty("constructor", pv, goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_TRUE); err != nil {
		return err
	}
	// The legacy re.compile(pattern, flags) would recompile without the
	// expansion above: a silent mismatch again. Nobody needs it; it goes.
	if err := regexpProto.Delete("compile"); err != nil {
		return err
	}
	return g.DefineDataProperty("RegExp", pv, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
}

var expandedPatterns = lru.New[string, expansion](256, 4<<20)

type expansion struct {
	out string
	err error
}

// ExpandUnicodeProperties rewrites \p{X} and \P{X} in a u-flag pattern into
// character classes. Results are cached: snippets build the same RegExp in
// loops. The error, for a property Go has no table for, starts
// "SyntaxError: ".
func ExpandUnicodeProperties(pattern string) (string, error) {
	if x, ok := expandedPatterns.Get(pattern); ok {
		return x.out, x.err
	}
	out, err := expandPattern(pattern)
	expandedPatterns.Put(pattern, expansion{out, err}, len(pattern)+len(out))
	return out, err
}

func expandPattern(pattern string) (string, error) {
	var b strings.Builder
	inClass := false
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		switch {
		case c == '\\' && i+2 < len(pattern) && (pattern[i+1] == 'p' || pattern[i+1] == 'P') && pattern[i+2] == '{':
			end := strings.IndexByte(pattern[i:], '}')
			if end < 0 {
				return "", fmt.Errorf("SyntaxError: invalid regular expression /%s/: unterminated \\%c{", pattern, pattern[i+1])
			}
			name := pattern[i+3 : i+end]
			table, err := unicodeTable(name)
			if err != nil {
				return "", fmt.Errorf("SyntaxError: invalid regular expression /%s/: %v", pattern, err)
			}
			negate := pattern[i+1] == 'P'
			if inClass && negate {
				table = complementTable(table)
				negate = false
			}
			ranges := rangesOf(table)
			switch {
			case inClass:
				b.WriteString(ranges)
			case negate:
				b.WriteString("[^" + ranges + "]")
			default:
				b.WriteString("[" + ranges + "]")
			}
			i += end
		case c == '\\' && i+1 < len(pattern):
			b.WriteByte(c)
			b.WriteByte(pattern[i+1])
			i++
		case c == '[' && !inClass:
			inClass = true
			b.WriteByte(c)
		case c == ']' && inClass:
			inClass = false
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

var categoryAliases = map[string]string{
	"Letter": "L", "Cased_Letter": "LC", "Uppercase_Letter": "Lu", "Lowercase_Letter": "Ll", "Titlecase_Letter": "Lt",
	"Modifier_Letter": "Lm", "Other_Letter": "Lo", "Mark": "M", "Combining_Mark": "M", "Nonspacing_Mark": "Mn",
	"Spacing_Mark": "Mc", "Enclosing_Mark": "Me", "Number": "N", "Decimal_Number": "Nd", "digit": "Nd",
	"Letter_Number": "Nl", "Other_Number": "No", "Punctuation": "P", "punct": "P", "Connector_Punctuation": "Pc",
	"Dash_Punctuation": "Pd", "Open_Punctuation": "Ps", "Close_Punctuation": "Pe", "Initial_Punctuation": "Pi",
	"Final_Punctuation": "Pf", "Other_Punctuation": "Po", "Symbol": "S", "Math_Symbol": "Sm", "Currency_Symbol": "Sc",
	"Modifier_Symbol": "Sk", "Other_Symbol": "So", "Separator": "Z", "Space_Separator": "Zs", "Line_Separator": "Zl",
	"Paragraph_Separator": "Zp", "Other": "C", "Control": "Cc", "cntrl": "Cc", "Format": "Cf", "Private_Use": "Co",
	"Surrogate": "Cs",
}

// unicodeTable finds the table for a property name as JavaScript writes it:
// L, Letter, gc=L, General_Category=Letter, Script=Latin, sc=Latin,
// Script_Extensions=Latin (approximated by Script), White_Space, Alphabetic, ...
func unicodeTable(name string) (*unicode.RangeTable, error) {
	key, value, hasValue := strings.Cut(name, "=")
	if hasValue {
		switch key {
		case "General_Category", "gc":
			name = value
		case "Script", "sc", "Script_Extensions", "scx":
			if t, ok := unicode.Scripts[value]; ok {
				return t, nil
			}
			return nil, fmt.Errorf("unknown script %q in \\p{%s}", value, name)
		default:
			return nil, fmt.Errorf("unsupported unicode property %q", name)
		}
	}
	if alias, ok := categoryAliases[name]; ok {
		name = alias
	}
	if name == "LC" {
		return mergeTables(unicode.Lu, unicode.Ll, unicode.Lt), nil
	}
	if t, ok := unicode.Categories[name]; ok {
		return t, nil
	}
	switch name {
	case "Alphabetic", "Alpha":
		return mergeTables(unicode.L, unicode.Nl, unicode.Other_Alphabetic), nil
	case "Any":
		return &unicode.RangeTable{R32: []unicode.Range32{{Lo: 0, Hi: unicode.MaxRune, Stride: 1}}}, nil
	case "ASCII":
		return &unicode.RangeTable{R16: []unicode.Range16{{Lo: 0, Hi: 0x7F, Stride: 1}}}, nil
	case "Uppercase", "Upper":
		return mergeTables(unicode.Lu, unicode.Other_Uppercase), nil
	case "Lowercase", "Lower":
		return mergeTables(unicode.Ll, unicode.Other_Lowercase), nil
	}
	if t, ok := unicode.Properties[name]; ok {
		return t, nil
	}
	if t, ok := unicode.Scripts[name]; ok { // \p{Latin} is not valid JS, but unambiguous
		return t, nil
	}
	return nil, fmt.Errorf("unicode property \\p{%s} is not supported here; use explicit ranges", name)
}

// runeSet is a table flattened into sorted, merged [lo, hi] pairs.
type runeSet [][2]rune

func flatten(t *unicode.RangeTable) runeSet {
	var out runeSet
	add := func(lo, hi, stride rune) {
		if stride == 1 {
			out = append(out, [2]rune{lo, hi})
			return
		}
		for r := lo; r <= hi; r += stride {
			out = append(out, [2]rune{r, r})
		}
	}
	for _, r := range t.R16 {
		add(rune(r.Lo), rune(r.Hi), rune(r.Stride))
	}
	for _, r := range t.R32 {
		add(rune(r.Lo), rune(r.Hi), rune(r.Stride))
	}
	return out
}

func mergeTables(tables ...*unicode.RangeTable) *unicode.RangeTable {
	var all runeSet
	for _, t := range tables {
		all = append(all, flatten(t)...)
	}
	return toTable(normalize(all))
}

func complementTable(t *unicode.RangeTable) *unicode.RangeTable {
	return toTable(complementRunes(flatten(t)))
}

func normalize(s runeSet) runeSet {
	sort.Slice(s, func(i, j int) bool { return s[i][0] < s[j][0] })
	var out runeSet
	for _, r := range s {
		if n := len(out); n > 0 && r[0] <= out[n-1][1]+1 {
			out[n-1][1] = max(out[n-1][1], r[1])
			continue
		}
		out = append(out, r)
	}
	return out
}

func toTable(s runeSet) *unicode.RangeTable {
	t := &unicode.RangeTable{}
	for _, r := range s {
		t.R32 = append(t.R32, unicode.Range32{Lo: uint32(r[0]), Hi: uint32(r[1]), Stride: 1})
	}
	return t
}

// rangesOf writes a table as the inside of a character class, with \u{...}
// escapes (valid under the u flag the pattern already has).
func rangesOf(t *unicode.RangeTable) string {
	return rangesText(normalize(flatten(t)))
}

// rangesText writes sorted, merged ranges as the inside of a character
// class with \u{...} escapes.
func rangesText(set runeSet) string {
	var b strings.Builder
	for _, r := range set {
		fmt.Fprintf(&b, `\u{%X}`, r[0])
		if r[1] != r[0] {
			fmt.Fprintf(&b, `-\u{%X}`, r[1])
		}
	}
	return b.String()
}
