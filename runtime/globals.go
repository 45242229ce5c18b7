package runtime

import (
	"github.com/sandboxrt/sandbox/runtime/internal/abort"
	"github.com/sandboxrt/sandbox/runtime/internal/intl"
	"github.com/sandboxrt/sandbox/runtime/internal/jsenv"
	"github.com/sandboxrt/sandbox/runtime/internal/jsregexp"
	"github.com/sandboxrt/sandbox/runtime/internal/lang"
	"github.com/sandboxrt/sandbox/runtime/internal/web"
	"github.com/sandboxrt/sandbox/runtime/internal/weburl"
)

// Global is a name the runtime adds to a snippet's global scope beyond the
// language's own built-ins (and beyond what a run binds: the server
// namespaces, sandbox, input, MCPToolError).
type Global struct {
	// Name is the global as a snippet writes it: "URL".
	Name string
	// Family is the group of built-ins installed with it: "url".
	Family string
	// InLib is set when TypeScript's own lib (typegen.GlobalsLib) declares
	// the global, so typegen.Globals does not: Intl, Iterator, WeakRef.
	InLib bool
	// Refusal is set when the global is there only to refuse with a message
	// that says what to use instead: fetch, as there is no network.
	// typegen.Globals leaves it out, so tsc reports "Cannot find name".
	Refusal bool
}

// Globals lists the globals a snippet can use beyond the language, family
// by family in the order they are installed. The list is the runtime's one
// registry of them (families, below): typegen.Globals and execute_code's
// description are tested against it.
func Globals() []Global {
	var out []Global
	for _, f := range families {
		for _, name := range f.globals {
			out = append(out, Global{Name: name, Family: f.name, InLib: f.inLib, Refusal: f.refusal})
		}
	}
	return out
}

// family is a group of built-ins installed together: the globals it
// defines, or members it adds to the language's built-ins
// (Object.groupBy), or both.
type family struct {
	name    string
	globals []string // the globals it defines
	// also is more text that needs the family: the members it adds, or code
	// that reaches it without its name (a generator has iterator helpers).
	also []string
	// everyVM families are installed with every VM, before the run is known
	// (setupBase, while a worker waits); the others when the snippet's code
	// names them (installNamedFamilies). The console is every VM's, its
	// methods only a run's that names it (installConsole).
	everyVM        bool
	inLib, refusal bool // see Global
	install        func(*execution) error
}

// families is what the runtime adds to goja's VM. A run pays only for what
// its code names: a family that is not everyVM is installed when the
// snippet's text (after esbuild, whose helpers name what they use) mentions
// one of its globals or its also (jsenv.Mentions: typeof checks and
// globalThis["URL"] included), and is absent otherwise. Building all of them
// for every run cost ~100 µs (~60 function objects), and with the Symbol,
// Map and RegExp constructors they make goja build, about half of a trivial
// run's VM, which a `return 6*7` never needs; the one miss is a name
// assembled at run time from pieces, which agent code does not do.
//
// The order is the install order: the language's gaps before the web
// globals (structuredClone takes the RegExp the snippet will see,
// Array.fromAsync the Symbol.asyncIterator), Intl before collation (which
// adds Intl.Collator).
var families = []family{
	{name: "console", globals: []string{"console"}, everyVM: true, install: (*execution).installConsole},
	{name: "timers", globals: []string{"setTimeout", "clearTimeout", "setInterval", "clearInterval", "queueMicrotask"},
		everyVM: true, install: (*execution).installTimers},
	{name: "base64", globals: []string{"atob", "btoa"}, everyVM: true, install: withEnv(web.InstallBase64)},

	{name: "symbols", also: []string{"Symbol", "fromAsync"}, install: withEnv(lang.InstallWellKnownSymbols)},
	{name: "groupBy", also: []string{"groupBy"}, install: withEnv(lang.InstallGroupBy)},
	{name: "withResolvers", also: []string{"withResolvers"}, install: withEnv(lang.InstallWithResolvers)},
	{name: "RegExp", also: []string{"RegExp", "compile"}, install: withEnv(jsregexp.Install)}, // it also takes re.compile away
	{name: "crypto", globals: []string{"crypto"}, install: withEnv(web.InstallCrypto)},
	{name: "performance", globals: []string{"performance"}, install: withEnv(web.InstallPerformance)},
	{name: "encoding", globals: []string{"TextEncoder", "TextDecoder"}, install: withEnv(web.InstallTextCoding)},
	{name: "structuredClone", globals: []string{"structuredClone"}, install: withEnv(web.InstallStructuredClone)},
	{name: "fetch", globals: []string{"fetch"}, refusal: true, install: withEnv(web.InstallFetch)},
	{name: "url", globals: []string{"URL", "URLSearchParams"}, install: withEnv(weburl.Install)},
	{name: "abort", globals: []string{"AbortController", "AbortSignal"}, install: withEnv(abort.Install)},
	{name: "weakref", globals: []string{"WeakRef", "FinalizationRegistry"}, inLib: true, install: withEnv(lang.InstallWeakRef)},
	{name: "Intl", globals: []string{"Intl"}, inLib: true, install: withEnv(intl.Install)},
	{name: "iterator helpers", globals: []string{"Iterator"}, inLib: true, install: withEnv(lang.InstallIteratorHelpers),
		also: []string{"function*", ".values()", ".keys()", ".entries()", "matchAll", "Symbol.iterator", ".toArray(", ".take(", ".drop("}},
	{name: "fromAsync", also: []string{"fromAsync"}, install: withEnv(lang.InstallFromAsync)},
	{name: "well-formed strings", also: []string{"isWellFormed", "toWellFormed"}, install: withEnv(lang.InstallWellFormed)},
	{name: "collation", also: []string{"localeCompare", "Collator"}, install: withEnv(intl.InstallCollation)},
	{name: "toLocaleString", also: []string{"toLocaleString", "toLocaleDateString", "toLocaleTimeString"},
		install: withEnv(intl.InstallToLocaleString)},
}

// withEnv is a family's install as the run calls it.
func withEnv(install func(*jsenv.Env) error) func(*execution) error {
	return func(e *execution) error { return install(e.env) }
}

// installEveryVMFamilies installs the families every VM has.
func (e *execution) installEveryVMFamilies() error {
	for _, f := range families {
		if f.everyVM {
			if err := f.install(e); err != nil {
				return err
			}
		}
	}
	return nil
}

// familyNames is every name the families are installed by, read from a
// snippet's code in one pass (jsenv.Vocabulary).
var familyNames = func() *jsenv.Vocabulary {
	var lists [][]string
	for _, f := range families {
		lists = append(lists, f.globals, f.also)
	}
	return jsenv.NewVocabulary(lists...)
}()

// installNamedFamilies installs, in order, each family that is not everyVM
// and that the code mentions.
func (e *execution) installNamedFamilies(code jsenv.Mentioned) error {
	for _, f := range families {
		if !f.everyVM && (code.Any(f.globals) || code.Any(f.also)) {
			if err := e.env.CaptureArray(); err != nil {
				return err
			}
			if err := f.install(e); err != nil {
				return err
			}
		}
	}
	return nil
}
