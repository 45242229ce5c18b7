// Package conformancefixture is an MCP server that serves every fixture the
// server scenarios of the official conformance suite
// (@modelcontextprotocol/conformance 0.1.16, and 0.2's scenarios of protocol
// 2026-07-28: input_required, stateless requests) call: tools with fixed names
// (test_simple_text, test_tool_with_progress, test_sampling, ...), fixed
// resources, a resource template, subscriptions, prompts, completions and
// logging, and sampling and elicitation requests back to the client.
//
// It exists so the gateway can be judged by the suite: the gateway runs in
// pass-through mode in front of this fixture (as a stdio upstream, see
// cmd/conformance-fixture) and the suite drives the gateway. Run directly over
// HTTP (NewHTTPHandler) the fixture is also the control: every scenario the
// fixture passes on its own and fails through the gateway is the gateway's
// fault. docs/fixtures.md maps each scenario to the fixtures it calls.
//
// Server-to-client requests (sampling, elicitation) are written as multi
// round-trip handlers (SEP-2322): a client on protocol 2026-07-28 receives an
// input_required result and retries; for 2025 clients mcp-go performs the
// classic server-initiated request and re-invokes the handler. One handler
// therefore serves both protocol eras, which is what a gateway sitting
// between a 2025 client and a 2026 upstream connection needs.
package conformancefixture

import (
	"context"
	"fmt"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// ServerName is the name the fixture reports in its initialize result.
const ServerName = "sandbox-conformance-fixture"

// New returns a fresh fixture server with every tool, resource, template,
// prompt and completion the conformance suite's server scenarios call, and
// the capabilities they need (tools, resources with subscribe, prompts,
// completions, logging, sampling, elicitation). Each call returns an
// independent server with its own state (the watched resource's version and
// its subscribers).
func New() *server.MCPServer {
	f := &fixture{subscribers: map[string]map[server.ClientSession]struct{}{}}
	hooks := &server.Hooks{}
	hooks.AddAfterSubscribe(func(ctx context.Context, _ any, req *mcp.SubscribeRequest, _ *mcp.EmptyResult) {
		f.subscribe(server.ClientSessionFromContext(ctx), req.Params.URI)
	})
	hooks.AddAfterUnsubscribe(func(ctx context.Context, _ any, req *mcp.UnsubscribeRequest, _ *mcp.EmptyResult) {
		f.unsubscribe(server.ClientSessionFromContext(ctx), req.Params.URI)
	})
	// Protocol 2026-07-28 replaced resources/subscribe with the filter of a
	// subscriptions/listen stream, which lasts as long as the request.
	hooks.AddBeforeSubscriptionsListen(func(ctx context.Context, _ any, req *mcp.SubscriptionsListenRequest) {
		for _, uri := range req.Params.Notifications.ResourceSubscriptions {
			f.subscribe(server.ClientSessionFromContext(ctx), uri)
		}
	})
	hooks.AddAfterSubscriptionsListen(func(ctx context.Context, _ any, req *mcp.SubscriptionsListenRequest, _ *mcp.SubscriptionsListenResult) {
		for _, uri := range req.Params.Notifications.ResourceSubscriptions {
			f.unsubscribe(server.ClientSessionFromContext(ctx), uri)
		}
	})
	hooks.AddOnUnregisterSession(func(_ context.Context, s server.ClientSession) {
		f.forgetSession(s)
	})

	f.srv = server.NewMCPServer(ServerName, "0.1.16",
		server.WithInstructions("Fixture server for the MCP conformance suite; every tool, resource and prompt is named as the suite's scenarios expect."),
		server.WithToolCapabilities(true),
		server.WithResourceCapabilities(true, true),
		server.WithPromptCapabilities(true),
		server.WithCompletions(),
		server.WithPromptCompletionProvider(completer{}),
		server.WithResourceCompletionProvider(completer{}),
		server.WithLogging(),
		server.WithElicitation(),
		server.WithHooks(hooks),
		server.WithRecovery(),
		server.WithToolFilter(presentRequiredTasks),
	)
	f.srv.EnableSampling()
	f.addTools()
	f.addInputRequiredTools()
	f.addStatelessTools()
	f.addTaskTools()
	f.addResources()
	f.addPrompts()
	return f.srv
}

// fixture holds the server and the little state the scenarios need.
type fixture struct {
	srv *server.MCPServer

	mu             sync.Mutex
	watchedVersion int
	// subscribers maps a resource URI to the sessions subscribed to it, so
	// that notifications/resources/updated reaches only those sessions. The
	// session values themselves are kept (not ids) because a 2026-07-28
	// listen stream over HTTP has an ephemeral session the server never
	// registers under an id.
	subscribers map[string]map[server.ClientSession]struct{}
}

// notify sends a notification that belongs to the request in ctx. Over the
// fixture's own HTTP handler it goes on that request's SSE stream (see
// requestStream), so a client is guaranteed to see it before the response;
// elsewhere (stdio, a gateway's in-process client) it goes through the
// session as usual.
func (f *fixture) notify(ctx context.Context, method string, params map[string]any) error {
	if rs := requestStreamFrom(ctx); rs != nil {
		return rs.notify(method, params)
	}
	return f.srv.SendNotificationToClient(ctx, method, params)
}

// log sends notifications/message at level when the client asked for that
// level: logging/setLevel on 2025 sessions, the request's _meta log level on
// protocol 2026-07-28 (which forbids logs a request did not ask for).
func (f *fixture) log(ctx context.Context, level mcp.LoggingLevel, logger, message string) error {
	if !logLevelAllows(ctx, level) {
		return nil
	}
	return f.notify(ctx, string(mcp.MethodNotificationMessage), map[string]any{
		"level":  level,
		"logger": logger,
		"data":   message,
	})
}

func logLevelAllows(ctx context.Context, level mcp.LoggingLevel) bool {
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.Modern {
		return info.LogLevel != "" && level.ShouldSendTo(info.LogLevel)
	}
	session, ok := server.ClientSessionFromContext(ctx).(server.SessionWithLogging)
	if !ok {
		return false
	}
	return level.ShouldSendTo(session.GetLogLevel())
}

// clientCapabilities returns what the client declared: per request on
// protocol 2026-07-28, at initialize before that.
func clientCapabilities(ctx context.Context) mcp.ClientCapabilities {
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.Modern && info.ClientCapabilities != nil {
		return *info.ClientCapabilities
	}
	if session, ok := server.ClientSessionFromContext(ctx).(server.SessionWithClientInfo); ok {
		return session.GetClientCapabilities()
	}
	return mcp.ClientCapabilities{}
}

// textOf returns the text of a sampling result's content, whichever shape
// the decoder produced.
func textOf(content any) string {
	switch c := content.(type) {
	case mcp.TextContent:
		return c.Text
	case *mcp.TextContent:
		return c.Text
	case map[string]any:
		if s, ok := c["text"].(string); ok {
			return s
		}
	case []mcp.Content:
		for _, part := range c {
			if s := textOf(part); s != "" {
				return s
			}
		}
	}
	return fmt.Sprint(content)
}
