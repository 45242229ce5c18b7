package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mark3labs/mcp-go/server"

	"github.com/sandboxrt/sandbox/auth"
)

// Transport is how the gateway talks to one upstream server.
type Transport string

// The transports. InProcess is an mcp-go server in this process (Spec's
// InProcess), for built-in tool sets and measurements.
const (
	Stdio          Transport = "stdio"
	StreamableHTTP Transport = "streamable-http"
	SSE            Transport = "sse"
	InProcess      Transport = "in-process"
)

// Spec says how to reach one server.
type Spec struct {
	Name      string // the server's name in the gateway, for logs
	Transport Transport
	// stdio: the process to start; it inherits only a small safe set of the
	// gateway's environment variables (PATH, HOME, ...) plus Env.
	Command string
	Args    []string
	Env     map[string]string
	Cwd     string
	// streamable-http and sse
	URL     string
	Headers map[string]string
	// ProtocolVersion pins the MCP protocol version ("" negotiates).
	ProtocolVersion string
	// InProcess is the server of the in-process transport.
	InProcess *server.MCPServer
}

// Host is what a supervisor asks of the gateway about its one server. Its
// methods are called from the supervisor's and the connection's goroutines
// and must not block on them.
type Host interface {
	// OperatorToken is the bearer token connection-level requests
	// (initialize, lists, health checks, subscriptions) carry ("": none).
	OperatorToken(ctx context.Context) string
	// ConnectRefused explains a connection the server refused with HTTP 401
	// (err wraps transport.ErrAuthorizationRequired; TokenFrom(ctx) is the
	// token it refused) as the error the operator reads.
	ConnectRefused(ctx context.Context, err error) error
	// Listed hands over what the server listed, for the kinds re-listed.
	Listed(kinds Kinds, l Listing)
	// StateChanged and Restarted report the supervisor's state (metrics).
	StateChanged(State)
	Restarted()
	// InFlight is how many calls are under way on the server.
	InFlight() int
	// ClientRequest answers a request the server sends to its client
	// (sampling, elicitation, roots) during a call: CallerFrom(ctx) is the
	// call's caller when the transport kept the call's context. An error
	// that is an *RPCError is sent back as that JSON-RPC error.
	ClientRequest(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)
	// LogMessage relays a notifications/message of the server.
	LogMessage(params json.RawMessage)
	// ResourceUpdated relays a notifications/resources/updated.
	ResourceUpdated(uri string, params json.RawMessage)
	// SubscribedURIs are the server's resources some session subscribed to.
	SubscribedURIs() []string
	// LogLevel is the most verbose log level any session asked for ("":
	// none), sent to a 2025-era server with logging/setLevel.
	LogLevel() string
}

// tokenKey carries the bearer token of the request being sent to the
// transport's header function.
type tokenKey struct{}

// WithToken returns a context whose requests carry token as their
// Authorization: Bearer header (per request: the connection is shared by
// every caller).
func WithToken(ctx context.Context, token string) context.Context {
	return context.WithValue(ctx, tokenKey{}, token)
}

// TokenFrom is the token WithToken put in ctx, "" for none.
func TokenFrom(ctx context.Context) string {
	tok, _ := ctx.Value(tokenKey{}).(string)
	return tok
}

// callerKey carries the caller of the call being served, and the context
// the call was made under, to the handlers of requests the upstream sends
// back while it runs (HTTP transports pass the call's context through; the
// in-process one keeps this value by isolatedContext).
type callerKey struct{}

type callerValue struct {
	caller  auth.Caller
	ctx     context.Context
	answers Answers
}

// Answers says which questions of an upstream (sampling, elicitation) the
// caller of a request can have answered; roots are always answered (the
// gateway answers them from its config). A 2026-07-28 request declares
// exactly these as its client capabilities, so that a server does not ask
// what no one would answer, and its _meta stays small (mcp-go's server
// decodes every capability it is sent, on every request).
type Answers uint8

const (
	AnswersSampling Answers = 1 << iota
	AnswersElicitation
	AnswersAll = AnswersSampling | AnswersElicitation
	// AnswersNone: roots only; what the gateway's own requests (listings,
	// health checks) declare, made for no caller who could answer.
	AnswersNone Answers = 0
)

// WithCaller returns a context for a request made on behalf of c, whose
// upstream questions can be answered as answers says.
func WithCaller(ctx context.Context, c auth.Caller, answers Answers) context.Context {
	return context.WithValue(ctx, callerKey{}, callerValue{c, ctx, answers})
}

// answersFrom is what WithCaller said the request's caller can answer;
// AnswersAll for a request made without WithCaller (tests: every call and
// forward is made WithCaller, and the gateway's own listings and health
// checks declare AnswersNone themselves).
func answersFrom(ctx context.Context) Answers {
	if v, ok := ctx.Value(callerKey{}).(callerValue); ok {
		return v.answers & AnswersAll
	}
	return AnswersAll
}

// CallerFrom is the caller WithCaller put in ctx.
func CallerFrom(ctx context.Context) (auth.Caller, bool) {
	v, ok := ctx.Value(callerKey{}).(callerValue)
	return v.caller, ok
}

// CallContext is the context WithCaller was given, for what the gateway
// keeps there about the call (whom its upstream's requests may ask): the
// in-process transport hands the upstream's requests a context of its own
// (isolatedContext). ctx itself when WithCaller was not used.
func CallContext(ctx context.Context) context.Context {
	if v, ok := ctx.Value(callerKey{}).(callerValue); ok {
		return v.ctx
	}
	return ctx
}

// RPCError is a JSON-RPC error response from the upstream (or one the
// gateway sends back for a request it will not relay).
type RPCError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *RPCError) Error() string { return fmt.Sprintf("JSON-RPC error %d: %s", e.Code, e.Message) }

// ConnLostError says the connection died while a request was in flight;
// Reason is fit for agents (never what the server printed).
type ConnLostError struct{ Reason string }

func (e *ConnLostError) Error() string { return "connection lost: " + e.Reason }

// ErrResultTooLarge: the answer passed Options.MaxResultBytes (a stdio
// line, an HTTP body or one SSE event) and was not read.
var ErrResultTooLarge = errors.New("upstream response exceeds the result size cap")
