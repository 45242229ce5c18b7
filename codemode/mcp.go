package codemode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/gateway"
	"github.com/sandboxrt/sandbox/gateway/toolspec"
	"github.com/sandboxrt/sandbox/runtime"
	"github.com/sandboxrt/sandbox/typegen"
)

// Code mode's MCP face: the engine's operations (Search, Execute, saved
// scripts) as the MCP tools an agent calls, offered as toolspec.Specs that
// whoever serves MCP installs (sandbox serve: cmd/sandbox, on the
// gateway's front end). This file is the only one that names the tools,
// decodes their arguments or shapes their answers; the rest of the package
// knows nothing of MCP.

// The names of the code-mode tools.
const (
	SearchToolName       = "search_tools"
	ExecuteToolName      = "execute_code"
	SaveScriptToolName   = "save_script"
	DeleteScriptToolName = "delete_script"
)

// ScriptWirePrefix starts the name of a saved script served as a tool of
// its owner's sessions (CallerMCPTools): scripts__weekly_report.
const ScriptWirePrefix = ScriptNamespace + "__"

const searchDescription = `Find the tools for a task and get their TypeScript declarations.

Describe the task in plain words (intent), and give two or three other phrasings of it in intents, in
the words the product's own API would use ("notifications" for an inbox, "issues" for bugs): they are
searched together, each phrasing's best tool kept, which finds far more than one phrasing; a tool you
name (list_projects, demo.listProjects) comes first. You get the servers (their instructions once), the
k most relevant tools (default 5) best first with why, the names of their servers' other tools, and
their .d.ts in the same order: one namespace per server, one async function per tool, with exact input
types and docs (the shared types, ToolResult and MCPToolError, are in execute_code's description;
@approval: each call waits for a person). Then write a TypeScript snippet that calls them and run it
with execute_code. When the note says nothing matched well, search again with other words or within a
server's name.`

const executeDescription = `Run a TypeScript snippet that calls tools; only what it returns comes back to you.

The snippet runs in a sandbox (no network, files, modules or eval) and may use top-level await.
Globals besides the language: console, setTimeout/setInterval, queueMicrotask, URL, URLSearchParams,
TextEncoder, TextDecoder, crypto (randomUUID, getRandomValues, subtle.digest), structuredClone,
performance.now, AbortController, AbortSignal, atob, btoa, iterator helpers, Array.fromAsync,
Intl.NumberFormat, Intl.DateTimeFormat, Intl.PluralRules, Intl.ListFormat, Intl.RelativeTimeFormat,
Intl.Collator (as Node formats them in 14 locales, en-US, en-GB, en-IN, de, fr, es, it, pt-BR, ja,
zh, ko, ru, hi and nl, others by language or en-US; also toLocaleString, localeCompare),
sandbox.store (get, set, delete, keys: JSON values kept between runs, this session's by default, yours
across sessions with {scope: "principal"}), sandbox.results (json, read, lines: a tool result too large to
hand over whole arrives as {handle, bytes, preview, note}; read parts of it, by path, bytes or lines). Not there: fetch (reach outside systems through the
tools), require, process. RegExp takes the v flag.
Each server is a global namespace; call its tools exactly as search_tools declares them:
  const items = await server.toolName({ ...arguments });
Run independent calls together with Promise.all, filter and aggregate in code, and return only the
JSON value you need: return { count: items.length, first: items[0] };
A failed call throws MCPToolError with name, tool, code, message and data; catch it to recover. For
code VALIDATION_FAILED the message lists what is wrong and a valid example call; for UNKNOWN_TOOL, the
closest tools that exist.
{{limits}}
You get back: ok; value (your return) or error (with the line and column in your snippet); logs
(console output); calls (every tool call with its duration and outcome).`

var searchSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "intent": {"type": "string", "description": "The task, in plain words, e.g. \"find the open items and who owns them\"."},
    "intents": {"type": "array", "items": {"type": "string"}, "maxItems": 4, "description": "Two or three other phrasings of the same task, in the product's own API words (\"list tasks by status\", \"search issues assigned to a user\"); searched together with intent, each one's best tool kept."},
    "k": {"type": "integer", "minimum": 1, "maximum": 50, "description": "How many tools to show (default 5)."}
  },
  "required": ["intent"],
  "additionalProperties": false
}`)

var executeSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "code": {"type": "string", "description": "The TypeScript snippet. Use top-level await; return the result."},
    "intent": {"type": "string", "description": "Optional: the task in plain words; the tools a search for it finds are bound too."},
    "tools": {"type": "array", "items": {"type": "string"}, "description": "Optional: more tools to bind, as \"server:tool\" ids or \"server.toolName\"."},
    "context": {"type": "string", "description": "Optional, for requests without a session (protocol 2026-07-28): \"new\", or the \"context\" an earlier result returned. Runs with the same context share sandbox.store's session scope and result handles, as the runs of one session do."},
    ` + limitsSchema() + `
  },
  "required": ["code"],
  "additionalProperties": false
}`)

// executeArgsType is the Go type execute_code's arguments decode into:
// code, intent, tools, and limits with a field per RequestLimits row
// (limitsArgType). Built rather than declared only because of limits; its
// fields are the struct's they always were.
var executeArgsType = reflect.StructOf([]reflect.StructField{
	{Name: "Code", Type: reflect.TypeFor[string](), Tag: `json:"code"`},
	{Name: "Intent", Type: reflect.TypeFor[string](), Tag: `json:"intent"`},
	{Name: "Tools", Type: reflect.TypeFor[[]string](), Tag: `json:"tools"`},
	{Name: "Limits", Type: limitsArgType, Tag: `json:"limits"`},
	{Name: "Context", Type: reflect.TypeFor[string](), Tag: `json:"context"`},
})

// executeArgs are execute_code's arguments, decoded.
type executeArgs struct {
	Code, Intent string
	Tools        []string
	Limits       runtime.Limits
	Context      string // a context handle, "new", or "" (contexts.go)
}

func decodeExecuteArgs(raw json.RawMessage) (executeArgs, error) {
	v := reflect.New(executeArgsType)
	if err := strictDecode(raw, v.Interface()); err != nil {
		return executeArgs{}, err
	}
	in := v.Elem()
	return executeArgs{Code: in.Field(0).String(), Intent: in.Field(1).String(), Tools: in.Field(2).Interface().([]string),
		Limits: requestLimits(in.Field(3)), Context: in.Field(4).String()}, nil
}

// MCPTools are the code-mode tools every session gets: search_tools,
// execute_code, save_script and delete_script. A caller's saved scripts
// are tools of its own sessions too: CallerMCPTools.
func (e *Engine) MCPTools() []toolspec.Spec {
	return []toolspec.Spec{
		{Name: SearchToolName, Description: searchDescription, InputSchema: searchSchema, MaxArgumentBytes: MaxSearchArgumentBytes, Handler: e.handleSearch},
		{Name: ExecuteToolName, Description: executeDescriptionFor(e), InputSchema: executeSchema, MaxArgumentBytes: MaxExecuteArgumentBytes, Handler: e.handleExecute},
		{Name: SaveScriptToolName, Description: saveScriptDescription, InputSchema: saveScriptSchema, MaxArgumentBytes: MaxExecuteArgumentBytes, Handler: e.handleSaveScript},
		{Name: DeleteScriptToolName, Description: deleteScriptDescription, InputSchema: deleteScriptSchema, Handler: e.handleDeleteScript},
	}
}

// CallerMCPTools are a caller's saved scripts as tools of its sessions
// (scripts__<name>), each answering with execute_code's report. They change
// when scripts are saved or deleted: OnScriptsChanged says whose.
func (e *Engine) CallerMCPTools(caller auth.Caller) []toolspec.Spec {
	var out []toolspec.Spec
	for _, s := range e.visibleScripts(context.Background(), caller) {
		schema := s.InputSchema
		if len(schema) == 0 {
			schema = json.RawMessage(`{"type": "object"}`)
		}
		name := s.Name
		out = append(out, toolspec.Spec{
			Name:        ScriptWirePrefix + s.Name,
			Description: s.Description + " (a saved script; its result is execute_code's report)",
			InputSchema: schema,
			Handler: func(ctx context.Context, req toolspec.Request) (*gateway.CallResult, error) {
				return e.runScriptTool(ctx, req, name)
			},
		})
	}
	return out
}

// MaxExecuteArgumentBytes and MaxSearchArgumentBytes cap the JSON arguments
// of execute_code and search_tools. A snippet a model writes is a few KiB;
// data belongs in tool calls. Without the caps a client could make the server
// decode bodies of up to 16 MiB for them, several copies each.
const (
	MaxExecuteArgumentBytes = 1 << 20
	MaxSearchArgumentBytes  = 64 << 10
)

// executeDescriptionFor is execute_code's description: how to write a
// snippet, the limits, and the types every declaration uses, read once here
// rather than in every search answer.
func executeDescriptionFor(e *Engine) string {
	return strings.Replace(executeDescription, "{{limits}}", limitsText(e.opts.Limits.WithDefaults(), e.ceiling()), 1) +
		"\n\nThe types every declaration uses (search_tools answers do not repeat them):\n" + typegen.Preamble
}

// badInput is the error a tool returns for arguments it cannot use.
func badInput(tool, format string, args ...any) error {
	return &gateway.Error{Code: gateway.CodeValidationFailed, Tool: tool, Message: agentText(fmt.Sprintf(format, args...)), Data: json.RawMessage(`{}`)}
}

// agentText drops the Go package prefixes ("codemode: ", "vectorindex: ",
// "runtime: ") that errors carry for Go callers: an agent reading them
// learns nothing from our package names.
func agentText(msg string) string {
	for _, p := range []string{"codemode: ", "vectorindex: ", "runtime: ", "gateway: ", "typegen: "} {
		msg = strings.ReplaceAll(msg, p, "")
	}
	return msg
}

func (e *Engine) handleSearch(ctx context.Context, req toolspec.Request) (*gateway.CallResult, error) {
	var in struct {
		Intent  string   `json:"intent"`
		Intents []string `json:"intents"`
		K       int      `json:"k"`
	}
	if err := strictDecode(req.Arguments, &in); err != nil {
		return nil, badInput(SearchToolName, "search_tools takes {\"intent\": \"...\", \"intents\"?: [\"...\"], \"k\"?: 5}: %v", err)
	}
	if strings.TrimSpace(in.Intent) == "" && len(in.Intents) == 0 {
		return nil, badInput(SearchToolName, "intent is empty: describe the task in a few words, e.g. {\"intent\": \"find the open items\", \"intents\": [\"list tasks by status\"]}")
	}
	if in.K < 0 || in.K > 50 {
		return nil, badInput(SearchToolName, "k must be between 1 and 50 (default 5)")
	}
	res, err := e.Search(ctx, SearchRequest{Intent: in.Intent, Intents: in.Intents, K: in.K, Caller: req.Caller})
	if err != nil {
		return nil, badInput(SearchToolName, "%v", err)
	}
	structured, _ := json.Marshal(struct {
		Tools   []FoundTool   `json:"tools"`
		Shown   int           `json:"shown"`
		Total   int           `json:"total"`
		Weak    bool          `json:"weak,omitempty"`
		Servers []ServerEntry `json:"servers"`
		Note    string        `json:"note"`
	}{res.Tools, res.Shown, res.Total, res.Weak, res.Servers, res.Note})
	return &gateway.CallResult{Content: []json.RawMessage{textBlockJSON(res.Text())}, StructuredContent: structured}, nil
}

func (e *Engine) handleExecute(ctx context.Context, req toolspec.Request) (*gateway.CallResult, error) {
	in, err := decodeExecuteArgs(req.Arguments)
	if err != nil {
		return nil, badInput(ExecuteToolName, "execute_code takes {\"code\": \"...\", \"intent\"?: \"...\", \"tools\"?: [...], \"limits\"?: {...}}: %v", err)
	}
	if strings.TrimSpace(in.Code) == "" {
		return nil, badInput(ExecuteToolName, "code is empty: send a TypeScript snippet that returns a value, e.g. {\"code\": \"return 1 + 1\"}")
	}
	limits := in.Limits
	if err := limits.Validate(); err != nil {
		return nil, badInput(ExecuteToolName, "%v", err)
	}
	handle, ctx, err := e.openContextArg(ctx, req.Caller, in.Context)
	if err != nil {
		return nil, err
	}
	var onEvent func(runtime.Event)
	if req.ProgressRequested {
		stream := newEventStream(req.Progress, req.Log, e.log)
		onEvent = stream.event
		defer stream.finish() // before the result goes out: no progress after it
	}
	res, err := e.Execute(ctx, ExecuteRequest{Code: in.Code, Intent: in.Intent, Tools: in.Tools, Limits: limits, Caller: req.Caller, OnEvent: onEvent})
	if err != nil {
		var ge *gateway.Error
		if errors.As(err, &ge) { // BUSY
			return nil, ge
		}
		return nil, badInput(ExecuteToolName, "%v", err)
	}
	e.explainLimit(res.Error, limits)
	body, err := reportJSON(res)
	if err != nil {
		return nil, err
	}
	if handle != "" {
		body = withContextField(body, handle)
	}
	return &gateway.CallResult{Content: []json.RawMessage{textBlockJSON(body)}, StructuredContent: body, IsError: !res.OK}, nil
}

const saveScriptDescription = `Save a TypeScript snippet as a script that later snippets call as scripts.<name>(input).

The script is yours (other callers do not see it) and is kept across sessions. It runs as a fresh run
with your tools, the input as the global ` + "`input`" + `, and returns what it returns; it is checked
against inputSchema when called. search_tools finds it by its description. Saving under an existing name
replaces the script. The code must compile: a syntax error refuses the save with its line. With
"check": true nothing is saved: the answer says whether it would be, and shows the declaration later
snippets and search_tools would see.`

var saveScriptSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "name": {"type": "string", "pattern": "^[a-z][a-z0-9_]{0,62}$", "description": "snake_case; called as scripts.camelCase(...), e.g. weekly_report -> scripts.weeklyReport"},
    "description": {"type": "string", "description": "What it does and returns, as a tool's description."},
    "code": {"type": "string", "description": "The TypeScript snippet; it reads its arguments from the global input and returns its result."},
    "inputSchema": {"type": "object", "description": "Optional: a JSON Schema of input (an object)."},
    "check": {"type": "boolean", "description": "Optional: only check (compile the code, show the declaration); nothing is saved."}
  },
  "required": ["name", "description", "code"],
  "additionalProperties": false
}`)

const deleteScriptDescription = `Delete one of your saved scripts by name.`

var deleteScriptSchema = json.RawMessage(`{
  "type": "object",
  "properties": {"name": {"type": "string"}},
  "required": ["name"],
  "additionalProperties": false
}`)

func (e *Engine) handleSaveScript(ctx context.Context, req toolspec.Request) (*gateway.CallResult, error) {
	var in struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Code        string          `json:"code"`
		InputSchema json.RawMessage `json:"inputSchema"`
		Check       bool            `json:"check"`
	}
	if err := strictDecode(req.Arguments, &in); err != nil {
		return nil, badInput(SaveScriptToolName, "save_script takes {\"name\", \"description\", \"code\", \"inputSchema\"?, \"check\"?}: %v", err)
	}
	script := Script{Name: in.Name, Description: in.Description, Code: in.Code, InputSchema: in.InputSchema}
	if in.Check {
		return e.checkScriptAnswer(ctx, req.Caller, script)
	}
	err := e.SaveScript(ctx, req.Caller, script)
	if err != nil {
		if ge, ok := err.(*gateway.Error); ok { // BUSY while checking the code
			return nil, ge
		}
		return nil, badInput(SaveScriptToolName, "%v", err)
	}
	_, names := scriptTools([]Script{{Name: in.Name}})
	call := ScriptNamespace + "." + names.Bindings()[0].Function
	text := fmt.Sprintf("Saved. Call it in execute_code as `await %s({...})`.", call)
	return &gateway.CallResult{Content: []json.RawMessage{textBlockJSON([]byte(text))}}, nil
}

// checkScriptAnswer is save_script's answer to "check": true: what saving
// would do, and the declaration, with nothing saved.
func (e *Engine) checkScriptAnswer(ctx context.Context, caller auth.Caller, s Script) (*gateway.CallResult, error) {
	check, err := e.CheckScript(ctx, caller, s)
	if err != nil {
		if ge, ok := err.(*gateway.Error); ok { // BUSY while checking the code
			return nil, ge
		}
		return nil, badInput(SaveScriptToolName, "%v", err)
	}
	var b strings.Builder
	b.WriteString("Checked; nothing was saved. The code compiles and the input schema is usable. ")
	switch {
	case check.Refused != "":
		fmt.Fprintf(&b, "Saving it now would be refused: %s. ", check.Refused)
	case check.Replaces != nil:
		fmt.Fprintf(&b, "Saving it would replace your script %s (saved %s). ", check.Replaces.Name, check.Replaces.Saved.Format(time.RFC3339))
	}
	fmt.Fprintf(&b, "Saved, it is called in execute_code as `await %s({...})`, declared as:\n\n%s", check.Call, check.Declaration)
	return &gateway.CallResult{Content: []json.RawMessage{textBlockJSON(b.String())}}, nil
}

func (e *Engine) handleDeleteScript(ctx context.Context, req toolspec.Request) (*gateway.CallResult, error) {
	var in struct {
		Name string `json:"name"`
	}
	if err := strictDecode(req.Arguments, &in); err != nil {
		return nil, badInput(DeleteScriptToolName, "delete_script takes {\"name\": \"...\"}: %v", err)
	}
	deleted, err := e.DeleteScript(ctx, req.Caller, in.Name)
	if err != nil {
		return nil, err
	}
	if !deleted {
		return nil, badInput(DeleteScriptToolName, "you have no saved script %q", in.Name)
	}
	return &gateway.CallResult{Content: []json.RawMessage{textBlockJSON([]byte("Deleted " + in.Name + "."))}}, nil
}

// runScriptTool runs a saved script called as a tool on the wire: a
// top-level run of its code as the caller, its arguments as input.
func (e *Engine) runScriptTool(ctx context.Context, req toolspec.Request, name string) (*gateway.CallResult, error) {
	// The script as it is now: saved again, unshared or deleted since the
	// session's tool list was made.
	var s Script
	found := false
	visible, err := e.callerScripts(ctx, req.Caller)
	if err != nil {
		return nil, err
	}
	for _, v := range visible {
		if v.Name == name {
			s, found = v, true
		}
	}
	if !found {
		return nil, &gateway.Error{Code: gateway.CodeUnknownTool, Tool: ScriptWirePrefix + name, Message: fmt.Sprintf("the saved script %q is gone (deleted or no longer shared); list the tools again", name)}
	}
	input := req.Arguments
	if len(input) == 0 {
		input = json.RawMessage(`{}`)
	}
	if err := s.checkInput(input); err != nil {
		return nil, badInput(ScriptWirePrefix+s.Name, "the arguments do not match the script's inputSchema: %v; the schema is %s", err, s.InputSchema)
	}
	res, err := e.Execute(ctx, ExecuteRequest{Code: s.Code, Filename: s.Name + ".ts", Caller: req.Caller, Input: input})
	if err != nil {
		if ge, ok := err.(*gateway.Error); ok {
			return nil, ge
		}
		return nil, badInput(ScriptWirePrefix+s.Name, "%v", err)
	}
	body, err := reportJSON(res)
	if err != nil {
		return nil, err
	}
	return &gateway.CallResult{Content: []json.RawMessage{textBlockJSON(body)}, StructuredContent: body, IsError: !res.OK}, nil
}

// strictDecode rejects unknown fields, so a misspelled argument ("inent")
// is an error the agent sees rather than silently ignored.
func strictDecode(raw json.RawMessage, v any) error {
	if len(raw) == 0 || string(raw) == "null" {
		raw = json.RawMessage(`{}`)
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}
