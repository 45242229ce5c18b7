package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Issue 27, item 1: every string an upstream sends is redacted of the
// secrets the gateway knows, on every path it takes to a client or a
// snippet, however the upstream's JSON encoder escapes it. The upstreams
// here are hostile: they echo their secret everywhere they can.

// leakyEnv makes the test binary a stdio MCP server that echoes its API_KEY
// everywhere it can: "go" writes JSON as Go's encoder does, "odd" escapes
// differently (every vowel, "-" and non-ASCII character as \uXXXX in
// upper-case hex, "/" as "\/"), so that the secret is never in its answers
// as written.
const leakyEnv = "SANDBOX_TEST_LEAKY"

// leakySecret is the leaky servers' API_KEY. It has a "/" and a non-ASCII
// letter, which encoders escape differently.
const leakySecret = "sk-leak/Tëst-0123456789abcdef"

// serveLeakyIfAsked is called first thing in TestMain.
func serveLeakyIfAsked() {
	mode := os.Getenv(leakyEnv)
	if mode == "" {
		return
	}
	l := &leaky{secret: os.Getenv("API_KEY"), odd: mode == "odd", in: bufio.NewReaderSize(os.Stdin, 1<<20), out: bufio.NewWriter(os.Stdout)}
	l.serve()
	os.Exit(0)
}

type leaky struct {
	secret string
	odd    bool
	in     *bufio.Reader
	out    *bufio.Writer
	nextID int
}

type rpcMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// enc writes v as this server's encoder does.
func (l *leaky) enc(v any) []byte {
	if !l.odd {
		b, _ := json.Marshal(v)
		return b
	}
	var b bytes.Buffer
	oddJSON(&b, v)
	return b.Bytes()
}

// oddJSON writes v with strings escaped unlike Go's encoder.
func oddJSON(b *bytes.Buffer, v any) {
	switch v := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case int:
		b.WriteString(strconv.Itoa(v))
	case float64:
		b.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
	case json.RawMessage:
		b.Write(v)
	case string:
		b.WriteByte('"')
		for _, r := range v {
			switch {
			case r == '/':
				b.WriteString(`\/`)
			case strings.ContainsRune(`aeiouAEIOU-"\`, r) || r < 0x20 || r >= utf8.RuneSelf && r <= 0xFFFF:
				fmt.Fprintf(b, `\u%04X`, r)
			case r > 0xFFFF:
				r1, r2 := utf16Pair(r)
				fmt.Fprintf(b, `\u%04X\u%04X`, r1, r2)
			default:
				b.WriteRune(r)
			}
		}
		b.WriteByte('"')
	case []any:
		b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			oddJSON(b, e)
		}
		b.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			oddJSON(b, k)
			b.WriteByte(':')
			oddJSON(b, v[k])
		}
		b.WriteByte('}')
	default:
		panic(fmt.Sprintf("oddJSON: %T", v))
	}
}

func utf16Pair(r rune) (rune, rune) {
	r -= 0x10000
	return 0xD800 + r>>10, 0xDC00 + r&0x3FF
}

func (l *leaky) send(msg map[string]any) {
	msg["jsonrpc"] = "2.0"
	l.out.Write(l.enc(msg))
	l.out.WriteByte('\n')
	l.out.Flush()
}

func (l *leaky) reply(id json.RawMessage, result any) {
	l.send(map[string]any{"id": id, "result": result})
}

// ask sends a request to the client (the gateway) and waits for its
// answer, answering what the gateway asks meanwhile.
func (l *leaky) ask(method string, params any) json.RawMessage {
	l.nextID++
	id := json.RawMessage(strconv.Itoa(1000 + l.nextID))
	l.send(map[string]any{"id": id, "method": method, "params": params})
	for {
		m, ok := l.read()
		if !ok {
			return nil
		}
		if m.Method == "" && string(m.ID) == string(id) {
			if m.Error != nil {
				return m.Error
			}
			return m.Result
		}
		if m.Method != "" && m.ID != nil {
			l.handle(m)
		}
	}
}

func (l *leaky) read() (rpcMessage, bool) {
	for {
		line, err := l.in.ReadBytes('\n')
		if err != nil {
			return rpcMessage{}, false
		}
		var m rpcMessage
		if json.Unmarshal(line, &m) == nil {
			return m, true
		}
	}
}

func (l *leaky) serve() {
	for {
		m, ok := l.read()
		if !ok {
			return
		}
		if m.Method != "" && m.ID != nil {
			l.handle(m)
		}
	}
}

// leak is a sentence that holds the secret.
func (l *leaky) leak(where string) string {
	return where + " with key " + l.secret + " (sent by the server)"
}

func (l *leaky) handle(m rpcMessage) {
	s := l.secret
	mode := map[bool]string{false: "go", true: "odd"}[l.odd]
	// JSON as text, as servers hand results over: the secret in a value
	// and a key, and (level 3) in a string that is JSON itself.
	nested := string(l.enc(map[string]any{
		"deep": l.leak("nested"), s: "as a key",
		"inner": string(l.enc(map[string]any{"deepest": s})),
	}))
	switch m.Method {
	case "initialize":
		l.reply(m.ID, map[string]any{
			"protocolVersion": "2025-11-25",
			"capabilities":    map[string]any{"tools": map[string]any{}, "resources": map[string]any{}, "prompts": map[string]any{}, "completions": map[string]any{}, "logging": map[string]any{}},
			"serverInfo":      map[string]any{"name": "leaky " + s, "version": "1"},
			// Long enough that the gateway's cut (300) falls inside the second.
			"instructions": "Leaky test server. " + l.leak("instructions") + strings.Repeat(" z", 84) + l.leak(""),
		})
	case "tools/list":
		var tools []any
		for _, name := range []string{"echo", "echostruct", "fail", "rpcfail", "chatty", "elicit", "sample", "big"} {
			tools = append(tools, map[string]any{"name": name, "description": "The leaky server's " + name + ".", "inputSchema": map[string]any{"type": "object"}})
		}
		l.reply(m.ID, map[string]any{"tools": tools})
	case "tools/call":
		l.call(m, nested)
	case "resources/list":
		l.reply(m.ID, map[string]any{"resources": []any{map[string]any{"uri": "leak://" + mode + "/doc", "name": "doc"}}})
	case "resources/templates/list":
		l.reply(m.ID, map[string]any{"resourceTemplates": []any{}})
	case "resources/read":
		var p struct{ URI string }
		_ = json.Unmarshal(m.Params, &p)
		l.reply(m.ID, map[string]any{"contents": []any{map[string]any{"uri": p.URI, "mimeType": "application/json", "text": nested}}})
	case "prompts/list":
		l.reply(m.ID, map[string]any{"prompts": []any{map[string]any{"name": "brief", "description": "A prompt.", "arguments": []any{map[string]any{"name": "topic"}}}}})
	case "prompts/get":
		l.reply(m.ID, map[string]any{"description": l.leak("prompt description"), "messages": []any{
			map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": l.leak("prompt")}},
			map[string]any{"role": "assistant", "content": map[string]any{"type": "text", "text": nested}},
		}})
	case "completion/complete":
		l.reply(m.ID, map[string]any{"completion": map[string]any{"values": []any{s, l.leak("completion")}, "total": 2, "hasMore": false}})
	case "logging/setLevel", "ping":
		l.reply(m.ID, map[string]any{})
	default:
		l.send(map[string]any{"id": m.ID, "error": map[string]any{"code": -32601, "message": l.leak("unknown method " + m.Method), "data": map[string]any{s: s}}})
	}
}

func (l *leaky) call(m rpcMessage, nested string) {
	s := l.secret
	var p struct {
		Name string
		Meta struct {
			ProgressToken json.RawMessage `json:"progressToken"`
		} `json:"_meta"`
	}
	_ = json.Unmarshal(m.Params, &p)
	text := func(t string) map[string]any {
		return map[string]any{"content": []any{map[string]any{"type": "text", "text": t}}}
	}
	switch p.Name {
	case "echo":
		l.reply(m.ID, text(nested))
	case "echostruct":
		l.reply(m.ID, map[string]any{
			"content":           []any{map[string]any{"type": "text", "text": l.leak("structured's text")}},
			"structuredContent": map[string]any{"leak": l.leak("structured"), s: []any{s, map[string]any{s: nested}}},
		})
	case "fail":
		// The message the gateway makes of it is cut at 2000 bytes: there.
		r := text(l.leak("tool error") + strings.Repeat(" y", 945) + l.leak(""))
		r["isError"] = true
		r["structuredContent"] = map[string]any{"why": l.leak("tool error data")}
		l.reply(m.ID, r)
	case "rpcfail":
		// The gateway's message quotes 500 bytes of it: the cut falls there.
		l.send(map[string]any{"id": m.ID, "error": map[string]any{"code": -32000, "message": l.leak("JSON-RPC error") + strings.Repeat(" x", 193) + l.leak(""),
			"data": map[string]any{"detail": l.leak("error data"), s: nested}}})
	case "chatty":
		l.send(map[string]any{"method": "notifications/message", "params": map[string]any{
			"level": "error", "logger": "leaky " + s, "data": map[string]any{"msg": l.leak("log message"), s: []any{s, nested}}}})
		if p.Meta.ProgressToken != nil {
			l.send(map[string]any{"method": "notifications/progress", "params": map[string]any{
				"progressToken": p.Meta.ProgressToken, "progress": 1, "total": 2, "message": l.leak("progress")}})
		}
		l.reply(m.ID, text(l.leak("chatted")))
	case "elicit":
		ans := l.ask("elicitation/create", map[string]any{"message": l.leak("elicitation"), "requestedSchema": map[string]any{
			"type": "object", "properties": map[string]any{"answer": map[string]any{"type": "string", "description": l.leak("field"), "default": s}}}})
		l.reply(m.ID, text(l.leak("elicited")+": "+string(ans)))
	case "sample":
		ans := l.ask("sampling/createMessage", map[string]any{"maxTokens": 10, "systemPrompt": l.leak("system prompt"),
			"messages": []any{map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": nested}}}})
		l.reply(m.ID, text(l.leak("sampled")+": "+string(ans)))
	case "big":
		// Over the gateway's maxResultBytes: staged and spilled for code
		// mode, the secret far into it, and a few bytes before its end.
		l.reply(m.ID, text(string(l.enc(map[string]any{
			"a": strings.Repeat("padding ", 30000), "k": l.leak("big result"), "obj": map[string]any{s: nested}, "z": s}))))
	default:
		l.send(map[string]any{"id": m.ID, "error": map[string]any{"code": -32602, "message": l.leak("no tool " + p.Name)}})
	}
}

// tokenEcho is an upstream over streamable HTTP whose tool echoes the
// Authorization header it was sent: in a log message and a progress
// message while the call runs, and in its result.
func tokenEcho(t *testing.T) string {
	t.Helper()
	s := server.NewMCPServer("token-echo", "1", server.WithLogging())
	s.AddTool(mcp.NewTool("whoami", mcp.WithDescription("Say which bearer token the call carried.")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			auth, _ := ctx.Value(authKey{}).(string)
			_ = s.SendLogMessageToClient(ctx, mcp.NewLoggingMessageNotification(mcp.LoggingLevelError, "token-echo", map[string]any{"auth": auth}))
			if req.Params.Meta != nil && req.Params.Meta.ProgressToken != nil {
				_ = s.SendNotificationToClient(ctx, string(mcp.MethodNotificationProgress), map[string]any{
					"progressToken": req.Params.Meta.ProgressToken, "progress": 1, "message": "using " + auth})
			}
			return mcp.NewToolResultText("auth=" + auth), nil
		})
	h := server.NewStreamableHTTPServer(s, server.WithStateful(true),
		server.WithHTTPContextFunc(func(ctx context.Context, r *http.Request) context.Context {
			return context.WithValue(ctx, authKey{}, r.Header.Get("Authorization"))
		}))
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

// wireTap keeps every byte serve answers, as the client reads it.
type wireTap struct {
	mu   sync.Mutex
	read bytes.Buffer
}

func (w *wireTap) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.TeeReader(resp.Body, w), resp.Body}
	return resp, nil
}

func (w *wireTap) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.read.Write(p)
}

// messages are the JSON-RPC messages read off the wire so far (JSON bodies
// and SSE events alike).
func (w *wireTap) messages() [][]byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out [][]byte
	for _, line := range bytes.Split(w.read.Bytes(), []byte("\n")) {
		line = bytes.TrimSpace(bytes.TrimPrefix(bytes.TrimSpace(line), []byte("data:")))
		if len(line) > 0 && line[0] == '{' {
			out = append(out, append([]byte(nil), line...))
		}
	}
	return out
}

// peerAnswers answers the relayed elicitation and sampling requests and
// keeps them.
type peerAnswers struct {
	mu       sync.Mutex
	requests []string
}

func (p *peerAnswers) keep(v any) {
	b, _ := json.Marshal(v)
	p.mu.Lock()
	p.requests = append(p.requests, string(b))
	p.mu.Unlock()
}

func (p *peerAnswers) Elicit(ctx context.Context, r mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	p.keep(r.Params)
	return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionAccept, Content: map[string]any{"answer": "fine"}}}, nil
}

func (p *peerAnswers) CreateMessage(ctx context.Context, r mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	p.keep(r.CreateMessageParams)
	return &mcp.CreateMessageResult{SamplingMessage: mcp.SamplingMessage{Role: mcp.RoleAssistant, Content: mcp.NewTextContent("a sampled answer")}, Model: "test"}, nil
}

// secretForms are the secret as a client can meet it in text: as it is,
// as Go's encoder and the odd server's write it, and as each writes it
// inside a JSON string that is itself in a JSON string.
func secretForms(secret string) []string {
	goForm, _ := json.Marshal(secret)
	var odd bytes.Buffer
	oddJSON(&odd, secret)
	twice, _ := json.Marshal(odd.String())
	return []string{secret, string(goForm[1 : len(goForm)-1]), odd.String()[1 : odd.Len()-1], string(twice[1 : len(twice)-1])}
}

// findLeaks says where any of secrets (or its first half) shows in a JSON
// message as a client reads it: any string or key, decoded, and a string that is JSON itself
// decoded again, four levels deep (as the gateway promises); and the raw
// bytes in any of their
// written forms. Written on encoding/json, apart from the redactor.
func findLeaks(msg []byte, secrets ...string) []string {
	var out []string
	for _, s := range secrets {
		for _, form := range secretForms(s) {
			if bytes.Contains(msg, []byte(form)) {
				out = append(out, fmt.Sprintf("written as %q", form))
			}
		}
	}
	var walk func(v any, level int, path string)
	str := func(s string, level int, path string) {
		for _, secret := range secrets {
			// Half of one is a leak too (a secret cut before it was redacted).
			if strings.Contains(s, secret[:len(secret)/2]) {
				out = append(out, fmt.Sprintf("%s (level %d): %.200q", path, level, s))
			}
		}
		d := json.NewDecoder(strings.NewReader(s))
		d.UseNumber()
		var inner any
		if level < 4 && d.Decode(&inner) == nil && !d.More() {
			walk(inner, level+1, path+"{json}")
		}
	}
	walk = func(v any, level int, path string) {
		switch v := v.(type) {
		case string:
			str(v, level, path)
		case []any:
			for i, e := range v {
				walk(e, level, fmt.Sprintf("%s[%d]", path, i))
			}
		case map[string]any:
			for k, e := range v {
				str(k, level, path+".key")
				walk(e, level, path+"."+k)
			}
		}
	}
	d := json.NewDecoder(bytes.NewReader(msg))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return append(out, "not JSON: "+err.Error())
	}
	walk(v, 1, "$")
	return out
}

// TestServeRedactsEveryUpstreamString: through `sandbox serve`, two
// upstreams echo their API key everywhere they can (one with Go's JSON
// escaping, one with its own), and a third echoes the session token each
// call carries. A client calls everything they offer, directly and from a
// snippet, with progress and logs on, and answers their elicitation and
// sampling: nothing it reads holds a secret in any form, four levels of
// JSON in JSON deep, and each path did deliver its (redacted) words.
func TestServeRedactsEveryUpstreamString(t *testing.T) {
	if testing.Short() {
		t.Skip("starts sandbox serve")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	const sessionToken = "tok-session-0123456789abcdef"
	config := fmt.Sprintf(`{"mcpServers": {
  "leaky": {"command": %[1]q, "env": {%[2]q: "go", "API_KEY": %[3]q}},
  "oddleak": {"command": %[1]q, "env": {%[2]q: "odd", "API_KEY": %[3]q}},
  "tokened": {"url": %[4]q, "sessionToken": true}},
 "gateway": {"maxResultBytes": 65536},
 "codeMode": {"limits": {"timeout": "20s", "resultKB": 64}}}`, exe, leakyEnv, leakySecret, tokenEcho(t))
	url := serveHTTP(t, config, "--expose", "all")

	tap := &wireTap{}
	// A 2025-era session, whose logging and relayed requests are served on
	// purpose. mcp-go's HTTP server sends sampling requests on the
	// session's GET stream only: the client listens.
	tr, err := transport.NewStreamableHTTP(url, transport.WithHTTPBasicClient(&http.Client{Transport: tap}),
		transport.WithHTTPHeaders(map[string]string{"Sandbox-Token-tokened": sessionToken}),
		//lint:ignore SA1019 the 2025-era protocol (its logging, GET stream and relayed requests) is served and tested on purpose
		transport.WithContinuousListening())
	if err != nil {
		t.Fatal(err)
	}
	peer := &peerAnswers{}
	c := client.NewClient(tr, client.WithElicitationHandler(peer), client.WithSamplingHandler(peer), client.WithProtocolVersion("2025-11-25"))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var notes struct {
		sync.Mutex
		all []mcp.JSONRPCNotification
	}
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		notes.Lock()
		notes.all = append(notes.all, n)
		notes.Unlock()
	})
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{ProtocolVersion: "2025-11-25", ClientInfo: mcp.Implementation{Name: "redaction-test", Version: "1"}}}); err != nil {
		t.Fatal(err)
	}
	//lint:ignore SA1019 the 2025-era protocol (its logging, GET stream and relayed requests) is served and tested on purpose
	if err := c.SetLevel(ctx, mcp.SetLevelRequest{Params: mcp.SetLevelParams{Level: mcp.LoggingLevelDebug}}); err != nil {
		t.Fatal(err)
	}

	// What each path answered, as the client decoded it: each must hold
	// "[redacted]" (the path delivered the upstream's words, redacted).
	answers := map[string]string{}
	keep := func(path string, v any, err error) {
		t.Helper()
		if err != nil {
			answers[path] = "error: " + err.Error()
			return
		}
		b, _ := json.Marshal(v)
		answers[path] = string(b)
	}
	callTool := func(name string, progress bool, args map[string]any) (*mcp.CallToolResult, error) {
		req := mcp.CallToolRequest{Params: mcp.CallToolParams{Name: name, Arguments: args}}
		if progress {
			req.Params.Meta = &mcp.Meta{ProgressToken: "p-" + name}
		}
		return c.CallTool(ctx, req)
	}
	for _, srv := range []string{"leaky", "oddleak"} {
		for _, tool := range []string{"echo", "echostruct", "fail", "rpcfail", "chatty", "elicit", "sample"} {
			res, err := callTool(srv+"__"+tool, tool == "chatty", nil)
			keep(srv+" "+tool, res, err)
		}
		uri := map[string]string{"leaky": "leak://go/doc", "oddleak": "leak://odd/doc"}[srv]
		res, err := c.ReadResource(ctx, mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: uri}})
		keep(srv+" resources/read", res, err)
		pr, err := c.GetPrompt(ctx, mcp.GetPromptRequest{Params: mcp.GetPromptParams{Name: srv + "__brief"}})
		keep(srv+" prompts/get", pr, err)
		cr, err := c.Complete(ctx, mcp.CompleteRequest{Params: mcp.CompleteParams{
			Ref: mcp.PromptReference{Type: "ref/prompt", Name: srv + "__brief"}, Argument: mcp.CompleteArgument{Name: "topic", Value: "x"}}})
		keep(srv+" completion/complete", cr, err)
	}
	res, err := callTool("tokened__whoami", true, nil)
	keep("tokened whoami", res, err)
	res, err = callTool("gateway__list_servers", false, nil)
	keep("gateway__list_servers", res, err)
	res, err = callTool("search_tools", false, map[string]any{"intent": "echo the leaky server's key"})
	keep("search_tools", res, err)

	// The same from a snippet, with live logs: results parsed as JSON (and
	// a string of them parsed again), errors caught, a result too large
	// for memory read through its handle, relayed requests, logs.
	snippet := `
async function probe(ns: any) {
  const r: any = {};
  r.echo = await ns.echo({});
  r.inner = JSON.parse(r.echo.inner);
  r.structured = await ns.echostruct({});
  try { await ns.fail({}); } catch (e: any) { r.fail = { message: e.message, data: e.data, code: e.code }; }
  try { await ns.rpcfail({}); } catch (e: any) { r.rpcfail = { message: e.message, data: e.data, code: e.code }; }
  r.chatty = await ns.chatty({});
  r.elicit = await ns.elicit({});
  r.sample = await ns.sample({});
  // Over the gateway's maxResultBytes: spilled to a file as it was read,
  // then whole (within the run's budget) or as a handle.
  const big: any = await ns.big({});
  if (big.handle) {
    r.big = { k: await sandbox.results.json(big.handle, "/k"), obj: await sandbox.results.json(big.handle, "/obj"), z: await sandbox.results.json(big.handle, "/z") };
  } else {
    r.big = { k: big.k, obj: big.obj, z: big.z, padding: big.a.slice(0, 15) };
  }
  console.log(JSON.stringify(r));
  console.error(r.inner.deepest, Object.keys(r.echo));
  return r;
}
return { leaky: await probe(leaky), oddleak: await probe(oddleak) };`
	res, err = callTool("execute_code", true, map[string]any{"code": snippet})
	keep("execute_code", res, err)

	// Nothing read off the wire holds a secret, in any form.
	msgs := tap.messages()
	if len(msgs) < 30 {
		t.Fatalf("only %d messages read off the wire", len(msgs))
	}
	for _, m := range msgs {
		if leaks := findLeaks(m, leakySecret, sessionToken); len(leaks) > 0 {
			t.Errorf("a message holds a secret: %v\n%.2000s", leaks, m)
		}
	}
	// Each path delivered the upstream's words, redacted.
	for path, got := range answers {
		if !strings.Contains(got, "[redacted]") {
			t.Errorf("%s: no redacted words arrived: %.1000s", path, got)
		}
	}
	if got := answers["execute_code"]; strings.Count(got, "[redacted]") < 40 || strings.Count(got, `padding padding`) < 2 {
		t.Errorf("execute_code: %.3000s", got)
	}
	peer.mu.Lock()
	relayed := strings.Join(peer.requests, "\n")
	peer.mu.Unlock()
	// Direct and from the snippet, each server's elicitation and sampling.
	if len(peer.requests) != 8 || strings.Count(relayed, "[redacted]") < 8 {
		t.Errorf("relayed requests: %s", relayed)
	}
	notes.Lock()
	defer notes.Unlock()
	seen := map[string]int{}
	for _, n := range notes.all {
		b, _ := json.Marshal(n.Params)
		if strings.Contains(string(b), "[redacted]") {
			seen[n.Method]++
		}
	}
	// Log messages: chatty's, twice per server (direct and in the
	// snippet), and tokened's; progress: chatty's and tokened's direct,
	// and the snippet's console lines.
	if seen["notifications/message"] < 5 || seen["notifications/progress"] < 4 {
		t.Errorf("notifications holding redacted words: %v", seen)
	}
}
