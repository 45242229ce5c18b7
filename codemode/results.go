package codemode

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/sandboxrt/sandbox/auth"
)

// Big results. A tool result larger than what is left of the run's result
// budget does not fail the run: the snippet receives a handle,
//
//	{ handle: "res_…", bytes: 12345678, preview: "<its first 1 KB>", tool: "files:read", note: "…" }
//
// and reads the result in parts with sandbox.results.read(handle, {offset,
// length}) (JSON text) or sandbox.results.json(handle, path) (the value at a
// path, itself a handle when still too large). The budget is a quarter of
// the run's memory limit (at most 32 MiB): tool results become several
// times their size as VM values. Results are kept in the serve process for
// the caller's principal only, for resultTTL after their last read, within
// resultsPerPrincipal and resultsTotal (the oldest go first).

const (
	resultPreviewBytes  = 1 << 10
	resultReadMax       = 1 << 20 // one read
	resultTTL           = 30 * time.Minute
	resultsPerPrincipal = 64 << 20
	resultsTotal        = 256 << 20
	maxResultBudget     = 32 << 20
)

// resultBudget is how many bytes of tool results a run may receive whole.
func resultBudget(memoryBytes int64) int {
	return int(min(memoryBytes/4, maxResultBudget))
}

type heldResult struct {
	principal string
	session   string
	tool      string
	data      []byte
	used      time.Time
}

// resultBook holds the big results of recent runs.
type resultBook struct {
	mu    sync.Mutex
	byID  map[string]*heldResult
	bytes map[string]int // per principal
	total int
	now   func() time.Time
}

func newResultBook() *resultBook {
	return &resultBook{byID: map[string]*heldResult{}, bytes: map[string]int{}, now: time.Now}
}

// hold keeps a result and returns the handle object the snippet receives.
func (b *resultBook) hold(c auth.Caller, tool string, data []byte) (json.RawMessage, error) {
	if len(data) > resultsPerPrincipal {
		return nil, fmt.Errorf("the result of %s is %d bytes, more than the %d a caller's results may hold; ask for less (a page, a filter, fewer fields)", tool, len(data), resultsPerPrincipal)
	}
	var id [16]byte
	if _, err := rand.Read(id[:]); err != nil {
		return nil, err
	}
	handle := "res_" + hex.EncodeToString(id[:])
	p := c.Principal.Key()
	b.mu.Lock()
	b.expire()
	for b.bytes[p]+len(data) > resultsPerPrincipal || b.total+len(data) > resultsTotal {
		if !b.evictOldest(p, b.bytes[p]+len(data) > resultsPerPrincipal) {
			break
		}
	}
	b.byID[handle] = &heldResult{principal: p, session: string(c.Session), tool: tool, data: data, used: b.now()}
	b.bytes[p] += len(data)
	b.total += len(data)
	b.mu.Unlock()

	preview := data[:min(len(data), resultPreviewBytes)]
	for len(preview) > 0 && !utf8.Valid(preview) { // do not cut a character in two
		preview = preview[:len(preview)-1]
	}
	return json.Marshal(struct {
		Handle  string `json:"handle"`
		Bytes   int    `json:"bytes"`
		Preview string `json:"preview"`
		Tool    string `json:"tool"`
		Note    string `json:"note"`
	}{handle, len(data), string(preview), tool, fmt.Sprintf("The result of %s (%d bytes of JSON) is too large to hand over whole in this run; "+
		"read parts of it with sandbox.results.json(handle, path) or sandbox.results.read(handle, {offset, length}).", tool, len(data))})
}

// evictOldest drops the least recently used result (of principal p when
// mine is set); false when there is none.
func (b *resultBook) evictOldest(p string, mine bool) bool {
	var oldest string
	for id, r := range b.byID {
		if mine && r.principal != p {
			continue
		}
		if oldest == "" || r.used.Before(b.byID[oldest].used) {
			oldest = id
		}
	}
	if oldest == "" {
		return false
	}
	b.drop(oldest)
	return true
}

func (b *resultBook) drop(id string) {
	r := b.byID[id]
	delete(b.byID, id)
	b.bytes[r.principal] -= len(r.data)
	if b.bytes[r.principal] == 0 {
		delete(b.bytes, r.principal)
	}
	b.total -= len(r.data)
}

func (b *resultBook) expire() {
	cutoff := b.now().Add(-resultTTL)
	for id, r := range b.byID {
		if r.used.Before(cutoff) {
			b.drop(id)
		}
	}
}

// get returns a held result of the caller's principal.
func (b *resultBook) get(c auth.Caller, handle string) (*heldResult, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.expire()
	r, ok := b.byID[handle]
	if !ok || r.principal != c.Principal.Key() {
		return nil, false
	}
	r.used = b.now()
	return r, true
}

// jsonAt returns the JSON text of the value at path in data: a JSON
// pointer ("/items/0/name") or dotted ("items.0.name"); "" is the whole.
func jsonAt(data []byte, path string) ([]byte, error) {
	var steps []string
	switch {
	case path == "" || path == "/":
	case strings.HasPrefix(path, "/"):
		for _, s := range strings.Split(path[1:], "/") {
			steps = append(steps, strings.NewReplacer("~1", "/", "~0", "~").Replace(s))
		}
	default:
		steps = strings.Split(path, ".")
	}
	sc := &jsonScanner{b: data}
	for depth, step := range steps {
		sc.space()
		if sc.i >= len(sc.b) {
			return nil, errShapeSyntax
		}
		where := strings.Join(steps[:depth], ".")
		if where == "" {
			where = "the top"
		}
		switch sc.b[sc.i] {
		case '{':
			sc.i++
			found := false
			for !found {
				if sc.eat('}') {
					return nil, fmt.Errorf("no key %q at %s", step, where)
				}
				k, err := sc.key()
				if err != nil {
					return nil, err
				}
				if k == step {
					found = true
					break
				}
				if err := sc.skip(); err != nil {
					return nil, err
				}
				sc.eat(',')
			}
		case '[':
			n, err := strconv.Atoi(step)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("%s is an array: the step %q must be an index", where, step)
			}
			sc.i++
			for i := 0; ; i++ {
				if sc.eat(']') {
					return nil, fmt.Errorf("index %d is past the end of the array at %s (%d items)", n, where, i)
				}
				if i == n {
					break
				}
				if err := sc.skip(); err != nil {
					return nil, err
				}
				sc.eat(',')
			}
		default:
			return nil, fmt.Errorf("%s is neither an object nor an array: the path cannot go on to %q", where, step)
		}
	}
	sc.space()
	start := sc.i
	if err := sc.skip(); err != nil {
		return nil, err
	}
	return data[start:sc.i], nil
}
