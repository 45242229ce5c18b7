package upstream

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// BenchmarkServerReadsMeta: what the _meta a 2026-07-28 tools/call carries
// costs an mcp-go stdio server (the upstream most servers are), per call,
// for each Answers the gateway can declare: the server decodes every
// capability it is sent. allocs/op counts the server's goroutines too.
func BenchmarkServerReadsMeta(b *testing.B) {
	s := server.NewMCPServer("bench", "1", server.WithToolCapabilities(false))
	s.AddTool(mcp.NewToolWithRawSchema("echo", "", json.RawMessage(`{"type":"object"}`)),
		func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(r.GetString("text", "")), nil
		})
	c := &Conn{modern: true, version: mcp.LATEST_PROTOCOL_VERSION}
	c.encodeCapabilities()
	for _, tc := range []struct {
		name    string
		answers Answers
	}{{"all", AnswersAll}, {"roots-only", 0}} {
		b.Run(tc.name, func(b *testing.B) {
			inR, inW := io.Pipe()
			outR, outW := io.Pipe()
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() {
				defer close(done)
				_ = server.NewStdioServer(s).Listen(ctx, inR, outW)
			}()
			defer func() { cancel(); inW.Close(); outR.Close(); <-done }()
			out := bufio.NewReader(outR)
			params, _ := json.Marshal(callParams{Name: "echo", Arguments: json.RawMessage(`{"text":"hello"}`), Meta: c.plainMeta("", tc.answers)})
			call := func(id int) {
				if _, err := fmt.Fprintf(inW, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s}`+"\n", id, params); err != nil {
					b.Fatal(err)
				}
				line, err := out.ReadBytes('\n')
				if err != nil || !bytes.Contains(line, []byte(`"text":"hello"`)) || bytes.Contains(line, []byte(`"error"`)) {
					b.Fatalf("%v: %s", err, line)
				}
			}
			call(0)
			id := 1
			b.ReportAllocs()
			for b.Loop() {
				call(id)
				id++
			}
		})
	}
}
