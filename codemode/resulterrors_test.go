package codemode

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/sandboxrt/sandbox/gateway"
	"github.com/sandboxrt/sandbox/runtime"
)

// TestResultTooLargeGivesTheRealMaximum: a result over the gateway's cap
// reaches the snippet as RESULT_TOO_LARGE that gives the most one call can
// return here and how smaller results arrive (whole, or as a handle).
func TestResultTooLargeGivesTheRealMaximum(t *testing.T) {
	t.Parallel()
	settings := gateway.DefaultSettings()
	settings.MaxResultBytes = 1 << 20
	settings.MaxSpilledResultBytes = 1 << 20 // code mode's calls may spill: their ceiling is this
	e := newEngineFull(t, map[string]*server.MCPServer{"big": bigServer(2 << 20)}, settings,
		runtime.Options{Isolation: runtime.InProcess, Workers: 1}, Options{Limits: runtime.Limits{Timeout: 20 * time.Second}})
	res := execute(t, e, ExecuteRequest{Code: `try { await big.exportAll({}); return "no error" } catch (e: any) { return { code: e.code, message: e.message, data: e.data } }`})
	if !res.OK {
		t.Fatal(res.Error)
	}
	var got struct {
		Code, Message string
		Data          struct{ MaxBytes int64 }
	}
	if err := json.Unmarshal(res.Value, &got); err != nil {
		t.Fatalf("%v: %s", err, res.Value)
	}
	for _, want := range []string{"the result of big:export_all is larger than 1.0 MiB (1048576 bytes), the most one tool call can return here",
		"as a handle to read in parts (sandbox.results.read, sandbox.results.json)", "Ask for less"} {
		if !strings.Contains(got.Message, want) {
			t.Errorf("message %q lacks %q", got.Message, want)
		}
	}
	if got.Code != "RESULT_TOO_LARGE" || got.Data.MaxBytes != 1<<20 {
		t.Errorf("code %s, data %+v", got.Code, got.Data)
	}
}

func TestResultTooLargeWithItsSize(t *testing.T) {
	te := resultTooLarge("files:read_text_file", 80<<20, 64<<20)
	if te.Code != "RESULT_TOO_LARGE" || !strings.HasPrefix(te.Message, "the result of files:read_text_file is 80.0 MiB (83886080 bytes), more than 64.0 MiB (67108864 bytes), the most one tool call can return here;") ||
		string(te.Data) != `{"bytes":83886080,"maxBytes":67108864}` {
		t.Errorf("%+v", te)
	}
}
