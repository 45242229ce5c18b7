package codemode

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// ResultStore keeps the tool results too large to hand to a run whole
// (sandbox.results, results.go): each result's bytes, by id, for the one
// principal whose call made it, within ResultLimits. The default
// (FileResultStore) keeps them in files of this process; a store replicas
// share (Redis) implements the same interface and passes
// state/statetest.TestResultStore, so that a handle made on one replica is
// read on another. Every method takes ctx and may fail.
//
// The limits are the store's to keep, atomically with Put.
type ResultStore interface {
	// Put keeps size bytes read from body as result r. To make room it
	// drops the results used least recently: the principal's own while it
	// would hold more than PerPrincipalBytes, anyone's while the store
	// would hold more than TotalBytes. A result larger than
	// PerPrincipalBytes is refused with a *ResultLimitError, and nothing
	// is dropped. A body that ends before size bytes fails the Put.
	Put(ctx context.Context, r HeldResult, body io.Reader) error
	// Get describes result id if principal holds it, and counts as a use:
	// its TTL starts again. False when it is not held: unknown, another
	// principal's, expired or dropped.
	Get(ctx context.Context, principal, id string) (HeldResult, bool, error)
	// Open reads result id of principal from offset; ErrResultNotHeld when
	// it is not held. It is not a use (Get is). A result dropped while it
	// is read may end the reading with an error.
	Open(ctx context.Context, principal, id string, offset int64) (io.ReadCloser, error)
}

// HeldResult is one result a ResultStore keeps.
type HeldResult struct {
	ID        string `json:"id"`
	Principal string `json:"principal"` // auth.Principal.Key()
	Tool      string `json:"tool"`      // "server:tool", for the snippet's handle
	Bytes     int64  `json:"bytes"`
}

// ResultLimits bound what a ResultStore keeps.
type ResultLimits struct {
	PerPrincipalBytes int64         // one principal's results together (default 512 MiB)
	TotalBytes        int64         // everyone's (default 2 GiB)
	TTL               time.Duration // how long a result is kept after its last use (default 30 minutes)
}

// WithDefaults fills zero fields with the defaults.
func (l ResultLimits) WithDefaults() ResultLimits {
	if l.PerPrincipalBytes <= 0 {
		l.PerPrincipalBytes = 512 << 20
	}
	if l.TotalBytes <= 0 {
		l.TotalBytes = 2 << 30
	}
	if l.TTL <= 0 {
		l.TTL = 30 * time.Minute
	}
	return l
}

// ResultLimitError is a Put refused by ResultLimits; the message says
// what to do.
type ResultLimitError struct{ Message string }

func (e *ResultLimitError) Error() string { return e.Message }

// ErrResultNotHeld is Open's error for a result the store does not hold
// for the principal.
var ErrResultNotHeld = errors.New("codemode: no such result")

// TooLargeToHold is the ResultLimitError of a result over what one
// principal may hold, in every store's words.
func TooLargeToHold(r HeldResult, limits ResultLimits) *ResultLimitError {
	return &ResultLimitError{Message: fmt.Sprintf("the result of %s is %d bytes, more than the %d bytes one caller's big results may take; ask for less (a page, a range, a filter)",
		r.Tool, r.Bytes, limits.PerPrincipalBytes)}
}

// FileResultStore is the default ResultStore: each result in a file of one
// folder, the index in this process's memory. A result is written under a
// temporary name and renamed when whole, so a reader never sees half of
// one; the files a previous process left (their index is gone), whole or
// half written, are removed when the store opens.
type FileResultStore struct {
	dir    string
	temp   bool // dir was made for this store: Close removes it
	limits ResultLimits
	now    func() time.Time

	mu    sync.Mutex
	held  map[string]*fileResult
	bytes map[string]int64 // by principal, results being written included
	total int64
}

type fileResult struct {
	HeldResult
	used    time.Time
	writing bool // Put is still writing it: not to be read or dropped
}

// NewFileResultStore keeps results in dir ("": a temporary folder that
// Close removes), within limits (zero fields: defaults), by the clock now
// (nil: time.Now).
func NewFileResultStore(dir string, limits ResultLimits, now func() time.Time) (*FileResultStore, error) {
	s := &FileResultStore{dir: dir, limits: limits.WithDefaults(), now: now, held: map[string]*fileResult{}, bytes: map[string]int64{}}
	if s.now == nil {
		s.now = time.Now
	}
	if dir == "" {
		d, err := os.MkdirTemp("", "sandbox-results-")
		if err != nil {
			return nil, fmt.Errorf("codemode: a folder for big results: %w", err)
		}
		s.dir, s.temp = d, true
		return s, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("codemode: the folder for big results: %w", err)
	}
	for _, pattern := range []string{"res_*", ".writing-*"} { // held, and half written when the process died
		old, _ := filepath.Glob(filepath.Join(dir, pattern))
		for _, f := range old {
			_ = os.Remove(f)
		}
	}
	return s, nil
}

// Close removes the folder when the store made it.
func (s *FileResultStore) Close() error {
	if s.temp {
		return os.RemoveAll(s.dir)
	}
	return nil
}

func (s *FileResultStore) path(id string) string { return filepath.Join(s.dir, id) }

// validID keeps ids to the names the engine makes: no path in them.
func validID(id string) bool {
	return strings.HasPrefix(id, "res_") && len(id) <= 64 && !strings.ContainsAny(id, `/\.`)
}

func (s *FileResultStore) Put(ctx context.Context, r HeldResult, body io.Reader) error {
	if !validID(r.ID) {
		return fmt.Errorf("codemode: %q is not a result id", r.ID)
	}
	if r.Bytes > s.limits.PerPrincipalBytes {
		return TooLargeToHold(r, s.limits)
	}
	s.mu.Lock()
	s.expire()
	for s.bytes[r.Principal]+r.Bytes > s.limits.PerPrincipalBytes && s.dropOldest(r.Principal) {
	}
	for s.total+r.Bytes > s.limits.TotalBytes && s.dropOldest("") {
	}
	if s.total+r.Bytes > s.limits.TotalBytes { // the rest is being written
		s.mu.Unlock()
		return &ResultLimitError{Message: "the sandbox holds all the big results it may right now; try again in a moment, or ask for less"}
	}
	e := &fileResult{HeldResult: r, used: s.now(), writing: true}
	s.held[r.ID] = e
	s.bytes[r.Principal] += r.Bytes
	s.total += r.Bytes
	s.mu.Unlock()

	err := s.write(r, body)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.drop(r.ID)
		return err
	}
	e.writing = false
	return nil
}

// write copies exactly r.Bytes of body to r's file. A body that is a whole
// file on the same file system (a result the gateway spilled: serve puts
// both folders under codeMode.dataDir, or both in the temporary folder) is
// linked instead: a result of hundreds of megabytes is not copied again.
func (s *FileResultStore) write(r HeldResult, body io.Reader) error {
	if f, ok := body.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() == r.Bytes {
			if at, err := f.Seek(0, io.SeekCurrent); err == nil && at == 0 && os.Link(f.Name(), s.path(r.ID)) == nil {
				return nil
			}
		}
	}
	f, err := os.CreateTemp(s.dir, ".writing-*")
	if err != nil {
		return err
	}
	n, err := io.Copy(f, io.LimitReader(body, r.Bytes))
	if err == nil && n != r.Bytes {
		err = fmt.Errorf("codemode: the result ended after %d of its %d bytes", n, r.Bytes)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), s.path(r.ID))
	}
	if err != nil {
		_ = os.Remove(f.Name())
	}
	return err
}

func (s *FileResultStore) Get(ctx context.Context, principal, id string) (HeldResult, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expire()
	e, ok := s.held[id]
	if !ok || e.writing || e.Principal != principal {
		return HeldResult{}, false, nil
	}
	e.used = s.now()
	return e.HeldResult, true, nil
}

func (s *FileResultStore) Open(ctx context.Context, principal, id string, offset int64) (io.ReadCloser, error) {
	s.mu.Lock()
	s.expire()
	e, ok := s.held[id]
	held := ok && !e.writing && e.Principal == principal
	s.mu.Unlock()
	if !held {
		return nil, ErrResultNotHeld
	}
	// Once open, the file reads to its end even if the result is dropped.
	f, err := os.Open(s.path(id))
	if err != nil {
		return nil, ErrResultNotHeld
	}
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// dropOldest drops the least recently used result (of principal, when not
// ""); false when there is none to drop.
func (s *FileResultStore) dropOldest(principal string) bool {
	var oldest *fileResult
	for _, e := range s.held {
		if e.writing || (principal != "" && e.Principal != principal) {
			continue
		}
		if oldest == nil || e.used.Before(oldest.used) {
			oldest = e
		}
	}
	if oldest == nil {
		return false
	}
	s.drop(oldest.ID)
	return true
}

func (s *FileResultStore) drop(id string) {
	e := s.held[id]
	delete(s.held, id)
	if s.bytes[e.Principal] -= e.Bytes; s.bytes[e.Principal] <= 0 {
		delete(s.bytes, e.Principal)
	}
	s.total -= e.Bytes
	_ = os.Remove(s.path(id))
}

// expire drops the results unused for the TTL.
func (s *FileResultStore) expire() {
	cutoff := s.now().Add(-s.limits.TTL)
	for id, e := range s.held {
		if !e.writing && e.used.Before(cutoff) {
			s.drop(id)
		}
	}
}
