// Package testserver is an MCP server (mcp-go) with tools that exercise
// every branch of the gateway's routing: validation, paths, progress,
// timeouts, crashes, huge results, errors, sampling and dynamic tool lists.
// Tests run it in-process, or over stdio by re-executing the test binary
// (see MaybeServeStdio).
package testserver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// EnvVar makes a test binary serve this server over stdio instead of
// running tests (see MaybeServeStdio).
const EnvVar = "SANDBOX_GATEWAY_TESTSERVER"

// MaybeServeStdio serves the test server on stdin/stdout and exits when
// EnvVar is set; call it first thing in TestMain.
func MaybeServeStdio() {
	mode := os.Getenv(EnvVar)
	if mode == "" {
		return
	}
	if mode == "hostile" {
		serveHostile()
		os.Exit(0)
	}
	s := New()
	if mode == "hang" {
		// Reads requests and never answers: for startup timeouts.
		select {}
	}
	if mode == "exit" {
		fmt.Fprintln(os.Stderr, "testserver: exiting at once as asked")
		os.Exit(3)
	}
	// stdout goes through a writer that a "freeze" call stops for good:
	// the process stays alive and reads, but never answers again.
	if err := server.NewStdioServer(s).Listen(context.Background(), os.Stdin, freezableWriter{os.Stdout}); err != nil {
		fmt.Fprintln(os.Stderr, "testserver:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

func schema(s string) json.RawMessage { return json.RawMessage(s) }

// frozen makes freezableWriter block every write from now on.
var frozen atomic.Bool

type freezableWriter struct{ w io.Writer }

func (f freezableWriter) Write(p []byte) (int, error) {
	if frozen.Load() {
		select {}
	}
	return f.w.Write(p)
}

// New returns the test server.
func New() *server.MCPServer {
	s := server.NewMCPServer("gateway-test-server", "1.0.0",
		server.WithToolCapabilities(true),
		server.WithResourceCapabilities(true, true),
		server.WithPromptCapabilities(true),
		server.WithLogging(),
		server.WithCompletions(),
	)
	// Counters of this server instance, read through tools, so that tests
	// can wait for a state instead of sleeping: cancelled counts wait_cancel
	// calls that saw their context cancelled, running the slow and
	// wait_cancel calls under way.
	var cancelled atomic.Int64
	var running sync.Map // tool name -> *atomic.Int64
	enter := func(tool string) func() {
		n, _ := running.LoadOrStore(tool, new(atomic.Int64))
		n.(*atomic.Int64).Add(1)
		return func() { n.(*atomic.Int64).Add(-1) }
	}
	s.AddTool(mcp.NewToolWithRawSchema("echo", "Echo the text back.",
		schema(`{"type":"object","properties":{"text":{"type":"string","minLength":1}},"required":["text"],"additionalProperties":false}`)),
		func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(r.GetString("text", "")), nil
		})
	s.AddTool(mcp.NewToolWithRawSchema("add", "Add two numbers; returns {sum} as structured content.",
		schema(`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}`)),
		func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			sum := r.GetFloat("a", 0) + r.GetFloat("b", 0)
			return mcp.NewToolResultStructured(map[string]any{"sum": sum}, fmt.Sprint(sum)), nil
		})
	s.AddTool(mcp.NewToolWithRawSchema("slow", "Sleep for ms milliseconds (stops when cancelled).",
		schema(`{"type":"object","properties":{"ms":{"type":"integer","minimum":0}},"required":["ms"]}`)),
		func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			defer enter("slow")()
			select {
			case <-time.After(time.Duration(r.GetInt("ms", 0)) * time.Millisecond):
				return mcp.NewToolResultText("slept"), nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		})
	s.AddTool(mcp.NewToolWithRawSchema("wait_cancel", "Block until the call is cancelled; counts cancellations.", schema(`{"type":"object"}`)),
		func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			defer enter("wait_cancel")()
			select {
			case <-ctx.Done():
				cancelled.Add(1)
				return nil, ctx.Err()
			case <-time.After(time.Minute):
				return mcp.NewToolResultText("never cancelled"), nil
			}
		})
	s.AddTool(mcp.NewToolWithRawSchema("cancelled_count", "How many wait_cancel calls were cancelled.", schema(`{"type":"object"}`)),
		func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(fmt.Sprint(cancelled.Load())), nil
		})
	s.AddTool(mcp.NewToolWithRawSchema("running", "How many calls of a tool (slow or wait_cancel) are under way.",
		schema(`{"type":"object","properties":{"tool":{"type":"string"}},"required":["tool"]}`)),
		func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			n := int64(0)
			if v, ok := running.Load(r.GetString("tool", "")); ok {
				n = v.(*atomic.Int64).Load()
			}
			return mcp.NewToolResultText(fmt.Sprint(n)), nil
		})
	s.AddTool(mcp.NewToolWithRawSchema("touch_resource", "Tell subscribers that a resource changed (notifications/resources/updated).",
		schema(`{"type":"object","properties":{"uri":{"type":"string"}},"required":["uri"]}`)),
		func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			s.SendNotificationToAllClients(string(mcp.MethodNotificationResourceUpdated), map[string]any{"uri": r.GetString("uri", "")})
			return mcp.NewToolResultText("touched"), nil
		})
	s.AddTool(mcp.NewToolWithRawSchema("freeze", "Hang the server: it stays alive and reads its input but never writes again (stdio only).", schema(`{"type":"object"}`)),
		func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			frozen.Store(true)
			return mcp.NewToolResultText("frozen (this answer is never written)"), nil
		})
	s.AddTool(mcp.NewToolWithRawSchema("progress", "Report steps progress notifications, then finish.",
		schema(`{"type":"object","properties":{"steps":{"type":"integer","minimum":1,"maximum":100}},"required":["steps"]}`)),
		func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			steps := r.GetInt("steps", 1)
			var token mcp.ProgressToken
			if r.Params.Meta != nil {
				token = r.Params.Meta.ProgressToken
			}
			for i := 1; i <= steps && token != nil; i++ {
				_ = s.SendNotificationToClient(ctx, string(mcp.MethodNotificationProgress), map[string]any{
					"progressToken": token, "progress": i, "total": steps, "message": fmt.Sprintf("step %d", i),
				})
				time.Sleep(2 * time.Millisecond)
			}
			return mcp.NewToolResultText(fmt.Sprintf("done %d steps", steps)), nil
		})
	s.AddTool(mcp.NewToolWithRawSchema("fail", "Always reports a tool error.", schema(`{"type":"object"}`)),
		func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultError("the widget is broken: try widget 2"), nil
		})
	s.AddTool(mcp.NewToolWithRawSchema("rpcerror", "Fails with a JSON-RPC error.", schema(`{"type":"object"}`)),
		func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return nil, fmt.Errorf("database is down")
		})
	s.AddTool(mcp.NewToolWithRawSchema("big", "Return a text block of the given size.",
		schema(`{"type":"object","properties":{"bytes":{"type":"integer","minimum":0}},"required":["bytes"]}`)),
		func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(strings.Repeat("x", r.GetInt("bytes", 0))), nil
		})
	s.AddTool(mcp.NewToolWithRawSchema("big_twice", "Return text of the given size in content and again in structuredContent, as server-filesystem does; insert, when given, goes in the middle.",
		schema(`{"type":"object","properties":{"bytes":{"type":"integer","minimum":0},"insert":{"type":"string"},"isError":{"type":"boolean"}},"required":["bytes"]}`)),
		func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			half := strings.Repeat("x", r.GetInt("bytes", 0)/2)
			text := half + r.GetString("insert", "") + half
			return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(text)}, StructuredContent: map[string]any{"content": text},
				IsError: r.GetBool("isError", false)}, nil
		})
	s.AddTool(mcp.NewToolWithRawSchema("crash", "Exit the server process in the middle of the call.", schema(`{"type":"object"}`)),
		func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			time.Sleep(50 * time.Millisecond)
			os.Exit(7)
			return nil, nil
		})
	s.AddTool(mcp.NewToolWithRawSchema("read_path", "Echo a path argument.",
		schema(`{"type":"object","properties":{"path":{"type":"string"},"options":{"type":"object"}},"required":["path"]}`)),
		func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("read " + r.GetString("path", "")), nil
		})
	s.AddTool(mcp.NewToolWithRawSchema("ask_llm", "Ask the client's LLM (sampling) and return its answer.",
		schema(`{"type":"object","properties":{"prompt":{"type":"string"}},"required":["prompt"]}`)),
		func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if resp, ok := r.Params.InputResponses["llm"]; ok {
				if err := resp.DecodeFor(mcp.MethodSamplingCreateMessage); err != nil || resp.Sampling == nil {
					return mcp.NewToolResultError(fmt.Sprintf("bad sampling answer: %v", err)), nil
				}
				text := ""
				if tc, ok := resp.Sampling.Content.(mcp.TextContent); ok {
					text = tc.Text
				} else if m, ok := resp.Sampling.Content.(map[string]any); ok {
					text, _ = m["text"].(string)
				}
				return mcp.NewToolResultText("LLM said: " + text), nil
			}
			return server.NewInputRequestBuilder("s1").Sample("llm", mcp.CreateMessageParams{
				Messages:  []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.NewTextContent(r.GetString("prompt", ""))}},
				MaxTokens: 50,
			}).ToolResult(), nil
		})
	s.AddTool(mcp.NewToolWithRawSchema("client_caps", "Return the client capabilities this request declared (2026-07-28), or \"none\".", schema(`{"type":"object"}`)),
		func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			info := server.RequestProtocolInfoFromContext(ctx)
			if info == nil || info.ClientCapabilities == nil {
				return mcp.NewToolResultText("none"), nil
			}
			b, err := json.Marshal(info.ClientCapabilities)
			if err != nil {
				return nil, err
			}
			return mcp.NewToolResultText(string(b)), nil
		})
	s.AddTool(mcp.NewToolWithRawSchema("log", "Send a log message to the client, then answer.", schema(`{"type":"object"}`)),
		func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			_ = s.SendLogMessageToClient(ctx, mcp.NewLoggingMessageNotification(mcp.LoggingLevelWarning, "testserver", "careful now"))
			time.Sleep(20 * time.Millisecond)
			return mcp.NewToolResultText("logged"), nil
		})
	s.AddTool(mcp.NewToolWithRawSchema("add_tool", "Register a new tool named by the argument (tools/list_changed).",
		schema(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)),
		func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			name := r.GetString("name", "")
			s.AddTool(mcp.NewToolWithRawSchema(name, "Added at run time.", schema(`{"type":"object"}`)),
				func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					return mcp.NewToolResultText("I am " + name), nil
				})
			return mcp.NewToolResultText("added " + name), nil
		})
	s.AddTool(mcp.NewToolWithRawSchema("odd_content", "Return a content block of a type the spec does not know.", schema(`{"type":"object"}`)),
		func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent("first"), mcp.NewResourceLink("test://x", "x", "a link", "text/plain")}}, nil
		})
	// Names the gateway must refuse, with a logged reason.
	for _, bad := range []string{"__proto__", "constructor", "bad name!", "tab\tname"} {
		s.AddTool(mcp.NewToolWithRawSchema(bad, "must never reach the catalog", schema(`{"type":"object"}`)),
			func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return mcp.NewToolResultText("should not be callable"), nil
			})
	}
	// A schema with a top-level anyOf and $defs, which mcp-go's typed
	// ListTools would mangle; it must arrive byte for byte.
	s.AddTool(mcp.NewToolWithRawSchema("union", "Takes either {id} or {name}.",
		schema(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","$defs":{"id":{"type":"integer","minimum":1}},"anyOf":[{"required":["id"]},{"required":["name"]}],"properties":{"id":{"$ref":"#/$defs/id"},"name":{"type":"string"}}}`)),
		func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("ok"), nil
		})

	s.AddResource(mcp.NewResource("test://static", "static", mcp.WithMIMEType("text/plain")),
		func(ctx context.Context, r mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: "test://static", MIMEType: "text/plain", Text: "static text"}}, nil
		})
	s.AddResourceTemplate(mcp.NewResourceTemplate("test://item/{id}", "item"),
		func(ctx context.Context, r mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: r.Params.URI, MIMEType: "text/plain", Text: "item " + strings.TrimPrefix(r.Params.URI, "test://item/")}}, nil
		})
	s.AddPrompt(mcp.NewPrompt("greet", mcp.WithPromptDescription("Greet someone"), mcp.WithArgument("name", mcp.RequiredArgument())),
		func(ctx context.Context, r mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{{Role: mcp.RoleUser, Content: mcp.NewTextContent("Hello, " + r.Params.Arguments["name"])}}}, nil
		})
	return s
}
