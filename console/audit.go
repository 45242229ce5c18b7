package console

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/sandboxrt/sandbox/auth"
	"github.com/sandboxrt/sandbox/gateway"
)

// The audit page searches the audit log the gateway writes (its "audit"
// block): the file and its rotated copies (path.1 the newest of those),
// newest line first, a page at a time. It reads the files at each search:
// the log is the record, the console keeps no copy. A search reads at most
// auditScanBytes, newest first, and says when it stopped short.

const (
	auditPageSize  = 100
	auditScanBytes = 512 << 20 // the most one search reads
	maxAuditFiles  = 100       // rotated copies looked for (keep is at most this in practice)
)

// auditQuery is what the audit page filters on; empty fields match all.
type auditQuery struct {
	From, To  time.Time
	Kind      string
	Principal string
	Tool      string
	Decision  string // a part of the decision's text
	Outcome   string
	Page      int // 0 the newest
}

func parseAuditQuery(q url.Values) (auditQuery, string) {
	a := auditQuery{Kind: q.Get("kind"), Principal: q.Get("principal"), Tool: q.Get("tool"), Decision: q.Get("decision"), Outcome: q.Get("outcome")}
	a.Page, _ = strconv.Atoi(q.Get("page"))
	a.Page = max(a.Page, 0)
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
	More    bool // an older page has lines
	Short   bool // the search stopped at auditScanBytes
}

// searchAudit reads the audit log at path, newest line first, for the
// query's page.
func searchAudit(path string, q auditQuery) (auditResult, error) {
	var res auditResult
	skip, want := q.Page*auditPageSize, auditPageSize+1 // one more says whether there is an older page
	read := int64(0)
	for i := 0; i <= maxAuditFiles; i++ {
		name := path
		if i > 0 {
			name = path + "." + strconv.Itoa(i)
		}
		data, err := os.ReadFile(name)
		if errors.Is(err, fs.ErrNotExist) {
			if i == 0 {
				continue // nothing written yet, or rotated just now
			}
			break
		}
		if err != nil {
			return res, err
		}
		read += int64(len(data))
		var matched []gateway.AuditRecord
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		for sc.Scan() {
			line := sc.Bytes()
			if !q.quick(line) {
				continue
			}
			var r gateway.AuditRecord
			if json.Unmarshal(line, &r) != nil || !q.match(&r) {
				continue
			}
			matched = append(matched, r)
		}
		for j := len(matched) - 1; j >= 0; j-- { // newest first
			if skip > 0 {
				skip--
				continue
			}
			res.Records = append(res.Records, matched[j])
			if len(res.Records) == want {
				res.Records, res.More = res.Records[:auditPageSize], true
				return res, nil
			}
		}
		if read >= auditScanBytes {
			res.Short = true
			break
		}
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
}

func (c *Console) audit(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	form := r.URL.Query()
	d := auditData{Enabled: c.opts.AuditPath != "", Form: form,
		Kinds: []string{string(gateway.AuditKindCall), string(gateway.AuditKindRun), string(gateway.AuditKindApproval), string(gateway.AuditKindScript),
			string(gateway.AuditKindResource), string(gateway.AuditKindPrompt), string(gateway.AuditKindCompletion)}}
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
		page := func(n int) template.URL {
			v := url.Values{}
			for k, vs := range form {
				v[k] = vs
			}
			v.Set("page", strconv.Itoa(n))
			return template.URL("audit?" + v.Encode()) // an encoded query of our own: safe as a URL
		}
		if q.Page > 0 {
			d.Newer = page(q.Page - 1)
		}
		if res.More {
			d.Older = page(q.Page + 1)
		}
	}
	c.render(w, r, "audit", page{Title: "Audit log", Nav: "audit", Data: d}, &p)
}
