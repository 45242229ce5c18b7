package mcphttp

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

const answer = `{"jsonrpc":"2.0","id":7,"result":{"content":[]}}`

// TestJSONAnswerBecomesTheStreamsLastEvent: mcp-go's JSON answer goes out
// as the last event of an SSE stream, after the priming event and the
// call's notifications, each with its id on a resumable stream.
func TestJSONAnswerBecomesTheStreamsLastEvent(t *testing.T) {
	rec := httptest.NewRecorder()
	cs := NewCallStream(rec, "cs_1", true)
	cs.Prime()
	if err := cs.Send([]byte(`{"jsonrpc":"2.0","method":"notifications/progress"}`)); err != nil {
		t.Fatal(err)
	}
	cs.Header().Set("Content-Type", "application/json")
	cs.WriteHeader(http.StatusOK)
	_, _ = cs.Write([]byte(answer + "\n"))
	cs.Finish()
	want := "id: cs_1.0\nretry: 500\ndata: \n\n" +
		"id: cs_1.1\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n" +
		"id: cs_1.2\nevent: message\ndata: " + answer + "\n\n"
	if got := rec.Body.String(); got != want {
		t.Fatalf("stream:\n%q\nwant\n%q", got, want)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type %q", ct)
	}
	if err := cs.Send([]byte(`{}`)); err == nil {
		t.Error("a notification after the answer was accepted")
	}
}

// TestStreamThatCannotResume: a 2026-07-28 stream has no priming event,
// no ids and keeps nothing.
func TestStreamThatCannotResume(t *testing.T) {
	rec := httptest.NewRecorder()
	cs := NewCallStream(rec, "cs_2", false)
	cs.Prime() // nothing to prime
	_, _ = cs.Write([]byte(answer))
	cs.Finish()
	if got, want := rec.Body.String(), "event: message\ndata: "+answer+"\n\n"; got != want {
		t.Fatalf("stream %q, want %q", got, want)
	}
	if events, complete, _ := cs.EventsFrom(0); len(events) != 0 || !complete {
		t.Errorf("kept %d events (complete %v)", len(events), complete)
	}
	if cs.Detach() {
		t.Error("a stream that cannot resume was worth keeping")
	}
}

// TestHTTPErrorPassesThrough: mcp-go refusing the request (an unknown
// session) is the client's answer as mcp-go wrote it, not an SSE stream.
func TestHTTPErrorPassesThrough(t *testing.T) {
	rec := httptest.NewRecorder()
	cs := NewCallStream(rec, "cs_3", true)
	cs.Header().Set("Content-Type", "text/plain; charset=utf-8")
	cs.WriteHeader(http.StatusNotFound)
	_, _ = cs.Write([]byte("Invalid session ID\n"))
	cs.Finish()
	if rec.Code != http.StatusNotFound || rec.Body.String() != "Invalid session ID\n" || rec.Header().Get("Content-Type") != "text/plain; charset=utf-8" {
		t.Fatalf("%d %q %v", rec.Code, rec.Body.String(), rec.Header())
	}
	if err := cs.Send([]byte(`{}`)); err == nil {
		t.Error("a notification was sent into an HTTP error")
	}
	if cs.Detach() {
		t.Error("an HTTP error was worth keeping for a resume")
	}
}

// TestInnerSSEIsReframed: the SSE mcp-go writes when it relays a request
// to the client arrives in pieces; each of its events becomes one event of
// the call's stream, in order with the notifications sent meanwhile.
func TestInnerSSEIsReframed(t *testing.T) {
	rec := httptest.NewRecorder()
	cs := NewCallStream(rec, "cs_4", true)
	cs.Prime()
	cs.Header().Set("Content-Type", "text/event-stream")
	cs.WriteHeader(http.StatusOK)
	elicit := `{"jsonrpc":"2.0","id":1,"method":"elicitation/create"}`
	_, _ = cs.Write([]byte("event: message\nda"))
	_, _ = cs.Write([]byte("ta: " + elicit[:20]))
	_, _ = cs.Write([]byte(elicit[20:] + "\n\n"))
	_ = cs.Send([]byte(`{"n":1}`))
	_, _ = cs.Write([]byte("event: message\ndata: {\"a\":\ndata: 1}\n\nevent: message\ndata: " + answer + "\n\n"))
	cs.Finish()
	events, complete, _ := cs.EventsFrom(1)
	var got []string
	for _, ev := range events {
		got = append(got, string(ev.Data))
	}
	want := []string{elicit, `{"n":1}`, "{\"a\":\n1}", answer}
	if !complete || strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("events %q (complete %v), want %q", got, complete, want)
	}
}

// TestReplayAfterTheClientLeft: a detached call goes on; a resume gets the
// events after the last one its client saw, then the rest until the answer.
func TestReplayAfterTheClientLeft(t *testing.T) {
	rec := httptest.NewRecorder()
	cs := NewCallStream(rec, "cs_5", true)
	cs.Prime()
	_ = cs.Send([]byte(`{"n":1}`))
	if !cs.Detach() {
		t.Fatal("a begun resumable stream was not worth keeping")
	}
	_ = cs.Send([]byte(`{"n":2}`)) // the client is gone: kept only
	if strings.Contains(rec.Body.String(), `"n":2`) {
		t.Fatal("an event was written to a client that left")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resumed := httptest.NewRecorder()
	done := make(chan bool)
	go func() { done <- cs.Replay(ctx, resumed, 1) }()
	time.Sleep(20 * time.Millisecond) // the replay waits for the answer
	_, _ = cs.Write([]byte(answer))
	cs.Finish()
	if !<-done {
		t.Fatal("the replay did not end with the answer")
	}
	want := "id: cs_5.2\nevent: message\ndata: {\"n\":2}\n\nid: cs_5.3\nevent: message\ndata: " + answer + "\n\n"
	if got := resumed.Body.String(); got != want {
		t.Fatalf("replay:\n%q\nwant\n%q", got, want)
	}
}

type brokenWriter struct{ *httptest.ResponseRecorder }

func (brokenWriter) Write([]byte) (int, error) { return 0, errors.New("connection reset") }

// TestLostAnswer: a call whose answer could not be written is kept for the
// client's resume.
func TestLostAnswer(t *testing.T) {
	cs := NewCallStream(brokenWriter{httptest.NewRecorder()}, "cs_6", true)
	cs.Prime()
	_, _ = cs.Write([]byte(answer))
	cs.Finish()
	if !cs.LostAnswer() {
		t.Fatal("a failed write was not noticed")
	}
	if events, _, _ := cs.EventsFrom(0); len(events) != 2 {
		t.Fatalf("kept %d events, want the priming event and the answer", len(events))
	}
}

func TestSplitEventID(t *testing.T) {
	for _, tc := range []struct {
		in     string
		stream string
		seq    int
		ok     bool
	}{
		{"cs_abc.0", "cs_abc", 0, true},
		{"a.b.12", "a.b", 12, true},
		{"cs_abc", "", 0, false},
		{"cs_abc.", "", 0, false},
		{"cs_abc.-1", "", 0, false},
		{"cs_abc.1x", "", 0, false},
		{"cs_abc.1234567890", "", 0, false}, // more than 9 digits
	} {
		stream, seq, ok := SplitEventID(tc.in)
		if stream != tc.stream || seq != tc.seq || ok != tc.ok {
			t.Errorf("SplitEventID(%q) = %q, %d, %v", tc.in, stream, seq, ok)
		}
	}
}

func TestRebinding(t *testing.T) {
	loopback := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}
	public := &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 8080}
	for _, tc := range []struct {
		local        net.Addr
		host, origin string
		refused      string // in the reason; "" for none
	}{
		{loopback, "localhost:8080", "", ""},
		{loopback, "[::1]:8080", "http://127.0.0.1:3000", ""},
		{loopback, "proxy.internal", "", ""}, // allowed
		{loopback, "evil.example", "", "Host"},
		{loopback, "localhost:8080", "http://evil.example", "Origin"},
		{public, "evil.example", "http://evil.example", ""}, // not a loopback connection
	} {
		r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, tc.local))
		r.Host = tc.host
		if tc.origin != "" {
			r.Header.Set("Origin", tc.origin)
		}
		got := Rebinding(r, map[string]bool{"proxy.internal": true})
		if tc.refused == "" && got != "" || tc.refused != "" && !strings.Contains(got, tc.refused) {
			t.Errorf("%v Host %q Origin %q: %q", tc.local, tc.host, tc.origin, got)
		}
	}
}

type plainWriter struct{ http.ResponseWriter }

func TestResponseWriterStreamsWhenItCanFlush(t *testing.T) {
	if !ResponseWriter(httptest.NewRecorder()).CanStream() {
		t.Error("a flushing writer cannot stream")
	}
	if ResponseWriter(plainWriter{httptest.NewRecorder()}).CanStream() {
		t.Error("a writer without Flush can stream")
	}
}

// flushCounter records what was flushed: the body as it stood at each
// flush.
type flushCounter struct {
	*httptest.ResponseRecorder
	mu      chan struct{}
	flushes []string
}

func newFlushCounter() *flushCounter {
	f := &flushCounter{ResponseRecorder: httptest.NewRecorder(), mu: make(chan struct{}, 1)}
	f.mu <- struct{}{}
	return f
}

func (f *flushCounter) Flush() {
	<-f.mu
	f.flushes = append(f.flushes, f.Body.String())
	f.mu <- struct{}{}
}

func (f *flushCounter) flushed() []string {
	<-f.mu
	defer func() { f.mu <- struct{}{} }()
	return append([]string(nil), f.flushes...)
}

// TestQuickCallIsOneFlush: the priming event of a call that answers within
// FlushDelay goes out with its answer in one flush; a 2026-07-28 stream's
// answer is left to the end of the response (no flush of its own).
func TestQuickCallIsOneFlush(t *testing.T) {
	w := newFlushCounter()
	cs := NewCallStream(w, "cs_q", true)
	cs.Prime()
	cs.Header().Set("Content-Type", "application/json")
	cs.WriteHeader(http.StatusOK)
	_, _ = cs.Write([]byte(answer))
	cs.Finish()
	want := "id: cs_q.0\nretry: 500\ndata: \n\nid: cs_q.1\nevent: message\ndata: " + answer + "\n\n"
	if got := w.flushed(); len(got) != 1 || got[0] != want {
		t.Fatalf("flushes %q, want one of %q", got, want)
	}

	w = newFlushCounter()
	cs = NewCallStream(w, "cs_m", false)
	_, _ = cs.Write([]byte(answer))
	cs.Finish()
	if got := w.flushed(); len(got) != 0 {
		t.Errorf("a stream that cannot resume flushed %q", got)
	}
	time.Sleep(2 * FlushDelay)
	if got := w.flushed(); len(got) != 0 {
		t.Errorf("a finished stream was flushed later: %q", got)
	}
}

// TestSlowCallIsPrimedWithinTheDelay: a call still running after
// FlushDelay has its priming event on the wire by then, so its client can
// resume; a notification is flushed at once.
func TestSlowCallIsPrimedWithinTheDelay(t *testing.T) {
	w := newFlushCounter()
	cs := NewCallStream(w, "cs_s", true)
	cs.Prime()
	deadline := time.Now().Add(5 * time.Second)
	for len(w.flushed()) == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if got, want := w.flushed(), []string{"id: cs_s.0\nretry: 500\ndata: \n\n"}; len(got) != 1 || got[0] != want[0] {
		t.Fatalf("flushes %q, want %q", got, want)
	}
	if err := cs.Send([]byte(`{"jsonrpc":"2.0","method":"notifications/progress"}`)); err != nil {
		t.Fatal(err)
	}
	if got := w.flushed(); len(got) != 2 || !strings.HasSuffix(got[1], "notifications/progress\"}\n\n") {
		t.Fatalf("the notification was not flushed at once: %q", got)
	}
	cs.Finish()
}

// TestDetachedStreamIsNotFlushedLater: the timer never writes to a
// response the stream no longer owns.
func TestDetachedStreamIsNotFlushedLater(t *testing.T) {
	w := newFlushCounter()
	cs := NewCallStream(w, "cs_d", true)
	cs.Prime()
	cs.Detach()
	time.Sleep(2 * FlushDelay)
	if got := w.flushed(); len(got) != 0 {
		t.Errorf("a detached stream was flushed: %q", got)
	}
}

type flushFails struct{ *httptest.ResponseRecorder }

func (flushFails) FlushError() error { return errors.New("connection reset") }

// TestLostAnswerFoundByTheLastFlush: on a resumable stream whose events
// wait in the buffer, the answer's flush still finds a broken connection.
func TestLostAnswerFoundByTheLastFlush(t *testing.T) {
	cs := NewCallStream(flushFails{httptest.NewRecorder()}, "cs_7", true)
	cs.Prime()
	_, _ = cs.Write([]byte(answer))
	cs.Finish()
	if !cs.LostAnswer() {
		t.Fatal("a failed flush was not noticed")
	}
}
