package runtime

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/sandboxrt/sandbox/internal/bytesize"
	"github.com/sandboxrt/sandbox/internal/jsonstream"
	"github.com/sandboxrt/sandbox/runtime/internal/bindings"
)

// The parent and a worker exchange frames over the worker's stdin and stdout:
// a 4-byte big-endian length, then one JSON message, then, when the message
// says so (Tail), that many raw bytes: a log's text, or a reply's result.
// Nothing else is shared.
//
//	parent -> worker: run, reply (a tool call's answer), cancel
//	worker -> parent: ready (once, at start), started (a run was received,
//	before anything of it ran), call, log, done
//
// started tells a worker that was dead before a run reached it (the parent
// retries the run on another worker) from one that died running it (the
// run's own outcome).
//
// The parent trusts nothing a worker says beyond its own run: calls are
// checked against the run's bound tools and limits, frames are size-capped,
// and a worker that breaks the protocol is killed.

// maxFrameBytes bounds one frame: a tool result of several MB must pass, a
// runaway frame must not exhaust the parent.
const maxFrameBytes = 64 << 20

type message struct {
	T string `json:"t"`
	// RunID ties every frame but ready to one run. A worker runs many
	// snippets in turn; an answer to a call of an earlier run (which was
	// given up, its call still in flight) must never reach a later one.
	RunID uint64 `json:"run,omitempty"`

	// run
	Run *runMessage `json:"runReq,omitempty"`

	// call / reply
	ID     uint64           `json:"id,omitempty"`
	Target *bindings.Target `json:"to,omitempty"` // what a call is addressed to
	Args   json.RawMessage  `json:"args,omitempty"`
	Result json.RawMessage  `json:"result,omitempty"`
	Err    *ToolError       `json:"err,omitempty"`

	// Clock carries a journalled run's clock readings made since the
	// worker's last frame, on its next call, log or done.
	Clock []int64 `json:"clk,omitempty"`

	// log
	Log *LogEntry `json:"log,omitempty"`
	// Tail is the size of the raw bytes that follow the frame: a log's
	// message, sent as it is rather than escaped in the JSON, so that the
	// parent reads a run's console output into one string per entry instead
	// of unescaping it through two more copies; or a reply's Result, which
	// the parent has checked is JSON and the VM parses where it uses it, so
	// that it is not compacted into the frame, scanned as part of it and
	// copied out of it on the way (three passes over every tool result).
	Tail int `json:"tail,omitempty"`

	// done
	Outcome *execOutcome `json:"outcome,omitempty"`
	// Retire asks the parent not to reuse this worker (its heap grew large).
	Retire bool `json:"retire,omitempty"`

	// clock
	Stopped bool `json:"stopped,omitempty"`

	// ready
	PID int `json:"pid,omitempty"`
}

type runMessage struct {
	Code        string          `json:"code"` // TypeScript: the worker transpiles it
	Filename    string          `json:"filename"`
	Limits      Limits          `json:"limits"`
	Tools       []Tool          `json:"tools,omitempty"`
	Services    []string        `json:"services,omitempty"`
	Input       json.RawMessage `json:"input,omitempty"`
	CompileOnly bool            `json:"compileOnly,omitempty"`
	// Seed and Clock are a journalled run's: its randomness's seed, and
	// the clock readings it replays (journal.go).
	Seed  []byte  `json:"seed,omitempty"`
	Clock []int64 `json:"clock,omitempty"`
}

const (
	msgRun     = "run"
	msgReply   = "reply"
	msgCancel  = "cancel"
	msgReady   = "ready"
	msgStarted = "started"
	// msgCompiled: the snippet compiled and starts running.
	msgCompiled = "compiled"
	msgCall     = "call"
	msgLog      = "log"
	msgDone     = "done"
	// msgClock: the parent stops (Stopped) or restarts the run's time
	// limit while a person is asked to approve a call.
	msgClock = "clock"
)

// frameWriter writes frames; safe for concurrent use (tool answers arrive on
// many goroutines).
type frameWriter struct {
	mu sync.Mutex
	w  *bufio.Writer
	// lazyFlush, while armed (lazyArmed), flushes frames written by
	// sendLazy that no later send has flushed yet: at most lazyDelay after
	// the first of them, however many follow.
	lazyFlush *time.Timer
	lazyArmed bool
	// header is where sendReply and encodeLocked spell a frame (fw.mu).
	header []byte
}

// lazyDelay bounds how long a frame of sendLazy waits in the buffer.
const lazyDelay = time.Millisecond

func newFrameWriter(w io.Writer) *frameWriter {
	return &frameWriter{w: bufio.NewWriterSize(w, 64<<10)}
}

func (fw *frameWriter) send(m *message) error { return fw.sendText(m, "") }

// sendLazy sends m without a write of its own: it leaves with the next
// frame that is flushed (a run's result), with flush, or after lazyDelay.
// For news the other side needs soon but not at once: a run compiled (a
// trivial run's compiled and done frames then cross the pipe in one
// write), and a tool call, which the VM flushes when it has nothing left to
// run, so that the calls of a Promise.all go out in one write.
func (fw *frameWriter) sendLazy(m *message) error {
	fw.mu.Lock()
	defer fw.mu.Unlock()
	data, err := fw.encodeLocked(m)
	if err != nil {
		return err
	}
	if len(data) > maxFrameBytes {
		return &frameTooLargeError{msg: m.T, size: len(data)}
	}
	if err := fw.writeLocked(data, ""); err != nil {
		return err
	}
	if fw.lazyArmed {
		return nil
	}
	fw.lazyArmed = true
	if fw.lazyFlush == nil {
		fw.lazyFlush = time.AfterFunc(lazyDelay, func() {
			fw.mu.Lock()
			defer fw.mu.Unlock()
			fw.lazyArmed = false
			_ = fw.w.Flush()
		})
	} else {
		fw.lazyFlush.Reset(lazyDelay)
	}
	return nil
}

// flush writes what sendLazy buffered, now, and disarms its timer (a
// wake-up a sequence of awaited calls would otherwise pay for each).
func (fw *frameWriter) flush() error {
	fw.mu.Lock()
	defer fw.mu.Unlock()
	if fw.lazyArmed && fw.lazyFlush.Stop() {
		fw.lazyArmed = false
	}
	if fw.w.Buffered() == 0 {
		return nil
	}
	return fw.w.Flush()
}

// sendText sends m followed by text, raw (m.Tail says how long it is).
func (fw *frameWriter) sendText(m *message, text string) error {
	return fw.sendTail(m, text, nil)
}

// sendReply sends the answer to call id of run runID: terr, or the result,
// which follows the frame raw. A result's frame is spelt here rather than
// by json.Marshal (reflection, and an allocation of the message and of its
// JSON on every tool call); it is the same bytes (TestReplyHeaderIsMarshal).
func (fw *frameWriter) sendReply(runID, id uint64, terr *ToolError, result []byte) error {
	if terr != nil {
		return fw.sendTail(&message{T: msgReply, RunID: runID, ID: id, Err: terr}, "", result)
	}
	if len(result) > maxFrameBytes {
		return &frameTooLargeError{msg: msgReply, size: len(result)}
	}
	fw.mu.Lock()
	defer fw.mu.Unlock()
	fw.header = appendReplyHeader(fw.header[:0], runID, id, len(result))
	if err := fw.writeLocked(fw.header, ""); err != nil {
		return err
	}
	if _, err := fw.w.Write(result); err != nil {
		return err
	}
	return fw.w.Flush()
}

// appendReplyHeader appends json.Marshal's encoding of
// message{T: msgReply, RunID: runID, ID: id, Tail: tail}: its fields in
// order, each omitted when zero (omitempty).
func appendReplyHeader(b []byte, runID, id uint64, tail int) []byte {
	b = append(b, `{"t":"`+msgReply+`"`...)
	if runID != 0 {
		b = strconv.AppendUint(append(b, `,"run":`...), runID, 10)
	}
	if id != 0 {
		b = strconv.AppendUint(append(b, `,"id":`...), id, 10)
	}
	if tail != 0 {
		b = strconv.AppendInt(append(b, `,"tail":`...), int64(tail), 10)
	}
	return append(b, '}')
}

// maxKeptHeader is the largest buffer fw.header keeps between frames.
const maxKeptHeader = 64 << 10

// appendFrame appends json.Marshal's encoding of m, a frame of only t,
// run, id, to, args, clk, an outcome of only a value and clock readings,
// and retire (a worker's call, compiled and done frames), and reports
// whether it could: any other frame is left to json.Marshal (ok false).
// Strings are escaped as json.Marshal escapes them (jsonstream). m.Args and the outcome's value must
// be compact JSON, as the VM's serialization writes them (JSON.stringify's
// bytes): json.Marshal would compact and check them, this only escapes
// what json.Marshal escapes in compact JSON, '<', '>', '&', U+2028 and
// U+2029. The parent checks arguments (decodeCallFrame) and values
// (readFrame's json.Unmarshal) whoever wrote them.
// TestFrameIsMarshal holds it to json.Marshal, field by field.
func appendFrame(b []byte, m *message) ([]byte, bool) {
	if m.Run != nil || m.Result != nil || m.Err != nil || m.Log != nil || m.Tail != 0 ||
		m.Stopped || m.PID != 0 {
		return b, false
	}
	if o := m.Outcome; o != nil && (o.Error != nil || o.LogsTruncated || o.DroppedLogs != 0 || o.CallsAbandoned != nil) {
		return b, false
	}
	b = append(jsonstream.AppendStringBody(append(b, `{"t":"`...), m.T), '"')
	if m.RunID != 0 {
		b = strconv.AppendUint(append(b, `,"run":`...), m.RunID, 10)
	}
	if m.ID != 0 {
		b = strconv.AppendUint(append(b, `,"id":`...), m.ID, 10)
	}
	if t := m.Target; t != nil {
		b = strconv.AppendUint(append(b, `,"to":{"k":`...), uint64(t.Kind), 10)
		if t.ID != "" {
			b = append(jsonstream.AppendStringBody(append(b, `,"id":"`...), t.ID), '"')
		}
		if t.Namespace != "" {
			b = append(jsonstream.AppendStringBody(append(b, `,"ns":"`...), t.Namespace), '"')
		}
		if t.Function != "" {
			b = append(jsonstream.AppendStringBody(append(b, `,"fn":"`...), t.Function), '"')
		}
		b = append(b, '}')
	}
	if len(m.Args) != 0 {
		b = appendEscapedJSON(append(b, `,"args":`...), m.Args)
	}
	if len(m.Clock) != 0 {
		b = appendInts(append(b, `,"clk":`...), m.Clock)
	}
	if o := m.Outcome; o != nil {
		b = append(b, `,"outcome":{`...)
		if len(o.Value) != 0 {
			b = appendEscapedJSON(append(b, `"value":`...), o.Value)
		}
		if len(o.Clock) != 0 {
			if len(o.Value) != 0 {
				b = append(b, ',')
			}
			b = appendInts(append(b, `"clock":`...), o.Clock)
		}
		b = append(b, '}')
	}
	if m.Retire {
		b = append(b, `,"retire":true`...)
	}
	return append(b, '}'), true
}

// appendInts appends a JSON array of numbers.
func appendInts(b []byte, ns []int64) []byte {
	b = append(b, '[')
	for i, n := range ns {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, n, 10)
	}
	return append(b, ']')
}

// appendEscapedJSON appends compact JSON as json.Marshal writes a
// json.RawMessage: '<', '>' and '&' as \u003c, \u003e and \u0026, U+2028
// and U+2029 as \u2028 and \u2029 (outside strings none of them can
// occur in valid JSON, and inside one the escape means the same).
func appendEscapedJSON(b, src []byte) []byte {
	const hex = "0123456789abcdef"
	start := 0
	for i := 0; i < len(src); i++ {
		switch c := src[i]; {
		case c == '<' || c == '>' || c == '&':
			b = append(append(b, src[start:i]...), '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			start = i + 1
		case c == 0xE2 && i+2 < len(src) && src[i+1] == 0x80 && src[i+2]&^1 == 0xA8:
			b = append(append(b, src[start:i]...), '\\', 'u', '2', '0', '2', hex[src[i+2]&0xF])
			i += 2
			start = i + 1
		}
	}
	return append(b, src[start:]...)
}

// encodeLocked is json.Marshal(m), spelt by appendFrame into fw.header
// when it can (a worker's call, compiled and done frames): json.Marshal's
// reflection and fresh buffer were ~4% of a worker's CPU on a run of five
// calls. The bytes are the same. fw.mu is held; the result is valid until
// the next frame.
func (fw *frameWriter) encodeLocked(m *message) ([]byte, error) {
	data, ok := appendFrame(fw.header[:0], m)
	if !ok {
		return json.Marshal(m)
	}
	fw.header = data
	if cap(data) > maxKeptHeader {
		// Large arguments or a large result: do not keep their buffer
		// for the life of the worker.
		fw.header = nil
	}
	return data, nil
}

// sendTail sends m followed by text or raw (one of them is empty).
func (fw *frameWriter) sendTail(m *message, text string, raw []byte) error {
	m.Tail = len(text) + len(raw)
	fw.mu.Lock()
	defer fw.mu.Unlock()
	data, err := fw.encodeLocked(m)
	if err != nil {
		return err
	}
	if len(data) > maxFrameBytes || m.Tail > maxFrameBytes {
		return &frameTooLargeError{msg: m.T, size: len(data) + m.Tail}
	}
	if err := fw.writeLocked(data, text); err != nil {
		return err
	}
	if _, err := fw.w.Write(raw); err != nil {
		return err
	}
	return fw.w.Flush()
}

// writeLocked buffers one frame; fw.mu is held.
func (fw *frameWriter) writeLocked(data []byte, text string) error {
	var hdr [4]byte
	binary.BigEndian.PutUint32(hdr[:], uint32(len(data)))
	if _, err := fw.w.Write(hdr[:]); err != nil {
		return err
	}
	if _, err := fw.w.Write(data); err != nil {
		return err
	}
	_, err := fw.w.WriteString(text)
	return err
}

// frameTooLargeError is a message that was not sent because it is over
// maxFrameBytes; any other error of send means the other side is gone.
type frameTooLargeError struct {
	msg  string
	size int
}

func (e *frameTooLargeError) Error() string {
	return fmt.Sprintf("runtime: a %s message of %s is over the %s frame limit", e.msg, bytesize.Format(int64(e.size)), bytesize.Format(maxFrameBytes))
}

func readFrame(r *bufio.Reader) (*message, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n > maxFrameBytes {
		return nil, fmt.Errorf("runtime: frame of %d bytes is over the %s limit", n, bytesize.Format(maxFrameBytes))
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, err
	}
	m, ok := decodeCallFrame(buf)
	if !ok {
		m = new(message)
		if err := json.Unmarshal(buf, m); err != nil {
			return nil, fmt.Errorf("runtime: malformed frame: %w", err)
		}
	}
	if m.Tail == 0 {
		return m, nil
	}
	switch {
	case m.Tail < 0 || m.Tail > maxFrameBytes:
	case m.T == msgLog && m.Log != nil && m.Log.Message == "":
		text, err := readText(r, m.Tail)
		if err != nil {
			return nil, err
		}
		m.Log.Message, m.Tail = text, 0
		return m, nil
	case m.T == msgReply && m.Result == nil && m.Err == nil:
		m.Result = make(json.RawMessage, m.Tail)
		if _, err := io.ReadFull(r, m.Result); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
		m.Tail = 0
		return m, nil
	}
	return nil, fmt.Errorf("runtime: malformed frame: %d bytes after a %q message", m.Tail, m.T)
}

// readText reads n bytes of text into a string, copying them once, from
// the reader's buffer into the string's. Invalid UTF-8 (a worker that
// misbehaves) becomes U+FFFD, as JSON would have it.
func readText(r *bufio.Reader, n int) (string, error) {
	var b strings.Builder
	b.Grow(n)
	for n > 0 {
		p, err := r.Peek(min(n, r.Size()))
		b.Write(p)
		_, _ = r.Discard(len(p))
		n -= len(p)
		if err != nil && n > 0 {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return "", err
		}
	}
	s := b.String()
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return s, nil
}
