// Package bindings puts MCP tools into a goja VM as callable stubs:
// `await github.listCommits({...})`. A stub sends a message (its Target + JSON
// arguments) to the host through the runtime and returns a promise; no source is
// generated and nothing is evaluated. Tool failures are MCPToolError instances
// that snippets can catch; what an MCPToolError carries, and the codes the
// runtime adds, are documented once, on runtime.ToolError.
//
// The stubs are built from data (a list of Tool), so the same code runs inside
// a worker subprocess: the parent sends the list, the worker installs it.
// Names come from typegen.AssignNames, the one place tool names are made, so the
// .d.ts an agent reads and the functions it can call always agree.
//
// The package is internal to the runtime: only the runtime handles goja values.
// Callers bind tools with runtime.Request.Tools.
package bindings

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/dop251/goja"

	"github.com/sandboxrt/sandbox/errcode"
	"github.com/sandboxrt/sandbox/runtime/internal/jsonvm"
)

// Tool is one tool bound into the VM, callable as Namespace.Function(args):
// runtime.Tool, which the runtime converts to this type.
//
// A Tool with only a Namespace opens it (runtime.Tool says what that means):
// its unbound members call Invoke with a KindMember Target.
type Tool struct {
	// ID is the gateway's tool id, "server:tool".
	ID string
	// Namespace and Function are the TypeScript names (typegen.AssignNames).
	Namespace string
	Function  string
}

// Kind is what a stub calls.
type Kind uint8

// The kinds of Target.
const (
	// KindTool: a tool bound to the run, by its id.
	KindTool Kind = iota + 1
	// KindMember: a member of an open namespace that has no bound tool, as
	// the code wrote it; the host resolves it.
	KindMember
	// KindService: a method of the sandbox global (services.go).
	KindService
)

// Target is what one stub calls. It is fixed when the stub is made, since
// the stub knows then what it is (a bound tool's function, a member read
// from an open namespace, a method of the sandbox global), so a call
// carries it and nothing downstream parses a name to find out. It is also
// what a worker's call frame carries to the parent, which checks it
// against the run before anything else reads it.
type Target struct {
	Kind Kind `json:"k"`
	// ID is a bound tool's id, "server:tool" (KindTool).
	ID string `json:"id,omitempty"`
	// Namespace and Function are a bound tool's or a member's TypeScript
	// names (KindTool, KindMember), or a service's family and method
	// (KindService: "store", "get").
	Namespace string `json:"ns,omitempty"`
	Function  string `json:"fn,omitempty"`
}

// String is the target as call traces, MCPToolError.tool and messages
// name it: "server:tool", "namespace.function", "sandbox:store.get". It is
// the one place these are spelt; a kind it does not know is "".
func (t Target) String() string {
	switch t.Kind {
	case KindTool:
		return t.ID
	case KindMember:
		return t.Namespace + "." + t.Function
	case KindService:
		return "sandbox:" + t.Namespace + "." + t.Function
	}
	return ""
}

// Written is the call as the snippet writes it, for messages about its
// arguments: "namespace.function", "sandbox.store.get".
func (t Target) Written() string {
	if t.Kind == KindService {
		return "sandbox." + t.Namespace + "." + t.Function
	}
	return t.Namespace + "." + t.Function
}

// Invoke starts a tool call for a stub and returns the promise the stub
// returns. It runs on the VM goroutine; args is the stub's first argument
// (undefined when none was passed). The runtime implements it.
type Invoke func(target Target, args goja.Value) goja.Value

// ErrorInfo is what an MCPToolError carries (runtime.ToolError, plus the tool).
type ErrorInfo struct {
	Tool    string          // "server:tool", or "namespace.function" when not bound
	Code    string          // stable code: VALIDATION_FAILED, UNKNOWN_TOOL, NOT_BOUND, ...
	Message string          // what went wrong and what to do next
	Data    json.RawMessage // optional JSON detail (validation errors, upstream content)
}

// The MCPToolError codes the bindings raise themselves (errcode's table
// says what each means). The runtime exports the first two with the other
// codes it adds.
const (
	// CodeNotBound: a call to a tool that exists in the VM's namespaces by
	// name only: it was not bound to this run.
	CodeNotBound = string(errcode.NotBound)
	// CodeInvalidArguments: a call with arguments that cannot be sent.
	CodeInvalidArguments = string(errcode.InvalidArguments)
	// CodeUnspecified is the code of an MCPToolError a snippet constructs
	// without one: `new MCPToolError("message")`.
	CodeUnspecified = string(errcode.Unspecified)
)

// Installed is the result of Install: the VM's MCPToolError class, to create
// instances of it for failed calls.
type Installed struct {
	vm        *goja.Runtime
	errorCtor *goja.Object
	errorFn   goja.Callable // the VM's own Error constructor, captured before any user code runs
	errProto  *goja.Object
	parse     goja.Callable  // the VM's own JSON.parse
	json      *jsonvm.Parser // builds the values JSON.parse would, without it
	bound     []string       // "namespace.function", sorted, for NOT_BOUND messages
}

// reservedGlobals are global names a namespace must never replace.
var reservedGlobals = map[string]bool{
	"globalThis": true, "console": true, "MCPToolError": true, "setTimeout": true, "clearTimeout": true,
	"setInterval": true, "clearInterval": true, "queueMicrotask": true, "structuredClone": true,
	"Object": true, "Function": true, "Array": true, "Number": true, "String": true, "Boolean": true,
	"Symbol": true, "BigInt": true, "Math": true, "JSON": true, "Date": true, "RegExp": true, "Error": true,
	"TypeError": true, "RangeError": true, "SyntaxError": true, "ReferenceError": true, "EvalError": true,
	"URIError": true, "AggregateError": true, "Promise": true, "Proxy": true, "Reflect": true, "Map": true,
	"Set": true, "WeakMap": true, "WeakSet": true, "ArrayBuffer": true, "DataView": true, "Intl": true,
	"undefined": true, "NaN": true, "Infinity": true, "eval": true, "isNaN": true, "isFinite": true,
	"parseInt": true, "parseFloat": true, "encodeURI": true, "decodeURI": true, "encodeURIComponent": true,
	"decodeURIComponent": true, "escape": true, "unescape": true, "sandbox": true,
}

// Install defines the global MCPToolError class and, for each namespace in
// tools, a frozen global object holding one async function per tool. It must
// run before any user code, on the VM's goroutine.
//
// Reading a function that is not bound from a namespace object gives a function
// that rejects with a NOT_BOUND MCPToolError listing the bound tools, so a
// snippet calling a tool the search did not pick learns what to do; in an
// open namespace, one that calls invoke with a KindMember Target for the
// host to resolve.
func Install(vm *goja.Runtime, tools []Tool, invoke Invoke) (*Installed, error) {
	in, err := Prepare(vm)
	if err != nil {
		return nil, err
	}
	return in, in.Bind(tools, invoke)
}

// Prepare is the part of Install that depends on no run: it defines the
// global MCPToolError class. A worker prepares the next run's VM while it
// waits, and this is part of it.
func Prepare(vm *goja.Runtime) (*Installed, error) {
	in := &Installed{vm: vm}
	if err := in.defineErrorClass(); err != nil {
		return nil, err
	}
	return in, nil
}

// Bind is the rest of Install: the namespaces of tools. It runs once, after
// Prepare and before any user code.
func (in *Installed) Bind(tools []Tool, invoke Invoke) error {
	vm := in.vm
	byNS := map[string][]Tool{}
	open := map[string]bool{}
	seen := map[string]string{}
	for _, t := range tools {
		if t.ID == "" && t.Function == "" {
			// A name the VM already has (a built-in, console, a global the
			// runtime installed) stays what it is: opening is a fallback for
			// names that would otherwise be a ReferenceError.
			if !isIdentifier(t.Namespace) || reservedGlobals[t.Namespace] || vm.GlobalObject().Get(t.Namespace) != nil {
				continue
			}
			open[t.Namespace] = true
			if _, ok := byNS[t.Namespace]; !ok {
				byNS[t.Namespace] = nil
			}
			continue
		}
		if !isIdentifier(t.Namespace) || !isIdentifier(t.Function) {
			return fmt.Errorf("bindings: tool %q has names %q.%q that are not JavaScript identifiers; names must come from typegen.AssignNames", t.ID, t.Namespace, t.Function)
		}
		if reservedGlobals[t.Namespace] {
			return fmt.Errorf("bindings: tool %q: namespace %q would replace a JavaScript global", t.ID, t.Namespace)
		}
		if t.Function == "then" {
			return fmt.Errorf("bindings: tool %q: a function named \"then\" would make its namespace a thenable", t.ID)
		}
		key := t.Namespace + "." + t.Function
		if prev, dup := seen[key]; dup {
			if prev == t.ID {
				continue
			}
			return fmt.Errorf("bindings: tools %q and %q are both named %s", prev, t.ID, key)
		}
		seen[key] = t.ID
		byNS[t.Namespace] = append(byNS[t.Namespace], t)
		in.bound = append(in.bound, key)
	}
	sort.Strings(in.bound)

	freeze, ok := goja.AssertFunction(vm.Get("Object").ToObject(vm).Get("freeze"))
	if !ok {
		return fmt.Errorf("bindings: Object.freeze is missing")
	}
	namespaces := make([]string, 0, len(byNS))
	for ns := range byNS {
		namespaces = append(namespaces, ns)
	}
	sort.Strings(namespaces)
	for _, ns := range namespaces {
		target := vm.NewObject()
		for _, t := range byNS[ns] {
			stub := in.stub(Target{Kind: KindTool, ID: t.ID, Namespace: t.Namespace, Function: t.Function}, invoke)
			if err := target.DefineDataProperty(t.Function, stub, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE); err != nil {
				return err
			}
		}
		if _, err := freeze(goja.Undefined(), target); err != nil {
			return err
		}
		proxy := vm.NewProxy(target, &goja.ProxyTrapConfig{
			Get: func(target *goja.Object, property string, receiver goja.Value) goja.Value {
				if v := target.Get(property); v != nil {
					return v
				}
				if !mayBeToolName(property) {
					return goja.Undefined()
				}
				if open[ns] {
					return in.stub(Target{Kind: KindMember, Namespace: ns, Function: property}, invoke)
				}
				return in.notBoundStub(ns, property)
			},
		})
		if err := vm.GlobalObject().DefineDataProperty(ns, vm.ToValue(proxy), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE); err != nil {
			return fmt.Errorf("bindings: namespace %q: %w", ns, err)
		}
	}
	return nil
}

// stub is the function a snippet calls for one tool.
func (in *Installed) stub(t Target, invoke Invoke) goja.Value {
	fn := in.vm.ToValue(func(call goja.FunctionCall) goja.Value {
		if len(call.Arguments) > 1 {
			return in.rejected(ErrorInfo{Tool: t.String(), Code: CodeInvalidArguments,
				Message: fmt.Sprintf("%s takes one argument, an object of named parameters, e.g. %s({ ... }); got %d arguments",
					t.Written(), t.Written(), len(call.Arguments))})
		}
		return invoke(t, call.Argument(0))
	}).(*goja.Object)
	_ = fn.DefineDataProperty("name", in.vm.ToValue(t.Function), goja.FLAG_FALSE, goja.FLAG_TRUE, goja.FLAG_FALSE)
	return fn
}

func (in *Installed) notBoundStub(ns, name string) goja.Value {
	fn := in.vm.ToValue(func(goja.FunctionCall) goja.Value {
		// Named like an open namespace's member: what the code wrote.
		written := Target{Kind: KindMember, Namespace: ns, Function: name}.String()
		return in.rejected(ErrorInfo{Tool: written, Code: CodeNotBound, Message: in.notBoundMessage(written)})
	}).(*goja.Object)
	_ = fn.DefineDataProperty("name", in.vm.ToValue(name), goja.FLAG_FALSE, goja.FLAG_TRUE, goja.FLAG_FALSE)
	return fn
}

func (in *Installed) notBoundMessage(name string) string {
	const show = 20
	list := in.bound
	more := ""
	if len(list) > show {
		more = fmt.Sprintf(" and %d more", len(list)-show)
		list = list[:show]
	}
	return fmt.Sprintf("%s is not bound to this run. Bound tools: %s%s. Use search_tools to find the tool you need, then name it in your code (or in execute_code's tools list) so it is bound.",
		name, strings.Join(list, ", "), more)
}

// rejected returns a promise rejected with an MCPToolError whose stack is the
// current call site.
func (in *Installed) rejected(info ErrorInfo) goja.Value {
	p, _, reject := in.vm.NewPromise()
	_ = reject(in.NewError(info, ""))
	return in.vm.ToValue(p)
}

// mayBeToolName filters property reads that are not calls of a tool: promise
// resolution reads `then`, serializers read `toJSON`, and so on.
func mayBeToolName(p string) bool {
	switch p {
	case "then", "catch", "finally", "toJSON", "toString", "valueOf", "constructor", "inspect", "asymmetricMatch", "nodeType":
		return false
	}
	return isIdentifier(p) && !strings.HasPrefix(p, "__") && !strings.HasPrefix(p, "$$")
}

func isIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_' || r == '$' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z'):
		case i > 0 && r >= '0' && r <= '9':
		default:
			return false
		}
	}
	return !reservedWords[s]
}

var reservedWords = map[string]bool{
	"break": true, "case": true, "catch": true, "class": true, "const": true, "continue": true, "debugger": true,
	"default": true, "delete": true, "do": true, "else": true, "enum": true, "export": true, "extends": true,
	"false": true, "finally": true, "for": true, "function": true, "if": true, "import": true, "in": true,
	"instanceof": true, "new": true, "null": true, "return": true, "super": true, "switch": true, "this": true,
	"throw": true, "true": true, "try": true, "typeof": true, "var": true, "void": true, "while": true,
	"with": true, "yield": true, "let": true, "static": true, "implements": true, "interface": true,
	"package": true, "private": true, "protected": true, "public": true, "await": true, "arguments": true,
}
