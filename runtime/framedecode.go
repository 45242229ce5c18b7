package runtime

import (
	"encoding/json"
	"math"

	"github.com/sandboxrt/sandbox/runtime/internal/bindings"
)

// decodeCallFrame decodes the frame the parent reads on every tool call,
// a call (and any other frame of only the fields t, run, id, to, args and
// tail), as the worker's json.Marshal spells it: no whitespace, strings of
// printable ASCII without escapes, numbers as plain digits, each field
// once. encoding/json spent 4.4 µs and 13 allocations on a call frame (it
// scans the frame once to check it, then again through reflection, and
// copies the arguments out); this reads it once, and the arguments are
// the frame's own bytes (readFrame allocates each frame afresh).
//
// Anything else, whatever it is, makes it give up (ok false) and
// json.Unmarshal decodes the frame, as before: what a frame means, and
// which frames are malformed, is encoding/json's either way
// (FuzzCallFrameDecodesAsJSON holds the two to the same answers).
func decodeCallFrame(b []byte) (m *message, ok bool) {
	d := frameScanner{b: b}
	if !d.take('{') {
		return nil, false
	}
	// The message and its target in one allocation.
	f := new(struct {
		m message
		t bindings.Target
	})
	m = &f.m
	var seen uint8
	for {
		key, ok := d.simpleString()
		if !ok || !d.take(':') {
			return nil, false
		}
		var bit uint8
		switch string(key) {
		case "t":
			bit = 1 << 0
			var t []byte
			t, ok = d.simpleString()
			m.T = frameType(t)
		case "run":
			bit = 1 << 1
			m.RunID, ok = d.uint()
		case "id":
			bit = 1 << 2
			m.ID, ok = d.uint()
		case "tail":
			bit = 1 << 3
			var n uint64
			n, ok = d.uint()
			ok = ok && n <= math.MaxInt32
			m.Tail = int(n)
		case "to":
			bit = 1 << 4
			m.Target, ok = &f.t, d.target(&f.t)
		case "args":
			bit = 1 << 5
			m.Args, ok = d.rawValue()
		default:
			return nil, false
		}
		if !ok || seen&bit != 0 {
			return nil, false
		}
		seen |= bit
		if d.take('}') {
			return m, d.i == len(d.b)
		}
		if !d.take(',') {
			return nil, false
		}
	}
}

// frameScanner reads the subset of JSON decodeCallFrame takes.
type frameScanner struct {
	b []byte
	i int
}

func (d *frameScanner) take(c byte) bool {
	if d.i < len(d.b) && d.b[d.i] == c {
		d.i++
		return true
	}
	return false
}

// simpleString reads a string of printable ASCII without escapes, which
// means the same bytes to encoding/json, and returns its bytes.
func (d *frameScanner) simpleString() ([]byte, bool) {
	if !d.take('"') {
		return nil, false
	}
	start := d.i
	for ; d.i < len(d.b); d.i++ {
		switch c := d.b[d.i]; {
		case c == '"':
			s := d.b[start:d.i]
			d.i++
			return s, true
		case c < 0x20 || c > 0x7e || c == '\\':
			return nil, false
		}
	}
	return nil, false
}

// uint reads digits without a leading zero (but 0) that fit in a uint64.
func (d *frameScanner) uint() (uint64, bool) {
	start := d.i
	var n uint64
	for ; d.i < len(d.b) && d.b[d.i] >= '0' && d.b[d.i] <= '9'; d.i++ {
		digit := uint64(d.b[d.i] - '0')
		if n > (math.MaxUint64-digit)/10 {
			return 0, false
		}
		n = n*10 + digit
	}
	digits := d.i - start
	return n, digits == 1 || digits > 1 && d.b[start] != '0'
}

// target reads a call's target into t: an object of k and the strings
// id, ns and fn, each at most once.
func (d *frameScanner) target(t *bindings.Target) bool {
	if !d.take('{') {
		return false
	}
	var seen uint8
	for {
		key, ok := d.simpleString()
		if !ok || !d.take(':') {
			return false
		}
		var bit uint8
		var s []byte
		switch string(key) {
		case "k":
			bit = 1 << 0
			var k uint64
			k, ok = d.uint()
			ok = ok && k <= math.MaxUint8
			t.Kind = bindings.Kind(k)
		case "id":
			bit = 1 << 1
			s, ok = d.simpleString()
			t.ID = string(s)
		case "ns":
			bit = 1 << 2
			s, ok = d.simpleString()
			t.Namespace = string(s)
		case "fn":
			bit = 1 << 3
			s, ok = d.simpleString()
			t.Function = string(s)
		default:
			return false
		}
		if !ok || seen&bit != 0 {
			return false
		}
		seen |= bit
		if d.take('}') {
			return true
		}
		if !d.take(',') {
			return false
		}
	}
}

// rawValue reads one JSON object or array, as it is: it finds where the
// value ends (strings and nesting) and has json.Valid check it.
func (d *frameScanner) rawValue() (json.RawMessage, bool) {
	if d.i >= len(d.b) || d.b[d.i] != '{' && d.b[d.i] != '[' {
		return nil, false
	}
	start, depth, inString := d.i, 0, false
	for ; d.i < len(d.b); d.i++ {
		c := d.b[d.i]
		if inString {
			switch c {
			case '\\':
				d.i++ // the escaped byte cannot end the string
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				d.i++
				v := d.b[start:d.i]
				return v, json.Valid(v)
			}
		}
	}
	return nil, false
}

// frameType is t as a string, without allocating one for the types the
// quick path sees (the worker reads the parent's replies and cancels with
// it too).
func frameType(t []byte) string {
	for _, known := range [...]string{msgCall, msgLog, msgStarted, msgCompiled, msgDone, msgReady, msgReply, msgCancel} {
		if string(t) == known {
			return known
		}
	}
	return string(t)
}
