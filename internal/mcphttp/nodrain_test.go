package mcphttp

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestNoDrain: a handler that refuses without reading the body answers at
// once and the connection closes, though the client never sends the rest;
// a handler that reads the body to its end keeps the connection.
func TestNoDrain(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(NoDrain(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/refuse" {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		_, _ = io.Copy(io.Discard, r.Body)
		fmt.Fprint(w, "read")
	})))
	t.Cleanup(srv.Close)
	host := srv.Listener.Addr().String()

	conn, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /refuse HTTP/1.1\r\nHost: %s\r\nContent-Length: 100\r\n\r\n{", host)
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no answer while the body stalls: %v", err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusUnauthorized || !resp.Close {
		t.Fatalf("got %d, close %v", resp.StatusCode, resp.Close)
	}
	if _, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("connection not closed after the refusal: %v", err)
	}

	// A body read to its end: the same connection serves a second request.
	conn2, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn2.Close()
	_ = conn2.SetReadDeadline(time.Now().Add(5 * time.Second))
	br2 := bufio.NewReader(conn2)
	for i := range 2 {
		fmt.Fprintf(conn2, "POST /read HTTP/1.1\r\nHost: %s\r\nContent-Length: 2\r\n\r\n{}", host)
		resp, err := http.ReadResponse(br2, nil)
		if err != nil {
			t.Fatalf("request %d on a kept connection: %v", i+1, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		if resp.StatusCode != http.StatusOK || resp.Close {
			t.Fatalf("request %d: %d, close %v", i+1, resp.StatusCode, resp.Close)
		}
	}
}

// TestNoDrainRefusalReachesAClientStillSending: a client that sends its
// whole body at once, refused before the body is read (a 401 for a stale
// token), gets the refusal, not a connection reset, for a small body and a
// large one alike.
func TestNoDrainRefusalReachesAClientStillSending(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(NoDrain(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no", http.StatusUnauthorized)
	})))
	t.Cleanup(srv.Close)
	for _, size := range []int{100, 64 << 10, 200 << 10, 4 << 20} {
		for i := range 10 {
			resp, err := srv.Client().Post(srv.URL, "application/json", strings.NewReader(strings.Repeat("x", size)))
			if err != nil {
				t.Fatalf("%d bytes, try %d: %v", size, i+1, err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized {
				t.Fatalf("%d bytes: got %d", size, resp.StatusCode)
			}
		}
	}
}
