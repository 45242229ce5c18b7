package codemode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sandboxrt/sandbox/gateway"
	"github.com/sandboxrt/sandbox/gateway/frontend"
	"github.com/sandboxrt/sandbox/runtime"
	"github.com/sandboxrt/sandbox/typegen"
)

// The names of the code-mode tools on the MCP front end.
const (
	SearchToolName  = "search_tools"
	ExecuteToolName = "execute_code"
)

const searchDescription = `Find the tools for a task and get their TypeScript declarations.

Describe the task in plain words (intent), and give two or three other phrasings of it in intents, in
the words the product's own API would use ("notifications" for an inbox, "issues" for bugs): the
rankings are fused, which finds far more than one phrasing. You get the servers (with their state), the
k most relevant tools (default 5) best first, each with why it was picked, and their .d.ts: one
namespace per server, one async function per tool, with exact input types and docs (the shared types,
ToolResult and MCPToolError, are in execute_code's description). Then write a TypeScript snippet that
calls them and run it with execute_code. When the note says nothing matched well, search again with
other words or within a server's name.`

const executeDescription = `Run a TypeScript snippet that calls tools; only what it returns comes back to you.

The snippet runs in a sandbox (no network, files, modules or eval) and may use top-level await.
Globals besides the language: console, setTimeout/setInterval, queueMicrotask, URL, URLSearchParams,
TextEncoder, TextDecoder, crypto (randomUUID, getRandomValues, subtle.digest), structuredClone,
performance.now, AbortController, AbortSignal, atob, btoa, iterator helpers, Array.fromAsync,
Intl.NumberFormat, Intl.DateTimeFormat, Intl.PluralRules, Intl.ListFormat, Intl.RelativeTimeFormat,
Intl.Collator (as Node formats them in 14 locales, en-US, en-GB, en-IN, de, fr, es, it, pt-BR, ja,
zh, ko, ru, hi and nl, others by language or en-US; also toLocaleString, localeCompare),
sandbox.store (get, set, delete, keys: JSON values kept between runs, this session's by default, yours
across sessions with {scope: "principal"}), sandbox.results (json, read: a tool result too large to
hand over whole arrives as {handle, bytes, preview}; read parts of it). Not there: fetch (reach outside systems through the
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
    "intents": {"type": "array", "items": {"type": "string"}, "maxItems": 4, "description": "Two or three other phrasings of the same task, in the product's own API words (\"list tasks by status\", \"search issues assigned to a user\"); their rankings are fused with intent's."},
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
    "limits": {
      "type": "object",
      "description": "Optional: tighter or looser limits for this run.",
      "properties": {
        "timeoutMs": {"type": "integer", "minimum": 1, "maximum": 600000},
        "memoryMB": {"type": "integer", "minimum": 16, "maximum": 8192},
        "toolCalls": {"type": "integer", "minimum": 1, "maximum": 100000},
        "outputKB": {"type": "integer", "minimum": 1, "maximum": 65536},
        "resultKB": {"type": "integer", "minimum": 1, "maximum": 65536}
      },
      "additionalProperties": false
    }
  },
  "required": ["code"],
  "additionalProperties": false
}`)

// Install adds search_tools and execute_code to an MCP front end.
func (e *Engine) Install(front *frontend.Server) error {
	if err := front.AddTool(SearchToolName, searchDescription, searchSchema, e.handleSearch); err != nil {
		return err
	}
	if err := front.AddTool(ExecuteToolName, executeDescriptionFor(e), executeSchema, e.handleExecute); err != nil {
		return err
	}
	front.LimitArguments(SearchToolName, MaxSearchArgumentBytes)
	front.LimitArguments(ExecuteToolName, MaxExecuteArgumentBytes)
	return e.installScriptTools(front)
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

// CodeBusy is execute_code's error code when the sandbox is running all the
// snippets it may and as many wait as may wait: the run was refused without
// starting, and the message says when to retry. It is the code-mode tools'
// own, beside the gateway's codes (gateway.Code); the runtime's error is
// runtime.ErrBusy.
const CodeBusy gateway.Code = "BUSY"

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

func (e *Engine) handleSearch(ctx context.Context, req frontend.ToolRequest) (*gateway.CallResult, error) {
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
	return &gateway.CallResult{Content: []json.RawMessage{textBlockJSON(searchText(res))}, StructuredContent: structured}, nil
}

// searchText is the search answer a model reads: the note, the servers, the
// tools best first with why, then their declarations without the shared
// preamble (it is in execute_code's description, read once).
func searchText(res *SearchResult) string {
	var b strings.Builder
	b.WriteString(res.Note)
	b.WriteString("\n\nServers:")
	for _, s := range res.Servers {
		fmt.Fprintf(&b, "\n- %s (%s, %d tools)", s.Namespace, s.State, s.Tools)
		if s.Instructions != "" {
			b.WriteString(": " + strings.Join(strings.Fields(s.Instructions), " "))
		}
	}
	b.WriteString("\n\nBest first:")
	for i, t := range res.Tools {
		fmt.Fprintf(&b, "\n%d. %s: %s", i+1, t.Call, t.Why)
	}
	b.WriteString("\n\n")
	b.WriteString(strings.TrimPrefix(res.Declarations, typegen.Preamble))
	return b.String()
}

func (e *Engine) handleExecute(ctx context.Context, req frontend.ToolRequest) (*gateway.CallResult, error) {
	var in struct {
		Code   string   `json:"code"`
		Intent string   `json:"intent"`
		Tools  []string `json:"tools"`
		Limits struct {
			TimeoutMs int `json:"timeoutMs"`
			MemoryMB  int `json:"memoryMB"`
			ToolCalls int `json:"toolCalls"`
			OutputKB  int `json:"outputKB"`
			ResultKB  int `json:"resultKB"`
		} `json:"limits"`
	}
	if err := strictDecode(req.Arguments, &in); err != nil {
		return nil, badInput(ExecuteToolName, "execute_code takes {\"code\": \"...\", \"intent\"?: \"...\", \"tools\"?: [...], \"limits\"?: {...}}: %v", err)
	}
	if strings.TrimSpace(in.Code) == "" {
		return nil, badInput(ExecuteToolName, "code is empty: send a TypeScript snippet that returns a value, e.g. {\"code\": \"return 1 + 1\"}")
	}
	l := in.Limits
	limits := runtime.Limits{
		Timeout:     time.Duration(l.TimeoutMs) * time.Millisecond,
		MemoryBytes: int64(l.MemoryMB) << 20,
		ToolCalls:   l.ToolCalls,
		OutputBytes: l.OutputKB << 10,
		ResultBytes: l.ResultKB << 10,
	}
	if err := limits.Validate(); err != nil {
		return nil, badInput(ExecuteToolName, "%v", err)
	}
	var onEvent func(runtime.Event)
	if req.ProgressRequested {
		stream := newEventStream(req.Progress, req.Log)
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
	body, err := reportJSON(res)
	if err != nil {
		return nil, err
	}
	return &gateway.CallResult{Content: []json.RawMessage{textBlockJSON(body)}, StructuredContent: body, IsError: !res.OK}, nil
}

// report is execute_code's result as the agent reads it: compact, durations
// in milliseconds, nothing the agent cannot act on.
type report struct {
	OK            bool            `json:"ok"`
	Value         json.RawMessage `json:"value,omitempty"`
	Error         *runtime.Error  `json:"error,omitempty"`
	Logs          []string        `json:"logs,omitempty"`
	LogsTruncated bool            `json:"logsTruncated,omitempty"`
	Calls         []callReport    `json:"calls,omitempty"`
	DurationMs    float64         `json:"durationMs"`
	Bound         []string        `json:"bound,omitempty"`
	// Limits are shown when the request asked for more than the ceiling.
	Limits *AppliedLimits `json:"limits,omitempty"`
}

type callReport struct {
	Tool       string  `json:"tool"`
	DurationMs float64 `json:"ms"`
	OK         bool    `json:"ok"`
	Code       string  `json:"code,omitempty"`
}

// executeReport is the report of a run. handleExecute writes its JSON with
// reportJSON, which does not build Logs (see report.go).
func executeReport(res *ExecuteResult) report {
	r := reportWithoutLogs(res)
	for _, l := range res.Logs {
		r.Logs = append(r.Logs, levelPrefix(l.Level)+l.Message)
	}
	return r
}

func reportWithoutLogs(res *ExecuteResult) report {
	r := report{OK: res.OK, Value: res.Value, Error: res.Error, LogsTruncated: res.LogsTruncated,
		DurationMs: ms(res.Duration), Bound: res.Bound}
	for _, c := range res.Calls {
		r.Calls = append(r.Calls, callReport{Tool: c.Tool, DurationMs: ms(c.Duration), OK: c.OK, Code: c.Code})
	}
	if len(res.Limits.Clamped) > 0 {
		r.Limits = &res.Limits
	}
	if !res.OK {
		r.Bound = res.Bound // what could have been called helps fix NOT_BOUND and typos
	} else {
		r.Bound = nil
	}
	return r
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

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
