package console

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// TestAuditSearchOverAHugeLine: a log whose newest 48 MB are one line
// without an end (a torn write, a file that is not a log) costs a search
// about the bytes it reads, not the square of a line's length (which
// copied 1.5 GB and took seconds), and the lines before it are still
// found by the pages that follow.
func TestAuditSearchOverAHugeLine(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 48 MB")
	}
	path := filepath.Join(t.TempDir(), "audit.log")
	start := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	var b bytes.Buffer
	for i := 1; i <= 20; i++ {
		b.Write(auditLine(i, start))
	}
	b.Write(bytes.Repeat([]byte("x"), 48<<20))
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var found int
	q := auditQuery{}
	for page := 0; page < 10; page++ {
		res, err := searchAuditWithin(path, q, auditScanBytes)
		if err != nil {
			t.Fatal(err)
		}
		if res.Scanned > auditScanBytes+2*auditBlock+maxAuditLine {
			t.Fatalf("page %d read %d bytes", page, res.Scanned)
		}
		found += len(res.Records)
		if res.Older == 0 {
			break
		}
		q.Before = res.Older
	}
	if found < 18 { // every 211th line is no record, so all 20 but none
		t.Fatalf("found %d records behind the huge line", found)
	}
	runtime.ReadMemStats(&after)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4*48<<20 {
		t.Fatalf("%d MB allocated to find %d records behind a 48 MB line", alloc>>20, found)
	}
}
