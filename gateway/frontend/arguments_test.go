package frontend

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// mcpGoView is what mcp-go reads of a tools/call body: its transport's and
// HandleMessage's envelope, and the request's params.
type mcpGoView struct {
	JSONRPC string             `json:"jsonrpc"`
	ID      any                `json:"id"`
	Method  string             `json:"method"`
	Result  any                `json:"result"`
	Error   any                `json:"error"`
	Params  mcp.CallToolParams `json:"params"`
}

// checkSplit checks splitArguments on body: when it splits, mcp-go reads
// the rest as it would have read body, less the arguments, and the
// arguments are the bytes mcp-go would have kept of them.
func checkSplit(t *testing.T, body string) (split bool) {
	t.Helper()
	rest, args, ok := splitArguments([]byte(body), false)
	if !ok {
		return false
	}
	var whole, cut mcpGoView
	errWhole, errCut := json.Unmarshal([]byte(body), &whole), json.Unmarshal(rest, &cut)
	if fmt.Sprint(errWhole) != fmt.Sprint(errCut) {
		t.Fatalf("%q: mcp-go reads the body with error %v, the rest (%s) with %v", body, errWhole, rest, errCut)
	}
	if errWhole != nil {
		return true // refused alike
	}
	if string(args) != string(whole.Params.RawArguments) {
		t.Fatalf("%q: arguments %q, mcp-go reads %q", body, args, whole.Params.RawArguments)
	}
	if cut.Params.RawArguments != nil || cut.Params.Arguments != nil {
		t.Fatalf("%q: the rest still has arguments: %s", body, rest)
	}
	whole.Params.RawArguments, whole.Params.Arguments = nil, nil
	if !reflect.DeepEqual(whole, cut) {
		t.Fatalf("%q: mcp-go reads the rest\n%+v\nnot as the body\n%+v", body, cut, whole)
	}
	return true
}

var splitBodies = []struct {
	body  string
	split bool
}{
	{`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"execute_code","arguments":{"code":"return 1"}}}`, true},
	// Arguments before and after _meta; blanks everywhere; escapes kept as written.
	{` { "jsonrpc" : "2.0" , "method" : "tools/call" , "params" : { "arguments" : { "code" : "\u00e9\n" , "n" : 12345678901234567890 } , "_meta" : { "progressToken" : 1 } , "name" : "execute_code" } , "id" : "a" } `, true},
	// Keys match without regard to case, as mcp-go reads them.
	{`{"jsonrpc":"2.0","id":1,"method":"tools/call","PARAMS":{"Name":"x","ARGUMENTS":[1,2]}}`, true},
	{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":null}}`, true},
	{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":"text"}}`, true},
	// Other duplicate keys stay, in order: mcp-go takes the last.
	{`{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/call","params":{"name":"a","name":"b","arguments":{}}}`, true},
	{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":{"a":1},"_meta":{"b":2},"arguments":{}}}`, true},
	{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","task":{"ttl":5},"requestState":"s","arguments":{}}}`, true},
	// Left whole.
	{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`, false},
	{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{},"Arguments":{"a":1}}}`, false},
	{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{}},"params":{"name":"y"}}`, false},
	{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{}},"Params":{"name":"y"}}`, false},
	{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":["x"]}`, false},
	{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{}}} {}`, false},
	{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{}}`, false},
	{`[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{}}}]`, false},
	{`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`, false},
	// A number too large for a float64: mcp-go refuses the body (it
	// decodes the arguments into a map), so it is left whole for it to.
	{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"input":{"n":1e400}}}}`, false},
	{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"s":"1e400","n":-1.5e308,"m":[0,1E-400]}}}`, true},
	// Members by the thousand: left to mcp-go, which skips them.
	{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{}` + strings.Repeat(`,"p":0`, maxMembers) + `}}`, false},
	{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{}}` + strings.Repeat(`,"p":0`, maxMembers) + `}`, false},
	{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{}` + strings.Repeat(`,"p":0`, maxMembers-3) + `}}`, true},
}

func TestSplitArgumentsKeepsWhatMCPGoReads(t *testing.T) {
	t.Parallel()
	for _, tc := range splitBodies {
		if got := checkSplit(t, tc.body); got != tc.split {
			t.Errorf("%s: split %v, want %v", tc.body, got, tc.split)
		}
	}
}

// FuzzSplitArguments: whatever a client sends, a body that is split is
// read by mcp-go as it would have read it whole, less the arguments, and
// the handler gets the arguments mcp-go would have given it.
func FuzzSplitArguments(f *testing.F) {
	for _, tc := range splitBodies {
		f.Add(tc.body)
	}
	f.Fuzz(func(t *testing.T, body string) {
		checkSplit(t, body)
	})
}

// TestBuiltinToolGetsItsArgumentsPastMCPGo: over HTTP a built-in tool (a
// hub tool here) gets its arguments though mcp-go never read them, on a call
// stream and as a plain JSON answer, key matching as mcp-go's included.
func TestBuiltinToolGetsItsArgumentsPastMCPGo(t *testing.T) {
	t.Parallel()
	fx := newFrontend(t)
	sid := rawSession(t, fx.url+"/mcp")
	for _, tc := range []struct{ accept, body string }{
		{"application/json, text/event-stream", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"arguments": { "servers" : [ "\u0061" ] } ,"name":"` + HubConnectServers + `"}}`},
		{"application/json", `{"jsonrpc":"2.0","id":"x","method":"tools/call","Params":{"Name":"` + HubConnectServers + `","Arguments":{"servers":["b"]}}}`},
	} {
		status, header, got := rawPost(t, fx.url+"/mcp", tc.body, "Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-11-25", "Accept", tc.accept)
		if status != http.StatusOK {
			t.Fatalf("%s: %d %s", tc.body, status, got)
		}
		if strings.HasPrefix(header.Get("Content-Type"), "text/event-stream") {
			got = lastSSEData(got)
		}
		var resp struct {
			Result mcp.CallToolResult
		}
		if err := json.Unmarshal([]byte(got), &resp); err != nil || len(resp.Result.Content) != 1 {
			t.Fatalf("%s: %v: %s", tc.body, err, got)
		}
		if text := resultText(&resp.Result); resp.Result.IsError || !strings.Contains(text, `"connected":[`) {
			t.Errorf("%s: %s", tc.body, text)
		}
	}
}

// lastSSEData is the data of a stream's last event.
func lastSSEData(stream string) string {
	last := ""
	for _, line := range strings.Split(stream, "\n") {
		if d, ok := strings.CutPrefix(line, "data: "); ok && d != "" {
			last = d
		}
	}
	return last
}

// BenchmarkSplitArguments: the front end's split of a typical execute_code
// body (a five-call snippet, the SDK client's legacy-era envelope).
func BenchmarkSplitArguments(b *testing.B) {
	body := []byte(`{"method":"tools/call","params":{"name":"execute_code","arguments":{"code":"const out = [];\nfor (let i = 0; i < 5; i++) out.push((await demo.listProjects({})).length);\nreturn out"},"_meta":{"progressToken":3}},"jsonrpc":"2.0","id":3}`)
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, _, ok := splitArguments(body, false); !ok {
			b.Fatal("not split")
		}
	}
}
