// Package upstream keeps the gateway's connection to one upstream MCP server
// alive: the supervisor (state, reconnecting with backoff, health checks),
// the transports (stdio processes it starts itself, streamable HTTP, SSE,
// in-process), the connection that sends raw JSON-RPC through them, and
// the listing of what the server offers.
//
// It knows nothing of the catalog, sessions, policy or tokens: what it needs
// of the gateway (the operator's token, where a listing goes, whose client
// answers an upstream's request) it asks through Host, one per server. The
// gateway's call pipeline uses a ready Conn to send calls and pass-through
// requests.
package upstream

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// State is the lifecycle state of one upstream.
type State string

// The states of an upstream.
const (
	Starting   State = "starting"   // first connection attempt under way
	Ready      State = "ready"      // connected; calls are forwarded
	Restarting State = "restarting" // connection lost; reconnecting with backoff
	Failed     State = "failed"     // never connected yet; retrying with backoff
	Stopped    State = "stopped"    // the gateway is closed
	Disabled   State = "disabled"   // "disabled": true in the configuration
)

// Status is the supervisor's view of its server.
type Status struct {
	State State
	// Reason says why the server is not ready, for anyone: it never holds
	// what the server printed or answered. LastError is Reason with the
	// operator's detail (the server's stderr tail, transport errors).
	Reason, LastError string
	Restarts          int
	// Failures counts the connection attempts that failed in a row (0 once
	// connected); NextRetry is when the next one is due, while not ready.
	Failures  int
	NextRetry *time.Time
	Since     time.Time
	// Of the current connection, when ready: the negotiated protocol, the
	// serverInfo name and what the server said about itself (at most
	// 8 KiB), as the server sent them.
	ProtocolVersion, ServerName, Instructions string
}

// Options are the settings every upstream shares.
type Options struct {
	// StartupTimeout bounds connecting to the server and each re-listing.
	StartupTimeout time.Duration
	// MaxResultBytes caps one answer held in memory: a longer stdio line or
	// HTTP body (or SSE event) never is.
	MaxResultBytes int64
	// MaxStagedBytes is the longest tools/call answer written to a file in
	// StageDir instead (staging.go), for a call that takes one
	// (CallTool's stage); 0, or not over MaxResultBytes: none is. StageDir
	// is called when the first answer is staged.
	MaxStagedBytes int64
	StageDir       func() (string, error)
	// RestartBackoff doubles up to MaxRestartBackoff between attempts.
	RestartBackoff, MaxRestartBackoff time.Duration
	// HealthInterval is how often an idle connection is checked (0: never).
	HealthInterval time.Duration
	// ClientName and ClientVersion are presented to the server.
	ClientName, ClientVersion string
	Log                       *slog.Logger
}

// Supervisor is one configured server and its current connection. All
// methods are safe for concurrent use.
type Supervisor struct {
	spec Spec
	host Host
	opts Options
	log  *slog.Logger

	conn atomic.Pointer[Conn]
	// stderr is what the last process of a stdio server printed.
	stderr atomic.Pointer[stderrBuffer]

	mu        sync.Mutex
	state     State
	lastErr   string // reason: detail, for the operator
	reason    string // for agents
	restarts  int
	since     time.Time
	failures  int       // connection attempts failed in a row
	nextRetry time.Time // when the supervisor tries again (zero: not waiting)

	refreshMu sync.Mutex
}

// New returns the supervisor of one server; nothing starts until Run.
func New(spec Spec, host Host, opts Options) *Supervisor {
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Supervisor{spec: spec, host: host, opts: opts, log: log, state: Starting, since: time.Now()}
}

// Conn is the current connection, nil unless the server is ready.
func (s *Supervisor) Conn() *Conn { return s.conn.Load() }

// Stderr is what the server's last process wrote to stderr: its first
// and last kilobytes, with a line saying how much was dropped between.
// ok is false for a server that is not a process, or has not started one.
// For the operator only (a server may print secrets).
func (s *Supervisor) Stderr() (text string, ok bool) {
	b := s.stderr.Load()
	if b == nil {
		return "", false
	}
	return b.String(), true
}

// Disable marks a server the configuration turned off; Run is not called.
func (s *Supervisor) Disable() { s.setState(Disabled, "disabled in the configuration", "") }

// setState moves to a new state. reason (for agents) and detail (for the
// operator) say why, when the state is not ready; "" keeps the last ones.
func (s *Supervisor) setState(st State, reason, detail string) {
	lastErr := reason
	if detail != "" {
		lastErr += ": " + withoutRepeats(detail)
	}
	s.mu.Lock()
	s.state, s.since = st, time.Now()
	if reason != "" {
		s.reason, s.lastErr = reason, lastErr
	}
	s.mu.Unlock()
	s.host.StateChanged(st)
	if lastErr != "" && st != Ready && st != Disabled { // disabled is what the operator asked for
		s.log.Warn("upstream state", "server", s.spec.Name, "state", string(st), "error", lastErr)
	} else {
		s.log.Info("upstream state", "server", s.spec.Name, "state", string(st))
	}
}

// Status reports the server's state and, when ready, its connection's.
func (s *Supervisor) Status() Status {
	s.mu.Lock()
	st := Status{State: s.state, Reason: s.reason, LastError: s.lastErr, Restarts: s.restarts, Since: s.since, Failures: s.failures}
	if !s.nextRetry.IsZero() && s.state != Ready {
		at := s.nextRetry
		st.NextRetry = &at
	}
	s.mu.Unlock()
	if c := s.conn.Load(); c != nil {
		st.ProtocolVersion, st.ServerName, st.Instructions = c.version, c.serverInfo.Name, c.instructions
	}
	return st
}

// FailedAfter is how many connection attempts in a row fail before a
// server that was up is reported "failed" rather than "restarting", and
// before its reason says that retrying will not help until the operator
// acts: by then the cause (a missing command, a refused login, a server
// that exits at once) is not one that passes by itself.
const FailedAfter = 5

// Run is the supervisor: connect, serve until the connection dies, restart
// with exponential backoff; forever, until ctx ends. After the first
// attempt, connected or not, it sends on firstTry once.
func (s *Supervisor) Run(ctx context.Context, firstTry chan<- struct{}) {
	defer s.setState(Stopped, "", "")
	opts := s.opts
	backoff := opts.RestartBackoff
	first := true
	for {
		conn, err := s.connect(ctx)
		// Start returns once every server has connected or failed once: the
		// state must be published before that.
		signal := func() {
			if first {
				first = false
				firstTry <- struct{}{}
			}
		}
		if ctx.Err() != nil {
			signal()
			if conn != nil {
				conn.close()
			}
			return
		}
		if err != nil {
			s.mu.Lock()
			s.failures++
			// A server that was up and is being restarted is "restarting"
			// while it may come back; after FailedAfter attempts in a row it
			// is "failed", as one that never started: retried all the same,
			// at the longest backoff.
			state := Failed
			if (s.restarts > 0 || s.state == Restarting) && s.failures < FailedAfter {
				state = Restarting
			}
			s.nextRetry = time.Now().Add(backoff)
			reason := startFailure(err)
			if s.failures >= FailedAfter {
				reason += fmt.Sprintf("; it failed %d times in a row, and retrying will not help until the operator acts", s.failures)
			}
			s.mu.Unlock()
			s.setState(state, reason, err.Error())
			signal()
		} else {
			connectedAt := time.Now()
			s.mu.Lock()
			s.failures, s.nextRetry = 0, time.Time{}
			s.mu.Unlock()
			s.conn.Store(conn)
			s.setState(Ready, "", "")
			signal()
			stopHealth := s.startHealth(ctx, conn)
			select {
			case <-conn.dead:
			case <-ctx.Done():
			}
			stopHealth()
			s.conn.Store(nil)
			conn.close()
			if ctx.Err() != nil {
				return
			}
			s.mu.Lock()
			s.restarts++
			s.mu.Unlock()
			if time.Since(connectedAt) > 4*opts.MaxRestartBackoff {
				backoff = opts.RestartBackoff // it ran fine for a good while
			}
			s.mu.Lock()
			s.nextRetry = time.Now().Add(backoff)
			s.mu.Unlock()
			s.setState(Restarting, conn.deathReason(), conn.deathDetail())
			s.host.Restarted()
		}
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return
		}
		backoff = min(2*backoff, opts.MaxRestartBackoff)
	}
}

// startHealth checks an idle connection with a real request (ping is a no-op
// on the current protocol): a server that stops answering is restarted.
//
// Busy is not hung. A server that answered a request, or sent bytes (part
// of an answer), within the interval is alive and not checked. A check that
// times out while calls are in flight and bytes arrived during the check
// means the server is working through a backlog (on a stdio pipe, the
// check's answer waits behind every large answer ahead of it): it is
// logged, not restarted. Only a server that sent nothing for the whole check
// is restarted under its callers (one that still drains its input counts as
// hung: reading proves nothing).
func (s *Supervisor) startHealth(ctx context.Context, c *Conn) (stop func()) {
	interval := s.opts.HealthInterval
	if interval <= 0 {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-c.dead:
				return
			case <-t.C:
				if c.aliveWithin(interval) {
					continue // traffic proved it alive
				}
				// A healthy server answers a list at once; one that takes longer
				// than the interval (at least 1 s, at most 10 s) is hung.
				checked := time.Now()
				hctx, cancel := context.WithTimeout(ctx, min(max(interval, time.Second), 10*time.Second))
				err := c.healthCheck(hctx)
				cancel()
				if err == nil || ctx.Err() != nil {
					continue
				}
				if c.busySince(checked, s.host.InFlight()) {
					s.log.Warn("health check timed out while the server is busy (calls in flight, answers arriving); not restarting it",
						"server", s.spec.Name, "inFlight", s.host.InFlight())
					continue
				}
				c.markDead("health check failed", err.Error())
				return
			}
		}
	}()
	return func() { close(done) }
}
