package typegen

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Tool is one MCP tool definition as a server lists it in tools/list, plus the
// name of the server it came from. The JSON tags follow the MCP wire format, so
// a tools/list entry or an entry of testdata/toolcorpus/tools.json decodes
// directly. Schemas stay raw JSON: typegen reads them itself, in order, and
// reports problems with JSON pointers into them.
type Tool struct {
	Server       string          `json:"server"`
	Name         string          `json:"name"`
	Title        string          `json:"title,omitempty"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"inputSchema,omitempty"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	Annotations  *Annotations    `json:"annotations,omitempty"`

	// InferredOutput is a JSON Schema of the results seen from a tool
	// that declares no OutputSchema, learned from InferredFrom calls (code
	// mode learns it). It is declared as the result type, marked
	// "@inferred from N calls"; an OutputSchema always wins.
	InferredOutput json.RawMessage `json:"-"`
	InferredFrom   int             `json:"-"`

	// Notes are JSDoc tags the host adds to the tool's doc, after its
	// annotations: what it knows of calling the tool that the server
	// does not say (code mode's "@approval ..." for a tool the gateway's
	// policy sends to a person). Each is cleaned and cut like any tag.
	Notes []string `json:"-"`
}

// Annotations are the MCP tool annotations. Pointers distinguish "not said"
// from false: the MCP defaults (destructive unless said otherwise, for
// example) are hints the agent should see only when the server stated them.
type Annotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    *bool  `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool  `json:"destructiveHint,omitempty"`
	IdempotentHint  *bool  `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitempty"`
}

// ID returns the tool's internal id, "server:name" (ARCHITECTURE.md contract 1).
func (t Tool) ID() string { return t.Server + ":" + t.Name }

// ReadTools decodes a file of tool definitions in one of the shapes tool
// authors have at hand:
//
//   - a JSON array of tool definitions (the corpus format; each entry may carry
//     its "server", otherwise server is used),
//   - a tools/list result {"tools": [...]},
//   - a whole tools/list JSON-RPC response {"result": {"tools": [...]}}.
//
// server names the server of entries that do not name one; it may be empty if
// every entry does. Errors say which entry is wrong and what to do about it.
func ReadTools(data []byte, server string) ([]Tool, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil, errors.New("the input is empty; expected a JSON array of MCP tool definitions or a tools/list response")
	}
	var raw []json.RawMessage
	switch data[0] {
	case '[':
		if err := json.Unmarshal(data, &raw); err != nil {
			return nil, describeJSONError(data, err)
		}
	case '{':
		var envelope struct {
			Tools  []json.RawMessage `json:"tools"`
			Result *struct {
				Tools []json.RawMessage `json:"tools"`
			} `json:"result"`
			Error json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(data, &envelope); err != nil {
			return nil, describeJSONError(data, err)
		}
		switch {
		case envelope.Tools != nil:
			raw = envelope.Tools
		case envelope.Result != nil && envelope.Result.Tools != nil:
			raw = envelope.Result.Tools
		case len(envelope.Error) > 0:
			return nil, fmt.Errorf("the input is a JSON-RPC error response, not a tool list: %s", truncate(string(envelope.Error), 200))
		default:
			return nil, errors.New(`the input is a JSON object without "tools" or "result.tools"; expected a JSON array of MCP tool definitions or a tools/list response`)
		}
	default:
		if !json.Valid(data) {
			return nil, describeJSONError(data, json.Unmarshal(data, new(any)))
		}
		return nil, errors.New("the input is a JSON scalar; expected a JSON array of MCP tool definitions or a tools/list response")
	}
	tools := make([]Tool, 0, len(raw))
	for i, r := range raw {
		var t Tool
		if err := json.Unmarshal(r, &t); err != nil {
			return nil, fmt.Errorf("tool #%d: %v; each entry must be an object with at least \"name\" and \"inputSchema\"", i+1, err)
		}
		if t.Name == "" {
			return nil, fmt.Errorf("tool #%d has no \"name\"; every MCP tool definition needs one", i+1)
		}
		if t.Server == "" {
			if server == "" {
				return nil, fmt.Errorf("tool #%d (%q) names no server; pass the server's name (sandbox types --server NAME)", i+1, t.Name)
			}
			t.Server = server
		}
		tools = append(tools, t)
	}
	return tools, nil
}

// describeJSONError turns an encoding/json error into one with a line and column.
func describeJSONError(data []byte, err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		line, col := lineCol(data, int(se.Offset)-1) // Offset is just past the bad byte
		return fmt.Errorf("invalid JSON at line %d, column %d: %v", line, col, se)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		line, col := lineCol(data, int(te.Offset))
		return fmt.Errorf("unexpected JSON %s at line %d, column %d (field %q); expected a JSON array of MCP tool definitions or a tools/list response", te.Value, line, col, te.Field)
	}
	return fmt.Errorf("invalid JSON: %v", err)
}

func lineCol(data []byte, offset int) (line, col int) {
	offset = min(max(offset, 0), len(data))
	line = 1 + bytes.Count(data[:offset], []byte{'\n'})
	col = offset - bytes.LastIndexByte(data[:offset], '\n')
	return line, col
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
