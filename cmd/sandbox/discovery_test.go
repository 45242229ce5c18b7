package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/sandboxrt/sandbox/internal/testpeers"
)

// TestServeFindsWhatAgentsNameAndMean drives search_tools of `sandbox
// serve` over the servers of issue 26's measurement, the real ones from npm
// (server-filesystem, server-memory, server-everything) beside the example
// tracker, with the intents its agents wrote and got nothing from: literal
// tool names in " | "-joined phrasings, the README's question, a tool whose
// description never says what its schemas do. The tools they meant come
// first; a match on incidental words only says it is weak.
func TestServeFindsWhatAgentsNameAndMean(t *testing.T) {
	if testing.Short() {
		t.Skip("starts sandbox serve and three npm servers")
	}
	node := testpeers.Node(t)
	script := func(pkg string) string { return filepath.Join(testpeers.Package(t, pkg), "dist", "index.js") }
	dir := t.TempDir()
	cfg := fmt.Sprintf(`{"mcpServers": {
  "tracker": {"command": %q},
  "files": {"command": %q, "args": [%q, %q]},
  "memory": {"command": %q, "args": [%q], "env": {"MEMORY_FILE_PATH": %q}},
  "everything": {"command": %q, "args": [%q, "stdio"]}
}, "codeMode": {"indexDir": %q}}`, exampleServerBinary(t), node, script("@modelcontextprotocol/server-filesystem"), dir,
		node, script("@modelcontextprotocol/server-memory"), filepath.Join(dir, "memory.jsonl"),
		node, script("@modelcontextprotocol/server-everything"), filepath.Join(dir, "index"))
	c := keylessClient(t, serveHTTP(t, cfg))
	search := func(intent string) (calls []string, weak bool) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		res, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "search_tools", Arguments: map[string]any{"intent": intent}}})
		if err != nil || res.IsError {
			t.Fatalf("search_tools %q: %v %s", intent, err, toolText(res))
		}
		raw, _ := json.Marshal(res.StructuredContent)
		var got struct {
			Tools []struct{ Call string }
			Weak  bool
		}
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatalf("search_tools %q: %v: %s", intent, err, raw)
		}
		for _, f := range got.Tools {
			calls = append(calls, f.Call)
		}
		return calls, got.Weak
	}
	for _, c := range []struct {
		intent string
		first  []string // the first hits, in this order
	}{
		{"list_projects | get_project | show every project and its details", []string{"tracker.listProjects", "tracker.getProject"}},
		{"which tasks are blocked", []string{"tracker.searchTasks"}},
		{"list all projects", []string{"tracker.listProjects"}},
		{"files.read_text_file; write_file", []string{"files.readTextFile", "files.writeFile"}},
		{"memory:create_entities | read the whole knowledge graph", []string{"memory.createEntities", "memory.readGraph"}},
		{"weather in Chicago", []string{"everything.getStructuredContent"}},
	} {
		calls, weak := search(c.intent)
		if len(calls) < len(c.first) || strings.Join(calls[:len(c.first)], ",") != strings.Join(c.first, ",") || weak {
			t.Errorf("%q: got %v (weak %v), want %v first", c.intent, calls, weak, c.first)
		}
	}
	if calls, weak := search("remember that Alice works at Acme"); !weak {
		t.Errorf("a match on incidental words is not flagged weak: %v", calls)
	}
}
