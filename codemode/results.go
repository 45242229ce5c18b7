package codemode

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/sandboxrt/sandbox/internal/jsonstream"
)

// Big results. A tool result larger than what is left of the run's result
// budget does not fail the run: the snippet receives a handle,
//
//	{ handle: "res_…", bytes: 12345678, preview: "<its first 1 KB>", tool: "files:read", note: "…" }
//
// and reads the result in parts: sandbox.results.json(handle, path) (the
// value at a path, itself a handle when still too large),
// sandbox.results.read(handle, {path, offset, length}) (text by bytes) and
// sandbox.results.lines(handle, {path, from, count}) (text by lines). A
// path walks into a string whose text is JSON as into that JSON (a file
// read as text, a text block holding JSON): servers hand JSON over as text
// all the time, and its escapes are not the agent's business. The budget
// is a quarter of the run's memory limit (at most 32 MiB): tool results
// become several times their size as VM values.
//
// The results are kept in a ResultStore (resultstore.go: files of this
// process by default, Redis for replicas), for the caller's principal
// only. Nothing here holds a result in memory: every answer is read from
// the store as a stream (internal/jsonstream), up to the budget. A result
// too large for the gateway's memory (gateway.SpilledResult) arrives as a
// file and goes to the store the same way.

const (
	resultPreviewBytes = 1 << 10
	resultReadMax      = 1 << 20 // one read or lines answer
	resultLinesMax     = 10000   // lines in one lines answer
	maxResultBudget    = 32 << 20
	maxPathKeyBytes    = 4 << 10 // longer keys are never a path's step
	maxTextNesting     = 4       // strings holding JSON within strings holding JSON
)

// resultBudget is how many bytes of tool results a run may receive whole.
func resultBudget(memoryBytes int64) int64 {
	return min(memoryBytes/4, maxResultBudget)
}

// resultBook makes handles and answers sandbox.results from a store.
type resultBook struct {
	store ResultStore
}

// hold keeps a result of size bytes read from body for owner (resultOwner)
// and returns the handle object the snippet receives.
func (b *resultBook) hold(ctx context.Context, owner, tool string, size int64, body io.Reader) (json.RawMessage, error) {
	var id [16]byte
	if _, err := rand.Read(id[:]); err != nil {
		return nil, err
	}
	handle := "res_" + hex.EncodeToString(id[:])
	head := &headWriter{max: resultPreviewBytes}
	if f, ok := body.(*os.File); ok {
		// Given whole, so that a store may take the file as it is.
		head.b = make([]byte, resultPreviewBytes)
		n, _ := f.ReadAt(head.b, 0)
		head.b = head.b[:n]
	} else {
		body = io.TeeReader(body, head)
	}
	if err := b.store.Put(ctx, HeldResult{ID: handle, Principal: owner, Tool: tool, Bytes: size}, body); err != nil {
		return nil, err
	}
	preview := head.b
	for len(preview) > 0 && !utf8.Valid(preview) { // do not cut a character in two
		preview = preview[:len(preview)-1]
	}
	note := fmt.Sprintf("The result of %s (%d bytes of JSON) is too large to hand over whole in this run; read parts of it with "+
		"sandbox.results.json(handle, path), sandbox.results.read(handle, {path, offset, length}) or sandbox.results.lines(handle, {path, from, count}). "+
		"A path goes into text that holds JSON as into that JSON", tool, size)
	if p := examplePath(preview); p != "" {
		note += fmt.Sprintf(": sandbox.results.json(handle, %q)", p)
	}
	return json.Marshal(struct {
		Handle  string `json:"handle"`
		Bytes   int64  `json:"bytes"`
		Preview string `json:"preview"`
		Tool    string `json:"tool"`
		Note    string `json:"note"`
	}{handle, size, string(preview), tool, note + "."})
}

// headWriter keeps the first max bytes written to it.
type headWriter struct {
	max int
	b   []byte
}

func (h *headWriter) Write(p []byte) (int, error) {
	if room := h.max - len(h.b); room > 0 {
		h.b = append(h.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

// examplePath is a path into the start of a result, for the handle's note:
// its first key or index, a few levels down, through text holding JSON
// ("content.items.0" for a file of {"items": [...]} read as text).
func examplePath(preview []byte) string {
	d := jsonstream.NewReader(bytes.NewReader(preview))
	var steps []string
	for len(steps) < 3 {
		b, err := d.Peek()
		if err != nil {
			break
		}
		switch b {
		case '"':
			inner := jsonstream.NewReader(d.Text())
			if c, err := inner.Peek(); err != nil || (c != '{' && c != '[') {
				return strings.Join(steps, ".")
			}
			d = inner
			continue
		case '{':
			d.Expect('{')
			k, whole, err := d.Key(64)
			if err != nil || !whole || k == "" || strings.ContainsAny(k, "./~") {
				return strings.Join(steps, ".")
			}
			steps = append(steps, k)
			continue
		case '[':
			d.Expect('[')
			if b, err := d.Peek(); err != nil || b == ']' {
				return strings.Join(steps, ".")
			}
			steps = append(steps, "0")
			continue
		}
		break
	}
	return strings.Join(steps, ".")
}

// part is where the value a path names lies in a held result.
type part struct {
	// inside are the strings whose text holds the part, outermost first:
	// each the offset of a string (its quote) in the text of the one
	// before, the first in the result's bytes.
	inside []int64
	// start and end bound the part's JSON text in the innermost text.
	start, end int64
	// str: the part is a string (whose text is not JSON); its text is read
	// with its escapes undone.
	str bool
	// entered: the path ends in a string whose text holds the part.
	entered bool
}

func (p part) size() int64 { return p.end - p.start }

// errNotHeld is what a snippet is told of a handle the store does not
// hold for its principal.
func errNotHeld(handle string, limits ResultLimits) error {
	return fmt.Errorf("no result %q: a handle is the \"handle\" of the object a tool call gave instead of a result too large to hand over; results are kept for %v after their last use", handle, limits.TTL)
}

// parsePath splits a JSON pointer ("/items/0/name") or a dotted path
// ("items.0.name"); "" and "/" are the whole.
func parsePath(path string) []string {
	switch {
	case path == "" || path == "/":
		return nil
	case strings.HasPrefix(path, "/"):
		var steps []string
		for _, s := range strings.Split(path[1:], "/") {
			steps = append(steps, strings.NewReplacer("~1", "/", "~0", "~").Replace(s))
		}
		return steps
	}
	return strings.Split(path, ".")
}

// locate walks a held result to the value at path (see walk).
func (b *resultBook) locate(ctx context.Context, r HeldResult, path string, textAtEnd bool) (part, error) {
	rc, err := b.store.Open(ctx, r.Principal, r.ID, 0)
	if err != nil {
		return part{}, err
	}
	defer rc.Close()
	return walk(rc, parsePath(path), textAtEnd)
}

// walk finds the value at steps in the JSON text src. A string whose text
// is JSON is walked into as that JSON; so is one at the end of the path
// (part.entered), unless what follows the JSON in its text is more than
// space, or textAtEnd: then the value is the string. Walking checks
// structure only: whoever reads an entered part whole checks it is JSON,
// and walks again with textAtEnd when it is not.
func walk(src io.Reader, steps []string, textAtEnd bool) (part, error) {
	type level struct {
		d     *jsonstream.Reader
		quote int64 // where the string whose text d reads starts, in the level before
	}
	levels := []level{{d: jsonstream.NewReader(src)}}
	var p part
	where := func(depth int) string {
		if depth == 0 {
			return "the top"
		}
		return strings.Join(steps[:depth], ".")
	}
	for depth := 0; ; {
		d := levels[len(levels)-1].d
		b, err := d.Peek()
		if err != nil {
			return part{}, notJSON(err)
		}
		if b == '"' {
			quote := d.Offset()
			text := d.Text()
			inner := jsonstream.NewReader(text)
			c, _ := inner.Peek()
			if (c == '{' || c == '[') && len(p.inside) < maxTextNesting && (depth < len(steps) || !textAtEnd) {
				p.inside = append(p.inside, quote)
				levels = append(levels, level{d: inner, quote: quote})
				if depth < len(steps) {
					continue
				}
				p.start = inner.Offset()
				if err := inner.Skip(); err == nil {
					p.end = inner.Offset()
					if _, err := inner.Peek(); err == io.EOF {
						p.entered = true
						return p, nil
					}
				}
				// Not JSON after all: the value is the string.
				p.inside = p.inside[:len(p.inside)-1]
				if _, err := io.Copy(io.Discard, text); err != nil {
					return part{}, notJSON(err)
				}
				return part{inside: p.inside, start: quote, end: d.Offset(), str: true}, nil
			}
			if depth < len(steps) {
				return part{}, askErrorf("%s is text, not JSON: the path cannot go on to %q", where(depth), steps[depth])
			}
			if _, err := io.Copy(io.Discard, text); err != nil {
				return part{}, notJSON(err)
			}
			return part{inside: p.inside, start: quote, end: d.Offset(), str: true}, nil
		}
		if depth == len(steps) {
			p.start = d.Offset()
			if err := d.Skip(); err != nil {
				return part{}, notJSON(err)
			}
			p.end = d.Offset()
			return p, nil
		}
		step := steps[depth]
		switch b {
		case '{':
			d.Expect('{')
			var seen []string
			for {
				if d.Eat('}') {
					msg := fmt.Sprintf("no key %q at %s", step, where(depth))
					if len(seen) > 0 {
						msg += " (its keys: " + strings.Join(seen, ", ") + ")"
					}
					return part{}, &askError{msg: msg}
				}
				k, whole, err := d.Key(maxPathKeyBytes)
				if err != nil {
					return part{}, notJSON(err)
				}
				if whole && k == step {
					break
				}
				if len(seen) < 8 {
					if len(k) > 40 {
						k = k[:40] + "…"
					}
					seen = append(seen, strconv.Quote(k))
				}
				if err := d.Skip(); err != nil {
					return part{}, notJSON(err)
				}
				d.Eat(',')
			}
		case '[':
			n, err := strconv.Atoi(step)
			if err != nil || n < 0 {
				return part{}, askErrorf("%s is an array: the step %q must be an index", where(depth), step)
			}
			d.Expect('[')
			for i := 0; ; i++ {
				if d.Eat(']') {
					return part{}, askErrorf("index %d is past the end of the array at %s (%d items)", n, where(depth), i)
				}
				if i == n {
					break
				}
				if err := d.Skip(); err != nil {
					return part{}, notJSON(err)
				}
				d.Eat(',')
			}
		default:
			return part{}, askErrorf("%s is neither an object nor an array: the path cannot go on to %q", where(depth), step)
		}
		depth++
	}
}

// askError is a snippet's question about a result that has no answer: a
// path that is not there, text that is not JSON, a line too long for one
// answer. Its message says what to ask instead. Any other error of a read
// is the store's.
type askError struct {
	msg     string
	tooLong bool // a line too long for one answer (RESULT_TOO_LARGE), else a bad question (VALIDATION_FAILED)
}

func (e *askError) Error() string { return e.msg }

func askErrorf(format string, a ...any) error { return &askError{msg: fmt.Sprintf(format, a...)} }

// notJSON says a held result stopped being JSON where a path went.
func notJSON(err error) error {
	if errors.Is(err, jsonstream.ErrSyntax) {
		return askErrorf("the result is not valid JSON where the path goes (%v); read it as text with sandbox.results.read", err)
	}
	return err
}

// openPart reads a part of a held result: its JSON text, or with text set,
// a string part's text with its escapes undone.
func (b *resultBook) openPart(ctx context.Context, r HeldResult, p part, text bool) (io.Reader, io.Closer, error) {
	return p.open(func(offset int64) (io.ReadCloser, error) { return b.store.Open(ctx, r.Principal, r.ID, offset) }, text)
}

// open reads the part from the text that open reads from an offset.
func (p part) open(open func(offset int64) (io.ReadCloser, error), text bool) (io.Reader, io.Closer, error) {
	first := p.start
	if len(p.inside) > 0 {
		first = p.inside[0]
	}
	rc, err := open(first)
	if err != nil {
		return nil, nil, err
	}
	var src io.Reader = bufio.NewReaderSize(rc, 64<<10)
	skip := func(n int64) error {
		_, err := io.CopyN(io.Discard, src, n)
		return err
	}
	for i, quote := range p.inside {
		if i > 0 {
			if err := skip(quote); err != nil {
				rc.Close()
				return nil, nil, err
			}
		}
		src = jsonstream.NewReader(src).Text()
	}
	if len(p.inside) > 0 {
		if err := skip(p.start); err != nil {
			rc.Close()
			return nil, nil, err
		}
	}
	src = io.LimitReader(src, p.size())
	if text && p.str {
		src = jsonstream.NewReader(src).Text()
	}
	return src, rc, nil
}

// readPart reads a part's JSON text whole (it fits the budget).
func (b *resultBook) readPart(ctx context.Context, r HeldResult, p part) ([]byte, error) {
	src, closer, err := b.openPart(ctx, r, p, false)
	if err != nil {
		return nil, err
	}
	defer closer.Close()
	out := make([]byte, 0, p.size())
	buf := bytes.NewBuffer(out)
	if _, err := io.Copy(buf, src); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// holdPart keeps a part too large for the budget as a result of its own.
func (b *resultBook) holdPart(ctx context.Context, owner string, r HeldResult, p part) (json.RawMessage, error) {
	src, closer, err := b.openPart(ctx, r, p, false)
	if err != nil {
		return nil, err
	}
	defer closer.Close()
	return b.hold(ctx, owner, r.Tool, p.size(), src)
}

// readText is length bytes (at most resultReadMax) of a part's text from
// offset: "" past its end.
func (b *resultBook) readText(ctx context.Context, r HeldResult, p part, offset, length int64) (string, error) {
	length = min(length, resultReadMax)
	var src io.Reader
	if len(p.inside) == 0 && !p.str {
		// The part's text is the result's own bytes: start where asked.
		if offset >= p.size() {
			return "", nil
		}
		rc, err := b.store.Open(ctx, r.Principal, r.ID, p.start+offset)
		if err != nil {
			return "", err
		}
		defer rc.Close()
		src = io.LimitReader(rc, p.size()-offset)
	} else {
		part, closer, err := b.openPart(ctx, r, p, true)
		if err != nil {
			return "", err
		}
		defer closer.Close()
		if _, err := io.CopyN(io.Discard, part, offset); err == io.EOF {
			return "", nil
		} else if err != nil {
			return "", err
		}
		src = part
	}
	var out strings.Builder
	if _, err := io.Copy(&out, io.LimitReader(src, length)); err != nil {
		return "", err
	}
	return strings.ToValidUTF8(out.String(), "\uFFFD"), nil
}

// readLines is count lines (at most resultLinesMax, and fewer when they
// would pass resultReadMax) of a part's text from line from (0 the
// first), without their line ends; none past the end. A line longer than
// one answer holds is an error that says where it starts, to read it by
// bytes.
func (b *resultBook) readLines(ctx context.Context, r HeldResult, p part, from, count int) ([]string, error) {
	count = min(count, resultLinesMax)
	src, closer, err := b.openPart(ctx, r, p, true)
	if err != nil {
		return nil, err
	}
	defer closer.Close()
	br := bufio.NewReaderSize(src, 64<<10)
	var offset int64 // in the part's text, of the end of what was read
	lines := []string{}
	room := resultReadMax
	for n := 0; len(lines) < count; n++ {
		var line []byte
		start, long := offset, false
		for {
			frag, err := br.ReadSlice('\n')
			if n >= from && !long {
				if len(line)+len(frag) > resultReadMax {
					long = true
				} else {
					line = append(line, frag...)
				}
			}
			offset += int64(len(frag))
			if err == nil {
				break
			}
			if err == io.EOF {
				if offset == start {
					return lines, nil // the text ended before this line
				}
				break // its last line, without a line end
			}
			if !errors.Is(err, bufio.ErrBufferFull) {
				return nil, err
			}
		}
		if n < from {
			continue
		}
		if long {
			if len(lines) > 0 {
				return lines, nil // the next call starts at it, and is told
			}
			return nil, &askError{tooLong: true, msg: fmt.Sprintf("line %d is longer than one answer may be (%d bytes); read it by bytes with sandbox.results.read(handle, {path, offset, length}): it starts at offset %d and is %d bytes", n, resultReadMax, start, offset-start)}
		}
		if len(line) > room {
			break
		}
		room -= len(line)
		line = bytes.TrimSuffix(line, []byte("\n"))
		line = bytes.TrimSuffix(line, []byte("\r"))
		lines = append(lines, strings.ToValidUTF8(string(line), "\uFFFD"))
	}
	return lines, nil
}
