package upstream

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// TestEncodeRequestIsJSONMarshal: a request framed around its encoded
// params is byte for byte what json.Marshal writes, whatever its id,
// method and params.
func TestEncodeRequestIsJSONMarshal(t *testing.T) {
	t.Parallel()
	for _, req := range []transport.JSONRPCRequest{
		{JSONRPC: "2.0", ID: mcp.NewRequestId("sbx-1"), Method: "tools/call", Params: json.RawMessage(`{"name":"a","arguments":{"x":"\u003cb\u003e"}}`)},
		{JSONRPC: "2.0", ID: mcp.NewRequestId(int64(7)), Method: "tools/list", Params: json.RawMessage(`{}`)},
		{JSONRPC: "2.0", ID: mcp.NewRequestId("a\"<é>\x01"), Method: "x/<y>&\"z\"\xff", Params: json.RawMessage(`[1,2]`)},
		{JSONRPC: "2.0", ID: mcp.NewRequestId("sbx-2"), Method: "ping"},
		{JSONRPC: "2.0", ID: mcp.NewRequestId("sbx-3"), Method: "m", Params: json.RawMessage(`{"a": 1,` + "\n" + `"b":"<"}`)},
		{JSONRPC: "2.0", ID: mcp.NewRequestId("sbx-4"), Method: "m", Params: map[string]any{"b": 1, "a": "<&>"}},
	} {
		got, err := encodeRequest(req)
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want)+"\n" {
			t.Errorf("encodeRequest:\n %s\nwant\n %s", got, want)
		}
	}
}

// pipeServer is the server's side of a stdioTransport: what the transport
// writes is read from requests, and lines written to answer reach it.
type pipeServer struct {
	t        *testing.T
	tr       *stdioTransport
	requests *bufio.Scanner
	answer   *io.PipeWriter
}

func newPipeServer(t *testing.T) *pipeServer {
	t.Helper()
	fromServer, answer := io.Pipe()
	fromGateway, toServer := io.Pipe()
	tr := newStdioTransport(newLineReader(fromServer, 1<<20, nil), toServer, slog.New(slog.DiscardHandler))
	if err := tr.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tr.Close(); _ = answer.Close(); _ = fromGateway.Close() })
	return &pipeServer{t: t, tr: tr, requests: bufio.NewScanner(fromGateway), answer: answer}
}

func (p *pipeServer) write(lines ...string) {
	p.t.Helper()
	for _, l := range lines {
		if _, err := io.WriteString(p.answer, l+"\n"); err != nil {
			p.t.Fatal(err)
		}
	}
}

// send sends a request on a goroutine of its own and returns where its
// outcome arrives, once the server has read it.
func (p *pipeServer) send(id string) <-chan any {
	p.t.Helper()
	out := make(chan any, 1)
	go func() {
		resp, err := p.tr.SendRequest(context.Background(), transport.JSONRPCRequest{JSONRPC: "2.0", ID: mcp.NewRequestId(id), Method: "tools/call", Params: json.RawMessage(`{}`)})
		if err != nil {
			out <- err
			return
		}
		out <- resp
	}()
	if !p.requests.Scan() {
		p.t.Fatal("the request never reached the server")
	}
	return out
}

func outcome(t *testing.T, ch <-chan any) any {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatal("no answer")
		return nil
	}
}

// TestStdioTransportHandsOnWhatMcpGoWould: answers reach the requests of
// their ids whatever comes between (lines that are not JSON-RPC, answers
// for nobody); notifications are handled in order, before an answer that
// follows them, even one whose other members are malformed; an answer
// with a malformed member is skipped, as mcp-go skips it.
func TestStdioTransportHandsOnWhatMcpGoWould(t *testing.T) {
	t.Parallel()
	p := newPipeServer(t)
	var notes []string
	p.tr.SetNotificationHandler(func(n mcp.JSONRPCNotification) {
		notes = append(notes, n.Method+":"+progressTokenString(n.Params.AdditionalFields["progress"]))
	})
	first := p.send("sbx-1")
	second := p.send("sbx-2")
	p.write(
		`not json`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}`,
		`{"jsonrpc":"2.0","id":"sbx-9","result":{}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":2},"error":7}`,
		`{"jsonrpc":"2.0","id":"sbx-2","error":7}`,
		`{"jsonrpc":"2.0","id":"sbx-2","error":{"code":-32000,"message":"no","data":{"k":[1]}}}`,
		`{"jsonrpc":"2.0","id":"\u0073bx-1","result":{"content":[{"type":"text","text":"hi"}]}}`,
	)
	r1, ok := outcome(t, first).(*transport.JSONRPCResponse)
	if !ok || string(r1.Result) != `{"content":[{"type":"text","text":"hi"}]}` || r1.Error != nil || r1.ID.String() != "string:sbx-1" {
		t.Fatalf("first answer: %#v", r1)
	}
	if strings.Join(notes, ",") != "notifications/progress:1,notifications/progress:2" {
		t.Fatalf("notifications handled: %q", notes)
	}
	r2, ok := outcome(t, second).(*transport.JSONRPCResponse)
	if !ok || r2.Error == nil || r2.Error.Code != -32000 || r2.Error.Message != "no" || r2.Result != nil {
		t.Fatalf("second answer: %#v", r2)
	}
	if d, _ := json.Marshal(r2.Error.Data); string(d) != `{"k":[1]}` {
		t.Fatalf("error data: %s", d)
	}
}

// TestStdioTransportAnswersTheServersRequests: a request from the server
// is answered by the request handler, under Start's context; without a
// handler it is refused.
func TestStdioTransportAnswersTheServersRequests(t *testing.T) {
	t.Parallel()
	p := newPipeServer(t)
	p.write(`{"jsonrpc":"2.0","id":5,"method":"roots/list","params":{"b":1,"a":2}}`)
	if !p.requests.Scan() || !strings.Contains(p.requests.Text(), `"code":-32601`) || !strings.Contains(p.requests.Text(), `"id":5`) {
		t.Fatalf("without a handler: %s", p.requests.Text())
	}
	p.tr.SetRequestHandler(func(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
		params, _ := json.Marshal(req.Params)
		return transport.NewJSONRPCResultResponse(req.ID, json.RawMessage(`{"method":"`+req.Method+`","params":`+string(params)+`}`)), nil
	})
	p.write(`{"jsonrpc":"2.0","id":"q","method":"roots/list","params":{"b":1,"a":2}}`)
	if !p.requests.Scan() {
		t.Fatal("no answer to the server's request")
	}
	if got := p.requests.Text(); got != `{"jsonrpc":"2.0","id":"q","result":{"method":"roots/list","params":{"a":2,"b":1}}}` {
		t.Fatalf("answer: %s", got)
	}
}

// TestStdioTransportEndsWaitingRequests: when the server's stdout ends,
// a request waiting for its answer ends with ErrTransportClosed, and so
// does a new one; a line the end cut short is not read.
func TestStdioTransportEndsWaitingRequests(t *testing.T) {
	t.Parallel()
	p := newPipeServer(t)
	waiting := p.send("sbx-1")
	if _, err := io.WriteString(p.answer, `{"jsonrpc":"2.0","id":"sbx-1","result":{}}`); err != nil { // no newline
		t.Fatal(err)
	}
	_ = p.answer.Close()
	if err, _ := outcome(t, waiting).(error); !errors.Is(err, transport.ErrTransportClosed) {
		t.Fatalf("waiting request: %v", err)
	}
	if _, err := p.tr.SendRequest(context.Background(), transport.JSONRPCRequest{JSONRPC: "2.0", ID: mcp.NewRequestId("sbx-2"), Method: "x"}); !errors.Is(err, transport.ErrTransportClosed) {
		t.Fatalf("new request: %v", err)
	}
}

// TestAnswersFindTheirRequestsAsMcpGos: an answer reaches the request
// whose id mcp-go's RequestId reads from the answer's, and no other: a
// string id is not a number's.
func TestAnswersFindTheirRequestsAsMcpGos(t *testing.T) {
	t.Parallel()
	tr := newStdioTransport(nil, nil, slog.New(slog.DiscardHandler))
	for _, raw := range []string{`"sbx-12"`, `""`, `"a\"b"`, `"\u0073bx"`, `"é"`, `"a` + "\x7f" + `"`, `7`, `7.0`, `-3.5`, `1e2`, `"7"`} {
		var id mcp.RequestId
		if err := id.UnmarshalJSON([]byte(raw)); err != nil {
			t.Fatal(err)
		}
		waiting, key := tr.waitingFor(id)
		waiting[key] = make(chan *transport.JSONRPCResponse, 1)
		if _, ok := tr.takeRaw([]byte(raw)); !ok {
			t.Errorf("%s: no request found for it", raw)
		}
		if _, ok := tr.takeRaw([]byte(raw)); ok {
			t.Errorf("%s: found twice", raw)
		}
	}
	waiting, key := tr.waitingFor(mcp.NewRequestId("5"))
	waiting[key] = make(chan *transport.JSONRPCResponse, 1)
	for _, raw := range []string{`5`, `null`, `{}`, `"x`, `true`} {
		if _, ok := tr.takeRaw([]byte(raw)); ok {
			t.Errorf("%s found the request of id \"5\"", raw)
		}
	}
}

// FuzzSplitMessage: whatever a line holds, splitMessage reads it as
// json.Unmarshal into incoming does, or leaves it to json.Unmarshal.
func FuzzSplitMessage(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":"sbx-1","result":{"content":[{"type":"text","text":"a\"}]"}]}}`,
		`{"result":[1,{"a":"}"}],"id":7,"jsonrpc":"2.0"}` + "\n",
		`{"jsonrpc":"2.0","id":"x","error":{"code":-1,"message":"m","data":null}}`,
		`{"jsonrpc":"2.0","id":"x","error":"plain"}`,
		`{"jsonrpc":"2.0","id":"x","error":7}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}`,
		`{"jsonrpc":"2.0","id":1,"method":"roots/list"}`,
		`{"ID":"x","Result":{}}`,
		`{"\u0069d":"x","result":{}}`,
		`{"id":"x","id":"y","result":null}`,
		`{"id":null,"result":true,"error":null}`,
		` { "id" : "a" , "result" : "r" , "x" : [ ] } `,
		`{"jsonrpc":"2.\u0030","method":"é","id":"\u00e9"}`,
		`{"ſesult":1}`,
		`[]`, `null`, `{"a":1`, `{}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		got, ok := splitMessage(line)
		var want incoming
		err := json.Unmarshal(line, &want)
		if !ok {
			return
		}
		if err != nil {
			t.Fatalf("split what json.Unmarshal refuses (%v): %q", err, line)
		}
		if got.JSONRPC != want.JSONRPC || got.Method != want.Method || string(got.ID) != string(want.ID) ||
			string(got.Result) != string(want.Result) || (got.Error == nil) != (want.Error == nil) ||
			(got.Error != nil && (got.Error.Code != want.Error.Code || got.Error.Message != want.Error.Message || !sameJSON(got.Error.Data, want.Error.Data))) {
			t.Fatalf("%q:\nsplit     %+v %+v\nUnmarshal %+v %+v", line, got, got.Error, want, want.Error)
		}
	})
}

func sameJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// TestSplitMessageTakesPlainAnswers: the answers servers write are split
// without json.Unmarshal, their result a slice of the line.
func TestSplitMessageTakesPlainAnswers(t *testing.T) {
	t.Parallel()
	line := []byte(`{"result":{"content":[{"type":"text","text":"a\"}"}]},"jsonrpc":"2.0","id":"sbx-3"}` + "\n")
	m, ok := splitMessage(line)
	if !ok || m.JSONRPC != "2.0" || string(m.ID) != `"sbx-3"` || string(m.Result) != `{"content":[{"type":"text","text":"a\"}"}]}` || m.Error != nil {
		t.Fatalf("split: %v %+v", ok, m)
	}
	if &m.Result[0] != &line[len(`{"result":`)] {
		t.Error("the result was copied")
	}
	if m, ok := splitMessage([]byte(`{"jsonrpc":"2.0","id":4,"error":{"code":-32000,"message":"no"}}`)); !ok || m.Error == nil || m.Error.Code != -32000 || string(m.ID) != "4" {
		t.Fatalf("split error: %v %+v", ok, m)
	}
}

// BenchmarkDecodeAnswer: reading an answer the size of the example
// tracker's list_projects, split (as the transport does) and whole with
// json.Unmarshal (as it did before).
func BenchmarkDecodeAnswer(b *testing.B) {
	text, _ := json.Marshal(strings.Repeat(`{"id":"PRJ-1","name":"Website relaunch","status":"active","open_tasks":5},`, 8))
	line := []byte(`{"jsonrpc":"2.0","id":"sbx-41","result":{"content":[{"type":"text","text":` + string(text) + `}]}}` + "\n")
	b.Run("split", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := splitMessage(line); !ok {
				b.Fatal("not split")
			}
		}
	})
	b.Run("unmarshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var m incoming
			if err := json.Unmarshal(line, &m); err != nil {
				b.Fatal(err)
			}
		}
	})
}
