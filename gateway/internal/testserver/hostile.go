package testserver

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// serveHostile is a hand-written stdio MCP server that breaks the rules a
// gateway must survive: bad and duplicate tool names, schemas that are not
// objects or are huge, results that are not valid tool results, noise on
// stdout, answers to ids nobody asked for. It speaks 2025-11-25 only.
func serveHostile() {
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	out := bufio.NewWriter(os.Stdout)
	send := func(v any) {
		b, _ := json.Marshal(v)
		out.Write(b)
		out.WriteByte('\n')
		out.Flush()
	}
	huge := `{"type":"object","description":"` + strings.Repeat("x", 2<<20) + `"}`
	tools := []json.RawMessage{
		json.RawMessage(`{"name":"ok","description":"fine","inputSchema":{"type":"object"}}`),
		json.RawMessage(`{"name":"OK","description":"normalizes like ok","inputSchema":{"type":"object"}}`),
		json.RawMessage(`{"name":"__proto__","inputSchema":{"type":"object"}}`),
		json.RawMessage(`{"name":"evil\u202eexe","inputSchema":{"type":"object"}}`),
		json.RawMessage(`{"name":"schema_is_string","inputSchema":"object"}`),
		json.RawMessage(`{"name":"huge_schema","inputSchema":` + huge + `}`),
		json.RawMessage(`{"name":"no_schema"}`),
		json.RawMessage(`"not an object"`),
		json.RawMessage(`{"name":"bad_content","inputSchema":{"type":"object"}}`),
		json.RawMessage(`{"name":"not_json_result","inputSchema":{"type":"object"}}`),
		json.RawMessage(`{"name":"meta_leak","inputSchema":{"type":"object"},"_meta":{"secret":"upstream-internal"}}`),
	}
	for {
		line, err := in.ReadString('\n')
		if err != nil {
			return
		}
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		if json.Unmarshal([]byte(line), &req) != nil || req.ID == nil {
			continue
		}
		reply := func(result any) { send(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result}) }
		// Noise and a stray answer before every reply.
		fmt.Fprintln(out, "this line is not JSON")
		send(map[string]any{"jsonrpc": "2.0", "id": "never-asked", "result": map[string]any{}})
		switch req.Method {
		case "initialize":
			reply(map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{"tools": map[string]any{}}, "serverInfo": map[string]any{"name": "hostile", "version": "0"}})
		case "tools/list":
			reply(map[string]any{"tools": tools})
		case "tools/call":
			switch req.Params.Name {
			case "bad_content":
				reply(map[string]any{"content": "nope"})
			case "not_json_result":
				reply("just a string")
			case "meta_leak":
				reply(map[string]any{"_meta": map[string]any{"secret": "x"}, "content": []any{map[string]any{"type": "text", "text": "hi", "_meta": map[string]any{"secret": "y"}}}})
			default:
				reply(map[string]any{"content": []any{map[string]any{"type": "text", "text": "ok"}}})
			}
		default:
			send(map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": map[string]any{"code": -32601, "message": "no"}})
		}
	}
}
