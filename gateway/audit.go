package gateway

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"
)

// AuditConfig is the "audit" block of the gateway config: one JSON line per
// tool call (direct or from a snippet), per execute_code run, per approval
// decision and per failed authentication, in Path, rotated when it passes
// MaxBytes (Path.1 is the newest old file, up to Path.Keep).
type AuditConfig struct {
	Path     string
	MaxBytes int64 // default 64 MiB
	Keep     int   // rotated files kept (default 5)
}

// AuditRecord is one line of the audit log (docs/operations.md lists its
// fields). It never holds argument values, code, tokens or result contents:
// sizes, and the SHA-256 of the arguments to match a line with a request the
// caller kept. The gateway writes the records of its calls and approvals;
// what happens beside them (a code-mode run, a request refused for its
// credentials) is recorded by its owner through Gateway.Audit, so the
// gateway knows nothing of either.
type AuditRecord struct {
	Time        string    `json:"time"` // RFC 3339 UTC; "" is the time it is written
	Kind        AuditKind `json:"kind"`
	Principal   string    `json:"principal,omitempty"`
	Session     string    `json:"session,omitempty"`
	Tool        string    `json:"tool,omitempty"`
	Decision    string    `json:"decision,omitempty"` // what the policy or a person decided
	Outcome     string    `json:"outcome,omitempty"`  // OK or an error code
	DurationMs  float64   `json:"durationMs,omitempty"`
	ArgBytes    int       `json:"argBytes,omitempty"`
	ArgsSHA256  string    `json:"argsSha256,omitempty"` // hex
	ResultBytes int       `json:"resultBytes,omitempty"`
	Reason      string    `json:"reason,omitempty"` // of a failed authentication
	Remote      string    `json:"remote,omitempty"` // the client's address, for auth failures
}

// AuditKind says what an audit record records.
type AuditKind string

// The kinds of audit records.
const (
	AuditKindCall     AuditKind = "call"     // a tool call, direct or from a snippet (the gateway)
	AuditKindApproval AuditKind = "approval" // a person's or the policy's answer to an approval (the gateway)
	AuditKindRun      AuditKind = "run"      // an execute_code run (code mode)
	AuditKindAuth     AuditKind = "auth"     // a request refused for its credentials (serve's authentication)
)

// auditLog appends records to a file, rotating it by size.
type auditLog struct {
	mu   sync.Mutex
	cfg  AuditConfig
	f    *os.File
	size int64
}

func openAudit(cfg AuditConfig) (*auditLog, error) {
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = 64 << 20
	}
	if cfg.Keep <= 0 {
		cfg.Keep = 5
	}
	a := &auditLog{cfg: cfg}
	if err := a.open(); err != nil {
		return nil, err
	}
	return a, nil
}

func (a *auditLog) open() error {
	f, err := os.OpenFile(a.cfg.Path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("audit log: %w", err)
	}
	a.f, a.size = f, st.Size()
	return nil
}

// write appends one record; a failure to write is returned for the caller
// to log (an audit line that cannot be written must not fail the call).
func (a *auditLog) write(r AuditRecord) error {
	if r.Time == "" {
		r.Time = time.Now().UTC().Format(time.RFC3339Nano)
	}
	line, err := json.Marshal(r)
	if err != nil {
		return err
	}
	line = append(line, '\n')
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.f == nil {
		return fmt.Errorf("audit log is closed")
	}
	if a.size+int64(len(line)) > a.cfg.MaxBytes && a.size > 0 {
		if err := a.rotate(); err != nil {
			return err
		}
	}
	n, err := a.f.Write(line)
	a.size += int64(n)
	return err
}

// rotate moves Path to Path.1 (and Path.i to Path.i+1, dropping the
// oldest) and starts a new file; a.mu is held.
func (a *auditLog) rotate() error {
	a.f.Close()
	a.f = nil
	os.Remove(a.cfg.Path + "." + strconv.Itoa(a.cfg.Keep))
	for i := a.cfg.Keep - 1; i >= 1; i-- {
		os.Rename(a.cfg.Path+"."+strconv.Itoa(i), a.cfg.Path+"."+strconv.Itoa(i+1))
	}
	if err := os.Rename(a.cfg.Path, a.cfg.Path+".1"); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("audit log rotation: %w", err)
	}
	return a.open()
}

func (a *auditLog) close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.f == nil {
		return nil
	}
	err := a.f.Close()
	a.f = nil
	return err
}
