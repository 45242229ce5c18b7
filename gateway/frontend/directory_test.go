package frontend

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sandboxrt/sandbox/gateway"
	"github.com/sandboxrt/sandbox/internal/testwait"
)

// memDirectory is a SessionDirectory in memory: what Redis keeps for the
// replicas, enough to test the front end's side. down makes it fail as
// Redis does when it does not answer.
type memDirectory struct {
	mu      sync.Mutex
	owner   map[string]string
	state   map[string]map[string][]byte
	release []string
	lookups int
	down    bool
}

var errMemDirectoryDown = errors.New("redis is unavailable: connection refused")

func (d *memDirectory) Claim(_ context.Context, id, principal string, _ time.Duration) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.down {
		return errMemDirectoryDown
	}
	if d.owner == nil {
		d.owner, d.state = map[string]string{}, map[string]map[string][]byte{}
	}
	if _, taken := d.owner[id]; !taken {
		d.owner[id] = principal
		d.state[id] = map[string][]byte{}
	}
	return nil
}

func (d *memDirectory) Lookup(_ context.Context, id, _ string, _ time.Duration) (string, map[string][]byte, bool, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.down {
		return "", nil, false, errMemDirectoryDown
	}
	d.lookups++
	p, ok := d.owner[id]
	st := map[string][]byte{}
	for k, v := range d.state[id] {
		st[k] = v
	}
	return p, st, ok, nil
}

func (d *memDirectory) Save(_ context.Context, id, principal, part string, value []byte) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.down {
		return errMemDirectoryDown
	}
	if d.owner[id] == principal {
		d.state[id][part] = value
	}
	return nil
}

func (d *memDirectory) Release(_ context.Context, id, principal string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.down {
		return errMemDirectoryDown
	}
	d.release = append(d.release, id)
	if d.owner[id] == principal {
		delete(d.owner, id)
		delete(d.state, id)
	}
	return nil
}

func (d *memDirectory) setDown(down bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.down = down
}

func (d *memDirectory) ownerOf(id string) (string, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	p, ok := d.owner[id]
	return p, ok
}

// serveReplica serves fx's front end as one replica of several sharing
// opts' stores, and returns the URL of its MCP endpoint.
func serveReplica(t *testing.T, fx *frontendFixture, opts HTTPOptions) string {
	t.Helper()
	srv := httptest.NewServer(fx.f.HTTPHandler(opts))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

// TestDirectorySessionsIdleOut: with a shared directory, a session idle on
// this replica ends here (mcp-go's sweeper asks without a request; that
// used to panic and stop the sweeper for good), its directory entry is left
// for the other replicas, and the principal may open a new session.
func TestDirectorySessionsIdleOut(t *testing.T) {
	fx := newFrontend(t)
	dir := &memDirectory{}
	url := serveReplica(t, fx, HTTPOptions{MaxSessionsPerPrincipal: 1, SessionIdleTimeout: 500 * time.Millisecond, Sessions: dir})
	sid := rawSession(t, url)
	if p, ok := dir.ownerOf(sid); !ok || p != "anonymous" {
		t.Fatalf("the directory has %q %v for the new session", p, ok)
	}
	testwait.Until(t, 10*time.Second, "the idle session to end here", func() bool { return fx.f.sessionByID(sid) == nil })
	if _, ok := dir.ownerOf(sid); !ok || len(dir.release) != 0 {
		t.Fatalf("idling out here released the session everywhere: %v", dir.release)
	}
	status, _, body := rawPost(t, url, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`)
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
	url := serveReplica(t, fx, HTTPOptions{Sessions: dir})
	for _, method := range []string{"POST", "GET", "DELETE"} {
		req, _ := http.NewRequest(method, url, nil)
		if method == "POST" {
			req, _ = http.NewRequest(method, url, strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`))
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
	if p, ok := dir.ownerOf("mcp-elsewhere"); !ok || p != "acme/alice" {
		t.Fatal("another principal ended alice's session")
	}
}

// TestDirectorySessionServedElsewhere: a session this replica does not hold
// is served to its owner, with one directory lookup per request.
func TestDirectorySessionServedElsewhere(t *testing.T) {
	fx := newFrontend(t)
	dir := &memDirectory{}
	_ = dir.Claim(context.Background(), "mcp-made-elsewhere", "anonymous", time.Minute)
	status, _, body := rawPost(t, serveReplica(t, fx, HTTPOptions{Sessions: dir}), `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, "Mcp-Session-Id", "mcp-made-elsewhere")
	if status != http.StatusOK || !strings.Contains(body, `"tools"`) {
		t.Fatalf("the owner on another replica: %d %s", status, body)
	}
	if dir.lookups != 1 {
		t.Errorf("%d directory lookups for one request", dir.lookups)
	}
}

// TestDirectorySessionFollowsAcrossReplicas: two front ends (replicas)
// share a directory. A session made on the first is adopted by the second
// with what it chose: servers narrowed on one are the servers the other
// lists, a log level set on one is the other's; the session's DELETE on one
// ends it on the other at its next request. When the directory does not
// answer, the replica holding a session serves it on, and the other says
// why it cannot (503), rather than taking it for unknown.
func TestDirectorySessionFollowsAcrossReplicas(t *testing.T) {
	dir := &memDirectory{}
	replica := func() (*frontendFixture, string) {
		fx := newFrontend(t)
		return fx, serveReplica(t, fx, HTTPOptions{Sessions: dir})
	}
	fx1, url1 := replica()
	fx2, url2 := replica()
	sid := rawSession(t, url1)
	post := func(url, body string) (int, string) {
		status, _, b := rawPost(t, url, body, "Mcp-Session-Id", sid, "Mcp-Protocol-Version", "2025-11-25")
		return status, b
	}

	if status, body := post(url2, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"gateway__connect_servers","arguments":{"servers":["a"]}}}`); status != http.StatusOK || !strings.Contains(body, `\"connected\":[\"a\"]`) {
		t.Fatalf("narrowing on the second replica: %d %s", status, body)
	}
	if sess := fx2.f.sessionByID(sid); sess == nil || !sess.adopted {
		t.Fatal("the second replica did not adopt the session")
	}
	status, body := post(url1, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
	if status != http.StatusOK || !strings.Contains(body, `"a__`) || strings.Contains(body, `"b__`) {
		t.Fatalf("the first replica lists, after narrowing on the second: %d %s", status, body)
	}
	if status, body := post(url1, `{"jsonrpc":"2.0","id":4,"method":"logging/setLevel","params":{"level":"error"}}`); status != http.StatusOK {
		t.Fatalf("setLevel: %d %s", status, body)
	}
	_, _ = post(url2, `{"jsonrpc":"2.0","id":5,"method":"ping"}`)
	if got := fx2.f.sessionByID(sid).gw.LogLevel(); got != "error" {
		t.Fatalf("the second replica has log level %q after the first set error", got)
	}
	if servers, narrowed := fx2.f.sessionByID(sid).gw.Servers(); !narrowed || len(servers) != 1 {
		t.Fatalf("setting the level lost the narrowing: %v %v", servers, narrowed)
	}

	// The directory down: the holder serves on; the other cannot tell.
	dir.setDown(true)
	if status, body := post(url1, `{"jsonrpc":"2.0","id":6,"method":"tools/list"}`); status != http.StatusOK || strings.Contains(body, `"b__`) {
		t.Fatalf("the replica holding the session, directory down: %d %s", status, body)
	}
	sid2 := rawSession(t, url1) // made while the directory is down: this replica's only
	status, _, body2 := rawPost(t, url2, `{"jsonrpc":"2.0","id":7,"method":"tools/list"}`, "Mcp-Session-Id", sid2, "Mcp-Protocol-Version", "2025-11-25")
	if status != http.StatusServiceUnavailable || !strings.Contains(body2, "directory") {
		t.Fatalf("a replica that cannot ask the directory: %d %s", status, body2)
	}
	dir.setDown(false)
	// Made while the directory did not answer: recorded there at its next
	// request, not taken for a session ended elsewhere.
	if status, _, body := rawPost(t, url1, `{"jsonrpc":"2.0","id":7,"method":"tools/list"}`, "Mcp-Session-Id", sid2, "Mcp-Protocol-Version", "2025-11-25"); status != http.StatusOK {
		t.Fatalf("a session made while the directory was down, once it is back: %d %s", status, body)
	}
	if p, ok := dir.ownerOf(sid2); !ok || p != "anonymous" {
		t.Fatalf("the session made while the directory was down is not recorded: %q %v", p, ok)
	}

	// Ended on the second replica: gone on the first at its next request.
	req, _ := http.NewRequest("DELETE", url2, nil)
	req.Header.Set("Mcp-Session-Id", sid)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if fx2.f.sessionByID(sid) != nil {
		t.Fatal("the replica that ended the session still holds it")
	}
	if status, _ := post(url1, `{"jsonrpc":"2.0","id":8,"method":"tools/list"}`); status != http.StatusNotFound {
		t.Fatalf("the first replica after the session was ended on the second: %d", status)
	}
	if fx1.f.sessionByID(sid) != nil {
		t.Fatal("the first replica still holds a session ended on the second")
	}
}

// forgetSpy is a token store that records which scopes were forgotten.
type forgetSpy struct {
	*gateway.MemoryTokenStore
	mu       sync.Mutex
	forgoten []gateway.TokenScope
}

func (f *forgetSpy) Forget(ctx context.Context, scope gateway.TokenScope) error {
	f.mu.Lock()
	f.forgoten = append(f.forgoten, scope)
	f.mu.Unlock()
	return f.MemoryTokenStore.Forget(ctx, scope)
}

// TestDirectoryGetStreamElsewhereKeepsTheSession: a client opening its GET
// stream on a replica that did not make its session (mcp-go registers a
// session for the stream there), then closing it, ends that replica's copy
// only: the session's tokens, which replicas share, are not forgotten.
func TestDirectoryGetStreamElsewhereKeepsTheSession(t *testing.T) {
	dir := &memDirectory{}
	url1 := serveReplica(t, newFrontend(t), HTTPOptions{Sessions: dir})
	spy := &forgetSpy{MemoryTokenStore: gateway.NewMemoryTokenStore()}
	fx2 := newFrontend(t, gateway.WithTokenStore(spy))
	url2 := serveReplica(t, fx2, HTTPOptions{Sessions: dir})
	sid := rawSession(t, url1)

	ctx, cancel := context.WithCancel(context.Background())
	resp := getStream(t, ctx, url2, sid, "")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET stream on the other replica: %d", resp.StatusCode)
	}
	testwait.Until(t, 5*time.Second, "the stream's session to be registered there", func() bool { return fx2.f.sessionByID(sid) != nil })
	cancel()
	resp.Body.Close()
	testwait.Until(t, 5*time.Second, "the stream's session to end there", func() bool { return fx2.f.sessionByID(sid) == nil })
	spy.mu.Lock()
	forgotten := spy.forgoten
	spy.mu.Unlock()
	for _, scope := range forgotten {
		if string(scope.Session) == sid {
			t.Fatal("closing the GET stream on another replica forgot the session's tokens everywhere")
		}
	}
	if _, ok := dir.ownerOf(sid); !ok {
		t.Fatal("closing the GET stream on another replica ended the session")
	}
	if status, _, body := rawPost(t, url2, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`, "Mcp-Session-Id", sid, "Mcp-Protocol-Version", "2025-11-25"); status != http.StatusOK {
		t.Fatalf("the session after its GET stream closed: %d %s", status, body)
	}
}
