package suite_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/sandboxrt/sandbox/internal/conformancefixture/suite"
)

// TestRunReportsFailures proves the runner reads a failing scenario as a
// failure: a server whose test_simple_text returns no text content.
func TestRunReportsFailures(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the npm conformance suite (Node 22); skipped with -short")
	}
	s := server.NewMCPServer("broken", "1", server.WithToolCapabilities(false))
	s.AddTool(mcp.NewTool("test_simple_text", mcp.WithDescription("returns an image instead of text")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewImageContent("AA==", "image/png")}}, nil
		})
	srv := httptest.NewServer(server.NewStreamableHTTPServer(s))
	defer srv.Close()

	results := suite.Run(t, srv.URL+"/mcp", "tools-call-simple-text")
	got := results["tools-call-simple-text"]
	if got.Passed() || got.Count("FAILURE") == 0 {
		t.Fatalf("a server without text content passed tools-call-simple-text: %+v", got.Checks)
	}
	if !strings.Contains(got.Failures(), "No text content found") {
		t.Errorf("Failures() does not carry the suite's reason: %q", got.Failures())
	}
	if len(results.Passed()) != 0 {
		t.Errorf("Results.Passed() = %v, want none", results.Passed())
	}
}

func TestListNamesServerScenarios(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the npm conformance suite (Node 22); skipped with -short")
	}
	names := suite.List(t)
	for _, want := range []string{"server-initialize", "tools-call-with-progress", "dns-rebinding-protection"} {
		found := false
		for _, n := range names {
			found = found || n == want
		}
		if !found {
			t.Errorf("List() = %v, missing %s", names, want)
		}
	}
	for _, n := range names {
		if strings.HasPrefix(n, "auth/") {
			t.Errorf("List() includes client scenario %s", n)
		}
	}
}
