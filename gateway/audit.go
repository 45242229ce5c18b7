package gateway

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// AuditConfig is the "audit" block of the gateway config: one JSON line per
// tool call (direct or from a snippet), per execute_code run, per approval
// decision, per pass-through request (resources/read, prompts/get,
// completion/complete) and per saved script saved or deleted, in Path,
// rotated when it passes MaxBytes (Path.1 is the newest old file, up to
// Path.Keep). Requests refused for their credentials are counted per remote
// address, reason and minute, and written apart, rotated alike, in the file
// named with ".refused" before Path's extension ("audit.refused.jsonl"): a
// stranger who can send requests cannot rotate the lines of principals
// away, and adds at most a line per address and reason a minute to its own
// file.
type AuditConfig struct {
	Path     string
	MaxBytes int64 // default 64 MiB
	Keep     int   // rotated files kept (default 5)
}

// AuditRecord is one line of the audit log (docs/operations.md lists its
// fields). It never holds argument values, code, tokens or result contents:
// sizes, and the SHA-256 of the arguments to match a line with a request the
// caller kept. The gateway writes the records of its calls, approvals and
// pass-through requests; what happens beside them (a code-mode run, a saved
// script's change, a request refused for its credentials) is recorded by
// its owner through Gateway.Audit, so the gateway knows nothing of them.
type AuditRecord struct {
	Time      string    `json:"time"` // RFC 3339 UTC; "" is the time it is written
	Kind      AuditKind `json:"kind"`
	Principal string    `json:"principal,omitempty"`
	Session   string    `json:"session,omitempty"`
	Tool      string    `json:"tool,omitempty"`
	Decision  string    `json:"decision,omitempty"` // what the policy or a person decided
	// DecidedBy is the operator who decided an approval at the approval
	// desk (the operator console), by principal key.
	DecidedBy   string  `json:"decidedBy,omitempty"`
	Outcome     string  `json:"outcome,omitempty"` // OK or an error code
	DurationMs  float64 `json:"durationMs,omitempty"`
	ArgBytes    int     `json:"argBytes,omitempty"`
	ArgsSHA256  string  `json:"argsSha256,omitempty"` // hex
	ResultBytes int     `json:"resultBytes,omitempty"`
	// Name is what a request named beside a tool: the prompt of a
	// prompts/get or a completion, the saved script of a save or delete.
	Name   string `json:"name,omitempty"`
	Reason string `json:"reason,omitempty"` // of a failed authentication
	Remote string `json:"remote,omitempty"` // the client's address, for auth failures
	// Count is how many refused requests an auth line stands for: those
	// from Remote for Reason in the minute starting at Time.
	Count int `json:"count,omitempty"`
}

// AuditKind says what an audit record records.
type AuditKind string

// The kinds of audit records. What a feature beside the gateway's calls
// does for a principal (a run, a script, a task) is a kind of its own,
// recorded by its owner through the same sink, Gateway.Audit.
const (
	AuditKindCall     AuditKind = "call"     // a tool call, direct or from a snippet (the gateway)
	AuditKindApproval AuditKind = "approval" // a person's or the policy's answer to an approval (the gateway)
	AuditKindRun      AuditKind = "run"      // an execute_code run (code mode)
	AuditKindScript   AuditKind = "script"   // a saved script saved or deleted (code mode)
	AuditKindStore    AuditKind = "store"    // a sandbox.store value an operator read (code mode, for the console)
	AuditKindTask     AuditKind = "task"     // a task started, asked for input, answered, cancelled or ended (the front end)
	// The pass-through requests of the front end (the gateway).
	AuditKindResource   AuditKind = "resource"   // resources/read
	AuditKindPrompt     AuditKind = "prompt"     // prompts/get
	AuditKindCompletion AuditKind = "completion" // completion/complete
	// AuditKindAuth is a request refused for its credentials (serve's
	// authentication). The audit log counts them and writes them apart
	// (AuditConfig), so a record of this kind need not carry Time or Count.
	AuditKindAuth AuditKind = "auth"
)

// AuditKinds are the kinds of record the main audit log holds, in the
// order a search form lists them (AuditKindAuth is written apart).
func AuditKinds() []AuditKind {
	return []AuditKind{AuditKindCall, AuditKindRun, AuditKindApproval, AuditKindTask, AuditKindScript,
		AuditKindStore, AuditKindSignIn, AuditKindResource, AuditKindPrompt, AuditKindCompletion}
}

// refusedAuditPath is the file the refused-authentication lines of the
// audit log at path go to: ".refused" before its extension
// ("audit.jsonl": "audit.refused.jsonl").
func refusedAuditPath(path string) string {
	ext := filepath.Ext(path)
	return strings.TrimSuffix(path, ext) + ".refused" + ext
}

// auditLog writes the audit log: principals' records to one file, refused
// requests, counted per address, reason and minute, to another.
type auditLog struct {
	main, refused *rotatingFile
	failed        func(error) // hears a write that failed off the caller's goroutine
	now           func() time.Time

	mu        sync.Mutex // guards what follows
	closed    bool
	minute    time.Time // the minute being counted; zero when none is
	counts    map[refusalKey]int
	order     []refusalKey // first seen first: the order of the lines
	overflow  int          // refusals from keys past maxRefusalKeys this minute
	flushTime *time.Timer  // writes the minute's lines once it has ended
}

// refusalKey is what a refused-authentication line counts.
type refusalKey struct{ remote, reason string }

// maxRefusalKeys bounds the (address, reason) pairs counted in one minute:
// the memory the counts take, and the lines a minute adds to the refused
// file. Refusals past it are counted on one line that names no address.
const maxRefusalKeys = 256

func openAudit(cfg AuditConfig, failed func(error)) (*auditLog, error) {
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = 64 << 20
	}
	if cfg.Keep <= 0 {
		cfg.Keep = 5
	}
	main, err := openRotating(cfg.Path, cfg.MaxBytes, cfg.Keep)
	if err != nil {
		return nil, err
	}
	refused, err := openRotating(refusedAuditPath(cfg.Path), cfg.MaxBytes, cfg.Keep)
	if err != nil {
		main.close()
		return nil, err
	}
	if failed == nil {
		failed = func(error) {}
	}
	return &auditLog{main: main, refused: refused, failed: failed, now: time.Now, counts: map[refusalKey]int{}}, nil
}

// write appends one record; a failure to write is returned for the caller
// to log (an audit line that cannot be written must not fail the call). A
// refused request is only counted here: its line is written when its
// minute ends (or the log closes).
func (a *auditLog) write(r AuditRecord) error {
	if r.Kind == AuditKindAuth {
		return a.refuse(r)
	}
	if r.Time == "" {
		r.Time = a.now().UTC().Format(time.RFC3339Nano)
	}
	line, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return a.main.write(append(line, '\n'))
}

// refuse counts one refused request in the current minute, writing the
// previous minute's lines first if they are still pending.
func (a *auditLog) refuse(r AuditRecord) error {
	now := a.now()
	minute := now.Truncate(time.Minute)
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return fmt.Errorf("audit log is closed")
	}
	var err error
	if !a.minute.IsZero() && !a.minute.Equal(minute) {
		err = a.flushLocked()
	}
	a.minute = minute
	k := refusalKey{truncate(r.Remote, 100), truncate(r.Reason, 200)}
	switch _, counted := a.counts[k]; {
	case counted:
		a.counts[k]++
	case len(a.counts) < maxRefusalKeys:
		a.counts[k] = 1
		a.order = append(a.order, k)
	default:
		a.overflow++
	}
	if a.flushTime == nil {
		a.flushTime = time.AfterFunc(minute.Add(time.Minute).Sub(now), a.flushDue)
	}
	return err
}

// flushDue writes the counted minute's lines once it has ended (a minute
// that began after the timer was set waits for its own end).
func (a *auditLog) flushDue() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.flushTime = nil
	if a.closed || a.minute.IsZero() {
		return
	}
	if now := a.now(); now.Before(a.minute.Add(time.Minute)) {
		a.flushTime = time.AfterFunc(a.minute.Add(time.Minute).Sub(now), a.flushDue)
		return
	}
	if err := a.flushLocked(); err != nil {
		a.failed(err)
	}
}

// flushLocked writes the counted minute's lines, one per (address, reason)
// in the order first seen, and starts counting afresh; a.mu is held.
func (a *auditLog) flushLocked() error {
	at := a.minute.UTC().Format(time.RFC3339)
	var err error
	add := func(r AuditRecord) {
		line, _ := json.Marshal(r) // the fields are strings and ints
		if werr := a.refused.write(append(line, '\n')); err == nil {
			err = werr
		}
	}
	for _, k := range a.order {
		add(AuditRecord{Time: at, Kind: AuditKindAuth, Outcome: "UNAUTHORIZED", Remote: k.remote, Reason: k.reason, Count: a.counts[k]})
	}
	if a.overflow > 0 {
		add(AuditRecord{Time: at, Kind: AuditKindAuth, Outcome: "UNAUTHORIZED", Count: a.overflow,
			Reason: fmt.Sprintf("refused requests from more addresses and reasons than the %d a minute's lines name", maxRefusalKeys)})
	}
	clear(a.counts)
	a.order, a.overflow, a.minute = a.order[:0], 0, time.Time{}
	return err
}

// close writes the lines still counted and closes both files.
func (a *auditLog) close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return nil
	}
	a.closed = true
	if a.flushTime != nil {
		a.flushTime.Stop()
		a.flushTime = nil
	}
	var err error
	if !a.minute.IsZero() {
		err = a.flushLocked()
	}
	if cerr := a.refused.close(); err == nil {
		err = cerr
	}
	if cerr := a.main.close(); err == nil {
		err = cerr
	}
	return err
}

// rotatingFile appends lines to a file, rotating it by size.
type rotatingFile struct {
	mu       sync.Mutex
	path     string
	maxBytes int64
	keep     int
	f        *os.File
	size     int64
}

func openRotating(path string, maxBytes int64, keep int) (*rotatingFile, error) {
	r := &rotatingFile{path: path, maxBytes: maxBytes, keep: keep}
	if err := r.open(); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *rotatingFile) open() error {
	f, err := os.OpenFile(r.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("audit log: %w", err)
	}
	r.f, r.size = f, st.Size()
	return nil
}

// write appends a line, rotating first when it would take the file past
// maxBytes.
func (r *rotatingFile) write(line []byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f == nil {
		return fmt.Errorf("audit log is closed")
	}
	if r.size+int64(len(line)) > r.maxBytes && r.size > 0 {
		if err := r.rotate(); err != nil {
			return err
		}
	}
	n, err := r.f.Write(line)
	r.size += int64(n)
	return err
}

// rotate moves path to path.1 (and path.i to path.i+1, dropping the
// oldest) and starts a new file; r.mu is held.
func (r *rotatingFile) rotate() error {
	r.f.Close()
	r.f = nil
	os.Remove(r.path + "." + strconv.Itoa(r.keep))
	for i := r.keep - 1; i >= 1; i-- {
		os.Rename(r.path+"."+strconv.Itoa(i), r.path+"."+strconv.Itoa(i+1))
	}
	if err := os.Rename(r.path, r.path+".1"); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("audit log rotation: %w", err)
	}
	return r.open()
}

func (r *rotatingFile) close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f == nil {
		return nil
	}
	err := r.f.Close()
	r.f = nil
	return err
}
