package upstream

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/sandboxrt/sandbox/auth"
)

// recorderEnv makes this test binary a raw 2026-07-28 stdio server that
// answers every tools/call with the params it received for it, for the
// connection's server/discover and for the last tools/list: what went over
// the wire, as the server read it.
const recorderEnv = "SANDBOX_UPSTREAM_TEST_RECORDER"

func TestMain(m *testing.M) {
	if os.Getenv(recorderEnv) != "" {
		serveRecorder()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func serveRecorder() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := bufio.NewWriter(os.Stdout)
	var discover, list json.RawMessage = []byte("null"), []byte("null")
	for in.Scan() {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if json.Unmarshal(in.Bytes(), &req) != nil || req.ID == nil {
			continue // a notification
		}
		var result string
		switch req.Method {
		case "server/discover":
			discover = req.Params
			result = `{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"serverInfo":{"name":"recorder","version":"1"}}`
		case "tools/list":
			list = req.Params
			result = `{"tools":[{"name":"seen","inputSchema":{"type":"object"}}]}`
		case "tools/call":
			result = fmt.Sprintf(`{"content":[],"discover":%s,"list":%s,"call":%s}`, discover, list, req.Params)
		default:
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"no %s here"}}`+"\n", req.ID, req.Method)
			out.Flush()
			continue
		}
		fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", req.ID, result)
		out.Flush()
	}
}

// recorderConn connects to the recording server over stdio.
func recorderConn(t *testing.T) *Conn {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	s := New(Spec{Name: "rec", Transport: Stdio, Command: exe, Env: map[string]string{recorderEnv: "1"}}, quietHost{},
		Options{StartupTimeout: 20 * time.Second, MaxResultBytes: 1 << 20, ClientName: "sandbox-gateway", ClientVersion: "9.9"})
	c, err := s.connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.close)
	return c
}

// TestModernRequestsCarryNoClientInfo: on 2026-07-28 a tools/call's _meta
// carries the protocol version and the gateway's capabilities (required per
// request) but not clientInfo (optional per request: it went with
// server/discover, which still carries it).
func TestModernRequestsCarryNoClientInfo(t *testing.T) {
	t.Parallel()
	c := recorderConn(t)
	if !c.modern {
		t.Fatalf("the recorder speaks 2026-07-28; negotiated %q", c.version)
	}
	raw, _, err := c.CallTool(context.Background(), "seen", nil, json.RawMessage(`{"a":1}`), nil, "debug", false)
	if err != nil {
		t.Fatal(err)
	}
	type meta struct {
		Version      string          `json:"io.modelcontextprotocol/protocolVersion"`
		Capabilities json.RawMessage `json:"io.modelcontextprotocol/clientCapabilities"`
		ClientInfo   *struct {
			Name, Version string
		} `json:"io.modelcontextprotocol/clientInfo"`
		LogLevel string `json:"io.modelcontextprotocol/logLevel"`
	}
	var seen struct {
		Discover struct {
			Meta meta `json:"_meta"`
		} `json:"discover"`
		Call struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
			Meta      meta            `json:"_meta"`
		} `json:"call"`
	}
	if err := json.Unmarshal(raw, &seen); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	call := seen.Call
	if call.Name != "seen" || string(call.Arguments) != `{"a":1}` {
		t.Errorf("tools/call params: %s", raw)
	}
	if call.Meta.Version != "2026-07-28" || call.Meta.LogLevel != "debug" {
		t.Errorf("tools/call _meta lacks the protocol version or log level: %s", raw)
	}
	var caps map[string]json.RawMessage
	if json.Unmarshal(call.Meta.Capabilities, &caps) != nil || caps["sampling"] == nil || caps["elicitation"] == nil || caps["roots"] == nil {
		t.Errorf("tools/call _meta lacks the gateway's capabilities: %s", raw)
	}
	if call.Meta.ClientInfo != nil {
		t.Errorf("tools/call _meta carries clientInfo: %s", raw)
	}
	if ci := seen.Discover.Meta.ClientInfo; ci == nil || ci.Name != "sandbox-gateway" || ci.Version != "9.9" {
		t.Errorf("server/discover _meta lacks the gateway's clientInfo: %s", raw)
	}
	if seen.Discover.Meta.Version != "2026-07-28" {
		t.Errorf("server/discover _meta lacks the protocol version: %s", raw)
	}
}

// quietHost is a Host with no sessions, subscriptions or credentials.
type quietHost struct{}

func (quietHost) OperatorToken(context.Context) string              { return "" }
func (quietHost) ConnectRefused(_ context.Context, err error) error { return err }
func (quietHost) Listed(Kinds, Listing)                             {}
func (quietHost) StateChanged(State)                                {}
func (quietHost) Restarted()                                        {}
func (quietHost) InFlight() int                                     { return 0 }
func (quietHost) LogMessage(json.RawMessage)                        {}
func (quietHost) ResourceUpdated(string, json.RawMessage)           {}
func (quietHost) SubscribedURIs() []string                          { return nil }
func (quietHost) LogLevel() string                                  { return "" }
func (quietHost) ClientRequest(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	return nil, &RPCError{Code: -32601, Message: "no client here"}
}

// TestPlainMetaIsTheMapsEncoding: the _meta encoded once per connection,
// log level and Answers puts the same bytes on the wire as the map it
// stands for, on either protocol, at any level; a level that is not MCP's
// is not kept.
func TestPlainMetaIsTheMapsEncoding(t *testing.T) {
	t.Parallel()
	for _, modern := range []bool{true, false} {
		c := &Conn{modern: modern, version: "2026-07-28"}
		c.encodeCapabilities()
		for answers := Answers(0); answers <= AnswersAll; answers++ {
			for _, level := range []string{"", "debug", "emergency", "odd<&>level", "debug"} {
				var want, got []byte
				var err error
				if m := c.requestMeta("", level, answers); m != nil {
					want, err = json.Marshal(callParams{Name: "t", Arguments: json.RawMessage(`{"a":1}`), Meta: m})
				} else {
					want, err = json.Marshal(callParams{Name: "t", Arguments: json.RawMessage(`{"a":1}`)})
				}
				if err != nil {
					t.Fatal(err)
				}
				if got, err = json.Marshal(callParams{Name: "t", Arguments: json.RawMessage(`{"a":1}`), Meta: c.plainMeta(level, answers)}); err != nil {
					t.Fatal(err)
				}
				if string(got) != string(want) {
					t.Errorf("modern %v, level %q, answers %d:\n %s\nwant\n %s", modern, level, answers, got, want)
				}
			}
			if _, kept := c.metaJSON.Load(metaKey{"odd<&>level", answers}); kept {
				t.Error("a level that is not MCP's was kept")
			}
			if _, kept := c.metaJSON.Load(metaKey{"debug", answers}); kept != modern {
				t.Errorf("modern %v: debug's encoding kept: %v", modern, kept)
			}
		}
		// Bits beyond AnswersAll share AnswersAll's entry: the cache stays
		// bounded whatever a caller passes.
		c.plainMeta("debug", 0xff)
		n := 0
		c.metaJSON.Range(func(any, any) bool { n++; return true })
		if want := map[bool]int{true: 4 * 3, false: 0}[modern]; n != want {
			t.Errorf("modern %v: %d encodings kept, want %d", modern, n, want)
		}
	}
}

// TestModernCallDeclaresWhatItsCallerAnswers: a 2026-07-28 tools/call made
// for a caller declares the capabilities that caller's questions can be
// answered with (roots always: the gateway answers them itself), and the
// gateway's own requests (no caller) declare all of the gateway's.
func TestModernCallDeclaresWhatItsCallerAnswers(t *testing.T) {
	t.Parallel()
	c := recorderConn(t)
	someone := auth.Caller{Principal: auth.Principal{ID: "ada"}, Session: "s1"}
	for _, tc := range []struct {
		name string
		ctx  context.Context
		want string
	}{
		{"a caller who answers everything", WithCaller(context.Background(), someone, AnswersAll),
			`{"elicitation":{"form":{},"url":{}},"roots":{"listChanged":true},"sampling":{}}`},
		{"a caller who cannot be asked", WithCaller(context.Background(), someone, 0),
			`{"roots":{"listChanged":true}}`},
		{"a caller who answers elicitation only", WithCaller(context.Background(), someone, AnswersElicitation),
			`{"elicitation":{"form":{},"url":{}},"roots":{"listChanged":true}}`},
		{"no caller (the gateway's own request)", context.Background(),
			`{"elicitation":{"form":{},"url":{}},"roots":{"listChanged":true},"sampling":{}}`},
	} {
		for _, progress := range []func(Progress){nil, func(Progress) {}} { // plainMeta, and the map
			raw, _, err := c.CallTool(tc.ctx, "seen", nil, json.RawMessage(`{}`), progress, "info", false)
			if err != nil {
				t.Fatal(err)
			}
			var seen struct {
				Call struct {
					Meta map[string]json.RawMessage `json:"_meta"`
				} `json:"call"`
			}
			if err := json.Unmarshal(raw, &seen); err != nil {
				t.Fatalf("%v: %s", err, raw)
			}
			var caps map[string]any
			if err := json.Unmarshal(seen.Call.Meta["io.modelcontextprotocol/clientCapabilities"], &caps); err != nil {
				t.Fatalf("%s: %v: %s", tc.name, err, raw)
			}
			if got, _ := json.Marshal(caps); string(got) != tc.want {
				t.Errorf("%s (progress %v): declared %s, want %s", tc.name, progress != nil, got, tc.want)
			}
		}
	}
}

// TestGatewaysOwnRequestsDeclareNoQuestions: the gateway's own 2026-07-28
// requests, its listings and health checks, are made for no one who could
// answer an upstream's question, so they declare roots alone (which the
// gateway answers itself).
func TestGatewaysOwnRequestsDeclareNoQuestions(t *testing.T) {
	t.Parallel()
	c := recorderConn(t) // connecting lists the tools
	lastList := func() string {
		t.Helper()
		raw, _, err := c.CallTool(WithCaller(context.Background(), auth.Caller{}, AnswersAll), "seen", nil, json.RawMessage(`{}`), nil, "", false)
		if err != nil {
			t.Fatal(err)
		}
		var seen struct {
			List struct {
				Meta map[string]json.RawMessage `json:"_meta"`
			} `json:"list"`
		}
		if err := json.Unmarshal(raw, &seen); err != nil {
			t.Fatalf("%v: %s", err, raw)
		}
		return string(seen.List.Meta["io.modelcontextprotocol/clientCapabilities"])
	}
	const rootsOnly = `{"roots":{"listChanged":true}}`
	if got := lastList(); got != rootsOnly {
		t.Errorf("the listing at connect declared %s, want %s", got, rootsOnly)
	}
	if err := c.healthCheck(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := lastList(); got != rootsOnly {
		t.Errorf("the health check declared %s, want %s", got, rootsOnly)
	}
}

// TestResultsAreChecked: a stdio connection vouches for its results being
// JSON (its transport checks each line), so the gateway skips its own
// check of a tool's result; a connection with no transport does not
// (mcp-go's transports: gateway's TestHTTPResultsAreCheckedByTheTransport).
func TestResultsAreChecked(t *testing.T) {
	t.Parallel()
	if c := recorderConn(t); !c.ResultsChecked() {
		t.Error("a stdio connection does not vouch for its results")
	}
	if c := (&Conn{}); c.ResultsChecked() {
		t.Error("a connection without a transport vouches for its results")
	}
}
