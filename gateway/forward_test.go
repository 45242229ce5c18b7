package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/sandboxrt/sandbox/gateway/internal/testserver"
)

// unmarshalCallResult is parseCallResult's reading by json.Unmarshal, as
// it was before splitCallResult.
func unmarshalCallResult(raw []byte) (*CallResult, error) {
	var r struct {
		Content           *[]json.RawMessage `json:"content"`
		StructuredContent json.RawMessage    `json:"structuredContent"`
		IsError           bool               `json:"isError"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, err
	}
	res := &CallResult{IsError: r.IsError, Content: []json.RawMessage{}}
	if r.Content != nil {
		res.Content = *r.Content
	}
	if len(r.StructuredContent) > 0 && string(r.StructuredContent) != "null" {
		res.StructuredContent = r.StructuredContent
	}
	return res, nil
}

// FuzzSplitCallResult: whatever a result holds, splitCallResult reads it
// as json.Unmarshal does, or leaves it to json.Unmarshal.
func FuzzSplitCallResult(f *testing.F) {
	for _, s := range []string{
		`{"content":[{"type":"text","text":"a\"]}"},{"type":"image","data":"x"}],"isError":false}`,
		`{"content":[],"structuredContent":{"a":[1,{"b":"}"}]},"isError":true}`,
		`{"content":null,"structuredContent":null,"isError":null}`,
		` { "content" : [ 1 , "x" , {"_meta":{}} ] , "extra" : {"content":7} } `,
		`{"Content":[{}]}`, `{"isError":"yes"}`, `{"content":{}}`, `{"content":[{}],"content":[]}`,
		`{"\u0063ontent":[{}]}`, `{"isError":1}`, `[]`, `null`, `{}`, `{"content":[`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, ok := splitCallResult(raw, false)
		want, err := unmarshalCallResult(raw)
		if !ok {
			return
		}
		if err != nil {
			t.Fatalf("split what json.Unmarshal refuses (%v): %q", err, raw)
		}
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		if string(g) != string(w) || len(got.Content) != len(want.Content) {
			t.Fatalf("%q:\nsplit     %s\nUnmarshal %s", raw, g, w)
		}
		for i := range got.Content {
			if string(got.Content[i]) != string(want.Content[i]) || cap(got.Content[i]) != len(got.Content[i]) {
				t.Fatalf("%q: block %d: %q (cap %d), want %q", raw, i, got.Content[i], cap(got.Content[i]), want.Content[i])
			}
		}
	})
}

// TestParseCallResultSplitsPlainResults: a plain result is read without
// json.Unmarshal, and a result it cannot read gets json.Unmarshal's error.
func TestParseCallResultSplitsPlainResults(t *testing.T) {
	t.Parallel()
	raw := []byte(`{"content":[{"type":"text","text":"hi"},{"type":"text","text":"x","_meta":{"k":1}}],"structuredContent":{"n":1},"isError":true}`)
	if _, ok := splitCallResult(raw, false); !ok {
		t.Fatal("a plain result was not split")
	}
	res, err := parseCallResult(raw, false)
	if err != nil || len(res.Content) != 2 || string(res.Content[0]) != `{"type":"text","text":"hi"}` || string(res.Content[1]) != `{"text":"x","type":"text"}` ||
		string(res.StructuredContent) != `{"n":1}` || !res.IsError {
		t.Fatalf("%+v %v", res, err)
	}
	_, want := unmarshalCallResult([]byte(`{"isError":"yes"}`))
	if _, err := parseCallResult([]byte(`{"isError":"yes"}`), false); err == nil || want == nil || err.Error() != "result is not a JSON object: "+want.Error() {
		t.Fatalf("error: %v, want json.Unmarshal's %v", err, want)
	}
}

// TestHTTPResultsAreCheckedByTheTransport: the gateway does not check a
// result from an HTTP upstream as JSON again (upstream.Conn.ResultsChecked)
// because mcp-go's transports decode each answer whole with encoding/json.
// An upstream whose answer is not JSON then fails the call, over
// streamable HTTP in either protocol era (at once: the connection is
// reset) and over SSE (mcp-go's transport drops an event it cannot read,
// so the call runs out its time); its bytes never reach the caller as a
// result.
func TestHTTPResultsAreCheckedByTheTransport(t *testing.T) {
	t.Parallel()
	streamable := httptest.NewServer(corrupting(server.NewStreamableHTTPServer(testserver.New(), server.WithStateful(true))))
	t.Cleanup(streamable.Close)
	sse := httptest.NewUnstartedServer(nil)
	sse.Config.Handler = corrupting(server.NewSSEServer(testserver.New(), server.WithBaseURL("http://"+sse.Listener.Addr().String())))
	sse.Start()
	t.Cleanup(sse.Close)
	for _, sc := range []string{
		fmt.Sprintf(`{"url": %q}`, streamable.URL+"/mcp"),
		fmt.Sprintf(`{"url": %q, "protocolVersion": "2025-11-25"}`, streamable.URL+"/mcp"),
		fmt.Sprintf(`{"url": %q, "type": "sse"}`, sse.URL+"/sse"),
	} {
		g, _ := startGateway(t, `{"mcpServers": {"t": `+sc+`}}`)
		res, err := g.Call(context.Background(), CallRequest{Tool: "t:echo", Arguments: json.RawMessage(`{"text":"fine"}`)})
		if err != nil || callText(t, res) != "fine" {
			t.Fatalf("%s: a plain echo: %v %+v", sc, err, res)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		res, err = g.Call(ctx, CallRequest{Tool: "t:echo", Arguments: json.RawMessage(`{"text":"CORRUPT"}`)})
		cancel()
		if err == nil {
			t.Fatalf("%s: an answer that is not JSON came through as a result: %s", sc, res.Content)
		}
	}
}

// corrupting serves as h does, but an echo of "CORRUPT" loses its closing
// quote on the way out, as JSON or as an event's data: the answer is no
// longer JSON.
func corrupting(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(corruptingWriter{w}, r)
	})
}

type corruptingWriter struct{ http.ResponseWriter }

func (c corruptingWriter) WriteHeader(code int) {
	c.Header().Del("Content-Length")
	c.ResponseWriter.WriteHeader(code)
}

func (c corruptingWriter) Write(p []byte) (int, error) {
	q := bytes.ReplaceAll(p, []byte(`"CORRUPT"`), []byte(`"CORRUPT`))
	q = bytes.ReplaceAll(q, []byte(`CORRUPT\"`), []byte(`CORRUPT`))
	c.Header().Del("Content-Length")
	_, err := c.ResponseWriter.Write(q)
	return len(p), err
}

func (c corruptingWriter) Flush() { http.NewResponseController(c.ResponseWriter).Flush() }
