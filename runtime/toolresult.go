package runtime

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// DecodeResult turns an MCP tool result into the value a tool function's
// promise resolves to in the VM (ARCHITECTURE.md contract 2, spelled as the
// ToolResult type in every generated .d.ts):
//
//   - the result's structuredContent when it has one;
//   - else, when every content block is text, the text (blocks joined by
//     newlines) parsed as JSON if it is JSON, or the text itself as a string;
//   - else the content blocks, as the server sent them, as an array.
//
// A result with no content and no structuredContent resolves to null. A Host
// that forwards calls to MCP servers returns this value from CallTool.
func DecodeResult(content []json.RawMessage, structured json.RawMessage) (json.RawMessage, error) {
	if s := bytes.TrimSpace(structured); len(s) > 0 && !bytes.Equal(s, []byte("null")) {
		if !json.Valid(s) {
			return nil, fmt.Errorf("structuredContent is not valid JSON")
		}
		return s, nil
	}
	if len(content) == 0 {
		return json.RawMessage("null"), nil
	}
	texts := make([]string, 0, len(content))
	for _, block := range content {
		var b struct {
			Type string  `json:"type"`
			Text *string `json:"text"`
		}
		if err := json.Unmarshal(block, &b); err != nil {
			return nil, fmt.Errorf("a content block is not a JSON object: %w", err)
		}
		if b.Type != "text" || b.Text == nil {
			texts = nil
			break
		}
		texts = append(texts, *b.Text)
	}
	if texts != nil {
		text := strings.Join(texts, "\n")
		if t := strings.TrimSpace(text); t != "" && json.Valid([]byte(t)) {
			return json.RawMessage(t), nil
		}
		return json.Marshal(text)
	}
	return json.Marshal(content)
}
