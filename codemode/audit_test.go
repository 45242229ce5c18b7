package codemode

import (
	"crypto/sha256"
	"encoding/hex"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/examples/mcpserver"
	"github.com/sandboxrt/sandbox/gateway"
	"github.com/sandboxrt/sandbox/runtime"
)

// TestRunsAreAudited: each run reaches the audit sink code mode is handed,
// as one "run" record with who ran it and the size and hash of its code,
// never the code; how it ended is the outcome.
func TestRunsAreAudited(t *testing.T) {
	t.Parallel()
	sink := &auditRecords{}
	opts := Options{Limits: runtime.Limits{Timeout: 20 * time.Second}, Audit: sink}
	e := newEngineFull(t, map[string]*server.MCPServer{"demo": mcpserver.New()}, gateway.DefaultSettings(), runtime.Options{Workers: 1}, opts)
	caller := auth.Caller{Principal: auth.Principal{ID: "alice"}, Session: "s1"}
	for _, code := range []string{"return 1 + 1", "throw new Error('no')"} {
		execute(t, e, ExecuteRequest{Code: code, Caller: caller})
	}
	sink.mu.Lock()
	defer sink.mu.Unlock()
	records := sink.records
	if len(records) != 2 {
		t.Fatalf("%d records for 2 runs: %+v", len(records), records)
	}
	sum := sha256.Sum256([]byte("return 1 + 1"))
	ok, failed := records[0], records[1]
	if ok.Kind != gateway.AuditKindRun || ok.Tool != "execute_code" || ok.Principal != "alice" || ok.Session != "s1" || ok.Outcome != "OK" ||
		ok.ArgBytes != len("return 1 + 1") || ok.ArgsSHA256 != hex.EncodeToString(sum[:]) || ok.ResultBytes != 1 || ok.DurationMs <= 0 {
		t.Errorf("the record of a run: %+v", ok)
	}
	if failed.Outcome != "runtime" {
		t.Errorf("the record of a failed run: %+v", failed)
	}
}

// auditRecords is an audit sink that keeps what it is given.
type auditRecords struct {
	mu      sync.Mutex
	records []gateway.AuditRecord
}

func (a *auditRecords) Audit(r gateway.AuditRecord) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.records = append(a.records, r)
}
