package upstream

// What the gateway's pipeline sends through a ready connection: tool calls
// (with the 2026-07-28 multi round-trip exchange) and pass-through requests.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/mark3labs/mcp-go/mcp"
)

// callParams is the tools/call params the gateway sends. Meta is the
// request's _meta: a map[string]any, the same encoded once per connection
// (Conn.plainMeta), or nil for none.
type callParams struct {
	Name           string          `json:"name"`
	Arguments      json.RawMessage `json:"arguments"`
	Meta           any             `json:"_meta,omitempty"`
	InputResponses json.RawMessage `json:"inputResponses,omitempty"`
	RequestState   string          `json:"requestState,omitempty"`
}

// maxInputRoundTrips bounds the 2026-07-28 multi round-trip exchange.
const maxInputRoundTrips = 10

// CallTool sends tools/call for the tool the server lists as name (def is
// its definition as listed, for SEP-2243 parameter headers) with args as
// they are, and returns the raw result. progress, when set, receives the
// call's progress notifications; logLevel is the calling session's (sent
// with each request on the 2026-07-28 protocol). When a 2026-07-28 server
// answers that it needs input first (resultType "input_required"), each
// embedded request goes to Host.ClientRequest and the call is sent again
// with the answers, unless ctx carries Asking: then the input_required
// answer is returned as it is.
//
// With stage, an answer longer than Options.MaxResultBytes (up to
// MaxStagedBytes) comes back in a file instead of the bytes; the caller
// must Remove it. Without, such an answer is ErrResultTooLarge.
func (c *Conn) CallTool(ctx context.Context, name string, def, args json.RawMessage, progress func(Progress), logLevel string, stage bool) (json.RawMessage, *Staged, error) {
	token := ""
	if progress != nil {
		token = "sbx-p-" + strconv.FormatUint(c.nextID.Add(1), 10)
		defer c.watchProgress(token, progress)()
	}
	asking, answers := AskingFrom(ctx), answersFrom(ctx)
	var meta map[string]any // built only for a call that needs more than plainMeta
	p := callParams{Name: name, Arguments: args}
	if token == "" && asking == nil {
		p.Meta = c.plainMeta(logLevel, answers) // requestMeta's map, encoded once
	} else if meta = c.askingMeta(c.requestMeta(token, logLevel, answers), asking); meta != nil {
		p.Meta = meta
	}
	if asking != nil {
		p.InputResponses, p.RequestState = asking.InputResponses, asking.RequestState
	}
	var header http.Header
	if c.modern && c.isHTTP && hasParamHeaders(def) {
		var mt mcp.Tool
		if json.Unmarshal(def, &mt) == nil {
			enc, _ := json.Marshal(map[string]any{"name": name, "arguments": args})
			header = http.Header{}
			for k, v := range mcp.GenerateParamHeaders(&mt, enc) {
				header.Set(k, v)
			}
		}
	}
	// (What the server declared is asked first: the tool's definition is
	// decoded only for a server that takes tasks, not on every call.)
	if !c.modern && c.takesToolTasks() && runsOnlyAsTask(def) {
		return c.callAsTask(ctx, p, header, stage) // uptask.go
	}
	// A 2026-07-28 server's tool that runs only as a task is asked for one
	// (the tasks extension declared), and its task awaited (uptask.go).
	extTask := c.servesTasksExtension() && runsOnlyAsTask(def)
	if extTask {
		if meta == nil {
			meta = c.requestMeta(token, logLevel, answers)
		}
		meta = declaringTasks(meta)
		p.Meta = meta
	}
	for round := 0; ; round++ {
		raw, staged, err := c.roundTrip(ctx, "tools/call", p, header, stage)
		if staged != nil && !stage {
			if raw, err = c.unstage(staged); err != nil {
				return nil, nil, err
			}
			staged = nil
		}
		if err != nil || staged != nil {
			return nil, staged, err
		}
		if extTask {
			if id, poll := extensionTask(raw); id != "" {
				raw, err := c.awaitExtensionTask(ctx, id, poll, meta)
				return raw, nil, err
			}
		}
		if !bytes.Contains(raw, []byte(`"input_required"`)) {
			return raw, nil, nil
		}
		var ir struct {
			ResultType    string                     `json:"resultType"`
			InputRequests map[string]json.RawMessage `json:"inputRequests"`
			RequestState  string                     `json:"requestState"`
		}
		if json.Unmarshal(raw, &ir) != nil || ir.ResultType != "input_required" || asking != nil {
			return raw, nil, nil // a caller with Asking answers for itself
		}
		if round >= maxInputRoundTrips {
			return nil, nil, &RPCError{Code: mcp.INTERNAL_ERROR, Message: fmt.Sprintf("the server asked for input more than %d times", maxInputRoundTrips)}
		}
		answers := make(map[string]json.RawMessage, len(ir.InputRequests))
		for key, rawReq := range ir.InputRequests {
			var r struct {
				Method string          `json:"method"`
				Params json.RawMessage `json:"params"`
			}
			if err := json.Unmarshal(rawReq, &r); err != nil {
				return nil, nil, &RPCError{Code: mcp.INVALID_PARAMS, Message: "malformed input request: " + err.Error()}
			}
			ans, err := c.s.host.ClientRequest(ctx, r.Method, r.Params)
			if err != nil {
				return nil, nil, err
			}
			answers[key] = ans
		}
		p.InputResponses, _ = json.Marshal(answers)
		p.RequestState = ir.RequestState
	}
}

// Forward sends one pass-through request (resources/read, prompts/get,
// completion/complete) and returns its raw result. params gets the
// request's _meta (the stateless protocol's metadata with the calling
// session's logLevel); with Asking in ctx, the caller's capabilities and
// answers go with it, and an input_required answer comes back as it is.
func (c *Conn) Forward(ctx context.Context, method string, params map[string]any, logLevel string) (json.RawMessage, error) {
	asking := AskingFrom(ctx)
	if meta := c.askingMeta(c.requestMeta("", logLevel, answersFrom(ctx)), asking); meta != nil {
		params["_meta"] = meta
	}
	if asking != nil && len(asking.InputResponses) > 0 {
		params["inputResponses"] = asking.InputResponses
	}
	if asking != nil && asking.RequestState != "" {
		params["requestState"] = asking.RequestState
	}
	return c.request(ctx, method, params, nil)
}

// Capabilities are what the server declared at initialize.
func (c *Conn) Capabilities() mcp.ServerCapabilities { return c.caps }

// ProcessID is the process id of a stdio server (0 for other transports):
// for the operator's diagnostics and tests that kill the server.
func (c *Conn) ProcessID() int {
	if c.proc == nil || c.proc.cmd.Process == nil {
		return 0
	}
	return c.proc.cmd.Process.Pid
}

// SetLogLevel asks a 2025-era server that logs to send at least level
// ("" or a 2026-07-28 server: nothing to ask; the level travels with each
// request there). A failure is only logged.
func (c *Conn) SetLogLevel(ctx context.Context, level string) {
	if c.modern || c.caps.Logging == nil || level == "" {
		return
	}
	if _, err := c.request(c.s.withOperatorToken(ctx), "logging/setLevel", map[string]any{"level": level}, nil); err != nil {
		c.s.log.Debug("logging/setLevel failed", "server", c.s.spec.Name, "error", err)
	}
}

// resubscribe re-establishes resource subscriptions after a (re)connect.
func (s *Supervisor) resubscribe(ctx context.Context, c *Conn) {
	for _, uri := range s.host.SubscribedURIs() {
		if err := c.Subscribe(ctx, uri, true); err != nil {
			s.log.Warn("resubscribe failed", "server", s.spec.Name, "uri", uri, "error", err)
		}
	}
}
