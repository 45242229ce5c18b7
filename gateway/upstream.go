package gateway

// The supervisor of one upstream server: its state (starting, ready,
// restarting, ...), the reconnect loop with backoff, and health checks.
// How it connects is transport.go; what it lists is listing.go.

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/server"
)

// ServerState is the lifecycle state of one upstream.
type ServerState string

const (
	StateStarting   ServerState = "starting"   // first connection attempt under way
	StateReady      ServerState = "ready"      // connected; calls are forwarded
	StateRestarting ServerState = "restarting" // connection lost; reconnecting with backoff
	StateFailed     ServerState = "failed"     // never connected yet; retrying with backoff
	StateStopped    ServerState = "stopped"    // the gateway is closed
	StateDisabled   ServerState = "disabled"   // "disabled": true in the configuration
)

// ServerStatus is what `sandbox servers` and the hub tool report per server.
type ServerStatus struct {
	Name      string      `json:"name"`
	Transport Transport   `json:"transport"`
	State     ServerState `json:"state"`
	Tools     int         `json:"tools"`
	Resources int         `json:"resources"`
	Prompts   int         `json:"prompts"`
	// Reason says why the server is not ready, for anyone: it never holds
	// what the server printed or answered.
	Reason string `json:"reason,omitempty"`
	// LastError is Reason with the operator's detail (the server's stderr
	// tail, transport errors). Only the operator sees it (`sandbox
	// servers`, the log); ForAgents drops it.
	LastError string `json:"lastError,omitempty"`
	Restarts  int    `json:"restarts"`
	// Failures counts the connection attempts that failed in a row (0 once
	// connected); NextRetry is when the next one is due, while not ready.
	Failures        int        `json:"failures,omitempty"`
	NextRetry       *time.Time `json:"nextRetry,omitempty"`
	Since           time.Time  `json:"since"`
	ProtocolVersion string     `json:"protocolVersion,omitempty"`
	ServerName      string     `json:"serverName,omitempty"` // serverInfo.name the upstream reported
	// Instructions is what the server said about itself at initialize (at
	// most 300 characters), for agents choosing among servers.
	Instructions string `json:"instructions,omitempty"`
	InFlight     int    `json:"inFlight"`
	// Auth is the operator's OAuth login state, filled in by `sandbox
	// servers` ("" when the server takes no login or nobody asked).
	Auth string `json:"auth,omitempty"`
}

// ForAgents is the status as agents may see it: without LastError.
func (st ServerStatus) ForAgents() ServerStatus {
	st.LastError = ""
	return st
}

// upstream is one configured server and its current connection.
type upstream struct {
	g      *Gateway
	name   string
	sc     *ServerConfig
	inproc *server.MCPServer

	limiter    *limiter
	shares     *callerShares // each session's share of this server
	roots      []string
	maxWait    time.Duration
	checkPaths bool

	conn atomic.Pointer[connection] // nil unless ready

	mu        sync.Mutex
	state     ServerState
	lastErr   string // reason: detail, for the operator
	reason    string // for agents
	restarts  int
	since     time.Time
	failures  int       // connection attempts failed in a row
	nextRetry time.Time // when the supervisor tries again (zero: not waiting)

	refreshMu sync.Mutex
}

func newUpstream(g *Gateway, sc *ServerConfig, inproc *server.MCPServer) *upstream {
	return &upstream{
		g:          g,
		name:       sc.Name,
		sc:         sc,
		inproc:     inproc,
		limiter:    newLimiter(sc.Name, sc.RateLimit, sc.MaxConcurrent),
		shares:     newCallerShares(sc.MaxConcurrentPerSession, sc.MaxInFlightBytesPerSession),
		roots:      g.cfg.rootsFor(sc),
		maxWait:    g.cfg.maxWaitFor(sc),
		checkPaths: sc.CheckPaths,
		state:      StateStarting,
		since:      time.Now(),
	}
}

// setState moves to a new state. reason (for agents) and detail (for the
// operator) say why, when the state is not ready; "" keeps the last ones.
func (u *upstream) setState(s ServerState, reason, detail string) {
	lastErr := reason
	if detail != "" {
		lastErr += ": " + detail
	}
	u.mu.Lock()
	u.state, u.since = s, time.Now()
	if reason != "" {
		u.reason, u.lastErr = reason, lastErr
	}
	u.mu.Unlock()
	u.g.observe.serverState(u.name, s)
	if lastErr != "" && s != StateReady {
		u.g.log.Warn("upstream state", "server", u.name, "state", string(s), "error", lastErr)
	} else {
		u.g.log.Info("upstream state", "server", u.name, "state", string(s))
	}
}

func (u *upstream) status() ServerStatus {
	u.mu.Lock()
	st := ServerStatus{Name: u.name, Transport: u.sc.Transport, State: u.state, Reason: u.reason, LastError: u.lastErr, Restarts: u.restarts, Since: u.since, Failures: u.failures}
	if !u.nextRetry.IsZero() && u.state != StateReady {
		at := u.nextRetry
		st.NextRetry = &at
	}
	u.mu.Unlock()
	if c := u.conn.Load(); c != nil {
		st.ProtocolVersion, st.ServerName, st.Instructions = c.version, c.serverInfo.Name, c.instructions
	}
	st.InFlight = u.g.sessions.inFlight(u.name)
	return st
}

// failedAfter is how many connection attempts in a row fail before a server
// that was up is reported "failed" rather than "restarting".
const failedAfter = 5

// run is the supervisor: connect, serve until the connection dies, restart
// with exponential backoff; forever, until the gateway closes.
func (u *upstream) run(ctx context.Context, firstTry chan<- struct{}) {
	defer u.setState(StateStopped, "", "")
	opts := u.g.cfg.Settings
	backoff := opts.RestartBackoff
	first := true
	for {
		conn, err := u.connect(ctx)
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
			u.mu.Lock()
			u.failures++
			// A server that was up and is being restarted is "restarting"
			// while it may come back; after failedAfter attempts in a row it
			// is "failed", as one that never started: retried all the same,
			// at the longest backoff.
			state := StateFailed
			if (u.restarts > 0 || u.state == StateRestarting) && u.failures < failedAfter {
				state = StateRestarting
			}
			u.nextRetry = time.Now().Add(backoff)
			u.mu.Unlock()
			u.setState(state, "could not connect", err.Error())
			signal()
		} else {
			connectedAt := time.Now()
			u.mu.Lock()
			u.failures, u.nextRetry = 0, time.Time{}
			u.mu.Unlock()
			u.conn.Store(conn)
			u.setState(StateReady, "", "")
			signal()
			stopHealth := u.startHealth(ctx, conn)
			select {
			case <-conn.dead:
			case <-ctx.Done():
			}
			stopHealth()
			u.conn.Store(nil)
			conn.close()
			if ctx.Err() != nil {
				return
			}
			u.mu.Lock()
			u.restarts++
			u.mu.Unlock()
			if time.Since(connectedAt) > 4*opts.MaxRestartBackoff {
				backoff = opts.RestartBackoff // it ran fine for a good while
			}
			u.mu.Lock()
			u.nextRetry = time.Now().Add(backoff)
			u.mu.Unlock()
			u.setState(StateRestarting, conn.deathReason(), conn.deathDetail())
			u.g.observe.restart(u.name)
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
func (u *upstream) startHealth(ctx context.Context, c *connection) (stop func()) {
	interval := u.g.cfg.Settings.HealthInterval
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
				if c.busySince(checked, u.g.sessions.inFlight(u.name)) {
					u.g.log.Warn("health check timed out while the server is busy (calls in flight, answers arriving); not restarting it",
						"server", u.name, "inFlight", u.g.sessions.inFlight(u.name))
					continue
				}
				c.markDead("health check failed", err.Error())
				return
			}
		}
	}()
	return func() { close(done) }
}
