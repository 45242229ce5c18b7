package conformancefixture_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/sandboxrt/sandbox/internal/conformancefixture"
	"github.com/sandboxrt/sandbox/internal/conformancefixture/suite"
)

// recorder answers sampling and elicitation like a conformance client does
// and collects the notifications the fixture sends.
type recorder struct {
	mu            sync.Mutex
	notifications []mcp.JSONRPCNotification
	elicitations  []mcp.ElicitationRequest
	samples       []mcp.CreateMessageRequest
}

func (r *recorder) CreateMessage(_ context.Context, req mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	r.mu.Lock()
	r.samples = append(r.samples, req)
	r.mu.Unlock()
	return &mcp.CreateMessageResult{
		SamplingMessage: mcp.SamplingMessage{Role: mcp.RoleAssistant, Content: mcp.NewTextContent("a sampled answer")},
		Model:           "test-model",
		StopReason:      "endTurn",
	}, nil
}

func (r *recorder) Elicit(_ context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	r.mu.Lock()
	r.elicitations = append(r.elicitations, req)
	r.mu.Unlock()
	return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{
		Action:  mcp.ElicitationResponseActionAccept,
		Content: map[string]any{"username": "ada", "email": "ada@example.com"},
	}}, nil
}

func (r *recorder) waitFor(t *testing.T, method string, n int) []mcp.JSONRPCNotification {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		r.mu.Lock()
		var got []mcp.JSONRPCNotification
		for _, nt := range r.notifications {
			if nt.Method == method {
				got = append(got, nt)
			}
		}
		r.mu.Unlock()
		if len(got) >= n || time.Now().After(deadline) {
			return got
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// eras are the two ways a gateway may talk to the fixture over stdio.
var eras = []struct {
	name    string
	version string // "" lets mcp-go negotiate the newest (2026-07-28)
}{
	{"2026-07-28", ""},
	{"2025-11-25", "2025-11-25"},
}

func startStdio(t *testing.T, version string, withHandlers bool) (*client.Client, *recorder) {
	t.Helper()
	rec := &recorder{}
	tr := transport.NewStdio(suite.BuildFixture(t), nil)
	var opts []client.ClientOption
	if version != "" {
		opts = append(opts, client.WithProtocolVersion(version))
	}
	if withHandlers {
		opts = append(opts, client.WithSamplingHandler(rec), client.WithElicitationHandler(rec))
	}
	c := client.NewClient(tr, opts...)
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		rec.mu.Lock()
		rec.notifications = append(rec.notifications, n)
		rec.mu.Unlock()
	})
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	init := mcp.InitializeRequest{}
	init.Params.ClientInfo = mcp.Implementation{Name: "fixture-test", Version: "1"}
	res, err := c.Initialize(ctx, init)
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	if want := version; want != "" && res.ProtocolVersion != want {
		t.Fatalf("negotiated %s, want %s", res.ProtocolVersion, want)
	}
	return c, rec
}

func call(t *testing.T, c *client.Client, name string, args map[string]any, meta *mcp.Meta) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	req.Params.Meta = meta
	res, err := c.CallTool(ctx, req)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// TestStdioUpstream drives the fixture binary over stdio, as the gateway
// does, in both protocol eras: every tool the scenarios call, notifications,
// sampling and elicitation round trips, resources, prompts and completions.
func TestStdioUpstream(t *testing.T) {
	t.Parallel()
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			t.Parallel()
			c, rec := startStdio(t, era.version, true)
			ctx := context.Background()

			tools, err := c.ListTools(ctx, mcp.ListToolsRequest{})
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range tools.Tools {
				names = append(names, tool.Name)
				if tool.Description == "" {
					t.Errorf("tool %s has no description (tools-list requires one)", tool.Name)
				}
			}
			for _, want := range []string{
				conformancefixture.ToolSimpleText, conformancefixture.ToolImageContent, conformancefixture.ToolAudioContent,
				conformancefixture.ToolEmbeddedResource, conformancefixture.ToolMultipleContent, conformancefixture.ToolWithLogging,
				conformancefixture.ToolErrorHandling, conformancefixture.ToolWithProgress, conformancefixture.ToolSampling,
				conformancefixture.ToolElicitation, conformancefixture.ToolElicitationDefaults, conformancefixture.ToolElicitationEnums,
				conformancefixture.ToolJSONSchema202012, conformancefixture.ToolReconnection, conformancefixture.ToolUpdateWatched,
			} {
				if !slices.Contains(names, want) {
					t.Errorf("tools/list lacks %s (got %v)", want, names)
				}
			}

			if got := text(call(t, c, conformancefixture.ToolSimpleText, nil, nil)); got != "This is a simple text response for testing." {
				t.Errorf("test_simple_text = %q", got)
			}
			if res := call(t, c, conformancefixture.ToolErrorHandling, nil, nil); !res.IsError || !strings.Contains(text(res), "intentionally") {
				t.Errorf("test_error_handling = %+v, want isError with a message", res)
			}
			mixed := call(t, c, conformancefixture.ToolMultipleContent, nil, nil)
			if len(mixed.Content) != 3 {
				t.Errorf("test_multiple_content_types returned %d blocks, want text, image, resource", len(mixed.Content))
			}

			// Progress: three increasing notifications with the caller's token.
			res := call(t, c, conformancefixture.ToolWithProgress, nil, &mcp.Meta{ProgressToken: "tok-" + era.name})
			if res.IsError {
				t.Fatalf("progress tool failed: %s", text(res))
			}
			progress := rec.waitFor(t, string(mcp.MethodNotificationProgress), 3)
			if len(progress) != 3 {
				t.Fatalf("got %d progress notifications, want 3", len(progress))
			}
			for i, want := range []float64{0, 50, 100} {
				p := progress[i].Params.AdditionalFields
				if p["progressToken"] != "tok-"+era.name || p["progress"] != want || p["total"] != float64(100) {
					t.Errorf("progress %d = %v, want token tok-%s, progress %v of 100", i, p, era.name, want)
				}
			}

			// Logging: nothing below the client's level, three at info. The
			// server writes its notifications in order on one stream, so once
			// the progress of a later call has arrived, any log message the
			// first call sent would have too.
			call(t, c, conformancefixture.ToolWithLogging, nil, nil)
			call(t, c, conformancefixture.ToolWithProgress, nil, &mcp.Meta{ProgressToken: "after-logging"})
			if n := len(rec.waitFor(t, string(mcp.MethodNotificationProgress), 6)); n != 6 {
				t.Fatalf("got %d progress notifications after the second progress call, want 6", n)
			}
			if n := len(rec.waitFor(t, string(mcp.MethodNotificationMessage), 0)); n != 0 {
				t.Errorf("%d log notifications before the client set a level (default is error)", n)
			}
			setLevel := mcp.SetLevelRequest{}
			setLevel.Params.Level = mcp.LoggingLevelDebug
			//lint:ignore SA1019 the 2025-era protocol (its logging, GET stream and subscriptions) is served and tested on purpose
			if err := c.SetLevel(ctx, setLevel); err != nil {
				t.Fatal(err)
			}
			call(t, c, conformancefixture.ToolWithLogging, nil, nil)
			if logs := rec.waitFor(t, string(mcp.MethodNotificationMessage), 3); len(logs) != 3 || logs[0].Params.AdditionalFields["data"] != "Tool execution started" {
				t.Errorf("log notifications = %v, want the three steps", logs)
			}

			// Sampling and elicitation round trips.
			if got := text(call(t, c, conformancefixture.ToolSampling, map[string]any{"prompt": "Say hi"}, nil)); got != "LLM response: a sampled answer" {
				t.Errorf("test_sampling = %q", got)
			}
			if len(rec.samples) != 1 || rec.samples[0].MaxTokens != 100 || textOf(rec.samples[0].Messages[0].Content) != "Say hi" {
				t.Errorf("sampling request = %+v, want the prompt with maxTokens 100", rec.samples)
			}
			got := text(call(t, c, conformancefixture.ToolElicitation, map[string]any{"message": "Who are you?"}, nil))
			if !strings.Contains(got, "action=accept") || !strings.Contains(got, `"username":"ada"`) {
				t.Errorf("test_elicitation = %q", got)
			}
			call(t, c, conformancefixture.ToolElicitationEnums, nil, nil)
			if len(rec.elicitations) != 2 {
				t.Fatalf("%d elicitation requests, want 2", len(rec.elicitations))
			}
			schema, _ := json.Marshal(rec.elicitations[1].Params.RequestedSchema)
			for _, want := range []string{`"enumNames"`, `"oneOf"`, `"anyOf"`, `"titledMulti"`} {
				if !strings.Contains(string(schema), want) {
					t.Errorf("SEP-1330 schema lacks %s: %s", want, schema)
				}
			}

			// A missing required argument is a tool error that says what to send.
			if res := call(t, c, conformancefixture.ToolSampling, map[string]any{}, nil); !res.IsError || !strings.Contains(text(res), `"prompt"`) {
				t.Errorf("test_sampling without prompt = %+v", res)
			}

			// Over stdio there is no stream to close: the call just answers.
			if got := text(call(t, c, conformancefixture.ToolReconnection, nil, nil)); !strings.Contains(got, "completed") {
				t.Errorf("test_reconnection = %q", got)
			}
		})
	}
}

// TestStdioWithoutClientCapabilities: a client that declares neither
// sampling nor elicitation gets a tool error naming the missing capability,
// not a hang or a protocol error.
func TestStdioWithoutClientCapabilities(t *testing.T) {
	t.Parallel()
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			t.Parallel()
			c, _ := startStdio(t, era.version, false)
			for tool, args := range map[string]map[string]any{
				conformancefixture.ToolSampling:            {"prompt": "x"},
				conformancefixture.ToolElicitation:         {"message": "x"},
				conformancefixture.ToolElicitationDefaults: nil,
			} {
				res := call(t, c, tool, args, nil)
				if !res.IsError || !strings.Contains(text(res), "capability") {
					t.Errorf("%s without the capability = %+v, want a tool error about the capability", tool, res)
				}
			}
		})
	}
}

func TestStdioResourcesPromptsCompletions(t *testing.T) {
	t.Parallel()
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			t.Parallel()
			c, _ := startStdio(t, era.version, false)
			ctx := context.Background()

			read := func(uri string) (*mcp.ReadResourceResult, error) {
				req := mcp.ReadResourceRequest{}
				req.Params.URI = uri
				return c.ReadResource(ctx, req)
			}
			res, err := read("test://template/123/data")
			if err != nil {
				t.Fatal(err)
			}
			tc, ok := res.Contents[0].(mcp.TextResourceContents)
			if !ok || tc.URI != "test://template/123/data" || tc.Text != `{"data":"Data for ID: 123","id":"123","templateTest":true}` {
				t.Errorf("template read = %+v", res.Contents)
			}
			bin, err := read(conformancefixture.StaticBinaryURI)
			if err != nil {
				t.Fatal(err)
			}
			if bc, ok := bin.Contents[0].(mcp.BlobResourceContents); !ok || bc.MIMEType != "image/png" || bc.Blob == "" {
				t.Errorf("binary read = %+v", bin.Contents)
			}
			if _, err := read("test://no-such-resource"); err == nil {
				t.Error("reading an unknown resource succeeded")
			}

			prompt := mcp.GetPromptRequest{}
			prompt.Params.Name = conformancefixture.PromptWithArguments
			prompt.Params.Arguments = map[string]string{"arg1": "hello", "arg2": "world"}
			p, err := c.GetPrompt(ctx, prompt)
			if err != nil {
				t.Fatal(err)
			}
			if got := textOf(p.Messages[0].Content); got != "Prompt with arguments: arg1='hello', arg2='world'" {
				t.Errorf("prompt text = %q", got)
			}
			prompt.Params.Arguments = map[string]string{"arg1": "hello"}
			if _, err := c.GetPrompt(ctx, prompt); err == nil || !strings.Contains(err.Error(), "arg2") {
				t.Errorf("prompt without arg2: err = %v, want one naming arg2", err)
			}

			complete := mcp.CompleteRequest{}
			complete.Params.Ref = mcp.PromptReference{Type: "ref/prompt", Name: conformancefixture.PromptWithArguments}
			complete.Params.Argument.Name = "arg1"
			complete.Params.Argument.Value = "te"
			cr, err := c.Complete(ctx, complete)
			if err != nil {
				t.Fatal(err)
			}
			if want := []string{"test", "testValue1", "test-case"}; !slices.Equal(cr.Completion.Values, want) {
				t.Errorf("completion of arg1 %q = %v, want %v", "te", cr.Completion.Values, want)
			}
			complete.Params.Ref = mcp.ResourceReference{Type: "ref/resource", URI: conformancefixture.TemplateURI}
			complete.Params.Argument.Name = "id"
			complete.Params.Argument.Value = "12"
			if cr, err := c.Complete(ctx, complete); err != nil || !slices.Equal(cr.Completion.Values, []string{"123"}) {
				t.Errorf("completion of {id} 12 = %+v, %v", cr, err)
			}
		})
	}
}

// TestStdioSubscription: a subscriber to the watched resource is told when
// test_update_watched_resource changes it (resources/subscribe on 2025,
// subscriptions/listen on 2026-07-28).
func TestStdioSubscription(t *testing.T) {
	t.Parallel()
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			t.Parallel()
			c, rec := startStdio(t, era.version, false)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if era.version == "" {
				stop, err := c.ListenAsync(ctx, mcp.SubscriptionFilter{ResourceSubscriptions: []string{conformancefixture.WatchedResourceURI}}, func(err error) { t.Errorf("listen: %v", err) })
				if err != nil {
					t.Fatal(err)
				}
				defer stop()
				rec.waitFor(t, mcp.MethodNotificationSubscriptionsAcknowledged, 1)
			} else {
				sub := mcp.SubscribeRequest{}
				sub.Params.URI = conformancefixture.WatchedResourceURI
				//lint:ignore SA1019 the 2025-era protocol (its logging, GET stream and subscriptions) is served and tested on purpose
				if err := c.Subscribe(ctx, sub); err != nil {
					t.Fatal(err)
				}
			}
			got := text(call(t, c, conformancefixture.ToolUpdateWatched, nil, nil))
			if !strings.Contains(got, "notified 1 of 1") {
				t.Errorf("update = %q, want one subscriber notified", got)
			}
			updates := rec.waitFor(t, mcp.MethodNotificationResourceUpdated, 1)
			if len(updates) != 1 || updates[0].Params.AdditionalFields["uri"] != conformancefixture.WatchedResourceURI {
				t.Fatalf("resources/updated notifications = %+v", updates)
			}
			req := mcp.ReadResourceRequest{}
			req.Params.URI = conformancefixture.WatchedResourceURI
			res, err := c.ReadResource(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if tc := res.Contents[0].(mcp.TextResourceContents); !strings.Contains(tc.Text, "version 1") {
				t.Errorf("watched resource after one update = %q", tc.Text)
			}
		})
	}
}

func textOf(content any) string {
	switch c := content.(type) {
	case mcp.TextContent:
		return c.Text
	case *mcp.TextContent:
		return c.Text
	case map[string]any:
		s, _ := c["text"].(string)
		return s
	}
	return fmt.Sprint(content)
}
