package console

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sandboxrt/sandbox/gateway"
)

// auditLine is the i-th line of a generated log: three principals, an
// outcome that varies, a minute apart, every 97th line long (past a read
// block), and now and then a line that is no record.
func auditLine(i int, start time.Time) []byte {
	if i%211 == 5 {
		return []byte("not a record {\n")
	}
	r := gateway.AuditRecord{Time: start.Add(time.Duration(i) * time.Minute).Format(time.RFC3339Nano), Kind: gateway.AuditKindCall,
		Principal: []string{"acme/alice", "acme/bob", "acme/carol"}[i%3], Tool: "demo:t", Outcome: []string{"OK", "OK", "DENIED", "TIMEOUT"}[i%4],
		DurationMs: float64(i)}
	if i%97 == 0 {
		r.Name = strings.Repeat("n", auditBlock+100)
	}
	b, _ := json.Marshal(r)
	return append(b, '\n')
}

// writeLog writes lines [from, to) to name.
func writeLog(t *testing.T, name string, from, to int, start time.Time) {
	t.Helper()
	var b bytes.Buffer
	for i := from; i < to; i++ {
		b.Write(auditLine(i, start))
	}
	if err := os.WriteFile(name, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
}

// naiveAudit is every matching record of the log, newest first, read
// whole: what a search must agree with.
func naiveAudit(t *testing.T, path string, q auditQuery) []float64 {
	t.Helper()
	var out []float64
	for _, name := range []string{path + ".2", path + ".1", path} {
		data, err := os.ReadFile(name)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var r gateway.AuditRecord
			if json.Unmarshal(sc.Bytes(), &r) == nil && q.match(&r) {
				out = append(out, r.DurationMs)
			}
		}
	}
	slices.Reverse(out)
	return out
}

// pageThrough follows the Older links from the newest page to the end.
func pageThrough(t *testing.T, path string, q auditQuery, limit int64) (got []float64, pages, short int) {
	t.Helper()
	for {
		res, err := searchAuditWithin(path, q, limit)
		if err != nil {
			t.Fatal(err)
		}
		if res.Scanned > limit+2*auditBlock+1024 { // the bound, the longest line and a block

			t.Fatalf("a search read %d bytes, past its bound %d", res.Scanned, limit)
		}
		pages++
		if res.Short {
			short++
		}
		for _, r := range res.Records {
			got = append(got, r.DurationMs)
		}
		if res.Older == 0 || pages > 1000 {
			return got, pages, short
		}
		q.Before = res.Older
	}
}

// TestAuditSearchEqualsANaiveScan: over three files with lines longer than
// a read block and lines that are no records, every query paged through
// (with and without a bound short enough to stop searches early) gives
// what reading the whole log gives, in the same order.
func TestAuditSearchEqualsANaiveScan(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	start := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	writeLog(t, path+".2", 0, 900, start)
	writeLog(t, path+".1", 900, 1500, start)
	writeLog(t, path, 1500, 2000, start)
	at := func(i int) time.Time { return start.Add(time.Duration(i) * time.Minute) }
	for name, q := range map[string]auditQuery{
		"everything":     {},
		"a principal":    {Principal: "acme/bob"},
		"an outcome":     {Outcome: "DENIED", Principal: "acme/alice"},
		"a window":       {From: at(850), To: at(1550)},
		"from":           {From: at(1900)},
		"to":             {To: at(100)},
		"nothing":        {Principal: "acme/nobody"},
		"a window of 1":  {From: at(1234), To: at(1235)},
		"past every end": {From: at(5000)},
	} {
		want := naiveAudit(t, path, q)
		got, pages, _ := pageThrough(t, path, q, auditScanBytes)
		if !slices.Equal(got, want) {
			t.Errorf("%s: %d records in %d pages, want %d\ngot  %v\nwant %v", name, len(got), pages, len(want), head(got), head(want))
		}
		for _, limit := range []int64{200 << 10, auditBlock} {
			got, _, short := pageThrough(t, path, q, limit)
			if !slices.Equal(got, want) {
				t.Errorf("%s, bounded by %d: %d records, want %d", name, limit, len(got), len(want))
			}
			if name == "nothing" && short == 0 {
				t.Errorf("a search of the whole log within %d bytes never stopped short", limit)
			}
		}
	}
}

func head(v []float64) []float64 { return v[:min(len(v), 8)] }

// TestAuditSearchBoundHolds: on a log far larger than the bound, a search
// that matches nothing reads no more than the bound, says it stopped
// short and where to go on; a time range reads only around its lines.
func TestAuditSearchBoundHolds(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	start := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	const lines = 60000 // about 13 MiB with the long lines
	writeLog(t, path+".1", 0, lines/2, start)
	writeLog(t, path, lines/2, lines, start)
	const limit = 2 << 20
	res, err := searchAuditWithin(path, auditQuery{Principal: "acme/nobody"}, limit)
	if err != nil {
		t.Fatal(err)
	}
	if res.Scanned > limit+2*auditBlock+1024 || !res.Short || res.Older == 0 || len(res.Records) != 0 {
		t.Errorf("read %d bytes (bound %d), short %v, older %d", res.Scanned, limit, res.Short, res.Older)
	}
	// A window of ten minutes in the middle of the older file: found by
	// bisecting, read around its lines only.
	from := start.Add(20000 * time.Minute)
	res, err = searchAuditWithin(path, auditQuery{From: from, To: from.Add(10 * time.Minute)}, limit)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Records) != 10 || res.Records[0].DurationMs != 20009 || res.Records[9].DurationMs != 20000 || res.Short || res.Older != 0 {
		t.Errorf("the window: %d records, short %v, older %d", len(res.Records), res.Short, res.Older)
	}
	if res.Scanned > 4*auditBlock {
		t.Errorf("the window read %d bytes: the time range did not bound the search", res.Scanned)
	}
}
