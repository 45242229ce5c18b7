// Package runs owns a run that outlives the request that started it: a
// value with an id, an owner (a principal), a state (working,
// input_required, completed, failed, cancelled), its progress, its last
// console lines, the input it waits for, its result, and how long it is
// kept. The front end maps the tasks extension (io.modelcontextprotocol/tasks)
// onto it; nothing here knows the wire.
//
// A Store keeps runs (MemoryStore here, state/redisstate's for replicas);
// a Registry adds what one replica does with them: the caps, the lease a
// running replica renews (a run whose replica stopped renewing is failed,
// never left working), cancellation that reaches the replica running it,
// and input requests answered from any replica.
package runs

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// State is where a run is in its life.
type State string

const (
	Working       State = "working"
	InputRequired State = "input_required"
	Completed     State = "completed"
	Failed        State = "failed"
	Cancelled     State = "cancelled"
)

// Live reports whether the run may still change (working or waiting for
// input); the others are final.
func (s State) Live() bool { return s == Working || s == InputRequired }

// Progress is the last progress the run reported.
type Progress struct {
	Progress float64 `json:"progress"`
	Total    float64 `json:"total,omitempty"`
	Message  string  `json:"message,omitempty"`
}

// Run is one run. Result is the JSON of the call's result (a
// CallToolResult, a tool error included) when Completed; Error the JSON-RPC
// error object when Failed.
type Run struct {
	ID      string `json:"id"`
	Owner   string `json:"owner"` // the principal's key (auth.Principal.Key)
	Tool    string `json:"tool"`
	State   State  `json:"state"`
	Message string `json:"message,omitempty"` // why it is in its state (the statusMessage)

	Progress *Progress `json:"progress,omitempty"`
	Console  []string  `json:"console,omitempty"` // the last lines, oldest first

	// InputRequests are the requests the run waits on (key: an id of the
	// run's, value: the request, e.g. {"method":"elicitation/create",...}),
	// while InputRequired. Answers are what tasks/update delivered and the
	// run has not taken yet.
	InputRequests map[string]json.RawMessage `json:"inputRequests,omitempty"`
	Answers       map[string]json.RawMessage `json:"answers,omitempty"`

	Result json.RawMessage `json:"result,omitempty"`
	Error  json.RawMessage `json:"error,omitempty"`

	Created time.Time     `json:"created"`
	Updated time.Time     `json:"updated"`
	TTL     time.Duration `json:"ttl"` // kept this long after its last change once final

	// Replica names the replica running it; Lease is when that replica's
	// claim lapses unless renewed.
	Replica string    `json:"replica,omitempty"`
	Lease   time.Time `json:"lease"`
}

// Meta is what a store may keep in clear about a run, to count, prune and
// list an owner's runs without opening them: no tool data (the tool's name
// is the gateway's, as in the audit log).
type Meta struct {
	ID      string        `json:"id"`
	Tool    string        `json:"tool,omitempty"`
	State   State         `json:"state"`
	Created time.Time     `json:"created"`
	Updated time.Time     `json:"updated"`
	TTL     time.Duration `json:"ttl"`
	Lease   time.Time     `json:"lease"`
	Bytes   int64         `json:"bytes"` // of the final answer
}

// Meta is the run's Meta.
func (r Run) Meta() Meta {
	return Meta{ID: r.ID, Tool: r.Tool, State: r.State, Created: r.Created, Updated: r.Updated, TTL: r.TTL, Lease: r.Lease,
		Bytes: int64(len(r.Result) + len(r.Error))}
}

// Listed is the run of owner that m tells of, as Store.List returns it:
// its Meta's fields only.
func (m Meta) Listed(owner string) Run {
	return Run{ID: m.ID, Owner: owner, Tool: m.Tool, State: m.State, Created: m.Created, Updated: m.Updated, TTL: m.TTL, Lease: m.Lease}
}

// ExpiresAt is when the run is forgotten: its TTL after it ended, or, for
// a live run whose replica stopped and whom nobody asked about since, its
// TTL after its lease lapsed.
func (m Meta) ExpiresAt() time.Time {
	if m.State.Live() {
		return m.Lease.Add(m.TTL)
	}
	return m.Updated.Add(m.TTL)
}

// Expired reports whether the run is to be forgotten.
func (m Meta) Expired(now time.Time) bool { return !now.Before(m.ExpiresAt()) }

// Orphaned reports whether the run is live but its replica stopped
// renewing its lease.
func (m Meta) Orphaned(now time.Time) bool { return m.State.Live() && now.After(m.Lease) }

// Expired and Orphaned are the run's Meta's.
func (r Run) Expired(now time.Time) bool  { return r.Meta().Expired(now) }
func (r Run) Orphaned(now time.Time) bool { return r.Meta().Orphaned(now) }

// Held is what an owner holds in a store besides one run: the runs still
// live (not orphaned) and the bytes of the final answers kept.
type Held struct {
	Live        int
	Kept        int // runs kept, live or final
	ResultBytes int64
}

// Limits are the caps per principal and the TTLs.
type Limits struct {
	// LivePerPrincipal caps the runs one principal has working or waiting
	// for input at once (default 16).
	LivePerPrincipal int
	// KeptPerPrincipal caps the runs kept for one principal, final ones
	// included; the oldest final one makes room (default 256).
	KeptPerPrincipal int
	// ResultBytesPerPrincipal caps the bytes of final answers kept for one
	// principal (default 64 MiB); a result that would pass it is not kept,
	// and its run fails saying so.
	ResultBytesPerPrincipal int64
	// ResultBytesTotal caps the bytes of final answers an in-process store
	// keeps for every principal together (default 128 MiB): the memory
	// serve gives tasks, however many principals flood it. A shared store
	// (Redis) is bounded by its own memory policy.
	ResultBytesTotal int64
	// DefaultTTL is how long a final run is kept when the client asks for
	// no TTL (default 1h); MaxTTL the most a client may ask (default 24h).
	DefaultTTL, MaxTTL time.Duration
	// Lease is how long a run stays claimed by its replica without a
	// renewal: how long a task whose replica died stays working before it
	// fails (default 15s). A replica renews every third of it.
	Lease time.Duration
	// ConsoleLines is how many of a run's last console lines are kept
	// (default 20), each cut to ConsoleLineBytes (default 1000).
	ConsoleLines, ConsoleLineBytes int
}

// WithDefaults fills the zero fields.
func (l Limits) WithDefaults() Limits {
	if l.LivePerPrincipal <= 0 {
		l.LivePerPrincipal = 16
	}
	if l.KeptPerPrincipal <= 0 {
		l.KeptPerPrincipal = 256
	}
	if l.ResultBytesPerPrincipal <= 0 {
		l.ResultBytesPerPrincipal = 64 << 20
	}
	if l.ResultBytesTotal <= 0 {
		l.ResultBytesTotal = 128 << 20
	}
	if l.MaxTTL <= 0 {
		l.MaxTTL = 24 * time.Hour
	}
	if l.DefaultTTL <= 0 || l.DefaultTTL > l.MaxTTL {
		l.DefaultTTL = min(time.Hour, l.MaxTTL)
	}
	if l.Lease <= 0 {
		l.Lease = 15 * time.Second
	}
	if l.ConsoleLines <= 0 {
		l.ConsoleLines = 20
	}
	if l.ConsoleLineBytes <= 0 {
		l.ConsoleLineBytes = 1000
	}
	return l
}

// TTL is the TTL of a run whose client asked for asked (0: nothing asked),
// within the ceiling.
func (l Limits) TTL(asked time.Duration) time.Duration {
	switch {
	case asked <= 0:
		return l.DefaultTTL
	case asked > l.MaxTTL:
		return l.MaxTTL
	}
	return asked
}

// LimitError says which cap refused a run, and what to do.
type LimitError struct {
	Limit   string // "live", "result"
	Message string
}

func (e *LimitError) Error() string { return e.Message }

// ErrNotFound is a run that is not there for this owner: never made,
// expired, or another principal's (the same answer for all three).
var ErrNotFound = errors.New("runs: no such run")

// ErrUnchanged, returned by a change (Store.Modify), writes nothing: the
// run is returned as it is.
var ErrUnchanged = errors.New("runs: unchanged")

// CheckLive is the cap on live runs every store checks when it creates a
// run, with what the owner holds.
func CheckLive(h Held, l Limits) error {
	if h.Live >= l.LivePerPrincipal {
		return &LimitError{Limit: "live", Message: fmt.Sprintf("you have %d tasks running or waiting for input, the most one principal may; wait for one to end, or cancel one (tasks/cancel)", h.Live)}
	}
	return nil
}
