package frontend

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// BenchmarkBuiltinCallBody: what the size of a built-in tool's arguments
// costs the HTTP front end and mcp-go (the handler here ignores them; code
// mode's strict decode of execute_code's comes on top): a stateless
// 2026-07-28 tools/call of gateway__list_servers, served in process, with
// arguments of 100 B (a trivial snippet) to 1 MiB (execute_code's cap).
func BenchmarkBuiltinCallBody(b *testing.B) {
	h := newFrontend(b).f.HTTPHandler(HTTPOptions{})
	for _, n := range []int{100, 4 << 10, 64 << 10, 1 << 20} {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":%q,"arguments":{"pad":%q},`+
			`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"}}}}`,
			HubListServers, strings.Repeat("x", n))
		b.Run(fmt.Sprintf("args=%dB", n), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("MCP-Protocol-Version", "2026-07-28")
				req.Header.Set("Mcp-Method", "tools/call")
				req.Header.Set("Mcp-Name", HubListServers)
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `\"name\":\"a\"`) {
					b.Fatalf("%d %.300s", w.Code, w.Body.String())
				}
			}
		})
	}
}
