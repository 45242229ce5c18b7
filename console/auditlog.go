package console

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"strconv"
	"time"
)

// The audit log read backwards. The gateway writes whole lines to path and
// rotates it by renaming (path -> path.1 -> path.2 ..., the oldest
// dropped: gateway/audit.go), so the files, oldest first, are one log. A
// position is a byte offset into that log counted from the start of the
// oldest file: appending does not move it, nor does a rotation that drops
// nothing; one that drops the oldest file moves it by that file's size
// (a page then overlaps or skips some lines, once).

const (
	auditBlock      = 64 << 10 // read backwards this much at a time
	maxAuditLine    = 4 << 20  // a longer line is skipped
	auditClockSlack = time.Minute
)

type auditFile struct {
	f     *os.File
	start int64 // the log position of its first byte
	size  int64
}

// auditLog is the log's files, open, oldest first.
type auditLog struct {
	files []auditFile
	size  int64 // the log's end
}

// openAuditLog opens path and its rotated copies. A file missing is no
// error (nothing written yet, or rotated just now).
func openAuditLog(path string) (*auditLog, error) {
	var names []string
	for i := maxAuditFiles; i >= 1; i-- {
		names = append(names, path+"."+strconv.Itoa(i))
	}
	names = append(names, path)
	l := &auditLog{}
	for _, name := range names {
		f, err := os.Open(name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			l.close()
			return nil, err
		}
		st, err := f.Stat()
		if err != nil {
			f.Close()
			l.close()
			return nil, err
		}
		l.files = append(l.files, auditFile{f: f, start: l.size, size: st.Size()})
		l.size += st.Size()
	}
	return l, nil
}

func (l *auditLog) close() {
	for _, f := range l.files {
		f.f.Close()
	}
}

// backScan is how a scanBack ended.
type backScan struct {
	read    int64 // bytes read
	stopped bool  // fn said stop
	atStart bool  // every line before the start position was given
	resume  int64 // else (the bound): the position to go on before
}

// scanBack gives fn the log's lines that start before position from,
// newest first, each with its position, until fn says stop, the log's
// start, or limit bytes read (then the position to resume before).
func (l *auditLog) scanBack(from, limit int64, fn func(line []byte, at int64) (stop bool)) (backScan, error) {
	var s backScan
	for i := len(l.files) - 1; i >= 0; i-- {
		f := l.files[i]
		if f.start >= from {
			continue
		}
		end := min(from-f.start, f.size) // offset in the file, exclusive
		// carry is the bytes from offset end on of a line whose start is
		// not read yet (older), as the blocks they were read in, oldest
		// first: joined once, when the line's start is read, so that a
		// long line costs its length, not its length squared.
		var carry [][]byte
		carryLen := 0
		for end > 0 {
			// Every line starting after carry's went to fn: a search
			// that gave none yet goes on, so the next one starts older
			// (a line longer than the bound is read whole, or dropped
			// past maxAuditLine).
			if resume := f.start + end + int64(carryLen); s.read >= limit && resume < from {
				s.resume = resume
				return s, nil
			}
			off := max(end-auditBlock, 0)
			data := make([]byte, end-off) // fn's lines are its own
			if _, err := f.f.ReadAt(data, off); err != nil && !errors.Is(err, io.EOF) {
				return s, err
			}
			s.read += int64(len(data))
			// Lines whose start is in data: after each '\n', newest first.
			last := len(data)
			for j := len(data) - 1; j >= 0; j-- {
				if data[j] != '\n' {
					continue
				}
				line := data[j+1 : last]
				if last == len(data) && carryLen > 0 { // the newest goes on in carry
					line = joinCarry(line, carry, carryLen)
					carry, carryLen = nil, 0
				}
				if len(bytes.TrimSpace(line)) > 0 {
					if fn(line, f.start+off+int64(j+1)) {
						s.stopped = true
						return s, nil
					}
				}
				last = j
			}
			if last == len(data) { // no line starts here: all of it goes on in carry
				carry = append([][]byte{data}, carry...)
			} else {
				carry = [][]byte{data[:last]}
				carryLen = 0
			}
			carryLen += last
			if carryLen > maxAuditLine {
				carry, carryLen = nil, 0 // a line too long to be a record: skipped
			}
			end = off
		}
		// The file's first line starts at its start.
		if line := joinCarry(nil, carry, carryLen); len(bytes.TrimSpace(line)) > 0 && fn(line, f.start) {
			s.stopped = true
			return s, nil
		}
	}
	s.atStart = true
	return s, nil
}

// joinCarry is head followed by carry's pieces (n bytes in all).
func joinCarry(head []byte, carry [][]byte, n int) []byte {
	if len(carry) == 0 {
		return head
	}
	out := make([]byte, 0, len(head)+n)
	out = append(out, head...)
	for _, c := range carry {
		out = append(out, c...)
	}
	return out
}

// firstAtOrAfter is a position at or after which every line is dated t or
// later, found by bisecting the log (its lines are in time order): a
// search that ends at t skips those unread. It errs late, never early.
func (l *auditLog) firstAtOrAfter(t time.Time) int64 {
	lo, hi := int64(0), l.size
	for range 64 {
		if hi-lo <= auditBlock {
			break
		}
		mid := lo + (hi-lo)/2
		at, when, ok := l.lineAfter(mid)
		switch {
		case ok && at < hi && !when.Before(t):
			hi = at
		default:
			lo = mid + 1
		}
	}
	return hi
}

// lineAfter is the first line starting after position p, and its time.
func (l *auditLog) lineAfter(p int64) (at int64, when time.Time, ok bool) {
	buf := make([]byte, 4096)
	for _, f := range l.files {
		if p >= f.start+f.size {
			continue
		}
		at := -1
		for off := max(p-f.start, 0); off < f.size && off-(p-f.start) < maxAuditLine; off += int64(len(buf)) {
			n, _ := f.f.ReadAt(buf, off)
			if k := bytes.IndexByte(buf[:n], '\n'); k >= 0 {
				at = int(off) + k + 1
				break
			}
			if n == 0 {
				break
			}
		}
		if at < 0 || int64(at) >= f.size {
			p = f.start + f.size // the next file starts a line
			if at < 0 {
				return 0, time.Time{}, false
			}
			continue
		}
		n, _ := f.f.ReadAt(buf, int64(at))
		when, ok := lineTime(buf[:n])
		return f.start + int64(at), when, ok
	}
	return 0, time.Time{}, false
}

// lineTime is the time of an audit line, read from its start: the
// gateway writes "time" first.
func lineTime(line []byte) (time.Time, bool) {
	const prefix = `{"time":"`
	if !bytes.HasPrefix(line, []byte(prefix)) {
		return time.Time{}, false
	}
	rest := line[len(prefix):]
	end := bytes.IndexByte(rest, '"')
	if end < 0 {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, string(rest[:end]))
	return t, err == nil
}
