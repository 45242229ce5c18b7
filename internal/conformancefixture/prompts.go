package conformancefixture

import (
	"context"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
)

// Prompt names, exactly as the conformance scenarios get them.
const (
	PromptSimple           = "test_simple_prompt"
	PromptWithArguments    = "test_prompt_with_arguments"
	PromptEmbeddedResource = "test_prompt_with_embedded_resource"
	PromptWithImage        = "test_prompt_with_image"
)

func (f *fixture) addPrompts() {
	f.srv.AddPrompt(mcp.NewPrompt(PromptSimple,
		mcp.WithPromptTitle("Simple prompt"),
		mcp.WithPromptDescription("A prompt without arguments (prompts-get-simple).")),
		func(context.Context, mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return mcp.NewGetPromptResult("A simple prompt", []mcp.PromptMessage{
				mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent("This is a simple prompt for testing.")),
			}), nil
		})
	f.srv.AddPrompt(mcp.NewPrompt(PromptWithArguments,
		mcp.WithPromptTitle("Prompt with arguments"),
		mcp.WithPromptDescription("Substitutes arg1 and arg2 into its text (prompts-get-with-args); arg1 has completions."),
		mcp.WithArgument("arg1", mcp.ArgumentDescription("First test argument"), mcp.RequiredArgument()),
		mcp.WithArgument("arg2", mcp.ArgumentDescription("Second test argument"), mcp.RequiredArgument())),
		func(_ context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			args := req.Params.Arguments
			for _, name := range []string{"arg1", "arg2"} {
				if _, ok := args[name]; !ok {
					return nil, fmt.Errorf("%s needs the arguments arg1 and arg2, e.g. {\"arg1\": \"hello\", \"arg2\": \"world\"}; %s is missing", PromptWithArguments, name)
				}
			}
			text := fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", args["arg1"], args["arg2"])
			return mcp.NewGetPromptResult("A prompt with arguments", []mcp.PromptMessage{
				mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent(text)),
			}), nil
		})
	f.srv.AddPrompt(mcp.NewPrompt(PromptEmbeddedResource,
		mcp.WithPromptTitle("Prompt with embedded resource"),
		mcp.WithPromptDescription("Embeds a text resource under the given URI (prompts-get-embedded-resource)."),
		mcp.WithArgument("resourceUri", mcp.ArgumentDescription("URI of the resource to embed"), mcp.RequiredArgument())),
		func(_ context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			uri := req.Params.Arguments["resourceUri"]
			if uri == "" {
				return nil, fmt.Errorf("%s needs the argument resourceUri, e.g. {\"resourceUri\": \"test://example-resource\"}", PromptEmbeddedResource)
			}
			return mcp.NewGetPromptResult("A prompt with an embedded resource", []mcp.PromptMessage{
				mcp.NewPromptMessage(mcp.RoleUser, mcp.NewEmbeddedResource(mcp.TextResourceContents{
					URI: uri, MIMEType: "text/plain", Text: "Embedded resource content for testing.",
				})),
				mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent("Please process the embedded resource above.")),
			}), nil
		})
	f.srv.AddPrompt(mcp.NewPrompt(PromptWithImage,
		mcp.WithPromptTitle("Prompt with image"),
		mcp.WithPromptDescription("Carries a 1x1 red PNG (prompts-get-with-image).")),
		func(context.Context, mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return mcp.NewGetPromptResult("A prompt with an image", []mcp.PromptMessage{
				mcp.NewPromptMessage(mcp.RoleUser, mcp.NewImageContent(redPixelPNG, "image/png")),
				mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent("Please analyze the image above.")),
			}), nil
		})
}

// completionCandidates are the values completion/complete draws from, per
// prompt argument or template variable. A request gets the candidates that
// start with the typed prefix (case-insensitive), in this order.
var completionCandidates = map[string][]string{
	PromptWithArguments + "/arg1": {"test", "testValue1", "test-case", "paris", "park", "party"},
	PromptWithArguments + "/arg2": {"testValue2", "world", "wonder"},
	TemplateURI + "/id":           {"1", "2", "3", "42", "123"},
}

// completer implements mcp-go's prompt and resource completion providers.
type completer struct{}

func (completer) CompletePromptArgument(_ context.Context, prompt string, arg mcp.CompleteArgument, _ mcp.CompleteContext) (*mcp.Completion, error) {
	return complete(prompt+"/"+arg.Name, arg.Value), nil
}

func (completer) CompleteResourceArgument(_ context.Context, uri string, arg mcp.CompleteArgument, _ mcp.CompleteContext) (*mcp.Completion, error) {
	return complete(uri+"/"+arg.Name, arg.Value), nil
}

// complete returns the matching candidates; an unknown prompt or argument
// completes to nothing, which the spec allows (values: []).
func complete(key, prefix string) *mcp.Completion {
	values := []string{}
	for _, c := range completionCandidates[key] {
		if strings.HasPrefix(strings.ToLower(c), strings.ToLower(prefix)) {
			values = append(values, c)
		}
	}
	return &mcp.Completion{Values: values, Total: len(values), HasMore: false}
}
