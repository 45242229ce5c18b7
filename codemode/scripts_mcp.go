package codemode

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/gateway"
	"github.com/sandboxrt/sandbox/gateway/frontend"
)

// The MCP tools that save and delete scripts.
const (
	SaveScriptToolName   = "save_script"
	DeleteScriptToolName = "delete_script"
)

const saveScriptDescription = `Save a TypeScript snippet as a script that later snippets call as scripts.<name>(input).

The script is yours (other callers do not see it) and is kept across sessions. It runs as a fresh run
with your tools, the input as the global ` + "`input`" + `, and returns what it returns; it is checked
against inputSchema when called. search_tools finds it by its description. Saving under an existing name
replaces the script. The code must compile: a syntax error refuses the save with its line.`

var saveScriptSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "name": {"type": "string", "pattern": "^[a-z][a-z0-9_]{0,62}$", "description": "snake_case; called as scripts.camelCase(...), e.g. weekly_report -> scripts.weeklyReport"},
    "description": {"type": "string", "description": "What it does and returns, as a tool's description."},
    "code": {"type": "string", "description": "The TypeScript snippet; it reads its arguments from the global input and returns its result."},
    "inputSchema": {"type": "object", "description": "Optional: a JSON Schema of input (an object)."}
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

func (e *Engine) installScriptTools(front *frontend.Server) error {
	e.front.Store(front)
	front.SetSessionTools(e.scriptSessionTools)
	if err := front.AddTool(SaveScriptToolName, saveScriptDescription, saveScriptSchema, e.handleSaveScript); err != nil {
		return err
	}
	if err := front.AddTool(DeleteScriptToolName, deleteScriptDescription, deleteScriptSchema, e.handleDeleteScript); err != nil {
		return err
	}
	front.LimitArguments(SaveScriptToolName, MaxExecuteArgumentBytes)
	return nil
}

func (e *Engine) handleSaveScript(ctx context.Context, req frontend.ToolRequest) (*gateway.CallResult, error) {
	var in struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Code        string          `json:"code"`
		InputSchema json.RawMessage `json:"inputSchema"`
	}
	if err := strictDecode(req.Arguments, &in); err != nil {
		return nil, badInput(SaveScriptToolName, "save_script takes {\"name\", \"description\", \"code\", \"inputSchema\"?}: %v", err)
	}
	err := e.SaveScript(ctx, req.Caller, Script{Name: in.Name, Description: in.Description, Code: in.Code, InputSchema: in.InputSchema})
	if err != nil {
		if ge, ok := err.(*gateway.Error); ok { // BUSY while checking the code
			return nil, ge
		}
		return nil, badInput(SaveScriptToolName, "%v", err)
	}
	e.refreshScriptTools(req.Caller.Principal.Key())
	_, names := scriptTools([]Script{{Name: in.Name}})
	call := ScriptNamespace + "." + names.Bindings()[0].Function
	text := fmt.Sprintf("Saved. Call it in execute_code as `await %s({...})`.", call)
	return &gateway.CallResult{Content: []json.RawMessage{textBlockJSON([]byte(text))}}, nil
}

func (e *Engine) handleDeleteScript(ctx context.Context, req frontend.ToolRequest) (*gateway.CallResult, error) {
	var in struct {
		Name string `json:"name"`
	}
	if err := strictDecode(req.Arguments, &in); err != nil {
		return nil, badInput(DeleteScriptToolName, "delete_script takes {\"name\": \"...\"}: %v", err)
	}
	deleted, err := e.scripts.Delete(ctx, req.Caller.Principal.Key(), in.Name)
	if err != nil {
		return nil, err
	}
	if !deleted {
		return nil, badInput(DeleteScriptToolName, "you have no saved script %q", in.Name)
	}
	e.refreshScriptTools("") // it may have been shared: every session's list
	return &gateway.CallResult{Content: []json.RawMessage{textBlockJSON([]byte("Deleted " + in.Name + "."))}}, nil
}

// ScriptWirePrefix starts the wire name of a saved script listed as a tool
// of its owner's sessions (under --expose all): scripts__weekly_report.
const ScriptWirePrefix = ScriptNamespace + "__"

// scriptSessionTools are a caller's saved scripts as tools of its sessions.
func (e *Engine) scriptSessionTools(caller auth.Caller) []frontend.SessionTool {
	var out []frontend.SessionTool
	for _, s := range e.visibleScripts(context.Background(), caller.Principal.Key()) {
		schema := s.InputSchema
		if len(schema) == 0 {
			schema = json.RawMessage(`{"type": "object"}`)
		}
		name := s.Name
		out = append(out, frontend.SessionTool{
			Name:        ScriptWirePrefix + s.Name,
			Description: s.Description + " (a saved script; its result is execute_code's report)",
			InputSchema: schema,
			Handler: func(ctx context.Context, req frontend.ToolRequest) (*gateway.CallResult, error) {
				return e.runScriptTool(ctx, req, name)
			},
		})
	}
	return out
}

// runScriptTool runs a saved script called as a tool on the wire: a
// top-level run of its code as the caller, its arguments as input.
func (e *Engine) runScriptTool(ctx context.Context, req frontend.ToolRequest, name string) (*gateway.CallResult, error) {
	// The script as it is now: saved again, unshared or deleted since the
	// session's tool list was made.
	var s Script
	found := false
	visible, err := e.scripts.Visible(ctx, req.Caller.Principal.Key())
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

// refreshScriptTools gives the sessions that see a principal's scripts
// their tools again: its own, or everyone's when it has a shared one.
func (e *Engine) refreshScriptTools(principal string) {
	front := e.front.Load()
	if front == nil {
		return
	}
	if principal == "" {
		front.RefreshSessionTools("")
		return
	}
	for _, s := range e.visibleScripts(context.Background(), principal) {
		if s.Shared {
			front.RefreshSessionTools("")
			return
		}
	}
	front.RefreshSessionTools(principal)
}
