package console

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/gateway"
)

// The audit page searches the audit log the gateway writes (its "audit"
// block): the file and its rotated copies (path.1 the newest of those),
// newest line first, a page at a time. It reads the files at each search
// (the log is the record; the console keeps no copy), from the end
// backwards in blocks (auditlog.go), and stops when the page is full, at
// the start of the time range, or after auditScanBytes: then the page says
// so and links the rest. A page is named by a position in the log (before:
// lines starting before it), so an older page costs no more than the
// first, and lines written meanwhile do not shift it.

const (
	auditPageSize  = 100
	auditScanBytes = 64 << 20 // the most one search reads
	maxAuditFiles  = 100      // rotated copies looked for (keep is at most this in practice)
)

// auditQuery is what the audit page filters on; empty fields match all.
type auditQuery struct {
	From, To  time.Time
	Kind      string
	Principal string
	Tool      string
	Decision  string // a part of the decision's text
	Outcome   string
	// Before is the position in the log (auditlog.go) the page starts
	// before: 0 (or past the end) is the newest line.
	Before int64
}

func parseAuditQuery(q url.Values) (auditQuery, string) {
	a := auditQuery{Kind: q.Get("kind"), Principal: q.Get("principal"), Tool: q.Get("tool"), Decision: q.Get("decision"), Outcome: q.Get("outcome")}
	if v := q.Get("before"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return a, fmt.Sprintf("before %q: a page of the log is a byte position; follow the Older link", v)
		}
		a.Before = n
	}
	for _, f := range []struct {
		name string
		to   *time.Time
	}{{"from", &a.From}, {"to", &a.To}} {
		v := q.Get(f.name)
		if v == "" {
			continue
		}
		t, err := time.ParseInLocation("2006-01-02T15:04", v, time.UTC)
		if err != nil {
			return a, fmt.Sprintf("%s %q: write a UTC time as 2026-03-02T15:04", f.name, v)
		}
		*f.to = t
	}
	return a, ""
}

func (a auditQuery) match(r *gateway.AuditRecord) bool {
	switch {
	case a.Kind != "" && string(r.Kind) != a.Kind,
		a.Principal != "" && r.Principal != a.Principal,
		a.Tool != "" && r.Tool != a.Tool,
		a.Outcome != "" && r.Outcome != a.Outcome,
		a.Decision != "" && !strings.Contains(r.Decision, a.Decision):
		return false
	}
	if !a.From.IsZero() || !a.To.IsZero() {
		t, err := time.Parse(time.RFC3339Nano, r.Time)
		if err != nil || !a.From.IsZero() && t.Before(a.From) || !a.To.IsZero() && !t.Before(a.To) {
			return false
		}
	}
	return true
}

// quick is the filter's cheap test on a raw line, before it is decoded:
// a line that does not hold a wanted value cannot match.
func (a auditQuery) quick(line []byte) bool {
	for _, v := range []string{a.Principal, a.Tool, a.Outcome, a.Decision} {
		if v != "" && !bytes.Contains(line, []byte(v)) {
			return false
		}
	}
	return true
}

// auditResult is one page of a search.
type auditResult struct {
	Records []gateway.AuditRecord
	// Older is the position the next page starts before (0: no older
	// line is left to search).
	Older   int64
	Short   bool  // the search stopped at auditScanBytes, not at a full page
	Scanned int64 // bytes read
}

// searchAudit reads the audit log at path, newest line first, for the
// query's page, reading at most auditScanBytes.
func searchAudit(path string, q auditQuery) (auditResult, error) {
	return searchAuditWithin(path, q, auditScanBytes)
}

func searchAuditWithin(path string, q auditQuery, limit int64) (auditResult, error) {
	var res auditResult
	log, err := openAuditLog(path)
	if err != nil {
		return res, err
	}
	defer log.close()
	from := log.size
	if q.Before > 0 && q.Before < from {
		from = q.Before
	}
	if !q.To.IsZero() {
		// Lines are written in time order: skip the newer ones unread.
		from = min(from, log.firstAtOrAfter(q.To.Add(auditClockSlack)))
	}
	stop := func(line []byte, at int64) bool {
		if !q.From.IsZero() {
			if t, ok := lineTime(line); ok && t.Before(q.From.Add(-auditClockSlack)) {
				res.Older = 0 // older lines are older still: the search is done
				return true
			}
		}
		if !q.quick(line) {
			return false
		}
		var r gateway.AuditRecord
		if json.Unmarshal(line, &r) != nil || !q.match(&r) {
			return false
		}
		if len(res.Records) == auditPageSize { // one more: there is an older page, starting after this line
			return true
		}
		res.Records = append(res.Records, r)
		res.Older = at
		return false
	}
	scan, err := log.scanBack(from, limit, stop)
	res.Scanned = scan.read
	switch {
	case err != nil:
		return res, err
	case scan.stopped:
		if len(res.Records) < auditPageSize {
			res.Older = 0
		}
	case scan.atStart:
		res.Older = 0
	default: // the bound: the next page goes on from where this one stopped
		res.Short, res.Older = true, scan.resume
	}
	return res, nil
}

type auditData struct {
	Enabled bool
	Query   auditQuery
	Form    url.Values
	Result  auditResult
	Error   string
	Kinds   []string
	// The links to the newer and the older page ("" when none): built
	// here from url.Values.Encode, so the template need not escape a query
	// it would otherwise break ('=' and '&' escaped).
	Newer template.URL
	Older template.URL
	// ScanMiB is auditScanBytes, for the page's words.
	ScanMiB int64
}

func (c *Console) audit(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	form := r.URL.Query()
	d := auditData{Enabled: c.opts.AuditPath != "", Form: form, ScanMiB: auditScanBytes >> 20,
		Kinds: auditKinds()}
	q, bad := parseAuditQuery(form)
	d.Query = q
	switch {
	case !d.Enabled:
	case bad != "":
		d.Error = bad
	default:
		res, err := searchAudit(c.opts.AuditPath, q)
		if err != nil {
			c.opts.Logger.Warn("console: reading the audit log failed", "error", err)
			d.Error = "the audit log could not be read: " + err.Error()
		}
		d.Result = res
		page := func(before int64) template.URL {
			v := url.Values{}
			for k, vs := range form {
				v[k] = vs
			}
			v.Del("before")
			if before > 0 {
				v.Set("before", strconv.FormatInt(before, 10))
			}
			return template.URL("audit?" + v.Encode()) // an encoded query of our own: safe as a URL
		}
		if q.Before > 0 {
			d.Newer = page(0)
		}
		if res.Older > 0 {
			d.Older = page(res.Older)
		}
	}
	c.render(w, r, "audit", page{Title: "Audit log", Nav: "audit", Data: d}, &p)
}

// auditKinds are the kinds the search form offers: every kind the audit
// log holds (gateway.AuditKinds is the one list).
func auditKinds() []string {
	var out []string
	for _, k := range gateway.AuditKinds() {
		out = append(out, string(k))
	}
	return out
}
