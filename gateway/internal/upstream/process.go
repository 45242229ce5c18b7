package upstream

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// A stdio upstream is a child process that the gateway starts itself (rather
// than letting mcp-go's stdio transport do it) for three reasons: the
// process group is killed as a whole (npx starts node, which starts the
// server), the exit is noticed at once so every in-flight call fails
// immediately with UPSTREAM_UNAVAILABLE, and stdout passes through a reader
// that never holds more than the result cap of one line in memory (a longer
// answer goes to a file: staging.go).

type process struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *lineReader // capped line reader over the pipe
	stderr *stderrBuffer
	exited chan struct{} // closed when the process has exited
	err    error         // exit error; valid after exited is closed
}

// startProcess starts a stdio server in its own process group. activity is
// set to the time of each read from the server's stdout that moved bytes: a
// server that writes is alive, however long its answers take (see
// Supervisor.startHealth). Bytes it reads prove nothing: a hung server may
// still drain its input.
func startProcess(spec Spec, maxLine int64, desk *stagingDesk, activity *atomic.Int64) (*process, error) {
	cmd := exec.Command(spec.Command, spec.Args...)
	cmd.Env = childEnv(spec.Env)
	cmd.Dir = spec.Cwd
	setProcessGroup(cmd)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	p := &process{cmd: cmd, stdin: stdin, stderr: newStderrBuffer(stderrHead, stderrTail), exited: make(chan struct{})}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %q: %w", spec.Command, err)
	}
	p.stdout = newLineReader(activityReader{stdout, activity}, maxLine, desk)
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// What is kept of a server's stderr (stderrBuffer): its start, where a
// server says why it cannot run, and its end, where it says why it stopped.
const stderrHead, stderrTail = 4 << 10, 8 << 10

// inheritedEnv are the only variables a stdio server inherits from the
// gateway's environment (the same set as the official MCP SDKs): a server
// sees the secrets its "env" names, not every token the gateway was started
// with.
var inheritedEnv = []string{"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LC_ALL", "TMPDIR", "TZ",
	"SYSTEMROOT", "APPDATA", "LOCALAPPDATA", "USERPROFILE", "PROGRAMFILES", "TEMP", "TMP", "PATHEXT", "COMSPEC"}

func childEnv(extra map[string]string) []string {
	env := make([]string, 0, len(inheritedEnv)+len(extra))
	for _, k := range inheritedEnv {
		if v, ok := os.LookupEnv(k); ok && !strings.HasPrefix(v, "()") { // no exported shell functions
			env = append(env, k+"="+v)
		}
	}
	for k, v := range extra {
		env = append(env, k+"="+v)
	}
	return env
}

// exitStatus says how the process ended ("exit status 7", "signal: killed").
func (p *process) exitStatus() string {
	if p.err != nil {
		return p.err.Error()
	}
	return "exited"
}

// stderrExcerpt is what the process wrote to stderr, shortened for a
// status line: its first lines and its last. Both matter: Node prints
// "Error: Cannot find module ..." near the top and a stack below it, a
// Python server its traceback's cause at the bottom. For the operator only
// (a crashing server may print secrets).
func (p *process) stderrExcerpt() string {
	lines := nonBlankLines(p.stderr.String())
	if len(lines) == 0 {
		return ""
	}
	if len(lines) > excerptHead+excerptTail+1 {
		skipped := len(lines) - excerptHead - excerptTail
		lines = append(append(lines[:excerptHead:excerptHead], fmt.Sprintf("[%d more lines]", skipped)), lines[len(lines)-excerptTail:]...)
	}
	for i, l := range lines {
		lines[i] = truncate(l, 200)
	}
	return "stderr: " + truncate(strings.Join(lines, " | "), 1000)
}

// How many of its first and last stderr lines a status line keeps.
const excerptHead, excerptTail = 5, 3

func nonBlankLines(s string) []string {
	var out []string
	for l := range strings.Lines(s) {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// stop closes stdin, gives the server a moment to exit, then terminates and
// finally kills its whole process group.
func (p *process) stop() {
	_ = p.stdin.Close()
	select {
	case <-p.exited:
		return
	case <-time.After(500 * time.Millisecond):
	}
	signalGroup(p.cmd, false)
	select {
	case <-p.exited:
		return
	case <-time.After(2 * time.Second):
	}
	signalGroup(p.cmd, true)
	select {
	case <-p.exited:
	case <-time.After(2 * time.Second):
	}
}

// stderrBuffer keeps the first head and the last tail bytes written to it,
// and counts what it dropped in between: a server that logs forever costs
// head+tail bytes, and the lines that say why it failed (often its first)
// are kept.
type stderrBuffer struct {
	mu         sync.Mutex
	head, tail int
	first      []byte
	last       []byte
	dropped    int64
}

func newStderrBuffer(head, tail int) *stderrBuffer {
	return &stderrBuffer{head: head, tail: tail}
}

func (b *stderrBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(p)
	if room := b.head - len(b.first); room > 0 {
		take := min(room, len(p))
		b.first = append(b.first, p[:take]...)
		p = p[take:]
	}
	b.last = append(b.last, p...)
	if over := len(b.last) - b.tail; over > 0 {
		b.dropped += int64(over)
		b.last = append(b.last[:0], b.last[over:]...)
	}
	return n, nil
}

// String is what was kept, with a line in place of the bytes dropped.
func (b *stderrBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.dropped == 0 {
		return string(b.first) + string(b.last)
	}
	mid := fmt.Sprintf("\n[... %d bytes of stderr not kept ...]\n", b.dropped)
	return string(b.first) + mid + string(b.last)
}

// tooLargeRPCCode marks the synthesized response that replaces an oversized
// line; the router turns it into RESULT_TOO_LARGE.
const tooLargeRPCCode = -32099

// activityReader records when bytes last arrived.
type activityReader struct {
	r  io.Reader
	at *atomic.Int64
}

func (a activityReader) Read(p []byte) (int, error) {
	n, err := a.r.Read(p)
	if n > 0 {
		a.at.Store(time.Now().UnixNano())
	}
	return n, err
}

// lineReader passes newline-delimited JSON-RPC messages through unchanged
// while they are at most max bytes, to the stdio transport (stdio.go),
// which decodes each line whole. A longer line is never held in memory.
// While a request that takes staged answers is in
// flight (stagingDesk.wanted), a line past stageAbove (or max, when less)
// is written to a file
// as it is read, up to the desk's maxBytes, and a response to a request
// that awaits it is replaced by a stand-in that the connection trades for
// the file (staging.go); another line that ends within max is handed on
// from the file, and another response is refused as below. Otherwise, or past
// maxBytes, a line over max is skipped while its top-level "id" is picked
// out, and replaced by a JSON-RPC error response for that id, so the
// waiting call fails with RESULT_TOO_LARGE instead of the gateway running
// out of memory. When the id comes before the line is over, that response
// goes out at once: a line that never ends does not hold its call until
// the call's timeout. Oversized notifications and requests are dropped
// (nobody waits for them).
type lineReader struct {
	br      *bufio.Reader
	max     int64
	desk    *stagingDesk // nil: nothing is staged
	pending []byte       // bytes ready to hand out
	long    *longLine    // a long line still being read
	err     error
}

// stageAbove is how long a line grows in memory before it is staged, when
// one may be: the answers code mode reads are staged from here on, so that
// serve holds a megabyte of a long one, not MaxResultBytes of it.
const stageAbove = 1 << 20

// longLine is a line being staged, or skipped, while it is read.
type longLine struct {
	ids      idScanner
	total    int64
	file     *os.File // where it is staged; nil when it is not (or no longer)
	staged   bool     // it was staged from its start (file may since have been dropped)
	limit    int64    // what it is refused for passing: the memory cap, or the desk's maxBytes when it was staged
	answered bool     // its too-large response went out before its end
}

func newLineReader(r io.Reader, max int64, desk *stagingDesk) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, 64<<10), max: max, desk: desk}
}

// next returns the next line handed on, newline and all, which the caller
// may keep; or the error that ended the stream, when the bytes of a line it
// cut short are dropped (nothing can be made of half a message).
func (c *lineReader) next() ([]byte, error) {
	for {
		for len(c.pending) == 0 {
			if c.err != nil {
				return nil, c.err
			}
			c.fill()
		}
		line := c.pending
		c.pending = nil
		if line[len(line)-1] == '\n' {
			return line, nil
		}
	}
}

func (c *lineReader) Read(p []byte) (int, error) {
	for len(c.pending) == 0 {
		if c.err != nil {
			return 0, c.err
		}
		c.fill()
	}
	n := copy(p, c.pending)
	c.pending = c.pending[n:]
	return n, nil
}

// fill reads the next line into pending (or what stands in for a long one).
func (c *lineReader) fill() {
	if c.long != nil {
		c.readLong(bufio.ErrBufferFull)
		return
	}
	var line []byte
	stage := true // until a file cannot be made for this line
	for {
		frag, err := c.br.ReadSlice('\n')
		line = append(line, frag...)
		n := int64(len(line))
		if stage && n > min(stageAbove, c.max) && errors.Is(err, bufio.ErrBufferFull) && c.desk.wanted() {
			if f, ferr := c.desk.create(); ferr == nil {
				c.startLong(line, err, f)
				return
			} else {
				c.desk.failed(ferr)
				stage = false
			}
		}
		switch {
		case n > c.max:
			c.startLong(line, err, nil)
			return
		case err == nil:
			c.pending = line
			return
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			// EOF or a read error: hand out what we have, then the error.
			c.pending = line
			c.err = err
			return
		}
	}
}

// startLong begins a long line, whose first bytes are head: staged in f,
// or (nil) skipped.
func (c *lineReader) startLong(head []byte, err error, f *os.File) {
	l := &longLine{total: int64(len(head)), limit: c.max}
	l.ids.feed(head)
	if f != nil {
		l.file, l.staged, l.limit = f, true, c.desk.maxBytes
	}
	l.write(c.desk, head)
	c.long = l
	c.readLong(err)
}

// readLong reads on through the long line (err is the last read's) until
// it ends, or until its too-large response is ready to go out first.
func (c *lineReader) readLong(err error) {
	l := c.long
	for errors.Is(err, bufio.ErrBufferFull) {
		var frag []byte
		frag, err = c.br.ReadSlice('\n')
		l.total += int64(len(frag))
		l.ids.feed(frag)
		l.write(c.desk, frag)
		if l.file == nil && l.total > c.max && !l.answered && l.ids.isResponse && l.ids.id != nil {
			l.answered = true
			c.pending = c.tooLarge(l, true)
			if errors.Is(err, bufio.ErrBufferFull) {
				return // the rest is skipped on the next fill
			}
		}
	}
	c.long = nil
	if err != nil { // the server stopped mid-line: nothing of it is answered
		l.drop()
		c.err = err
		return
	}
	switch {
	case l.answered:
	case l.file != nil && l.ids.isResponse && l.ids.id != nil && c.desk.awaits(l.ids.id):
		name := l.file.Name()
		if cerr := l.file.Close(); cerr != nil {
			c.desk.failed(cerr)
			l.drop()
			c.pending = c.tooLarge(l, false)
			return
		}
		c.pending = standIn(l.ids.id, c.desk.hand(&Staged{Path: name, Size: l.total}), l.total)
	case l.file != nil && l.total <= c.max:
		// Staged in case it was an answer, and it was not: it is short
		// enough to hand on whole.
		c.pending = l.readBack(c.desk)
	case l.file != nil && l.ids.isResponse && l.ids.id != nil:
		// An answer its request no longer awaits (the caller left while
		// it was read), or one for a request that takes none: not kept
		// for nobody, and refused at the memory cap.
		l.drop()
		l.limit = c.max
		c.pending = c.tooLarge(l, false)
	case !l.ids.isResponse || l.ids.id == nil:
		l.drop()
	default:
		c.pending = c.tooLarge(l, false)
	}
}

// write stages b, or stops staging when the line passes the desk's
// maxBytes or the disk fails.
func (l *longLine) write(desk *stagingDesk, b []byte) {
	if l.file == nil {
		return
	}
	if l.total > desk.maxBytes {
		l.drop()
		return
	}
	if _, err := l.file.Write(b); err != nil {
		desk.failed(err)
		l.drop()
	}
}

// readBack is the staged line, from its file, which it removes.
func (l *longLine) readBack(desk *stagingDesk) []byte {
	defer l.drop()
	b := make([]byte, l.total)
	if _, err := l.file.ReadAt(b, 0); err != nil {
		desk.failed(err)
		return nil
	}
	return b
}

// drop deletes the staged part of the line.
func (l *longLine) drop() {
	if l.file != nil {
		_ = l.file.Close()
		_ = os.Remove(l.file.Name())
		l.file = nil
	}
}

// tooLarge is the error response that stands in for a refused answer
// (early: sent before the line is over, whose size is then at least total).
func (c *lineReader) tooLarge(l *longLine, early bool) []byte {
	more := ""
	if early {
		more = " or more"
	}
	msg := fmt.Sprintf("the upstream's response is larger than the result cap of %d bytes (%d bytes%s)", l.limit, l.total, more)
	return []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%q,"data":{"limit":%d,"size":%d}}}`+"\n",
		l.ids.id, tooLargeRPCCode, msg, l.limit, l.total))
}

// idScanner walks JSON text incrementally and records the raw value of the
// top-level "id" member (numbers and strings, which is all JSON-RPC allows)
// and whether the object has a "result" or "error" member.
type idScanner struct {
	depth      int
	inStr, esc bool
	strBuf     []byte // a key being read at depth 1, as written (first maxKeyBytes)
	lastStr    string // the last string completed at depth 1 in key position, decoded
	inValue    bool   // after a top-level "key": until the next ','
	curKey     string
	capturing  bool
	val        []byte
	id         []byte
	isResponse bool
}

func (s *idScanner) feed(b []byte) {
	for i := 0; i < len(b); i++ {
		ch := b[i]
		if s.inStr && !s.esc && !s.capturing && !(s.depth == 1 && !s.inValue) {
			// Inside a string nobody reads (most of a long line): jump to
			// the next quote or backslash.
			rest := b[i:]
			next := bytes.IndexByte(rest, '"')
			upTo := rest
			if next >= 0 {
				upTo = rest[:next]
			}
			if e := bytes.IndexByte(upTo, '\\'); e >= 0 {
				next = e
			}
			if next < 0 {
				return
			}
			i += next
			ch = b[i]
		}
		if s.inStr {
			if s.capturing && len(s.val) <= maxIDBytes { // one byte past: too long to be an id
				s.val = append(s.val, ch)
			}
			key := s.depth == 1 && !s.inValue
			switch {
			case s.esc:
				s.esc = false
			case ch == '\\':
				s.esc = true
			case ch == '"':
				s.inStr = false
				if key {
					s.lastStr = decodeKey(s.strBuf)
				}
				if s.capturing {
					s.finishID()
				}
				continue
			}
			if key && len(s.strBuf) <= maxKeyBytes { // one byte past: too long to be ours
				s.strBuf = append(s.strBuf, ch)
			}
			continue
		}
		if s.capturing {
			if ch != ',' && ch != '}' && ch != ' ' && ch != '\t' && ch != '\r' && ch != '\n' {
				if len(s.val) < 64 {
					s.val = append(s.val, ch)
				}
				continue
			}
			s.finishID()
		}
		switch ch {
		case '"':
			s.inStr = true
			s.strBuf = s.strBuf[:0]
			if s.depth == 1 && s.inValue && s.curKey == "id" && s.id == nil {
				s.capturing = true
				s.val = append(s.val[:0], ch)
			}
		case ':':
			if s.depth == 1 {
				s.inValue = true
				s.curKey = s.lastStr
				if s.curKey == "result" || s.curKey == "error" {
					s.isResponse = true
				}
			}
		case '{', '[':
			s.depth++
		case '}', ']':
			s.depth--
		case ',':
			if s.depth == 1 {
				s.inValue = false
			}
		case ' ', '\t', '\r', '\n':
		default:
			if s.depth == 1 && s.inValue && s.curKey == "id" && s.id == nil {
				s.capturing = true
				s.val = append(s.val[:0], ch)
			}
		}
	}
}

// maxKeyBytes is the longest key the scanner reads ("id", "result" and
// "error", each character \u-escaped, fit); a longer one is none of them.
const maxKeyBytes = 64

// decodeKey is a key as written (escapes and all) as it reads: a server may
// write "id" as "\u0069d", which is the same key.
func decodeKey(raw []byte) string {
	if len(raw) > maxKeyBytes {
		return ""
	}
	var key string
	if json.Unmarshal(append(append([]byte{'"'}, raw...), '"'), &key) != nil {
		return ""
	}
	return key
}

// maxIDBytes is the longest id the scanner takes (ours are a few bytes);
// it holds no more of a longer one, however long the line.
const maxIDBytes = 256

func (s *idScanner) finishID() {
	if len(s.val) > 0 && len(s.val) <= maxIDBytes && s.id == nil {
		s.id = append([]byte(nil), s.val...)
	}
	s.capturing, s.val = false, nil
}
