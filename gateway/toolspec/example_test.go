package toolspec_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/gateway"
	"github.com/sandboxrt/sandbox/gateway/toolspec"
)

// A tool this process answers itself. An MCP front end serves it with
// frontend.Server.AddTool(spec); here its handler is called directly, as
// the front end would for a tools/call.
func Example() {
	greet := toolspec.Spec{
		Name:             "greet",
		Description:      "Greet the caller.",
		InputSchema:      json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`),
		MaxArgumentBytes: 1 << 10,
		Handler: func(ctx context.Context, req toolspec.Request) (*gateway.CallResult, error) {
			var in struct {
				Name string `json:"name"`
			}
			if err := json.Unmarshal(req.Arguments, &in); err != nil {
				return nil, &gateway.Error{Code: gateway.CodeValidationFailed, Message: "greet takes {\"name\": \"...\"}"}
			}
			text, _ := json.Marshal(map[string]string{"type": "text", "text": "hello, " + in.Name})
			return &gateway.CallResult{Content: []json.RawMessage{text}}, nil
		},
	}
	res, err := greet.Handler(context.Background(), toolspec.Request{Caller: auth.Caller{Principal: auth.Operator()}, Arguments: json.RawMessage(`{"name":"ada"}`)})
	if err != nil {
		panic(err)
	}
	fmt.Println(string(res.Content[0]))
	// Output: {"text":"hello, ada","type":"text"}
}
