package frontend

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sandboxrt/sandbox/internal/testwait"
)

// memDirectory is a SessionDirectory in memory: what Redis keeps for the
// replicas, enough to test the front end's side.
type memDirectory struct {
	mu      sync.Mutex
	owner   map[string]string
	release []string
	lookups int
}

func (d *memDirectory) Claim(_ context.Context, id, principal string, _ time.Duration) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.owner == nil {
		d.owner = map[string]string{}
	}
	d.owner[id] = principal
	return nil
}

func (d *memDirectory) Owner(_ context.Context, id string, _ time.Duration) (string, bool, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.lookups++
	p, ok := d.owner[id]
	return p, ok, nil
}

func (d *memDirectory) Release(_ context.Context, id, principal string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.release = append(d.release, id)
	if d.owner[id] == principal {
		delete(d.owner, id)
	}
	return nil
}

// TestDirectorySessionsIdleOut: with a shared directory, a session idle on
// this replica ends here (mcp-go's sweeper asks without a request; that
// used to panic and stop the sweeper for good), its directory entry is left
// for the other replicas, and the principal may open a new session.
func TestDirectorySessionsIdleOut(t *testing.T) {
	fx := newFrontend(t)
	dir := &memDirectory{}
	srv := httptest.NewServer(fx.f.HTTPHandler(HTTPOptions{MaxSessionsPerPrincipal: 1, SessionIdleTimeout: 500 * time.Millisecond, Sessions: dir}))
	t.Cleanup(srv.Close)
	sid := rawSession(t, srv.URL+"/mcp")
	if p, ok, _ := dir.Owner(context.Background(), sid, 0); !ok || p != "anonymous" {
		t.Fatalf("the directory has %q %v for the new session", p, ok)
	}
	testwait.Until(t, 10*time.Second, "the idle session to end here", func() bool { return fx.f.sessionByID(sid) == nil })
	if _, ok, _ := dir.Owner(context.Background(), sid, 0); !ok || len(dir.release) != 0 {
		t.Fatalf("idling out here released the session everywhere: %v", dir.release)
	}
	status, _, body := rawPost(t, srv.URL+"/mcp", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`)
	if status != http.StatusOK {
		t.Fatalf("a new session after the old one idled out: %d %s", status, body)
	}
}

// TestDirectorySessionOfAnother: a session this replica does not hold is
// refused to anyone but its owner in the directory, for POST, GET and
// DELETE alike, and a DELETE by another principal releases nothing.
func TestDirectorySessionOfAnother(t *testing.T) {
	fx := newFrontend(t)
	dir := &memDirectory{}
	_ = dir.Claim(context.Background(), "mcp-elsewhere", "acme/alice", time.Minute)
	srv := httptest.NewServer(fx.f.HTTPHandler(HTTPOptions{Sessions: dir}))
	t.Cleanup(srv.Close)
	for _, method := range []string{"POST", "GET", "DELETE"} {
		req, _ := http.NewRequest(method, srv.URL+"/mcp", nil)
		if method == "POST" {
			req, _ = http.NewRequest(method, srv.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`))
			req.Header.Set("Content-Type", "application/json")
		}
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", "mcp-elsewhere")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s of alice's session by anonymous: %d", method, resp.StatusCode)
		}
	}
	if p, ok, _ := dir.Owner(context.Background(), "mcp-elsewhere", 0); !ok || p != "acme/alice" {
		t.Fatal("another principal ended alice's session")
	}
}

// TestDirectorySessionServedElsewhere: a session this replica does not hold
// is served to its owner, with one directory lookup per request.
func TestDirectorySessionServedElsewhere(t *testing.T) {
	fx := newFrontend(t)
	dir := &memDirectory{}
	_ = dir.Claim(context.Background(), "mcp-made-elsewhere", "anonymous", time.Minute)
	srv := httptest.NewServer(fx.f.HTTPHandler(HTTPOptions{Sessions: dir}))
	t.Cleanup(srv.Close)
	status, _, body := rawPost(t, srv.URL+"/mcp", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, "Mcp-Session-Id", "mcp-made-elsewhere")
	if status != http.StatusOK || !strings.Contains(body, `"tools"`) {
		t.Fatalf("the owner on another replica: %d %s", status, body)
	}
	if dir.lookups != 1 {
		t.Errorf("%d directory lookups for one request", dir.lookups)
	}
}
