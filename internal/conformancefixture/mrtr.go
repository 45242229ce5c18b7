package conformancefixture

// The fixtures of suite 0.2's input-required-result-* scenarios (SEP-2322,
// multi round-trip requests): tools and a prompt that answer input_required
// with fixed keys, and take the retry's inputResponses. A 2025 client gets
// the same through mcp-go's bridge (server-initiated requests).

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Tool and prompt names of the input-required-result-* scenarios.
const (
	ToolInputElicitation   = "test_input_required_result_elicitation"
	ToolInputSampling      = "test_input_required_result_sampling"
	ToolInputListRoots     = "test_input_required_result_list_roots"
	ToolInputRequestState  = "test_input_required_result_request_state"
	ToolInputMultiple      = "test_input_required_result_multiple_inputs"
	ToolInputMultiRound    = "test_input_required_result_multi_round"
	ToolInputTamperedState = "test_input_required_result_tampered_state"
	ToolInputCapabilities  = "test_input_required_result_capabilities"
	PromptInputRequired    = "test_input_required_result_prompt"
)

// stateKey signs the fixture's requestStates (HMAC-SHA256), so a tampered
// one is told apart from its own; it lives as long as the process.
var stateKey = func() []byte {
	k := make([]byte, 32)
	_, _ = rand.Read(k)
	return k
}()

// signState returns the requestState for a round of a tool: the round's
// name and its signature.
func signState(tool, round string) string {
	payload := tool + "|" + round
	mac := hmac.New(sha256.New, stateKey)
	mac.Write([]byte(payload))
	return base64.RawURLEncoding.EncodeToString([]byte(payload)) + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// checkState returns the round a requestState names when the fixture signed
// it for tool, else an error saying what is wrong with it.
func checkState(tool, state string) (string, error) {
	payloadB64, sigB64, ok := strings.Cut(state, ".")
	payload, err1 := base64.RawURLEncoding.DecodeString(payloadB64)
	sig, err2 := base64.RawURLEncoding.DecodeString(sigB64)
	if !ok || err1 != nil || err2 != nil {
		return "", fmt.Errorf("requestState is not one this server issued (malformed); call %s again without inputResponses and requestState", tool)
	}
	mac := hmac.New(sha256.New, stateKey)
	mac.Write(payload)
	if !hmac.Equal(sig, mac.Sum(nil)) {
		return "", fmt.Errorf("requestState failed its integrity check (tampered or not issued by this server); call %s again without inputResponses and requestState", tool)
	}
	t, round, _ := strings.Cut(string(payload), "|")
	if t != tool {
		return "", fmt.Errorf("requestState was issued for %s, not %s", t, tool)
	}
	return round, nil
}

func elicitName(message, key string) mcp.ElicitationParams {
	return mcp.ElicitationParams{Message: message, RequestedSchema: map[string]any{
		"type":       "object",
		"properties": map[string]any{key: map[string]any{"type": "string"}},
		"required":   []any{key},
	}}
}

func (f *fixture) addInputRequiredTools() {
	tool := func(name, description string) mcp.Tool {
		return mcp.NewTool(name, mcp.WithDescription(description), readOnly(name))
	}
	f.srv.AddTools(
		server.ServerTool{Tool: tool(ToolInputElicitation, "Asks for the user's name (input_required, elicitation/create under \"user_name\") and greets them."), Handler: inputElicitation},
		server.ServerTool{Tool: tool(ToolInputSampling, "Asks the client's LLM a question (input_required, sampling/createMessage under \"capital_question\") and returns the answer."), Handler: inputSampling},
		server.ServerTool{Tool: tool(ToolInputListRoots, "Asks for the client's roots (input_required, roots/list under \"client_roots\") and lists them."), Handler: inputListRoots},
		server.ServerTool{Tool: tool(ToolInputRequestState, "Asks for a confirmation with a signed requestState, and says state-ok when the retry brings it back intact."), Handler: inputRequestState},
		server.ServerTool{Tool: tool(ToolInputMultiple, "Asks for a name, an LLM greeting and the roots in one input_required result."), Handler: inputMultiple},
		server.ServerTool{Tool: tool(ToolInputMultiRound, "Asks twice (step1, then step2), with a requestState that changes between the rounds."), Handler: inputMultiRound},
		server.ServerTool{Tool: tool(ToolInputTamperedState, "Asks for a confirmation under an HMAC-signed requestState and refuses a retry whose state was altered."), Handler: inputTamperedState},
		server.ServerTool{Tool: tool(ToolInputCapabilities, "Asks only what the request's declared client capabilities allow (sampling, elicitation, roots)."), Handler: inputCapabilities},
	)
	f.srv.AddPrompt(mcp.NewPrompt(PromptInputRequired,
		mcp.WithPromptTitle("Prompt that asks first"),
		mcp.WithPromptDescription("Asks what context to use (input_required, elicitation/create under \"user_context\") before it renders.")),
		func(_ context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			if answer := server.ElicitationResponse(req.Params.InputResponses, "user_context"); answer != nil {
				return mcp.NewGetPromptResult("A prompt rendered with the user's context", []mcp.PromptMessage{
					mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent("Context: "+string(mustJSON(answer.Content)))),
				}), nil
			}
			return server.NewInputRequestBuilder("").
				Elicit("user_context", elicitName("What context should the prompt use?", "context")).PromptResult(), nil
		})
}

func inputElicitation(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if answer := server.ElicitationResponse(req.Params.InputResponses, "user_name"); answer != nil {
		name, _ := answer.Content.(map[string]any)["name"].(string)
		return mcp.NewToolResultText(fmt.Sprintf("Hello, %s!", name)), nil
	}
	return server.NewInputRequestBuilder("").Elicit("user_name", elicitName("What is your name?", "name")).ToolResult(), nil
}

func inputSampling(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if answer := server.SamplingResponse(req.Params.InputResponses, "capital_question"); answer != nil {
		return mcp.NewToolResultText("The LLM said: " + textOf(answer.Content)), nil
	}
	return server.NewInputRequestBuilder("").Sample("capital_question", mcp.CreateMessageParams{
		Messages:  []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.NewTextContent("What is the capital of France?")}},
		MaxTokens: 100,
	}).ToolResult(), nil
}

func inputListRoots(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if answer := server.RootsResponse(req.Params.InputResponses, "client_roots"); answer != nil {
		uris := make([]string, 0, len(answer.Roots))
		for _, r := range answer.Roots {
			uris = append(uris, r.URI)
		}
		return mcp.NewToolResultText("Roots: " + strings.Join(uris, ", ")), nil
	}
	return server.NewInputRequestBuilder("").Roots("client_roots").ToolResult(), nil
}

func confirmRequest() mcp.ElicitationParams {
	return mcp.ElicitationParams{Message: "Please confirm", RequestedSchema: map[string]any{
		"type":       "object",
		"properties": map[string]any{"ok": map[string]any{"type": "boolean"}},
		"required":   []any{"ok"},
	}}
}

// confirmWithState is the request-state and tampered-state tools: a signed
// state on the first round, checked on the retry.
func confirmWithState(tool string, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if state := req.Params.RequestState; state != "" {
		if _, err := checkState(tool, state); err != nil {
			return nil, err
		}
		if server.ElicitationResponse(req.Params.InputResponses, "confirm") != nil {
			return mcp.NewToolResultText("state-ok: the requestState came back intact"), nil
		}
	}
	return server.NewInputRequestBuilder(signState(tool, "confirm")).Elicit("confirm", confirmRequest()).ToolResult(), nil
}

func inputRequestState(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return confirmWithState(ToolInputRequestState, req)
}

func inputTamperedState(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return confirmWithState(ToolInputTamperedState, req)
}

func inputMultiple(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	in := req.Params.InputResponses
	if req.Params.RequestState != "" {
		if _, err := checkState(ToolInputMultiple, req.Params.RequestState); err != nil {
			return nil, err
		}
	}
	name, greeting, roots := server.ElicitationResponse(in, "user_name"), server.SamplingResponse(in, "greeting"), server.RootsResponse(in, "client_roots")
	if name != nil && greeting != nil && roots != nil {
		return mcp.NewToolResultText(fmt.Sprintf("name=%s greeting=%q roots=%d", mustJSON(name.Content), textOf(greeting.Content), len(roots.Roots))), nil
	}
	return server.NewInputRequestBuilder(signState(ToolInputMultiple, "all")).
		Elicit("user_name", elicitName("What is your name?", "name")).
		Sample("greeting", mcp.CreateMessageParams{
			Messages:  []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.NewTextContent("Generate a greeting")}},
			MaxTokens: 50,
		}).
		Roots("client_roots").ToolResult(), nil
}

func inputMultiRound(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	round := ""
	if req.Params.RequestState != "" {
		r, err := checkState(ToolInputMultiRound, req.Params.RequestState)
		if err != nil {
			return nil, err
		}
		round = r
	}
	in := req.Params.InputResponses
	switch {
	case round == "step2" && server.ElicitationResponse(in, "step2") != nil:
		return mcp.NewToolResultText("Both steps answered: " + string(mustJSON(server.ElicitationResponse(in, "step2").Content))), nil
	case round == "step1" && server.ElicitationResponse(in, "step1") != nil:
		return server.NewInputRequestBuilder(signState(ToolInputMultiRound, "step2")).
			Elicit("step2", elicitName("Step 2: What is your favorite color?", "color")).ToolResult(), nil
	}
	return server.NewInputRequestBuilder(signState(ToolInputMultiRound, "step1")).
		Elicit("step1", elicitName("Step 1: What is your name?", "name")).ToolResult(), nil
}

func inputCapabilities(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	in := req.Params.InputResponses
	if len(in) > 0 {
		return mcp.NewToolResultText(fmt.Sprintf("answered %d input request(s)", len(in))), nil
	}
	caps := clientCapabilities(ctx)
	b := server.NewInputRequestBuilder("")
	asked := false
	if caps.Sampling != nil {
		b.Sample("question", mcp.CreateMessageParams{
			Messages:  []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.NewTextContent("Say hello")}},
			MaxTokens: 20,
		})
		asked = true
	}
	if caps.Elicitation != nil {
		b.Elicit("name", elicitName("What is your name?", "name"))
		asked = true
	}
	if caps.Roots != nil {
		b.Roots("roots")
		asked = true
	}
	if !asked {
		return mcp.NewToolResultText("the client declared none of sampling, elicitation and roots, so nothing was asked"), nil
	}
	return b.ToolResult(), nil
}
