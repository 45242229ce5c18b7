package codemode

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// The servers an agent meets (vectorindex/testdata/agentservers: the
// example tracker, server-filesystem, server-memory, server-everything and a
// SQLite server, as sandbox serve listed them), served in process with
// their schemas, annotations and instructions; every tool answers with its
// arguments. And their labelled intents.

type agentServerTool struct {
	Server             string          `json:"server"`
	Name               string          `json:"name"`
	Title              string          `json:"title"`
	Description        string          `json:"description"`
	InputSchema        json.RawMessage `json:"inputSchema"`
	OutputSchema       json.RawMessage `json:"outputSchema"`
	Annotations        json.RawMessage `json:"annotations"`
	ServerInstructions string          `json:"serverInstructions"`
}

func agentServersFile(name string) string {
	return filepath.Join("..", "vectorindex", "testdata", "agentservers", name)
}

func agentServers(t testing.TB) map[string]*server.MCPServer {
	t.Helper()
	data, err := os.ReadFile(agentServersFile("tools.json"))
	if err != nil {
		t.Fatal(err)
	}
	var tools []agentServerTool
	if err := json.Unmarshal(data, &tools); err != nil {
		t.Fatal(err)
	}
	echo := func(_ context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args, _ := json.Marshal(r.GetArguments())
		return mcp.NewToolResultText(fmt.Sprintf(`{"tool":%q,"args":%s}`, r.Params.Name, args)), nil
	}
	servers := map[string]*server.MCPServer{}
	for _, at := range tools {
		srv := servers[at.Server]
		if srv == nil {
			srv = server.NewMCPServer(at.Server, "1.0", server.WithToolCapabilities(false), server.WithInstructions(at.ServerInstructions))
			servers[at.Server] = srv
		}
		tool := mcp.NewToolWithRawSchema(at.Name, at.Description, at.InputSchema)
		tool.Title = at.Title
		if len(at.OutputSchema) > 0 {
			tool.RawOutputSchema = at.OutputSchema
		}
		if len(at.Annotations) > 0 {
			if err := json.Unmarshal(at.Annotations, &tool.Annotations); err != nil {
				t.Fatal(err)
			}
		}
		srv.AddTool(tool, echo)
	}
	return servers
}

// agentIntent is one labelled intent of agentservers' sets.
type agentIntent struct {
	Query     string   `json:"query"`
	Relevant  []string `json:"relevant"`
	Kind      string   `json:"kind"`
	Phrasings []string `json:"phrasings,omitempty"`
}

func agentIntents(t testing.TB, file string) []agentIntent {
	t.Helper()
	data, err := os.ReadFile(agentServersFile(file))
	if err != nil {
		t.Fatal(err)
	}
	var qs []agentIntent
	if err := json.Unmarshal(data, &qs); err != nil {
		t.Fatal(err)
	}
	return qs
}
