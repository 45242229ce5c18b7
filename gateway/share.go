package gateway

import (
	"context"
	"sync"
	"time"

	"github.com/sandboxrt/sandbox/auth"
)

// Defaults of a caller's share of one upstream (ServerConfig.
// MaxConcurrentPerSession and MaxInFlightBytesPerSession).
const (
	// DefaultMaxConcurrentPerSession: enough for a snippet's Promise.all of a
	// page of calls; with it one session's 60 calls cannot occupy an
	// upstream that serves everyone.
	DefaultMaxConcurrentPerSession = 8
	// DefaultMaxInFlightBytesPerSession bounds the request bytes one session
	// has on the way to an upstream at once: on a stdio pipe, everyone's
	// small call waits behind what is ahead of it in the pipe.
	DefaultMaxInFlightBytesPerSession = 4 << 20
)

// callerShares holds each caller's share of one upstream: calls in flight
// and their request bytes, per session (per principal for requests that
// have none). A call over its caller's share waits, at most the server's
// bounded wait, for one of the caller's own calls to end; other callers are
// not held back by it. A call larger than the byte share alone still goes
// when its caller has nothing else in flight, so no call is refused for its
// size here (the result cap and the body limit bound sizes).
//
// Entries exist only while a caller has calls in flight or waiting, so the
// map is bounded by the calls in progress.
type callerShares struct {
	maxCalls int
	maxBytes int64

	mu sync.Mutex
	by map[shareKey]*share
}

type shareKey struct {
	principal string
	session   auth.SessionID
}

type share struct {
	calls   int
	bytes   int64
	waiters int
	freed   chan struct{} // made by the first waiter; closed (and dropped) when a call of the caller ends
}

func newCallerShares(maxCalls int, maxBytes int64) *callerShares {
	if maxCalls <= 0 {
		maxCalls = DefaultMaxConcurrentPerSession
	}
	if maxBytes <= 0 {
		maxBytes = DefaultMaxInFlightBytesPerSession
	}
	return &callerShares{maxCalls: maxCalls, maxBytes: maxBytes, by: map[shareKey]*share{}}
}

// acquire takes a place for a call of n request bytes by caller, waiting at
// most maxWait for the caller's own calls to end. It returns the release
// func, or errLimited (with the limit that stopped it), or ctx's error.
func (c *callerShares) acquire(ctx context.Context, caller auth.Caller, n int64, maxWait time.Duration) (func(), limitKind, error) {
	key := shareKey{principal: caller.Principal.Key(), session: caller.Session}
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		c.mu.Lock()
		s := c.by[key]
		if s == nil {
			s = &share{}
			c.by[key] = s
		}
		kind := limitKind("")
		switch {
		case s.calls >= c.maxCalls:
			kind = limitSessionCalls
		case s.calls > 0 && s.bytes+n > c.maxBytes:
			kind = limitSessionBytes
		}
		if kind == "" {
			s.calls++
			s.bytes += n
			c.mu.Unlock()
			var once sync.Once
			return func() { once.Do(func() { c.release(key, n) }) }, "", nil
		}
		if maxWait <= 0 {
			c.forget(key, s)
			c.mu.Unlock()
			return nil, kind, errLimited
		}
		if timer == nil {
			timer = time.NewTimer(maxWait)
		}
		s.waiters++
		if s.freed == nil {
			s.freed = make(chan struct{})
		}
		freed := s.freed
		c.mu.Unlock()
		var err error
		select {
		case <-freed:
		case <-timer.C:
			err = errLimited
		case <-ctx.Done():
			err = ctx.Err()
		}
		c.mu.Lock()
		s.waiters--
		c.forget(key, s)
		c.mu.Unlock()
		if err != nil {
			return nil, kind, err
		}
	}
}

func (c *callerShares) release(key shareKey, n int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.by[key]
	if s == nil {
		return
	}
	s.calls--
	s.bytes -= n
	if s.freed != nil {
		close(s.freed) // wake the caller's waiters: one of them may go now
		s.freed = nil  // (a call that finds no waiters needs no channel)
	}
	c.forget(key, s)
}

// forget drops an idle entry; c.mu is held.
func (c *callerShares) forget(key shareKey, s *share) {
	if s.calls == 0 && s.waiters == 0 && c.by[key] == s {
		delete(c.by, key)
	}
}

// inUse is how many callers have an entry, for tests.
func (c *callerShares) inUse() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.by)
}

const (
	limitSessionCalls limitKind = "per-session concurrency cap"
	limitSessionBytes limitKind = "per-session in-flight bytes cap"
)
