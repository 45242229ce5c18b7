package frontend

import (
	"bufio"
	"context"
	"encoding/base64"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sandboxrt/sandbox/gateway"
	"github.com/sandboxrt/sandbox/gateway/internal/testserver"
	"github.com/sandboxrt/sandbox/internal/testlog"
)

// memStreams is a CallStreamStore in memory (what Redis keeps for the
// replicas); leaseOK false makes every lease look run out.
type memStreams struct {
	mu       sync.Mutex
	info     map[string]StreamInfo
	events   map[string][]StreamEvent
	complete map[string]bool
	leaseEnd map[string]time.Time
}

func (m *memStreams) Append(_ context.Context, id string, info StreamInfo, events []StreamEvent, complete bool, lease time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.info == nil {
		m.info, m.events, m.complete, m.leaseEnd = map[string]StreamInfo{}, map[string][]StreamEvent{}, map[string]bool{}, map[string]time.Time{}
	}
	m.info[id] = info
	for _, ev := range events {
		if ev.Seq == len(m.events[id]) {
			m.events[id] = append(m.events[id], ev)
		}
	}
	m.complete[id] = m.complete[id] || complete
	m.leaseEnd[id] = time.Now().Add(lease)
	return nil
}

func (m *memStreams) Read(_ context.Context, id string, from int) (StreamInfo, []StreamEvent, bool, bool, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	info, ok := m.info[id]
	if !ok {
		return StreamInfo{}, nil, false, false, false, nil
	}
	var out []StreamEvent
	if from < len(m.events[id]) {
		out = append(out, m.events[id][from:]...)
	}
	return info, out, m.complete[id], time.Now().Before(m.leaseEnd[id]), true, nil
}

// getStream opens a session's GET stream (resuming one with lastEventID).
func getStream(t *testing.T, ctx context.Context, url, sid, lastEventID string) *http.Response {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func resumeGet(t *testing.T, url, sid, lastEventID string) (int, string) {
	t.Helper()
	resp := getStream(t, context.Background(), url, sid, lastEventID)
	defer resp.Body.Close()
	b, _ := readAll(resp.Body)
	return resp.StatusCode, b
}

// TestCallStreamResumesOnAnotherReplica: two front ends share a session
// directory and a call-stream store. A client that drops its call's stream
// on the first resumes it on the second and gets the rest, response
// included; another session cannot. A stream whose replica stopped before
// the call answered (its lease ran out), or before it handed the stream
// over at all, is answered there with an error for the call's request id
// that says the outcome is unknown, instead of hanging or a bare 404.
func TestCallStreamResumesOnAnotherReplica(t *testing.T) {
	dir, store := &memDirectory{}, &memStreams{}
	defer func(d time.Duration) { handOffWait = d }(handOffWait)
	handOffWait = 500 * time.Millisecond
	replica := func() string { return serveReplica(t, newFrontend(t), HTTPOptions{Sessions: dir, CallStreams: store}) }
	url1, url2 := replica(), replica()
	sid := rawSession(t, url1)

	ctx, cancel := context.WithCancel(context.Background())
	resp := postCall(t, ctx, url1, sid, `{"jsonrpc":"2.0","id":"call-1","method":"tools/call","params":{"name":"a__progress","arguments":{"steps":30},"_meta":{"progressToken":"q"}}}`)
	first := readSSE(t, bufio.NewReader(resp.Body), 2)
	cancel()
	resp.Body.Close()
	var status int
	var rest string
	deadline := time.Now().Add(10 * time.Second)
	for { // until the first replica has noticed the client left and handed over
		status, rest = resumeGet(t, url2, sid, first[1].id)
		if status != http.StatusOK || strings.Contains(rest, `"id":"call-1"`) && strings.Contains(rest, "done 30 steps") || time.Now().After(deadline) {
			break
		}
	}
	if status != http.StatusOK || !strings.Contains(rest, "done 30 steps") || strings.Contains(rest, `"progress":1,`) {
		t.Fatalf("resumed on the other replica: %d %s", status, rest)
	}
	other := rawSession(t, url2)
	if status, body := resumeGet(t, url2, other, first[1].id); status != http.StatusNotFound {
		t.Fatalf("another session resuming the stream: %d %s", status, body)
	}

	// Handed over, then its replica stopped renewing the lease.
	goneID, neverID := "cs_"+strings.Repeat("a1", 12), "cs_"+strings.Repeat("b2", 12)
	_ = store.Append(context.Background(), goneID+"~"+base64.RawURLEncoding.EncodeToString([]byte(`7`)), StreamInfo{Session: sid, Principal: "anonymous"},
		[]StreamEvent{{Seq: 0}, {Seq: 1, Data: []byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}`)}}, false, time.Millisecond)
	time.Sleep(10 * time.Millisecond)
	status, body := resumeGet(t, url2, sid, goneID+"~"+base64.RawURLEncoding.EncodeToString([]byte(`7`))+".0")
	if status != http.StatusOK || !strings.Contains(body, `"progress":1`) || !strings.Contains(body, `"id":7`) || !strings.Contains(body, "stopped before the call finished") {
		t.Fatalf("a stream whose replica stopped: %d %s", status, body)
	}

	// Never handed over: its replica stopped while the client was attached.
	start := time.Now()
	status, body = resumeGet(t, url2, sid, neverID+"~"+base64.RawURLEncoding.EncodeToString([]byte(`"x-9"`))+".0")
	if status != http.StatusOK || !strings.Contains(body, `"id":"x-9"`) || !strings.Contains(body, "before it could hand") || time.Since(start) < handOffWait {
		t.Fatalf("a stream never handed over: %d %s after %v", status, body, time.Since(start))
	}
	if status, _ := resumeGet(t, url2, sid, neverID+".0"); status != http.StatusNotFound {
		t.Fatalf("a stream never handed over whose id carries no request id: %d", status)
	}

	// Forged ids are refused before they reach the store, at once.
	for _, forged := range []string{"cs_x.0", "cs_" + strings.Repeat("a", 900000) + ".1", neverID + "~" + strings.Repeat("A", 200) + ".0",
		neverID + "~a b.0", neverID + ".-1", neverID + ".99999999999", "cs_" + strings.Repeat("G", 24) + ".0"} {
		start := time.Now()
		if status, body := resumeGet(t, url2, sid, forged); status != http.StatusBadRequest || time.Since(start) > time.Second {
			t.Errorf("forged Last-Event-ID %.40q: %d %s after %v", forged, status, body, time.Since(start))
		}
	}
	// A resume names its session: without one there is nothing to wait for.
	start = time.Now()
	if status, _ := resumeGet(t, url2, "", neverID+".0"); status != http.StatusNotFound || time.Since(start) > time.Second {
		t.Errorf("a resume without a session: %d after %v", status, time.Since(start))
	}
	// One principal waits on at most maxSharedResumes at once.
	var wg sync.WaitGroup
	statuses := make(chan int, maxSharedResumes+1)
	for i := range maxSharedResumes + 1 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprintf("cs_%024x.0", i+1)
			status, _ := resumeGet(t, url2, sid, id)
			statuses <- status
		}()
	}
	wg.Wait()
	close(statuses)
	refused := 0
	for s := range statuses {
		if s == http.StatusTooManyRequests {
			refused++
		}
	}
	if refused != 1 {
		t.Errorf("%d of %d simultaneous resumes refused, want 1", refused, maxSharedResumes+1)
	}
}

// panickingStreams is a CallStreamStore whose Append panics.
type panickingStreams struct{ memStreams }

func (*panickingStreams) Append(context.Context, string, StreamInfo, []StreamEvent, bool, time.Duration) error {
	panic("stream store")
}

// TestStreamHandOffPanicIsContained: a detached call stream is handed to
// the other replicas from a goroutine of its own, which nothing else
// recovers. A panic there (here the store's) stops the hand-off, not the
// process: it is in the log with its stack, and serve keeps serving (a
// resumer on another replica hears the stream was never handed over).
func TestStreamHandOffPanicIsContained(t *testing.T) {
	t.Parallel()
	logs := &testlog.Buffer{}
	g := startGateway(t, nil, gateway.WithInProcessServer("a", testserver.New(), nil))
	f := New(g, WithLogger(slog.New(slog.NewTextHandler(logs, nil))))
	t.Cleanup(f.Close)
	url := serveReplica(t, &frontendFixture{g: g, f: f}, HTTPOptions{Sessions: &memDirectory{}, CallStreams: &panickingStreams{}})
	sid := rawSession(t, url)
	ctx, cancel := context.WithCancel(context.Background())
	resp := postCall(t, ctx, url, sid, `{"jsonrpc":"2.0","id":"call-1","method":"tools/call","params":{"name":"a__progress","arguments":{"steps":30},"_meta":{"progressToken":"q"}}}`)
	readSSE(t, bufio.NewReader(resp.Body), 2)
	cancel()
	resp.Body.Close()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(logs.String(), "stream store") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if !strings.Contains(logs.String(), "stream store") || !strings.Contains(logs.String(), "goroutine ") {
		t.Fatalf("the log does not have the panic and its stack:\n%s", logs.String())
	}
	if rawSession(t, url) == "" {
		t.Fatal("after the panic, no session")
	}
}
