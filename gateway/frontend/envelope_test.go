package frontend

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// envelopeBodies are bodies of every shape parseEnvelope meets: the usual
// (walked), and those it leaves to json.Unmarshal (keys that fold together
// or need unescaping, values of other types, batches, invalid JSON).
var envelopeBodies = []string{
	`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"execute_code","arguments":{"code":"return 1"}}}`,
	`{"method":"tools/call","params":{"name":"execute_code","arguments":{},"_meta":{"progressToken":3,"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}},"jsonrpc":"2.0","id":"x"}`,
	` { "ID" : null , "Method" : "ping" } `,
	`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":null}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`,
	// Left to json.Unmarshal.
	`{"id":1,"id":2,"method":"tools/call","params":{"name":"a"}}`,
	`{"id":1,"method":"tools/call","params":{"name":"a"},"PARAMS":{"name":"b"}}`,
	`{"id":1,"method":"tools/call","params":{"name":"a","Name":"b"}}`,
	`{"id":1,"method":"tools/call","params":{"name":"a","_meta":{"x":1},"_META":{"y":2}}}`,
	`{"id":1,"m\u0065thod":"tools/call","params":{"n\u0061me":"a"}}`,
	`{"id":1,"method":"tools\/call","params":{"name":"\u0061"}}`,
	`{"id":1,"method":"tools/call","params":{"name":"é"}}`,
	`{"id":1,"method":7,"params":{"name":"a"}}`,
	`{"id":1,"method":null,"params":{"name":null,"_meta":null}}`,
	`{"id":1,"method":"tools/call","params":["a"]}`,
	`{"id":1,"method":"tools/call","params":"a"}`,
	`{"id":1,"method":"tools/call","params":{"name":"a","_meta":{"n":1e400}}}`,
	`{"id":1,"method":"tools/call","params":{"name":"a","_meta":[1]}}`,
	`{"id":1,"méthod":"x"}`,
	`{"id":1,"method":"tools/call","params":{"name":"execute_code","arguments":{}},"Params":{}}`,
	`{"id":1,"method":"tools/call","paramſ":{"name":"a"},"params":{"name":"b"}}`,
	`{"id":1,"method":"tools/call","params":{"nameſ":"a","NAME":"b","n\u0061me":"c"}}`,
	`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
	`{"jsonrpc":"2.0","id":1,"method":"ping"} {}`,
	`{"jsonrpc":"2.0","id":1,"method":"ping"`,
	`"ping"`,
	``,
}

// envelopeByUnmarshal is what parseEnvelope returned before it walked
// bodies: json.Unmarshal's reading.
func envelopeByUnmarshal(body []byte) (rpcEnvelope, bool) {
	var m rpcEnvelope
	if json.Unmarshal(body, &m) != nil {
		return rpcEnvelope{}, false
	}
	return m, true
}

func checkEnvelope(t *testing.T, body string) (walked bool) {
	t.Helper()
	got, ok := parseEnvelope([]byte(body))
	want, wantOK := envelopeByUnmarshal([]byte(body))
	if ok != wantOK || string(got.ID) != string(want.ID) || got.Method != want.Method ||
		got.Params.Name != want.Params.Name || !reflect.DeepEqual(got.Params.Meta, want.Params.Meta) {
		t.Fatalf("%q: parseEnvelope read %+v (%s) %v, json.Unmarshal %+v (%s) %v", body, got, got.ID, ok, want, want.ID, wantOK)
	}
	// And what mcp-go does with it: a body it takes for a tools/call of a
	// tool is one the front end reads as a request to call that tool (so
	// the tool's argument limit, the split and tasks apply to the tool
	// mcp-go will call). mcp-go takes a later duplicate params whole where
	// encoding/json merges it, so it may read no name where the front end
	// reads one: it then calls no tool.
	var base struct {
		Method mcp.MCPMethod `json:"method"`
		ID     any           `json:"id"`
	}
	var req mcp.CallToolRequest
	if json.Unmarshal([]byte(body), &base) == nil && base.ID != nil && base.Method == mcp.MethodToolsCall &&
		json.Unmarshal([]byte(body), &req) == nil && req.Params.Name != "" &&
		(got.Method != string(mcp.MethodToolsCall) || len(got.ID) == 0 || got.Params.Name != req.Params.Name) {
		t.Fatalf("%q: mcp-go calls %q, the front end reads %q of %q (id %s)", body, req.Params.Name, got.Params.Name, got.Method, got.ID)
	}
	_, walked = scanEnvelope([]byte(body))
	return walked
}

// TestParseEnvelopeReadsAsUnmarshal: the front end decides on a request by
// what mcp-go will read of it (json.Unmarshal's reading), so its walk of a
// body reads the same, and leaves any body it cannot read the same way to
// json.Unmarshal.
func TestParseEnvelopeReadsAsUnmarshal(t *testing.T) {
	t.Parallel()
	walked := 0
	for _, body := range envelopeBodies {
		if checkEnvelope(t, body) {
			walked++
		}
	}
	// The usual shapes are walked, not decoded: the first six bodies.
	if walked != 6 {
		t.Errorf("%d bodies walked, want the 6 of the usual shape", walked)
	}
	if _, ok := scanEnvelope([]byte(strings.Repeat(" ", 3) + envelopeBodies[0])); !ok {
		t.Error("a body with leading blanks is not walked")
	}
}

// FuzzParseEnvelope: whatever a client sends, the front end reads its
// envelope as json.Unmarshal (and so mcp-go) reads it.
func FuzzParseEnvelope(f *testing.F) {
	for _, body := range envelopeBodies {
		f.Add(body)
	}
	for _, tc := range splitBodies {
		f.Add(tc.body)
	}
	f.Fuzz(func(t *testing.T, body string) {
		checkEnvelope(t, body)
	})
}

// BenchmarkParseEnvelope: a typical execute_code body's envelope.
func BenchmarkParseEnvelope(b *testing.B) {
	body := []byte(`{"method":"tools/call","params":{"name":"execute_code","arguments":{"code":"const out = [];\nfor (let i = 0; i < 5; i++) out.push((await demo.listProjects({})).length);\nreturn out"}},"jsonrpc":"2.0","id":3}`)
	b.ReportAllocs()
	for b.Loop() {
		if m, ok := parseEnvelope(body); !ok || m.Params.Name != "execute_code" {
			b.Fatal(m, ok)
		}
	}
}
