package codemode

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/sandboxrt/sandbox/gateway"
	"github.com/sandboxrt/sandbox/runtime"
)

// countingServer has list (slow, so that it is in flight when a run
// pauses) and remove, and counts the calls that reach it.
func countingServer(list, remove *atomic.Int32) *server.MCPServer {
	srv := server.NewMCPServer("files", "1.0.0")
	srv.AddTool(mcp.NewTool("list", mcp.WithString("dir")), func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		list.Add(1)
		time.Sleep(100 * time.Millisecond)
		return mcp.NewToolResultText(`["a.txt","b.txt"]`), nil
	})
	srv.AddTool(mcp.NewTool("remove", mcp.WithString("name")), func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		remove.Add(1)
		return mcp.NewToolResultText("removed " + r.GetString("name", "")), nil
	})
	return srv
}

// releasingPeer is the front end's part (gateway/frontend/pausedrun.go) in
// small: an approval releases the run, keeping its journal; a resumed run
// is answered from answer.
type releasingPeer struct {
	mu      sync.Mutex
	journal []byte
	asked   []string
	answer  json.RawMessage
}

func (p *releasingPeer) Request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	p.mu.Lock()
	p.asked = append(p.asked, string(params))
	answer := p.answer
	p.mu.Unlock()
	if answer != nil {
		return answer, nil
	}
	release := gateway.ReleaseFor(ctx)
	if release == nil {
		return nil, errors.New("this question cannot be released")
	}
	if !release(func(j []byte) { p.mu.Lock(); p.journal = j; p.mu.Unlock() }) {
		return nil, errors.New("the run was not released")
	}
	<-ctx.Done()
	return nil, gateway.ErrReleased
}

func (p *releasingPeer) Notify(string, json.RawMessage) {}

func (p *releasingPeer) Supports(c string) bool { return c == "elicitation" }

// TestApprovalReleasesTheWorker: a snippet whose call waits for a person's
// approval gives its worker back (the one worker of the runtime runs
// another snippet meanwhile), keeping a journal; resumed with the answer,
// the snippet runs again against it: the call made before the pause and
// the one in flight when it paused reach the upstream once each, the
// approved call runs once, live.
func TestApprovalReleasesTheWorker(t *testing.T) {
	var list, remove atomic.Int32
	settings := gateway.DefaultSettings()
	settings.Policy = &gateway.Policy{Rules: []gateway.PolicyRule{{Tools: "files:remove", Action: gateway.PolicyApprove}}}
	auditPath := filepath.Join(t.TempDir(), "audit.jsonl")
	settings.Audit = &gateway.AuditConfig{Path: auditPath}
	e := newEngineFull(t, map[string]*server.MCPServer{"files": countingServer(&list, &remove)}, settings,
		runtime.Options{Isolation: runtime.IsolateWorkers, Workers: 1}, Options{Limits: runtime.Limits{Timeout: 20 * time.Second}})
	code := `
const before = Date.now() + Math.random()
const names = await files.list({dir: "/tmp"})
const [again, removed] = await Promise.all([files.list({dir: "/var"}), files.remove({name: names[0]})])
console.log("removed", removed)
return {removed, again: again.length, before}`
	peer := &releasingPeer{}
	ctx := gateway.WithResume(gateway.WithPeer(context.Background(), peer), nil)
	first, err := e.Execute(ctx, ExecuteRequest{Code: code})
	if err != nil {
		t.Fatal(err)
	}
	if first.OK || first.Error.Kind != runtime.KindSuspended || peer.journal == nil {
		t.Fatalf("the run was not released: %+v", first.Error)
	}
	if list.Load() != 2 || remove.Load() != 0 {
		t.Fatalf("before the answer: list %d, remove %d calls; want 2 and 0", list.Load(), remove.Load())
	}
	// The released call's audit line (written as its call returns, once the
	// run has ended) says it was released, not decided.
	var audit []byte
	for wait := time.Now().Add(5 * time.Second); time.Now().Before(wait); time.Sleep(20 * time.Millisecond) {
		if audit, _ = os.ReadFile(auditPath); strings.Contains(string(audit), `"tool":"files:remove"`) {
			break
		}
	}
	if !strings.Contains(string(audit), `"tool":"files:remove"`) || !strings.Contains(string(audit), `"decision":"released: `) {
		t.Errorf("the released call's audit line: %s", audit)
	}
	// The one worker is free while the person reads.
	other := execute(t, e, ExecuteRequest{Code: `return 6*7`})
	if !other.OK {
		t.Fatalf("the worker was not given back: %+v", other.Error)
	}

	peer.answer = json.RawMessage(`{"action":"accept","content":{"decision":"approve"}}`)
	ctx = gateway.WithResume(gateway.WithPeer(context.Background(), peer), peer.journal)
	res, err := e.Execute(ctx, ExecuteRequest{Code: code})
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK || !strings.Contains(string(res.Value), `"removed":"removed a.txt"`) || !strings.Contains(string(res.Value), `"again":2`) {
		t.Fatalf("the resumed run: %s %+v", res.Value, res.Error)
	}
	if list.Load() != 2 || remove.Load() != 1 {
		t.Errorf("after the resume: list %d, remove %d calls; want 2 and 1 (nothing called twice)", list.Load(), remove.Load())
	}
	if len(peer.asked) != 2 || peer.asked[0] != peer.asked[1] {
		t.Errorf("the resumed run asked another question: %q", peer.asked)
	}

	// A snippet changed since the pause takes another path: nothing runs.
	ctx = gateway.WithResume(gateway.WithPeer(context.Background(), peer), peer.journal)
	diverged, err := e.Execute(ctx, ExecuteRequest{Code: strings.Replace(code, `"/var"`, `"/etc"`, 1)})
	if err != nil {
		t.Fatal(err)
	}
	if diverged.OK || diverged.Error.Kind != runtime.KindReplay || list.Load() != 2 || remove.Load() != 1 {
		t.Errorf("a diverged resume: %+v; list %d, remove %d", diverged.Error, list.Load(), remove.Load())
	}
}
