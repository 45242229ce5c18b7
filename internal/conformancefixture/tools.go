package conformancefixture

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Tool names, exactly as the conformance scenarios call them.
const (
	ToolSimpleText          = "test_simple_text"
	ToolImageContent        = "test_image_content"
	ToolAudioContent        = "test_audio_content"
	ToolEmbeddedResource    = "test_embedded_resource"
	ToolMultipleContent     = "test_multiple_content_types"
	ToolWithLogging         = "test_tool_with_logging"
	ToolErrorHandling       = "test_error_handling"
	ToolWithProgress        = "test_tool_with_progress"
	ToolSampling            = "test_sampling"
	ToolElicitation         = "test_elicitation"
	ToolElicitationDefaults = "test_elicitation_sep1034_defaults"
	ToolElicitationEnums    = "test_elicitation_sep1330_enums"
	ToolJSONSchema202012    = "json_schema_2020_12_tool"
	ToolReconnection        = "test_reconnection"
	// ToolUpdateWatched is not called by the suite: it changes the watched
	// resource and sends notifications/resources/updated to its subscribers,
	// so a gateway test can prove that subscriptions are relayed end to end.
	ToolUpdateWatched = "test_update_watched_resource"
)

// stepDelay spaces the notifications of the logging and progress tools, as
// the scenarios ask (~50 ms), so a client sees them arrive during the call.
const stepDelay = 50 * time.Millisecond

// JSONSchema202012 is the input schema of json_schema_2020_12_tool, byte for
// byte what the json-schema-2020-12 scenario expects to find again in
// tools/list ($schema, $defs and additionalProperties must survive every hop;
// suite 0.2 adds SEP-2106's $anchor, allOf/anyOf and if/then/else).
const JSONSchema202012 = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "$defs": {
    "address": {
      "$anchor": "addressDef",
      "type": "object",
      "properties": {
        "street": {"type": "string"},
        "city": {"type": "string"}
      }
    }
  },
  "properties": {
    "name": {"type": "string"},
    "address": {"$ref": "#/$defs/address"},
    "contactMethod": {"type": "string", "enum": ["phone", "email"]},
    "phone": {"type": "string"},
    "email": {"type": "string"}
  },
  "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
  "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
  "then": {"required": ["phone"]},
  "else": {"required": ["email"]},
  "additionalProperties": false
}`

// readOnly annotates a fixture tool that changes nothing.
func readOnly(title string) mcp.ToolOption {
	return mcp.WithToolAnnotation(mcp.ToolAnnotation{
		Title:           title,
		ReadOnlyHint:    mcp.ToBoolPtr(true),
		DestructiveHint: mcp.ToBoolPtr(false),
		IdempotentHint:  mcp.ToBoolPtr(true),
		OpenWorldHint:   mcp.ToBoolPtr(false),
	})
}

func (f *fixture) addTools() {
	noArgs := func(name, title, description string) mcp.Tool {
		return mcp.NewTool(name, mcp.WithDescription(description), readOnly(title))
	}

	f.srv.AddTools(
		server.ServerTool{
			Tool: noArgs(ToolSimpleText, "Simple text", "Returns one text block: the tools-call-simple-text fixture."),
			Handler: func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return mcp.NewToolResultText("This is a simple text response for testing."), nil
			},
		},
		server.ServerTool{
			Tool: noArgs(ToolImageContent, "Image content", "Returns a 1x1 red PNG as image content."),
			Handler: func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewImageContent(redPixelPNG, "image/png")}}, nil
			},
		},
		server.ServerTool{
			Tool: noArgs(ToolAudioContent, "Audio content", "Returns a short silent WAV as audio content."),
			Handler: func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewAudioContent(silentWAV, "audio/wav")}}, nil
			},
		},
		server.ServerTool{
			Tool: noArgs(ToolEmbeddedResource, "Embedded resource", "Returns an embedded text resource."),
			Handler: func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewEmbeddedResource(mcp.TextResourceContents{
					URI: "test://embedded-resource", MIMEType: "text/plain", Text: "This is an embedded resource content.",
				})}}, nil
			},
		},
		server.ServerTool{
			Tool: noArgs(ToolMultipleContent, "Mixed content", "Returns text, image and embedded resource content in one result."),
			Handler: func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{
					mcp.NewTextContent("Multiple content types test:"),
					mcp.NewImageContent(redPixelPNG, "image/png"),
					mcp.NewEmbeddedResource(mcp.TextResourceContents{
						URI: "test://mixed-content-resource", MIMEType: "application/json", Text: `{"test":"data","value":123}`,
					}),
				}}, nil
			},
		},
		server.ServerTool{
			Tool:    noArgs(ToolWithLogging, "Logging", "Sends three info log notifications ~50 ms apart while it runs."),
			Handler: f.withLogging,
		},
		server.ServerTool{
			Tool: noArgs(ToolErrorHandling, "Error", "Always fails with a tool error (isError: true)."),
			Handler: func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return mcp.NewToolResultError("This tool intentionally returns an error for testing"), nil
			},
		},
		server.ServerTool{
			Tool:    noArgs(ToolWithProgress, "Progress", "Reports progress 0, 50, 100 of 100, ~50 ms apart, when the call carries a progress token."),
			Handler: f.withProgress,
		},
		server.ServerTool{
			Tool: mcp.NewTool(ToolSampling,
				mcp.WithDescription("Asks the client's LLM to answer a prompt (sampling/createMessage) and returns its answer."),
				mcp.WithString("prompt", mcp.Required(), mcp.Description("The prompt to send to the LLM")),
				readOnly("Sampling")),
			Handler: f.sampling,
		},
		server.ServerTool{
			Tool: mcp.NewTool(ToolElicitation,
				mcp.WithDescription("Asks the user for a username and email (elicitation/create) and returns the answer."),
				mcp.WithString("message", mcp.Required(), mcp.Description("The message to show the user")),
				readOnly("Elicitation")),
			Handler: f.elicitation,
		},
		server.ServerTool{
			Tool:    noArgs(ToolElicitationDefaults, "Elicitation defaults", "Elicits a form whose fields carry defaults of every primitive type (SEP-1034)."),
			Handler: f.elicitationDefaults,
		},
		server.ServerTool{
			Tool:    noArgs(ToolElicitationEnums, "Elicitation enums", "Elicits a form with all five enum shapes of SEP-1330."),
			Handler: f.elicitationEnums,
		},
		server.ServerTool{
			// NewToolWithRawSchema keeps the schema byte for byte; the typed
			// ToolInputSchema would drop $schema and $defs.
			Tool: mcp.NewToolWithRawSchema(ToolJSONSchema202012, "Tool with JSON Schema 2020-12 features", json.RawMessage(JSONSchema202012)),
			Handler: func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return mcp.NewToolResultText("Received: " + string(mustJSON(req.Params.Arguments))), nil
			},
		},
		server.ServerTool{
			Tool:    noArgs(ToolReconnection, "Reconnection", "Closes its SSE stream mid-call (SEP-1699) and answers on the resumed stream; over stdio it simply answers after a short delay."),
			Handler: f.reconnection,
		},
		server.ServerTool{
			Tool: mcp.NewTool(ToolUpdateWatched,
				mcp.WithDescription("Changes test://watched-resource and notifies its subscribers (notifications/resources/updated)."),
				mcp.WithToolAnnotation(mcp.ToolAnnotation{Title: "Update watched resource", ReadOnlyHint: mcp.ToBoolPtr(false), DestructiveHint: mcp.ToBoolPtr(false), IdempotentHint: mcp.ToBoolPtr(false), OpenWorldHint: mcp.ToBoolPtr(false)})),
			Handler: f.updateWatched,
		},
	)
}

func (f *fixture) withLogging(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	for i, msg := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
		if i > 0 {
			if err := sleep(ctx, stepDelay); err != nil {
				return nil, err
			}
		}
		if err := f.log(ctx, mcp.LoggingLevelInfo, ServerName, msg); err != nil {
			return nil, fmt.Errorf("sending log notification %q: %w", msg, err)
		}
	}
	return mcp.NewToolResultText("Tool with logging executed successfully"), nil
}

func (f *fixture) withProgress(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var token mcp.ProgressToken
	if req.Params.Meta != nil {
		token = req.Params.Meta.ProgressToken
	}
	for i, progress := range []int{0, 50, 100} {
		if i > 0 {
			if err := sleep(ctx, stepDelay); err != nil {
				return nil, err
			}
		}
		if token == nil {
			continue
		}
		if err := f.notify(ctx, string(mcp.MethodNotificationProgress), map[string]any{
			"progressToken": token,
			"progress":      progress,
			"total":         100,
			"message":       fmt.Sprintf("step %d of 3", i+1),
		}); err != nil {
			return nil, fmt.Errorf("sending progress %d/100: %w", progress, err)
		}
	}
	if token == nil {
		return mcp.NewToolResultText("Completed 3 steps (no progress token in the request, so no progress was reported)"), nil
	}
	return mcp.NewToolResultText("Completed 3 steps with progress 0, 50, 100 of 100"), nil
}

// sampling, elicitation*: multi round-trip handlers. The first invocation
// returns input_required with the request; the retry (by a 2026 client, or by
// mcp-go's bridge for a 2025 client) carries the answer under the same key.
const inputKey = "fixture"

func (f *fixture) sampling(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	prompt, err := req.RequireString("prompt")
	if err != nil {
		return mcp.NewToolResultError(`test_sampling needs the string argument "prompt", e.g. {"prompt": "Say hello"}`), nil
	}
	if answer := server.SamplingResponse(req.Params.InputResponses, inputKey); answer != nil {
		return mcp.NewToolResultText("LLM response: " + textOf(answer.Content)), nil
	}
	if clientCapabilities(ctx).Sampling == nil {
		return mcp.NewToolResultError("test_sampling needs a client that declares the sampling capability; this client did not"), nil
	}
	return server.NewInputRequestBuilder("").Sample(inputKey, mcp.CreateMessageParams{
		Messages:  []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.NewTextContent(prompt)}},
		MaxTokens: 100,
	}).ToolResult(), nil
}

func (f *fixture) elicitation(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	message, err := req.RequireString("message")
	if err != nil {
		return mcp.NewToolResultError(`test_elicitation needs the string argument "message", e.g. {"message": "Please provide your information"}`), nil
	}
	return f.elicit(ctx, req, "User response", message, map[string]any{
		"type": "object",
		"properties": map[string]any{
			"username": map[string]any{"type": "string", "description": "User's response"},
			"email":    map[string]any{"type": "string", "description": "User's email address"},
		},
		"required": []any{"username", "email"},
	})
}

func (f *fixture) elicitationDefaults(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return f.elicit(ctx, req, "Elicitation completed", "Please review the defaults and confirm your details", map[string]any{
		"type": "object",
		"properties": map[string]any{
			"name":     map[string]any{"type": "string", "description": "Full name", "default": "John Doe"},
			"age":      map[string]any{"type": "integer", "description": "Age in years", "default": 30},
			"score":    map[string]any{"type": "number", "description": "Score", "default": 95.5},
			"status":   map[string]any{"type": "string", "description": "Account status", "enum": []any{"active", "inactive", "pending"}, "default": "active"},
			"verified": map[string]any{"type": "boolean", "description": "Verified account", "default": true},
		},
	})
}

func (f *fixture) elicitationEnums(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	titled := func(pairs ...string) []any {
		out := make([]any, 0, len(pairs)/2)
		for i := 0; i+1 < len(pairs); i += 2 {
			out = append(out, map[string]any{"const": pairs[i], "title": pairs[i+1]})
		}
		return out
	}
	return f.elicit(ctx, req, "Elicitation completed", "Please choose from each list", map[string]any{
		"type": "object",
		"properties": map[string]any{
			"untitledSingle": map[string]any{"type": "string", "enum": []any{"option1", "option2", "option3"}},
			"titledSingle":   map[string]any{"type": "string", "oneOf": titled("value1", "First Option", "value2", "Second Option", "value3", "Third Option")},
			"legacyEnum": map[string]any{"type": "string", "enum": []any{"opt1", "opt2", "opt3"},
				"enumNames": []any{"Option One", "Option Two", "Option Three"}},
			"untitledMulti": map[string]any{"type": "array", "items": map[string]any{"type": "string", "enum": []any{"option1", "option2", "option3"}}},
			"titledMulti":   map[string]any{"type": "array", "items": map[string]any{"anyOf": titled("value1", "First Choice", "value2", "Second Choice", "value3", "Third Choice")}},
		},
	})
}

func (f *fixture) elicit(ctx context.Context, req mcp.CallToolRequest, label, message string, schema map[string]any) (*mcp.CallToolResult, error) {
	if answer := server.ElicitationResponse(req.Params.InputResponses, inputKey); answer != nil {
		return mcp.NewToolResultText(fmt.Sprintf("%s: action=%s, content=%s", label, answer.Action, mustJSON(answer.Content))), nil
	}
	if clientCapabilities(ctx).Elicitation == nil {
		return mcp.NewToolResultError(req.Params.Name + " needs a client that declares the elicitation capability; this client did not"), nil
	}
	return server.NewInputRequestBuilder("").Elicit(inputKey, mcp.ElicitationParams{
		Message:         message,
		RequestedSchema: schema,
	}).ToolResult(), nil
}

// reconnectionDelay is how long test_reconnection keeps working after it
// closed its stream, so that the answer is produced while the client is
// disconnected and has to be replayed.
const reconnectionDelay = 100 * time.Millisecond

func (f *fixture) reconnection(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	closed := false
	if rs := requestStreamFrom(ctx); rs != nil {
		closed = rs.closeStream()
	}
	if err := sleep(ctx, reconnectionDelay); err != nil {
		return nil, err
	}
	if closed {
		return mcp.NewToolResultText("Reconnection test completed: this answer was produced after the server closed the stream"), nil
	}
	return mcp.NewToolResultText("Reconnection test completed (no SSE stream to close on this transport)"), nil
}

func (f *fixture) updateWatched(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	version, sessions := f.bumpWatched()
	notified := 0
	for _, s := range sessions {
		if sendToSession(s, mcp.MethodNotificationResourceUpdated, map[string]any{"uri": WatchedResourceURI}) {
			notified++
		}
	}
	return mcp.NewToolResultText(fmt.Sprintf("%s is now at version %d; notified %d of %d subscriber(s)", WatchedResourceURI, version, notified, len(sessions))), nil
}

// sendToSession queues a notification on a session without blocking; a
// subscriber whose queue is full or that went away is skipped, which is not
// the caller's problem.
func sendToSession(s server.ClientSession, method string, params map[string]any) bool {
	if up, ok := s.(server.SessionWithStreamableHTTPConfig); ok {
		up.UpgradeToSSEWhenReceiveNotification()
	}
	n := mcp.JSONRPCNotification{
		JSONRPC:      mcp.JSONRPC_VERSION,
		Notification: mcp.Notification{Method: method, Params: mcp.NotificationParams{AdditionalFields: params}},
	}
	select {
	case s.NotificationChannel() <- n:
		return true
	default:
		return false
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return []byte(fmt.Sprintf("%q", fmt.Sprint(v)))
	}
	return b
}
