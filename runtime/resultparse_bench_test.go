package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/sandboxrt/sandbox/internal/benchutil"
)

// listResult is a tool result of a typical size and shape: 30 issues of a
// github-like list, ~12 KB, objects of a dozen keys with nested users and
// labels, text with escapes and non-ASCII.
var listResult = func() json.RawMessage {
	var b strings.Builder
	b.WriteString(`[`)
	for i := 0; i < 30; i++ {
		if i > 0 {
			b.WriteString(`,`)
		}
		fmt.Fprintf(&b, `{"id":%d,"number":%d,"title":"Crash when the config has a trailing comma (#%d)",`+
			`"user":{"login":"octo-%d","id":%d,"site_admin":false,"type":"User"},`+
			`"labels":[{"name":"bug","color":"d73a4a","default":true},{"name":"needs triage","color":"ededed","default":false}],`+
			`"state":"open","locked":false,"comments":%d,"score":%g,"created_at":"2026-11-%02dT10:%02d:00Z",`+
			`"body":"Steps:\n1. run \"sandbox serve\"\n2. see the stack trace \u2014 it says caf\u00e9 \ud83d\ude00\n\tat main.go:%d"}`,
			1_000_000_000+i*7919, 4000+i, i, i%7, 5_000_000+i, i%5, float64(i)/3, 1+i%28, i%60, 10+i)
	}
	b.WriteString(`]`)
	return json.RawMessage(b.String())
}()

// BenchmarkListResults20Worker: a snippet awaiting 20 calls one after
// another, each answered with listResult, in a worker; per call. Turning
// each result into VM values is the part docs/performance.md follows here.
// The in-process variant is the one a CPU profile sees whole.
func BenchmarkListResults20Worker(b *testing.B)    { benchmarkListResults(b, IsolateWorkers) }
func BenchmarkListResults20InProcess(b *testing.B) { benchmarkListResults(b, InProcess) }

func benchmarkListResults(b *testing.B, iso Isolation) {
	rt, err := New(Options{Isolation: iso, Workers: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer rt.Close()
	warm(b, rt)
	host := HostFunc(func(ctx context.Context, c ToolCall) (json.RawMessage, error) {
		return c.DecodeResult(nil, listResult) // as an MCP server's structuredContent
	})
	code := "let n = 0;\nfor (let i = 0; i < 20; i++) { const r = await demo.echo({ i }); n += (r as any).length }\nreturn n"
	var l benchutil.Latencies
	for b.Loop() {
		l.Time(func() {
			res, err := rt.Run(context.Background(), Request{Code: code, Tools: demoTools, Host: host})
			if err != nil || !res.OK || string(res.Value) != "600" {
				b.Fatalf("%v %+v", err, res)
			}
		})
	}
	l.Report(b, "call", 20)
}
