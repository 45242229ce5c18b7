package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/gateway/internal/testserver"
	"github.com/sandboxrt/sandbox/internal/testwait"
)

func caller(principal, session string) auth.Caller {
	return auth.Caller{Principal: auth.Principal{ID: principal}, Session: auth.SessionID(session)}
}

// TestCallerSharesHoldOnlyTheirOwner: a session at its cap of calls, or of
// request bytes, waits for its own calls; another session goes at once; a
// call larger than the byte share alone goes when its session has nothing
// else in flight; waits are bounded and cancellable; nothing is kept for
// callers with nothing in flight. (Fake time: exact and instant.)
func TestCallerSharesHoldOnlyTheirOwner(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s := newCallerShares(2, 100)
		a, b := caller("p", "a"), caller("p", "b")
		r1, _, err1 := s.acquire(ctx, a, 10, time.Second)
		r2, _, err2 := s.acquire(ctx, a, 10, time.Second)
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		// a's third call waits for one of a's own.
		got := make(chan error, 1)
		go func() {
			r, _, err := s.acquire(ctx, a, 10, time.Minute)
			if err == nil {
				defer r()
			}
			got <- err
		}()
		synctest.Wait()
		select {
		case err := <-got:
			t.Fatalf("a's third call did not wait: %v", err)
		default:
		}
		// b is not held back by a.
		rb, _, err := s.acquire(ctx, b, 10, 0)
		if err != nil {
			t.Fatalf("b behind a: %v", err)
		}
		rb()
		r1()
		if err := <-got; err != nil {
			t.Fatalf("a's third call after one of a's ended: %v", err)
		}
		// Bounded: at the cap with a 1 s wait, RATE_LIMITED after 1 s.
		r3, _, _ := s.acquire(ctx, a, 10, time.Second)
		start := time.Now()
		_, kind, err := s.acquire(ctx, a, 10, time.Second)
		if !errors.Is(err, errLimited) || kind != limitSessionCalls || time.Since(start) != time.Second {
			t.Fatalf("over the cap: %v %q after %v", err, kind, time.Since(start))
		}
		r2()
		r3()

		// Bytes: 80 in flight, 30 more must wait; 500 alone goes.
		big, _, err := s.acquire(ctx, a, 80, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		_, kind, err = s.acquire(ctx, a, 30, 0)
		if !errors.Is(err, errLimited) || kind != limitSessionBytes {
			t.Fatalf("over the byte share: %v %q", err, kind)
		}
		big()
		huge, _, err := s.acquire(ctx, a, 500, 0)
		if err != nil {
			t.Fatalf("a call over the byte share with nothing else in flight: %v", err)
		}
		// Cancelling a wait frees its place.
		cctx, cancel := context.WithCancel(ctx)
		go func() { time.Sleep(time.Millisecond); cancel() }()
		if _, _, err := s.acquire(cctx, a, 1, time.Hour); !errors.Is(err, context.Canceled) {
			t.Fatalf("a cancelled wait: %v", err)
		}
		huge()
		huge() // releasing twice does nothing
		if n := s.inUse(); n != 0 {
			t.Fatalf("%d callers kept with nothing in flight", n)
		}
	})
}

// TestSessionFloodDoesNotHoldBackAnother: one session's many calls to a
// server take only its share of it (2 here); another session's call goes
// through while they wait; cancelling the flood frees everything.
func TestSessionFloodDoesNotHoldBackAnother(t *testing.T) {
	t.Parallel()
	g, _ := startGateway(t, `{"mcpServers": {}}`,
		WithInProcessServer("a", testserver.New(), &ServerConfig{MaxConcurrentPerSession: 2, CheckPaths: true}))
	flood, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = g.Call(flood, CallRequest{Tool: "a:wait_cancel", Arguments: json.RawMessage(`{}`), Caller: caller("p", "flooder")})
		}()
	}
	testwait.Until(t, 10*time.Second, "the flooder's calls to reach their share", func() bool {
		return running(t, g, "a", "wait_cancel") == "2"
	})
	res, err := g.Call(context.Background(), CallRequest{Tool: "a:echo", Arguments: json.RawMessage(`{"text":"mine"}`), Caller: caller("p", "other")})
	if err != nil || callText(t, res) != "mine" {
		t.Fatalf("another session behind the flood: %v", err)
	}
	if n := running(t, g, "a", "wait_cancel"); n != "2" {
		t.Fatalf("%s of the flooder's calls upstream, want its share of 2", n)
	}
	cancel()
	wg.Wait()
	u := g.upstreams["a"]
	testwait.Until(t, 10*time.Second, "the shares to be forgotten", func() bool { return u.shares.inUse() == 0 })
}

// TestServerThatNeverStartsIsCounted: each failed attempt to start a server
// is counted, the state says failed, and when it is tried next is shown.
func TestServerThatNeverStartsIsCounted(t *testing.T) {
	t.Parallel()
	g, _ := startGateway(t, `{"mcpServers": {"gone": {"command": "/nonexistent/mcp-server"}},
		"gateway": {"restartBackoff": "10ms", "maxRestartBackoff": "20ms"}}`)
	var st ServerStatus
	testwait.Until(t, 10*time.Second, "three failed attempts", func() bool {
		st = g.Servers()[0]
		return st.Failures >= 3
	})
	if st.State != StateFailed || st.Restarts != 0 || st.NextRetry == nil || !strings.HasPrefix(st.Reason, "its command was not found") {
		t.Fatalf("status = %+v", st)
	}
}
