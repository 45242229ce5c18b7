package upstream

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// Answers too long to hold in memory. The stdio transport (stdio.go)
// decodes each line whole, so an answer longer than
// Options.MaxResultBytes must never reach it. The line reader (process.go)
// writes such an answer to a file as it reads it, up to
// Options.MaxStagedBytes, and hands the transport a small stand-in response
// (stagedRPCCode, with a token) for the same request id; the connection
// trades the token for the file (Conn.result), and CallTool returns the file
// instead of the bytes. The file holds the JSON-RPC response line exactly as
// the server wrote it: making sense of it is the gateway's.

// Staged is an answer too long to hold in memory, in a file as the server
// sent it: the whole JSON-RPC response.
type Staged struct {
	Path string
	Size int64
}

// Remove deletes the file; whoever takes a Staged answer must call it.
func (s *Staged) Remove() { _ = os.Remove(s.Path) }

// stagedRPCCode marks the stand-in response of a staged answer.
const stagedRPCCode = -32098

// stagedOrphanAge is how long a staged answer waits for its request to take
// it. An answer whose request has gone by the time its line ends is not
// staged (lineReader); one whose caller goes away just after never is
// taken (the transport drops the stand-in), so older ones are removed whenever
// another is staged.
const stagedOrphanAge = time.Minute

// stagingDesk keeps one connection's staged answers until their requests
// take them.
type stagingDesk struct {
	dir      func() (string, error)
	maxBytes int64 // the longest answer staged
	log      *slog.Logger

	mu sync.Mutex
	// awaited are the requests in flight that take a staged answer, by
	// their ids (RequestId.String, as the transport matches answers): with none, a
	// long line is skipped rather than written to disk for nobody, and an
	// answer staged for a request that has gone is not kept.
	awaited map[string]int
	staged  map[string]stagedEntry
	closed  bool
}

type stagedEntry struct {
	st *Staged
	at time.Time
}

// newStagingDesk returns nil when the options stage nothing.
func newStagingDesk(o Options, log *slog.Logger) *stagingDesk {
	if o.StageDir == nil || o.MaxStagedBytes <= o.MaxResultBytes {
		return nil
	}
	return &stagingDesk{dir: o.StageDir, maxBytes: o.MaxStagedBytes, log: log, awaited: map[string]int{}, staged: map[string]stagedEntry{}}
}

// expect says request id, which takes a staged answer, is in flight; call
// the function it returns when it ends.
func (k *stagingDesk) expect(id mcp.RequestId) (done func()) {
	if k == nil {
		return func() {}
	}
	key := id.String()
	k.mu.Lock()
	k.awaited[key]++
	k.mu.Unlock()
	return func() {
		k.mu.Lock()
		if k.awaited[key]--; k.awaited[key] <= 0 {
			delete(k.awaited, key)
		}
		k.mu.Unlock()
	}
}

// wanted reports whether a long line should be staged now.
func (k *stagingDesk) wanted() bool {
	if k == nil {
		return false
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.awaited) > 0
}

// awaits reports whether a request in flight takes a staged answer for
// the JSON-RPC id raw (as the server wrote it).
func (k *stagingDesk) awaits(raw []byte) bool {
	var id mcp.RequestId
	if json.Unmarshal(raw, &id) != nil {
		return false
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.awaited[id.String()] > 0
}

// create opens a new file for an answer.
func (k *stagingDesk) create() (*os.File, error) {
	dir, err := k.dir()
	if err != nil {
		return nil, err
	}
	return os.CreateTemp(dir, "answer-*.json")
}

// failed logs why an answer could not be staged (the request is answered
// as too large).
func (k *stagingDesk) failed(err error) {
	k.log.Warn("an upstream answer too large for memory could not be written to disk; it is refused as too large", "error", err)
}

// hand keeps st until its request takes it, and returns its token.
func (k *stagingDesk) hand(st *Staged) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	token := hex.EncodeToString(b[:])
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed {
		st.Remove()
		return token // never taken
	}
	for t, e := range k.staged {
		if time.Since(e.at) > stagedOrphanAge {
			e.st.Remove()
			delete(k.staged, t)
		}
	}
	k.staged[token] = stagedEntry{st: st, at: time.Now()}
	return token
}

// take returns the answer staged under token, once.
func (k *stagingDesk) take(token string) (*Staged, bool) {
	if k == nil {
		return nil, false
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	e, ok := k.staged[token]
	delete(k.staged, token)
	return e.st, ok
}

// close removes every answer not taken.
func (k *stagingDesk) close() {
	if k == nil {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.closed = true
	for t, e := range k.staged {
		e.st.Remove()
		delete(k.staged, t)
	}
}

// standIn is the response the transport reads in place of a staged answer.
func standIn(id []byte, token string, size int64) []byte {
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":"the answer is staged in a file","data":{"token":%q,"size":%d}}}`+"\n",
		id, stagedRPCCode, token, size)
}
