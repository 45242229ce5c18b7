// Package jsonstream reads JSON text of any size as a stream: it steps over
// values, reads object keys and scalars, and gives a string's text with its
// escapes undone, counting the bytes it has read, without building values
// or holding more than its buffer. The gateway finds the parts of a tool
// answer too large for memory with it (the answer staged in a file), and
// code mode the part of a held result that a path names (sandbox.results).
//
// AppendStringBody writes the other way: a string escaped exactly as
// encoding/json escapes it, for code that spells JSON by hand.
//
// It checks structure only as far as walking needs: brackets are counted,
// strings and escapes are followed, but numbers and literals are not
// validated. Whoever hands a part to a JSON decoder checks it there.
package jsonstream

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// ErrSyntax is what every error of malformed input wraps.
var ErrSyntax = errors.New("not JSON")

// syntaxError says where the text stopped being JSON.
func syntaxError(off int64, what string) error {
	return fmt.Errorf("%w: %s at byte %d", ErrSyntax, what, off)
}

const bufferSize = 64 << 10

// Reader reads JSON text from a source. Its offsets count the source's
// bytes from where the Reader started.
type Reader struct {
	src  io.Reader
	buf  []byte
	r, w int   // buf[r:w] is read from the source and not yet consumed
	off  int64 // the offset of buf[r]
	err  error // the source's error, once it has one
	// keyBuf holds the string being read (Key, String), reused.
	keyBuf []byte
}

// NewReader reads JSON text from src.
func NewReader(src io.Reader) *Reader {
	return &Reader{src: src, buf: make([]byte, bufferSize)}
}

// Offset is how many bytes have been consumed.
func (d *Reader) Offset() int64 { return d.off }

// fill reads more of the source, keeping the unconsumed bytes; false when
// nothing more comes.
func (d *Reader) fill() bool {
	if d.err != nil {
		return false
	}
	if d.r > 0 {
		n := copy(d.buf, d.buf[d.r:d.w])
		d.r, d.w = 0, n
	}
	if d.w == len(d.buf) {
		return true // full already (peekN never asks for more than the buffer)
	}
	for tries := 0; tries < 100; tries++ {
		n, err := d.src.Read(d.buf[d.w:])
		d.w += n
		if err != nil {
			d.err = err
			return n > 0
		}
		if n > 0 {
			return true
		}
	}
	d.err = io.ErrNoProgress
	return false
}

// peekN returns the next n bytes without consuming them, fewer at the end.
func (d *Reader) peekN(n int) []byte {
	for d.w-d.r < n && d.fill() {
	}
	return d.buf[d.r:min(d.w, d.r+n)]
}

func (d *Reader) consume(n int) {
	d.r += n
	d.off += int64(n)
}

// endError is the error for input that ended early: the source's own error
// when it failed, else a syntax error.
func (d *Reader) endError(what string) error {
	if d.err != nil && d.err != io.EOF {
		return d.err
	}
	return syntaxError(d.off, "the text ends inside "+what)
}

// SkipSpace consumes whitespace.
func (d *Reader) SkipSpace() {
	for {
		for d.r < d.w {
			switch d.buf[d.r] {
			case ' ', '\n', '\r', '\t':
				d.consume(1)
			default:
				return
			}
		}
		if !d.fill() {
			return
		}
	}
}

// Peek skips whitespace and returns the next byte without consuming it;
// io.EOF at the end of the text.
func (d *Reader) Peek() (byte, error) {
	d.SkipSpace()
	if d.r == d.w {
		if d.err != nil && d.err != io.EOF {
			return 0, d.err
		}
		return 0, io.EOF
	}
	return d.buf[d.r], nil
}

// Eat skips whitespace and consumes c if it comes next, reporting whether
// it did.
func (d *Reader) Eat(c byte) bool {
	if b, err := d.Peek(); err == nil && b == c {
		d.consume(1)
		return true
	}
	return false
}

// Expect skips whitespace and consumes c, or fails.
func (d *Reader) Expect(c byte) error {
	b, err := d.Peek()
	if err == io.EOF {
		return d.endError(fmt.Sprintf("a value (expected %q)", c))
	}
	if err != nil {
		return err
	}
	if b != c {
		return syntaxError(d.off, fmt.Sprintf("expected %q, found %q", c, b))
	}
	d.consume(1)
	return nil
}

// Skip steps over one value.
func (d *Reader) Skip() error {
	b, err := d.Peek()
	if err == io.EOF {
		return d.endError("a value")
	}
	if err != nil {
		return err
	}
	switch b {
	case '"':
		return d.skipString()
	case '{', '[':
		return d.skipContainer()
	case '}', ']', ',', ':':
		return syntaxError(d.off, fmt.Sprintf("expected a value, found %q", b))
	}
	_, err = d.Scalar(0)
	return err
}

// skipString consumes a string, the reader being at its opening quote. It
// looks only for quotes, and tells an escaped one by the backslashes
// before it: one search per quote, whatever the escapes (JSON held as text
// has one every few bytes).
func (d *Reader) skipString() error {
	d.consume(1)
	escaped := false // the next byte is escaped (the text so far ends in an odd run of backslashes)
	for {
		chunk := d.buf[d.r:d.w]
		from := 0
		if escaped && len(chunk) > 0 {
			from, escaped = 1, false
		}
		for from <= len(chunk) {
			q := bytes.IndexByte(chunk[from:], '"')
			if q < 0 {
				break
			}
			q += from
			k := q
			for k > from && chunk[k-1] == '\\' {
				k--
			}
			if (q-k)%2 == 0 {
				d.consume(q + 1)
				return nil
			}
			from = q + 1
		}
		k := len(chunk)
		for k > from && chunk[k-1] == '\\' {
			k--
		}
		escaped = (len(chunk)-k)%2 == 1
		d.consume(len(chunk))
		if !d.fill() {
			return d.endError("a string")
		}
	}
}

// skipContainer consumes an object or an array, with everything in it.
func (d *Reader) skipContainer() error {
	depth := 0
	for {
		// A loop over the buffer, consumed once per string and per fill:
		// this is most of the time a walk takes.
		buf := d.buf[d.r:d.w]
		i := 0
	scan:
		for ; i < len(buf); i++ {
			switch buf[i] {
			case '"':
				break scan
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					d.consume(i + 1)
					return nil
				}
			}
		}
		d.consume(i)
		if i < len(buf) { // at a string
			if err := d.skipString(); err != nil {
				return err
			}
			continue
		}
		if !d.fill() {
			return d.endError("an object or array")
		}
	}
}

// Scalar reads a number, true, false or null and returns its text, cut to
// max bytes (0: none kept).
func (d *Reader) Scalar(max int) (string, error) {
	if _, err := d.Peek(); err != nil {
		if err == io.EOF {
			return "", d.endError("a value")
		}
		return "", err
	}
	var out []byte
	n := 0
	for {
		for d.r < d.w {
			switch c := d.buf[d.r]; c {
			case ',', '}', ']', ':', ' ', '\n', '\r', '\t', '"', '{', '[':
				if n == 0 {
					return "", syntaxError(d.off, fmt.Sprintf("expected a value, found %q", c))
				}
				return string(out), nil
			default:
				if len(out) < max {
					out = append(out, c)
				}
				n++
				d.consume(1)
			}
		}
		if !d.fill() {
			if n == 0 {
				return "", d.endError("a value")
			}
			return string(out), nil
		}
	}
}

// Key reads an object member's key and the colon after it. A key longer
// than max bytes comes back cut, with whole false.
func (d *Reader) Key(max int) (key string, whole bool, err error) {
	if b, err := d.Peek(); err == nil && b != '"' {
		return "", false, syntaxError(d.off, fmt.Sprintf("expected a key, found %q", b))
	}
	if key, whole, err = d.String(max); err != nil {
		return "", false, err
	}
	if err := d.Expect(':'); err != nil {
		return "", false, err
	}
	return key, whole, nil
}

// String reads a string's text; one longer than max bytes comes back cut,
// with whole false (the rest is read and dropped).
func (d *Reader) String(max int) (s string, whole bool, err error) {
	t := d.Text()
	if cap(d.keyBuf) < max+1 {
		d.keyBuf = make([]byte, max+1)
	}
	buf := d.keyBuf[:max+1]
	n, err := io.ReadFull(t, buf)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return "", false, err
	}
	whole = n <= max
	if !whole {
		n = max
		if _, err := io.Copy(io.Discard, t); err != nil {
			return "", false, err
		}
	}
	return string(buf[:n]), whole, nil
}

// Text reads the string the reader is at (after whitespace) as its text,
// escapes undone; once the Text reader has reported io.EOF, the Reader is
// past the closing quote. Invalid UTF-8 in the text is passed on as it is;
// an invalid \u escape becomes U+FFFD.
func (d *Reader) Text() *TextReader {
	t := &TextReader{d: d}
	b, err := d.Peek()
	switch {
	case err == io.EOF:
		t.err = d.endError("a value")
	case err != nil:
		t.err = err
	case b != '"':
		t.err = syntaxError(d.off, fmt.Sprintf("expected a string, found %q", b))
	default:
		d.consume(1)
	}
	return t
}

// TextReader is the text of one JSON string.
type TextReader struct {
	d    *Reader
	held []byte // decoded bytes of an escape not handed out yet
	err  error  // io.EOF once the closing quote is consumed
	heap [utf8.UTFMax * 2]byte
}

func (t *TextReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if len(t.held) > 0 {
			c := copy(p[n:], t.held)
			t.held = t.held[c:]
			n += c
			continue
		}
		if t.err != nil {
			break
		}
		d := t.d
		if d.r == d.w && !d.fill() {
			t.err = d.endError("a string")
			break
		}
		// Plain bytes and the one-letter escapes (most of JSON held as
		// text: \" every few bytes) are copied in one loop; the rest
		// (\u, an escape cut by the buffer's end, the closing quote) below.
		chunk, out := d.buf[d.r:d.w], p[n:]
		in, o := 0, 0
	copying:
		for in < len(chunk) && o < len(out) {
			c := chunk[in]
			if c != '"' && c != '\\' {
				out[o] = c
				o++
				in++
				continue
			}
			switch c {
			case '"':
				break copying
			case '\\':
				if in+1 == len(chunk) {
					break copying
				}
				switch chunk[in+1] {
				case '"', '\\', '/':
					c = chunk[in+1]
				case 'n':
					c = '\n'
				case 't':
					c = '\t'
				case 'r':
					c = '\r'
				case 'b':
					c = '\b'
				case 'f':
					c = '\f'
				default:
					break copying
				}
				in++
			}
			out[o] = c
			o++
			in++
		}
		if in > 0 {
			d.consume(in)
			n += o
			continue
		}
		if chunk[0] == '"' {
			d.consume(1)
			t.err = io.EOF
			break
		}
		if err := t.escape(); err != nil {
			t.err = err
			break
		}
	}
	if n > 0 {
		return n, nil
	}
	return 0, t.err
}

// escape decodes the escape the reader is at into held.
func (t *TextReader) escape() error {
	d := t.d
	e := d.peekN(2)
	if len(e) < 2 {
		return d.endError("a string")
	}
	var simple byte
	switch e[1] {
	case '"', '\\', '/':
		simple = e[1]
	case 'b':
		simple = '\b'
	case 'f':
		simple = '\f'
	case 'n':
		simple = '\n'
	case 'r':
		simple = '\r'
	case 't':
		simple = '\t'
	case 'u':
		r, size := t.unicode()
		t.held = t.heap[:utf8.EncodeRune(t.heap[:], r)]
		d.consume(size)
		return nil
	default:
		return syntaxError(d.off, fmt.Sprintf("invalid escape \\%c", e[1]))
	}
	t.heap[0] = simple
	t.held = t.heap[:1]
	d.consume(2)
	return nil
}

// unicode decodes the \u escape (or surrogate pair) the reader is at, and
// says how many bytes it spans; a malformed one is U+FFFD over its first
// two bytes, so the rest reads as text.
func (t *TextReader) unicode() (rune, int) {
	e := t.d.peekN(12)
	r1, ok := hex4(e, 2)
	if !ok {
		return utf8.RuneError, 2
	}
	if r1 < 0xD800 || r1 >= 0xE000 {
		return r1, 6
	}
	if r1 < 0xDC00 && len(e) >= 12 && e[6] == '\\' && e[7] == 'u' {
		if r2, ok := hex4(e, 8); ok && r2 >= 0xDC00 && r2 < 0xE000 {
			return 0x10000 + (r1-0xD800)<<10 + (r2 - 0xDC00), 12
		}
	}
	return utf8.RuneError, 6 // a lone surrogate
}

func hex4(b []byte, at int) (rune, bool) {
	if len(b) < at+4 {
		return 0, false
	}
	var r rune
	for _, c := range b[at : at+4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c-'a') + 10
		case c >= 'A' && c <= 'F':
			r |= rune(c-'A') + 10
		default:
			return 0, false
		}
	}
	return r, true
}
