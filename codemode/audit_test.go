package codemode

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
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

// TestScriptChangesAreAudited: saving and deleting a saved script reach the
// audit sink as "script" records: who, which script, how it ended (the code
// an agent is answered with), the size and hash of the code saved, never
// the code.
func TestScriptChangesAreAudited(t *testing.T) {
	t.Parallel()
	sink := &auditRecords{}
	opts := Options{Limits: runtime.Limits{Timeout: 20 * time.Second}, DataDir: t.TempDir(), Audit: sink}
	e := newEngineFull(t, map[string]*server.MCPServer{"demo": mcpserver.New()}, gateway.DefaultSettings(), runtime.Options{Workers: 1}, opts)
	ctx := context.Background()
	alice := auth.Caller{Principal: auth.Principal{ID: "alice"}, Session: "s1"}
	code := "return input.n * 2"
	if err := e.SaveScript(ctx, alice, Script{Name: "double", Description: "Doubles n.", Code: code}); err != nil {
		t.Fatal(err)
	}
	if err := e.SaveScript(ctx, alice, Script{Name: "Bad Name", Description: "x", Code: "return 1"}); err == nil {
		t.Fatal("a bad name was saved")
	}
	if deleted, err := e.DeleteScript(ctx, alice, "double"); !deleted || err != nil {
		t.Fatalf("delete: %v %v", deleted, err)
	}
	if deleted, _ := e.DeleteScript(ctx, alice, "double"); deleted {
		t.Fatal("deleted twice")
	}
	sink.mu.Lock()
	defer sink.mu.Unlock()
	var got []string
	for _, r := range sink.records {
		if r.Kind != gateway.AuditKindScript || r.Principal != "alice" || r.Session != "s1" {
			t.Errorf("a script record: %+v", r)
		}
		got = append(got, r.Tool+" "+r.Name+" "+r.Outcome)
	}
	if want := "save_script double OK,save_script Bad Name VALIDATION_FAILED,delete_script double OK,delete_script double NOT_FOUND"; strings.Join(got, ",") != want {
		t.Errorf("records: %s, want %s", strings.Join(got, ","), want)
	}
	sum := sha256.Sum256([]byte(code))
	if r := sink.records[0]; r.ArgBytes != len(code) || r.ArgsSHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("the save's record: %+v", r)
	}
	if r := sink.records[2]; r.ArgBytes != 0 || r.ArgsSHA256 != "" {
		t.Errorf("the delete's record: %+v", r)
	}
}
