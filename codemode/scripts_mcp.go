package codemode

import (
	"context"
	"encoding/json"
	"fmt"

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
	_, names := scriptTools([]Script{{Name: in.Name}})
	call := ScriptNamespace + "." + names.Bindings()[0].Function
	text := fmt.Sprintf("Saved. Call it in execute_code as `await %s({...})`.", call)
	return &gateway.CallResult{Content: []json.RawMessage{textBlockJSON([]byte(text))}}, nil
}

func (e *Engine) handleDeleteScript(_ context.Context, req frontend.ToolRequest) (*gateway.CallResult, error) {
	var in struct {
		Name string `json:"name"`
	}
	if err := strictDecode(req.Arguments, &in); err != nil {
		return nil, badInput(DeleteScriptToolName, "delete_script takes {\"name\": \"...\"}: %v", err)
	}
	deleted, err := e.scripts.Delete(req.Caller.Principal.Key(), in.Name)
	if err != nil {
		return nil, err
	}
	if !deleted {
		return nil, badInput(DeleteScriptToolName, "you have no saved script %q", in.Name)
	}
	return &gateway.CallResult{Content: []json.RawMessage{textBlockJSON([]byte("Deleted " + in.Name + "."))}}, nil
}
