package conformancefixture

// The diagnostic tools of suite 0.2's server-stateless scenario (SEP-2575)
// and the x-mcp-header tool of http-custom-header-server-validation
// (SEP-2243).

import (
	"context"
	"encoding/json"
	"net/http"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Tool names of the server-stateless scenario and the x-mcp-header tool.
const (
	// ToolMissingCapability needs sampling: a 2026-07-28 request that does
	// not declare it is refused with -32021 (over HTTP, 400) before it runs.
	ToolMissingCapability = "test_missing_capability"
	// ToolStreamingElicitation asks for input the 2026 way (input_required),
	// never with a request of its own on the response stream.
	ToolStreamingElicitation = "test_streaming_elicitation"
	// ToolLoggingTool logs, which a 2026 request sees only when its _meta
	// asks for a log level.
	ToolLoggingTool = "test_logging_tool"
	// ToolTriggerToolChange and ToolTriggerPromptChange change the lists
	// (a tool, a prompt that comes and goes), for list-changed notifications.
	ToolTriggerToolChange   = "test_trigger_tool_change"
	ToolTriggerPromptChange = "test_trigger_prompt_change"
	// ToolHeaderParam mirrors its "region" argument into the Mcp-Param-Region
	// header (x-mcp-header), which the server checks against the body.
	ToolHeaderParam = "test_header_param"
)

// HeaderParamSchema is test_header_param's input schema.
const HeaderParamSchema = `{
  "type": "object",
  "properties": {
    "region": {"type": "string", "description": "A region, also sent as the Mcp-Param-Region header", "x-mcp-header": "Region"}
  },
  "required": ["region"]
}`

func (f *fixture) addStatelessTools() {
	tool := func(name, description string) mcp.Tool {
		return mcp.NewTool(name, mcp.WithDescription(description), readOnly(name))
	}
	var toolShown, promptShown atomic.Bool
	f.srv.AddTools(
		server.ServerTool{Tool: tool(ToolMissingCapability, "Needs the client's sampling capability: a request that does not declare it is refused with -32021."), Handler: missingCapability},
		server.ServerTool{Tool: tool(ToolStreamingElicitation, "Asks the user for a name with input_required (elicitation/create under \"name\")."), Handler: streamingElicitation},
		server.ServerTool{Tool: tool(ToolLoggingTool, "Logs one message at info (sent only when the request asks for a log level) and answers."), Handler: f.loggingTool},
		server.ServerTool{Tool: tool(ToolTriggerToolChange, "Adds or removes the tool test_dynamic_tool, so that the tool list changes."),
			Handler: func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				if toolShown.CompareAndSwap(false, true) {
					f.srv.AddTool(tool("test_dynamic_tool", "Comes and goes with test_trigger_tool_change."), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
						return mcp.NewToolResultText("dynamic"), nil
					})
					return mcp.NewToolResultText("added test_dynamic_tool"), nil
				}
				toolShown.Store(false)
				f.srv.DeleteTools("test_dynamic_tool")
				return mcp.NewToolResultText("removed test_dynamic_tool"), nil
			}},
		server.ServerTool{Tool: tool(ToolTriggerPromptChange, "Adds or removes the prompt test_dynamic_prompt, so that the prompt list changes."),
			Handler: func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				if promptShown.CompareAndSwap(false, true) {
					f.srv.AddPrompt(mcp.NewPrompt("test_dynamic_prompt", mcp.WithPromptDescription("Comes and goes with test_trigger_prompt_change.")),
						func(context.Context, mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
							return mcp.NewGetPromptResult("dynamic", []mcp.PromptMessage{mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent("dynamic"))}), nil
						})
					return mcp.NewToolResultText("added test_dynamic_prompt"), nil
				}
				promptShown.Store(false)
				f.srv.DeletePrompts("test_dynamic_prompt")
				return mcp.NewToolResultText("removed test_dynamic_prompt"), nil
			}},
		server.ServerTool{
			Tool: mcp.NewToolWithRawSchema(ToolHeaderParam, "Echoes its region argument, which a 2026-07-28 HTTP request also carries in the Mcp-Param-Region header (SEP-2243).", json.RawMessage(HeaderParamSchema)),
			Handler: func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				region, _ := req.GetArguments()["region"].(string)
				return mcp.NewToolResultText("region: " + region), nil
			}},
	)
}

// missingCapability runs only for a client that declared sampling (a 2026
// request without it is refused over HTTP before it gets here:
// refuseMissingCapability). Over stdio or for a 2025 session the refusal is
// a tool error, which is what mcp-go lets a handler say.
func missingCapability(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if clientCapabilities(ctx).Sampling == nil {
		return mcp.NewToolResultError(ToolMissingCapability + " needs a client that declares the sampling capability; this client did not"), nil
	}
	if answer := server.SamplingResponse(req.Params.InputResponses, "probe"); answer != nil {
		return mcp.NewToolResultText("sampled: " + textOf(answer.Content)), nil
	}
	return server.NewInputRequestBuilder("").Sample("probe", mcp.CreateMessageParams{
		Messages:  []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.NewTextContent("Say hello")}},
		MaxTokens: 20,
	}).ToolResult(), nil
}

func streamingElicitation(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if answer := server.ElicitationResponse(req.Params.InputResponses, "name"); answer != nil {
		return mcp.NewToolResultText("Hello, " + string(mustJSON(answer.Content))), nil
	}
	return server.NewInputRequestBuilder("").Elicit("name", elicitName("What is your name?", "name")).ToolResult(), nil
}

func (f *fixture) loggingTool(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if err := f.log(ctx, mcp.LoggingLevelInfo, "conformance-fixture", "test_logging_tool ran"); err != nil {
		return nil, err
	}
	return mcp.NewToolResultText("logged (if the request asked for a log level)"), nil
}

// refuseMissingCapability answers a 2026-07-28 tools/call of
// test_missing_capability that does not declare sampling with -32021 and
// HTTP 400, as SEP-2575 says; mcp-go gives a tool handler no way to choose
// its JSON-RPC error code, so the HTTP handler does it before mcp-go reads
// the request. It reports whether it answered.
func refuseMissingCapability(w http.ResponseWriter, body []byte) bool {
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Name string `json:"name"`
			Meta struct {
				Version string                     `json:"io.modelcontextprotocol/protocolVersion"`
				Caps    map[string]json.RawMessage `json:"io.modelcontextprotocol/clientCapabilities"`
			} `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil || msg.Method != string(mcp.MethodToolsCall) || msg.Params.Name != ToolMissingCapability ||
		!mcp.IsModernProtocol(msg.Params.Meta.Version) || msg.Params.Meta.Caps == nil {
		return false
	}
	if _, ok := msg.Params.Meta.Caps["sampling"]; ok {
		return false
	}
	writeMissingCapability(w, msg.ID, "sampling", ToolMissingCapability+" needs the client's sampling capability; declare it in _meta[\"io.modelcontextprotocol/clientCapabilities\"] to call it")
	return true
}

// writeMissingCapability writes MissingRequiredClientCapabilityError
// (-32021) for request id with HTTP 400; its data names the capability as
// a ClientCapabilities object ({"sampling": {}}), as SEP-2575 says.
func writeMissingCapability(w http.ResponseWriter, id json.RawMessage, capability, message string) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	out, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0",
		"id":      id,
		"error": map[string]any{
			"code":    mcp.MISSING_REQUIRED_CLIENT_CAPABILITY,
			"message": message,
			"data":    map[string]any{"requiredCapabilities": map[string]any{capability: map[string]any{}}},
		},
	})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_, _ = w.Write(out)
}
